//! Training regimes as data: which slices each cutoff trains on, where its model starts
//! from, which slices it sees with labels it predicted itself, and which part of each
//! slice every cell of the drift matrix is evaluated on.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use super::split::SliceSplit;

/// Which slices the model of cutoff `i` (0-based) is trained on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regime {
    /// The train parts of slices `0..=i` (the drift-happens protocol).
    Cumulative,
    /// The train part of slice `i` only (Agarwal & Nenkova).
    Single,
    /// The train parts of the last `w` slices up to `i`: `i+1-w..=i` (fewer at the start).
    Window(usize),
    /// Starts from cutoff `i-1`'s final checkpoint and trains on slice `i` only
    /// (Wild-Time's FT); cutoff 0 trains from scratch.
    Finetune,
    /// Starts from cutoff `i-1`'s final checkpoint and trains on slices `0..=i`.
    FinetuneCumulative,
    /// Agarwal & Nenkova §11.2: row `anchor` is trained on the gold labels of its slice;
    /// row `t > anchor` on those plus slice `t` labelled by the anchor model (slices
    /// `anchor+1..=t` when `accumulate`); rows before the anchor are empty.
    SelfLabel {
        /// The anchor slice (0-based).
        anchor: usize,
        /// Self-label every slice after the anchor up to `t`, not slice `t` alone.
        accumulate: bool,
    },
}

/// Presets hash the regime's JSON: the first three keep the form they always had
/// (`{"kind": "window", "window": 3}`), the others add their own fields.
impl Serialize for Regime {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("kind", self.name_without_window())?;
        match *self {
            Regime::Window(w) => map.serialize_entry("window", &w)?,
            Regime::SelfLabel { anchor, accumulate } => {
                map.serialize_entry("anchor", &anchor)?;
                map.serialize_entry("accumulate", &accumulate)?;
            }
            _ => {}
        }
        map.end()
    }
}

/// The part of slice `j` that cell `(i, j)` is evaluated on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvalPart {
    /// The test part: slice `j`'s train part was in the training set.
    Test,
    /// Train and test together: the model never saw any of slice `j`.
    Whole,
}

impl Regime {
    fn name_without_window(&self) -> &'static str {
        match self {
            Regime::Cumulative => "cumulative",
            Regime::Single => "single",
            Regime::Window(_) => "window",
            Regime::Finetune => "finetune",
            Regime::FinetuneCumulative => "finetune-cumulative",
            Regime::SelfLabel { .. } => "self-label",
        }
    }

    /// Its name in presets and captions: `cumulative`, `single`, `window(3)`, `finetune`,
    /// `finetune-cumulative`, `self-label(anchor 0)` (`, accumulated`).
    pub fn name(&self) -> String {
        match *self {
            Regime::Window(w) => format!("window({w})"),
            Regime::SelfLabel { anchor, accumulate } => format!(
                "self-label(anchor {anchor}{})",
                if accumulate { ", accumulated" } else { "" }
            ),
            _ => self.name_without_window().into(),
        }
    }

    /// Indices of the slices whose train parts cutoff `i` trains on with their gold labels,
    /// ascending; none for a self-label row before the anchor (an empty row).
    pub fn trained_slices(&self, cutoff: usize) -> Vec<usize> {
        match *self {
            Regime::Cumulative | Regime::FinetuneCumulative => (0..=cutoff).collect(),
            Regime::Single | Regime::Finetune => vec![cutoff],
            Regime::Window(w) => ((cutoff + 1).saturating_sub(w.max(1))..=cutoff).collect(),
            Regime::SelfLabel { anchor, .. } if cutoff >= anchor => vec![anchor],
            Regime::SelfLabel { .. } => Vec::new(),
        }
    }

    /// Indices of the slices whose train parts cutoff `i` trains on with the labels the
    /// anchor model predicts (self-label only), ascending.
    pub fn self_labelled_slices(&self, cutoff: usize) -> Vec<usize> {
        match *self {
            Regime::SelfLabel { anchor, accumulate } if cutoff > anchor => {
                if accumulate {
                    (anchor + 1..=cutoff).collect()
                } else {
                    vec![cutoff]
                }
            }
            _ => Vec::new(),
        }
    }

    /// The slices whose train parts the model of cutoff `i` has seen, by any route: its
    /// own training set, the checkpoints it was fine-tuned from, and self-labelled slices.
    /// These are its in-distribution slices.
    pub fn seen_slices(&self, cutoff: usize) -> Vec<usize> {
        match *self {
            Regime::Finetune => (0..=cutoff).collect(),
            _ => {
                let mut seen = self.trained_slices(cutoff);
                seen.extend(self.self_labelled_slices(cutoff));
                seen.sort_unstable();
                seen
            }
        }
    }

    /// Whether cutoff `i` starts from cutoff `i-1`'s final checkpoint.
    pub fn starts_from_previous(&self, cutoff: usize) -> bool {
        matches!(self, Regime::Finetune | Regime::FinetuneCumulative) && cutoff > 0
    }

    /// The cutoffs that training the cutoffs `wanted` trains, ascending: each, the cutoffs
    /// before it in a fine-tuning chain, and a self-label anchor.
    pub fn cutoffs_to_train(&self, wanted: &[usize]) -> Vec<usize> {
        let mut needed = std::collections::BTreeSet::new();
        for &i in wanted {
            needed.insert(i);
            if self.starts_from_previous(i) {
                needed.extend(0..i);
            }
            if let Some(anchor) = self.anchor().filter(|&a| i > a) {
                needed.insert(anchor);
            }
        }
        needed.into_iter().collect()
    }

    /// The self-label anchor, if this is a self-label regime.
    pub fn anchor(&self) -> Option<usize> {
        match *self {
            Regime::SelfLabel { anchor, .. } => Some(anchor),
            _ => None,
        }
    }

    /// The rows cutoff `i` trains on with gold labels, ascending.
    pub fn gold_rows(&self, splits: &[SliceSplit], cutoff: usize) -> Vec<usize> {
        train_rows(splits, &self.trained_slices(cutoff))
    }

    /// Every row cutoff `i` trains on, gold and self-labelled, ascending.
    pub fn training_rows(&self, splits: &[SliceSplit], cutoff: usize) -> Vec<usize> {
        let mut slices = self.trained_slices(cutoff);
        slices.extend(self.self_labelled_slices(cutoff));
        train_rows(splits, &slices)
    }

    /// The ID/OOD rule: cell `(i, j)` uses `test_j` when the model has seen slice `j`
    /// ([`Regime::seen_slices`]: in distribution, no leakage), and `train_j ∪ test_j` when
    /// it has not. Under [`Regime::Cumulative`] this is protocol.md's "test when `j <= i`,
    /// whole when `j > i`".
    pub fn eval_part(&self, cutoff: usize, slice: usize) -> EvalPart {
        if self.seen_slices(cutoff).contains(&slice) {
            EvalPart::Test
        } else {
            EvalPart::Whole
        }
    }

    /// The rows cell `(i, j)` is evaluated on, ascending; empty for an empty cell (and for
    /// every cell of a row with no model).
    pub fn eval_rows(&self, splits: &[SliceSplit], cutoff: usize, slice: usize) -> Vec<usize> {
        if self.trained_slices(cutoff).is_empty() {
            return Vec::new();
        }
        let split = &splits[slice];
        match self.eval_part(cutoff, slice) {
            EvalPart::Test => split.test.clone(),
            EvalPart::Whole => {
                let mut rows = [split.train.as_slice(), split.test.as_slice()].concat();
                rows.sort_unstable();
                rows
            }
        }
    }
}

