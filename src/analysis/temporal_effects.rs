//! The deterioration and adaptation scores of Agarwal & Nenkova (TACL 2022), each with a
//! two-sided Wilcoxon signed-rank test, and the salient cells reported beside them.
//!
//! In drift-matrix terms `M_i^j` is cell `(i, j)`: trained on slice `i`, tested on `j`;
//! `s` is the first row with a filled cell (0, or a self-labelling matrix's anchor) and
//! `n = K - 1` the last slice. Differences involving an empty
//! cell are skipped.
//! - deterioration, consecutive: `M_i^j - M_i^{j-1}` for all `i` and `j > i + 1`;
//! - deterioration, anchor: `M_i^j - M_i^{i+1}` for all `i` and `j > i + 1`;
//! - adaptation, consecutive: `M_i^j - M_{i-1}^j` for all `j` and `s < i < j`;
//! - adaptation, anchor: `M_i^j - M_s^j` for all `j` and `s < i < j`.
//!
//! A score is the mean raw difference (positive = the metric went up, whatever its
//! direction), tested on the vector of differences. With 6 slices each vector has 10.

use serde::Serialize;

use super::wilcoxon::wilcoxon;
use crate::matrix::{DriftMatrix, Grid};

/// The first row with a filled cell: 0, or a self-labelling matrix's anchor.
fn first_filled_row(grid: &Grid) -> usize {
    let k = grid.k();
    (0..k)
        .find(|&i| (0..k).any(|j| grid.get(i, j).is_some()))
        .unwrap_or(0)
}

/// The four difference vectors of one grid, in the order of [`TemporalEffects`].
pub fn differences(grid: &Grid) -> [Vec<f64>; 4] {
    differences_from(grid, first_filled_row(grid))
}

/// [`differences`] with the adaptation anchor at row `s`: adaptation differences only
/// for rows after it.
fn differences_from(grid: &Grid, s: usize) -> [Vec<f64>; 4] {
    let k = grid.k();
    let diff =
        |a: (usize, usize), b: (usize, usize)| Some(grid.get(a.0, a.1)? - grid.get(b.0, b.1)?);
    let mut out: [Vec<f64>; 4] = Default::default();
    for i in 0..k {
        for j in i + 2..k {
            out[0].extend(diff((i, j), (i, j - 1)));
            out[1].extend(diff((i, j), (i, i + 1)));
        }
    }
    for j in 0..k {
        for i in s + 1..j {
            out[2].extend(diff((i, j), (i - 1, j)));
            out[3].extend(diff((i, j), (s, j)));
        }
    }
    out
}

/// One score with its test and its spread over seeds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TemporalScore {
    /// Mean difference on the seed-mean matrix; `None` without differences.
    pub score: Option<f64>,
    /// Two-sided Wilcoxon signed-rank p-value of those differences.
    pub p_value: Option<f64>,
    /// Number of differences.
    pub n: usize,
    /// Smallest score over seeds.
    pub min: Option<f64>,
    /// Largest score over seeds.
    pub max: Option<f64>,
}

/// The four scores of one model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TemporalEffects {
    /// `M_i^j - M_i^{j-1}`.
    pub deterioration_consecutive: TemporalScore,
    /// `M_i^j - M_i^{i+1}`.
    pub deterioration_anchor: TemporalScore,
    /// `M_i^j - M_{i-1}^j`.
    pub adaptation_consecutive: TemporalScore,
    /// `M_i^j - M_s^j`.
    pub adaptation_anchor: TemporalScore,
}

/// The four scores, in [`differences`] and [`TemporalEffects`] order: the name tables,
/// figures, the notebooks and the CLI print, and the difference it averages.
pub const SCORES: [(&str, &str); 4] = [
    ("deterioration, consecutive", "M_i^j − M_i^(j−1)"),
    ("deterioration, anchor", "M_i^j − M_i^(i+1)"),
    ("adaptation, consecutive", "M_i^j − M_(i−1)^j"),
    ("adaptation, anchor", "M_i^j − M_s^j"),
];

impl TemporalEffects {
    /// The four scores in [`SCORES`] order.
    pub fn all(&self) -> [TemporalScore; 4] {
        [
            self.deterioration_consecutive,
            self.deterioration_anchor,
            self.adaptation_consecutive,
            self.adaptation_anchor,
        ]
    }

