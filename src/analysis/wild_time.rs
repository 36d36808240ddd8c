//! Wild-Time's two evaluation protocols (Yao et al., NeurIPS 2022 Datasets and
//! Benchmarks), read off a drift matrix instead of trained anew: Eval-Fix splits the
//! timeline once at a cutoff and scores that cutoff's model on its own held-out data and on
//! every later slice; Eval-Stream scores every cutoff's model on the next `k` slices.
//!
//! Both read filled cells only: an empty cell is skipped, and a value with no cell to read
//! is `None`. "Worst" and "best" follow the metric's direction (the minimum is the worst
//! accuracy but the best error).

use std::ops::Range;

use serde::Serialize;

use crate::matrix::Grid;
use crate::metrics::Direction;

/// Wild-Time's Yearbook setting of the Eval-Stream horizon.
pub const STREAM_K: usize = 10;

/// Eval-Fix at one split cutoff.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct EvalFix {
    /// The split cutoff `c` (0-based row).
    pub cutoff: usize,
    /// Mean of `M[c][j]` over the slices `j` the model of row `c` trained on (the cells
    /// scored on their held-out test parts): a mean over slices, not pooled by rows.
    pub id: Option<f64>,
    /// Mean of `M[c][j]` over `j > c`.
    pub ood_avg: Option<f64>,
    /// The worst `M[c][j]`, `j > c`: the minimum, or the maximum when lower is better.
    pub ood_worst: Option<f64>,
}

/// Eval-Stream with horizon `k`: for each row `t`, the average, worst and best of the
/// filled `M[t][t+1..=t+k]`; each then averaged over the rows that have any.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct EvalStream {
    /// The horizon.
    pub k: usize,
    /// Mean over rows of the row's average.
    pub avg: Option<f64>,
    /// Mean over rows of the row's worst cell.
    pub worst: Option<f64>,
    /// Mean over rows of the row's best cell.
    pub best: Option<f64>,
    /// How many rows had a filled cell in their horizon.
    pub rows: usize,
}

/// The default Eval-Fix cutoff of `k` slices: the middle one, `(k - 1) / 2` (the earlier
/// of the two middles when `k` is even, so that more slices lie in its future).
pub fn middle_cutoff(k: usize) -> usize {
    k.saturating_sub(1) / 2
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The worst and the best of `values` under `direction`.
fn worst_best(values: &[f64], direction: Direction) -> Option<(f64, f64)> {
    let min = values.iter().copied().reduce(f64::min)?;
    let max = values.iter().copied().reduce(f64::max)?;
    Some(match direction {
        Direction::HigherIsBetter => (min, max),
        Direction::LowerIsBetter => (max, min),
    })
}

/// Eval-Fix of `grid` split at `cutoff`, whose model trained on the slices `trained`
/// (`Regime::trained_slices`: `0..cutoff + 1` for the cumulative regime).
pub fn eval_fix(
    grid: &Grid,
    direction: Direction,
    cutoff: usize,
    trained: Range<usize>,
) -> EvalFix {
    let id: Vec<f64> = trained.filter_map(|j| grid.get(cutoff, j)).collect();
    let ood: Vec<f64> = (cutoff + 1..grid.k())
        .filter_map(|j| grid.get(cutoff, j))
        .collect();
    EvalFix {
        cutoff,
        id: mean(&id),
        ood_avg: mean(&ood),
        ood_worst: worst_best(&ood, direction).map(|(worst, _)| worst),
    }
}

/// Eval-Stream of `grid` with horizon `k`.
pub fn eval_stream(grid: &Grid, direction: Direction, k: usize) -> EvalStream {
    let (mut avg, mut worst, mut best) = (Vec::new(), Vec::new(), Vec::new());
    for t in 0..grid.k() {
        let end = (t + k).min(grid.k().saturating_sub(1));
        let cells: Vec<f64> = (t + 1..=end).filter_map(|j| grid.get(t, j)).collect();
        if let Some((w, b)) = worst_best(&cells, direction) {
            avg.extend(mean(&cells));
            worst.push(w);
            best.push(b);
        }
    }
    EvalStream {
        k,
        avg: mean(&avg),
        worst: mean(&worst),
        best: mean(&best),
        rows: avg.len(),
    }
}