/// The train parts of `slices`, ascending.
fn train_rows(splits: &[SliceSplit], slices: &[usize]) -> Vec<usize> {
    let mut rows: Vec<usize> = slices
        .iter()
        .flat_map(|&k| splits[k].train.iter().copied())
        .collect();
    rows.sort_unstable();
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regimes_pick_slices() {
        assert_eq!(Regime::Cumulative.trained_slices(2), [0, 1, 2]);
        assert_eq!(Regime::Single.trained_slices(2), [2]);
        assert_eq!(Regime::Window(2).trained_slices(0), [0]);
        assert_eq!(Regime::Window(2).trained_slices(3), [2, 3]);
        // Fine-tuning trains on slice i but has seen 0..=i through its starting point.
        assert_eq!(Regime::Finetune.trained_slices(2), [2]);
        assert_eq!(Regime::Finetune.seen_slices(2), [0, 1, 2]);
        assert_eq!(Regime::Finetune.eval_part(2, 1), EvalPart::Test);
        assert!(!Regime::Finetune.starts_from_previous(0));
        assert!(Regime::FinetuneCumulative.starts_from_previous(1));
        // Self-labelling from anchor 1: row 0 is empty, row 1 the anchor, row 3 sees 1 and 3
        // (or 1..=3 accumulated); slice 2 is out of distribution for row 3 alone.
        let sl = Regime::SelfLabel {
            anchor: 1,
            accumulate: false,
        };
        assert!(sl.trained_slices(0).is_empty());
        assert_eq!(
            (sl.trained_slices(1), sl.self_labelled_slices(1)),
            (vec![1], vec![])
        );
        assert_eq!(
            (sl.trained_slices(3), sl.self_labelled_slices(3)),
            (vec![1], vec![3])
        );
        assert_eq!(sl.eval_part(3, 2), EvalPart::Whole);
        assert_eq!(sl.eval_part(3, 3), EvalPart::Test);
        let acc = Regime::SelfLabel {
            anchor: 1,
            accumulate: true,
        };
        assert_eq!(acc.self_labelled_slices(3), [2, 3]);
        assert_eq!(acc.seen_slices(3), [1, 2, 3]);
        assert_eq!(sl.name(), "self-label(anchor 1)");
        // The JSON presets hash: the old forms unchanged.
        let json = |r: Regime| serde_json::to_string(&r).unwrap();
        assert_eq!(json(Regime::Cumulative), r#"{"kind":"cumulative"}"#);
        assert_eq!(json(Regime::Window(3)), r#"{"kind":"window","window":3}"#);
        assert_eq!(
            json(acc),
            r#"{"kind":"self-label","anchor":1,"accumulate":true}"#
        );
        assert_eq!(Regime::Cumulative.eval_part(2, 2), EvalPart::Test);
        assert_eq!(Regime::Cumulative.eval_part(2, 3), EvalPart::Whole);
        assert_eq!(Regime::Single.eval_part(2, 1), EvalPart::Whole);
    }

    #[test]
    fn rows_follow_the_rule() {
        let splits = vec![
            SliceSplit {
                train: vec![0, 2],
                test: vec![1],
                stratified: false,
            },
            SliceSplit {
                train: vec![3],
                test: vec![],
                stratified: false,
            },
            SliceSplit {
                train: vec![4, 6],
                test: vec![5],
                stratified: false,
            },
        ];
        assert_eq!(Regime::Cumulative.training_rows(&splits, 1), vec![0, 2, 3]);
        assert_eq!(
            Regime::Cumulative.eval_rows(&splits, 1, 1),
            Vec::<usize>::new()
        );
        assert_eq!(Regime::Cumulative.eval_rows(&splits, 1, 2), vec![4, 5, 6]);
        assert_eq!(Regime::Single.eval_rows(&splits, 2, 0), vec![0, 1, 2]);
    }
}