    /// Each score with its name, in [`SCORES`] order.
    pub fn named(&self) -> impl Iterator<Item = (&'static str, TemporalScore)> {
        SCORES.iter().map(|s| s.0).zip(self.all())
    }
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The scores on the per-cell mean over seeds, with min and max over per-seed scores.
pub fn temporal_effects(matrix: &DriftMatrix) -> TemporalEffects {
    effects_from(matrix, first_filled_row(&matrix.mean()))
}

/// [`temporal_effects`] with the adaptation anchor at row `s`.
fn effects_from(matrix: &DriftMatrix, s: usize) -> TemporalEffects {
    let on_mean = differences_from(&matrix.mean(), s);
    let per_seed: Vec<[Vec<f64>; 4]> = matrix
        .grids()
        .iter()
        .map(|g| differences_from(g, s))
        .collect();
    let score = |k: usize| {
        let seed_scores: Vec<f64> = per_seed.iter().filter_map(|d| mean(&d[k])).collect();
        TemporalScore {
            score: mean(&on_mean[k]),
            p_value: wilcoxon(&on_mean[k]).and_then(|w| w.p_value),
            n: on_mean[k].len(),
            min: seed_scores.iter().copied().reduce(f64::min),
            max: seed_scores.iter().copied().reduce(f64::max),
        }
    };
    TemporalEffects {
        deterioration_consecutive: score(0),
        deterioration_anchor: score(1),
        adaptation_consecutive: score(2),
        adaptation_anchor: score(3),
    }
}

/// Agarwal & Nenkova's Table 9 for one model: how much retraining on self-labelled
/// slices adapts, next to what retraining on gold labels does. Both are the adaptation
/// score against the anchor row, `M_i^j - M_s^j` for `s < i < j`: of a self-labelling
/// matrix (row `i` trained on gold slice `s` plus slice `i` labelled by the anchor model)
/// and of a single-slice matrix over the same slices (row `i` trained on gold slice `i`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SelfLabelling {
    /// The anchor row `s`.
    pub anchor: usize,
    /// The self-labelling matrix's anchor-adaptation score.
    pub self_labelled: TemporalScore,
    /// The gold-label (single-slice) matrix's.
    pub gold: TemporalScore,
}

/// [`SelfLabelling`] of a self-labelling matrix with anchor `anchor` and the gold-label
/// matrix of the same model; both must share slices and metric.
pub fn self_labelling(
    self_labelled: &DriftMatrix,
    gold: &DriftMatrix,
    anchor: usize,
) -> crate::Result<SelfLabelling> {
    if self_labelled.slices() != gold.slices() || self_labelled.metric() != gold.metric() {
        return Err(crate::Error::Invalid(
            "self-labelling and gold matrices must share slices and metric".into(),
        ));
    }
    if anchor >= self_labelled.k() {
        return Err(crate::Error::Invalid(format!(
            "anchor {anchor} is not a row of a {}-slice matrix",
            self_labelled.k()
        )));
    }
    Ok(SelfLabelling {
        anchor,
        self_labelled: effects_from(self_labelled, anchor).adaptation_anchor,
        gold: effects_from(gold, anchor).adaptation_anchor,
    })
}

/// The cells Agarwal & Nenkova report beside the scores.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SalientCells {
    /// `M_s^{s+1}`: first model on the next slice.
    pub first_on_next: Option<f64>,
    /// `M_s^n`: first model on the last slice.
    pub first_on_last: Option<f64>,
    /// `M_{n-1}^n`: second-to-last model on the last slice.
    pub penultimate_on_last: Option<f64>,
}

/// The salient cells of a grid (all `None` with fewer than 2 slices), `s` its first
/// filled row.
pub fn salient_cells(grid: &Grid) -> SalientCells {
    let k = grid.k();
    let s = first_filled_row(grid);
    if k < 2 || s + 1 >= k {
        return SalientCells {
            first_on_next: None,
            first_on_last: None,
            penultimate_on_last: None,
        };
    }
    SalientCells {
        first_on_next: grid.get(s, s + 1),
        first_on_last: grid.get(s, k - 1),
        penultimate_on_last: grid.get(k - 2, k - 1),
    }
}
