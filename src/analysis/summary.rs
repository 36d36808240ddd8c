//! `drift summarize`'s figures for one model's drift matrix: every single-model analysis
//! on its seed mean, in one value the CLI prints as text or JSON.

use serde::Serialize;

use super::forgetting::{ForgettingPoint, forgetting_over_seeds};
use super::robustness::{CutoffRow, per_cutoff, robustness};
use super::temporal_effects::{SalientCells, TemporalEffects, salient_cells, temporal_effects};
use super::wild_time::{EvalFix, EvalStream, STREAM_K, eval_fix, eval_stream, middle_cutoff};
use crate::matrix::DriftMatrix;
use crate::metrics::Metric;

/// Everything `drift summarize` prints about one model's drift matrix.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// The metric of the cells.
    pub metric: Metric,
    /// Slice labels, oldest first.
    pub slices: Vec<String>,
    /// Seeds, ascending.
    pub seeds: Vec<u64>,
    /// ID on the per-cell mean over seeds.
    pub id: Option<f64>,
    /// Future score on the per-cell mean over seeds.
    pub future: Option<f64>,
    /// Decay (positive = worse on the future).
    pub decay: Option<f64>,
    /// Per-cutoff figures on the seed mean.
    pub per_cutoff: Vec<SliceCutoff>,
    /// Forgetting curve per seed, then mean and std over seeds.
    pub forgetting: Vec<ForgettingPoint>,
    /// The four Agarwal & Nenkova scores (their fields sit at this level in JSON).
    #[serde(flatten)]
    pub effects: TemporalEffects,
    /// The salient cells on the seed mean.
    pub salient: SalientCells,
    /// Wild-Time's Eval-Fix on the seed mean ([`summarize_with`] says where it splits);
    /// `None` without slices.
    pub eval_fix: Option<EvalFix>,
    /// Wild-Time's Eval-Stream on the seed mean.
    pub eval_stream: EvalStream,
}

/// A [`CutoffRow`] with the label of its slice.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SliceCutoff {
    /// The label of slice `row.cutoff`.
    pub slice: String,
    /// Its figures.
    #[serde(flatten)]
    pub row: CutoffRow,
}

/// Summarises one model's drift matrix, with Wild-Time's protocols at their defaults
/// (Eval-Fix at the middle slice, Eval-Stream horizon [`STREAM_K`]).
pub fn summarize(matrix: &DriftMatrix) -> Summary {
    summarize_with(matrix, None, STREAM_K)
}

/// [`summarize`] with the Eval-Fix split at row `eval_fix` (the middle slice when `None`)
/// and Eval-Stream horizon `stream_k`. Eval-Fix reads the matrix as cumulative: the model
/// of row `c` trained on slices `0..=c`.
pub fn summarize_with(
    matrix: &DriftMatrix,
    eval_fix_at: Option<usize>,
    stream_k: usize,
) -> Summary {
    let mean = matrix.mean();
    let overall = robustness(&mean, matrix.direction());
    let effects = temporal_effects(matrix);
    Summary {
        metric: matrix.metric(),
        slices: matrix.slices().to_vec(),
        seeds: matrix.seeds().to_vec(),
        id: overall.id,
        future: overall.future,
        decay: overall.decay,
        per_cutoff: per_cutoff(&mean, matrix.direction())
            .into_iter()
            .map(|row| SliceCutoff {
                slice: matrix.slices()[row.cutoff].clone(),
                row,
            })
            .collect(),
        forgetting: forgetting_over_seeds(matrix),
        effects,
        salient: salient_cells(&mean),
        eval_fix: (mean.k() > 0).then(|| {
            let c = eval_fix_at.unwrap_or_else(|| middle_cutoff(mean.k()));
            eval_fix(&mean, matrix.direction(), c, 0..c + 1)
        }),
        eval_stream: eval_stream(&mean, matrix.direction(), stream_k),
    }
}
