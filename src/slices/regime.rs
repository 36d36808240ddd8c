//! Training regimes as data: which slices each cutoff trains on, and which part of each
//! slice every cell of the drift matrix is evaluated on.

use std::ops::Range;

use serde::Serialize;

use super::SliceSplit;

/// Which slices the model of cutoff `i` (0-based) is trained on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "window")]
pub enum Regime {
    /// The train parts of slices `0..=i` (the drift-happens protocol).
    Cumulative,
    /// The train part of slice `i` only (Agarwal & Nenkova).
    Single,
    /// The train parts of the last `w` slices up to `i`: `i+1-w..=i` (fewer at the start).
    Window(usize),
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
    /// Its name in presets and captions: `cumulative`, `single`, `window(3)`.
    pub fn name(&self) -> String {
        match self {
            Regime::Cumulative => "cumulative".into(),
            Regime::Single => "single".into(),
            Regime::Window(w) => format!("window({w})"),
        }
    }

    /// Indices of the slices whose train parts form the training set of cutoff `i`.
    pub fn trained_slices(&self, cutoff: usize) -> Range<usize> {
        match *self {
            Regime::Cumulative => 0..cutoff + 1,
            Regime::Single => cutoff..cutoff + 1,
            Regime::Window(w) => (cutoff + 1).saturating_sub(w.max(1))..cutoff + 1,
        }
    }

    /// The rows cutoff `i` trains on, ascending.
    pub fn training_rows(&self, splits: &[SliceSplit], cutoff: usize) -> Vec<usize> {
        let mut rows: Vec<usize> = self
            .trained_slices(cutoff)
            .flat_map(|k| splits[k].train.iter().copied())
            .collect();
        rows.sort_unstable();
        rows
    }

    /// The ID/OOD rule: cell `(i, j)` uses `test_j` when slice `j` was trained on (in
    /// distribution, no leakage), and `train_j ∪ test_j` when it was not. Under
    /// [`Regime::Cumulative`] this is protocol.md's "test when `j <= i`, whole when `j > i`".
    pub fn eval_part(&self, cutoff: usize, slice: usize) -> EvalPart {
        if self.trained_slices(cutoff).contains(&slice) {
            EvalPart::Test
        } else {
            EvalPart::Whole
        }
    }

    /// The rows cell `(i, j)` is evaluated on, ascending; empty for an empty cell.
    pub fn eval_rows(&self, splits: &[SliceSplit], cutoff: usize, slice: usize) -> Vec<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regimes_pick_slices() {
        assert_eq!(Regime::Cumulative.trained_slices(2), 0..3);
        assert_eq!(Regime::Single.trained_slices(2), 2..3);
        assert_eq!(Regime::Window(2).trained_slices(0), 0..1);
        assert_eq!(Regime::Window(2).trained_slices(3), 2..4);
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
