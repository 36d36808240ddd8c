//! How sure a study can be of its numbers: the spread of ID / future / decay over seeds,
//! ties between ranking neighbours whose seed ranges overlap, seeded percentile
//! bootstrap confidence intervals over cutoffs, and what a random sample of rows proves
//! of the rest ([`fraction_caught`]).
//!
//! The bootstrap resamples the K cutoffs (rows of the seed-mean grid) with replacement,
//! [`BOOTSTRAP_REPLICATES`] times; each replicate's ID is the mean of the drawn rows'
//! diagonal cells and its future the mean of their cells right of the diagonal, a row
//! drawn twice counted twice; empty cells are skipped, as [`robustness`] skips
//! them. A difference between two models uses the same draws for both (paired). The
//! interval is the 2.5th and 97.5th percentile of the replicates, with numpy's default
//! (linear) interpolation, so `scripts/fixtures/bootstrap.py` reproduces it from the
//! same draws.

use serde::Serialize;

use super::ranking::Ranked;
use super::robustness::{CutoffRow, Robustness, decay, per_cutoff, robustness};
use crate::matrix::{DriftMatrix, Grid, sample_std};
use crate::metrics::Direction;

/// Replicates per bootstrap interval.
pub const BOOTSTRAP_REPLICATES: usize = 2000;

/// The seed every bootstrap of a study draws from (with the model key as the stream's
/// label), so the intervals are the same on every build.
pub const BOOTSTRAP_SEED: u64 = 20_221_201;

/// Mean, sample standard deviation and range of one figure over seeds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    /// Seeds with a value.
    pub n: usize,
    /// Their mean.
    pub mean: f64,
    /// Their sample standard deviation (ddof 1); `None` for one seed.
    pub sd: Option<f64>,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
}

impl Spread {
    /// The spread of `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Spread> {
        let first = *values.first()?;
        Some(Spread {
            n: values.len(),
            mean: values.iter().sum::<f64>() / values.len() as f64,
            sd: sample_std(values),
            min: values.iter().copied().fold(first, f64::min),
            max: values.iter().copied().fold(first, f64::max),
        })
    }

    /// Whether the two ranges `[min, max]` overlap.
    pub fn overlaps(&self, other: &Spread) -> bool {
        self.min <= other.max && other.min <= self.max
    }
}

/// ID, future and decay of each seed's grid, spread over the seeds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SeedSpread {
    /// In-distribution score.
    pub id: Option<Spread>,
    /// Future score.
    pub future: Option<Spread>,
    /// Decay.
    pub decay: Option<Spread>,
}

/// Picks one figure's spread out of a [`SeedSpread`] (e.g. `|s| s.future`).
pub type PickSpread = fn(&SeedSpread) -> Option<Spread>;

/// The [`SeedSpread`] of a matrix: [`robustness`] of every seed's grid on its own.
pub fn seed_spread(matrix: &DriftMatrix) -> SeedSpread {
    let per_seed: Vec<Robustness> = matrix
        .grids()
        .iter()
        .map(|g| robustness(g, matrix.direction()))
        .collect();
    let of = |f: fn(&Robustness) -> Option<f64>| {
        Spread::of(&per_seed.iter().filter_map(f).collect::<Vec<_>>())
    };
    SeedSpread {
        id: of(|r| r.id),
        future: of(|r| r.future),
        decay: of(|r| r.decay),
    }
}

/// The [`SeedSpread`] of every row (cutoff) of a matrix: [`per_cutoff`] of each
/// seed's grid, spread over the seeds.
pub fn cutoff_spreads(matrix: &DriftMatrix) -> Vec<SeedSpread> {
    let per_seed: Vec<Vec<CutoffRow>> = matrix
        .grids()
        .iter()
        .map(|g| per_cutoff(g, matrix.direction()))
        .collect();
    (0..matrix.k())
        .map(|i| {
            let of = |f: fn(&Robustness) -> Option<f64>| {
                Spread::of(
                    &per_seed
                        .iter()
                        .filter_map(|rows| f(&rows[i].scores))
                        .collect::<Vec<_>>(),
                )
            };
            SeedSpread {
                id: of(|r| r.id),
                future: of(|r| r.future),
                decay: of(|r| r.decay),
            }
        })
        .collect()
}

/// For each place of a ranking (models in rank order, with the seed spread of the value
/// ranked on), whether it is tied with the next: their seed ranges overlap, so the seeds
/// do not support ordering them. The last place is never tied with a next one.
pub fn ties_with_next(spreads: &[Option<Spread>]) -> Vec<bool> {
    (0..spreads.len())
        .map(
            |n| match (spreads[n], spreads.get(n + 1).copied().flatten()) {
                (Some(a), Some(b)) => a.overlaps(&b),
                _ => false,
            },
        )
        .collect()
}

/// Marks each place of `ranking` tied with the next ([`ties_with_next`]), the seed spread
/// of each model's ranked value given by `spread_of`.
pub fn mark_ties(ranking: &mut [Ranked], spread_of: impl Fn(&str) -> Option<Spread>) {
    let spreads: Vec<Option<Spread>> = ranking.iter().map(|r| spread_of(&r.model)).collect();
    for (r, tied) in ranking.iter_mut().zip(ties_with_next(&spreads)) {
        r.tied_with_next = tied;
    }
}

/// A percentile bootstrap interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    /// The 2.5th percentile.
    pub low: f64,
    /// The 97.5th percentile.
    pub high: f64,
}

impl Interval {
    /// Whether the interval excludes zero.
    pub fn excludes_zero(&self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }
}

/// Bootstrap intervals of one model's ID, future and decay, and of its future score
/// minus the best model's (same draws).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Bootstrap {
    /// In-distribution score.
    pub id: Option<Interval>,
    /// Future score.
    pub future: Option<Interval>,
    /// Decay.
    pub decay: Option<Interval>,
    /// This model's future score minus the best model's; `None` for the best model itself.
    pub future_vs_best: Option<Interval>,
}

/// `replicates` draws of K row indices in `0..k`, from the model's seeded stream.
pub fn bootstrap_draws(k: usize, replicates: usize, seed: u64, label: &str) -> Vec<Vec<usize>> {
    let mut rng = crate::slices::stream("bootstrap", seed, label);
    (0..replicates)
        .map(|_| {
            (0..k)
                .map(|_| crate::slices::uniform(&mut rng, k as u64) as usize)
                .collect()
        })
        .collect()
}

/// ID, future and decay of the rows `draw` of `grid` (a row drawn twice counts twice).
pub fn resampled(grid: &Grid, draw: &[usize], direction: Direction) -> Robustness {
    let (mut id, mut future) = ((0.0, 0usize), (0.0, 0usize));
    for &i in draw {
        if let Some(v) = grid.get(i, i) {
            id = (id.0 + v, id.1 + 1);
        }
        for v in (i + 1..grid.k()).filter_map(|j| grid.get(i, j)) {
            future = (future.0 + v, future.1 + 1);
        }
    }
    let id = (id.1 > 0).then(|| id.0 / id.1 as f64);
    let future = (future.1 > 0).then(|| future.0 / future.1 as f64);
    Robustness {
        id,
        future,
        decay: decay(id, future, direction),
    }
}

/// numpy's default percentile (linear interpolation between the closest ranks) of
/// `values`, `q` in `[0, 100]`.
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let last = sorted.len().checked_sub(1)?;
    let at = q / 100.0 * last as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo as f64))
}

/// The 95% percentile interval of the replicates that have a value; `None` if none has.
pub fn interval(replicates: impl Iterator<Item = Option<f64>>) -> Option<Interval> {
    let values: Vec<f64> = replicates.flatten().collect();
    Some(Interval {
        low: percentile(&values, 2.5)?,
        high: percentile(&values, 97.5)?,
    })
}

/// [`Bootstrap`] of `grid` over the given draws, against `best` (the best model's grid)
/// unless this is the best model.
pub fn bootstrap_with(
    grid: &Grid,
    best: Option<&Grid>,
    draws: &[Vec<usize>],
    direction: Direction,
) -> Bootstrap {
    let own: Vec<Robustness> = draws
        .iter()
        .map(|d| resampled(grid, d, direction))
        .collect();
    Bootstrap {
        id: interval(own.iter().map(|r| r.id)),
        future: interval(own.iter().map(|r| r.future)),
        decay: interval(own.iter().map(|r| r.decay)),
        future_vs_best: best.and_then(|best| {
            interval(
                draws
                    .iter()
                    .zip(&own)
                    .map(|(d, r)| Some(r.future? - resampled(best, d, direction).future?)),
            )
        }),
    }
}

/// The confidence of what a sample of rows proves (`drift audit`, the proof appendix).
pub const SAMPLE_CONFIDENCE: f64 = 0.95;

/// The smallest fraction of wrong items that `n` items drawn at random (uniformly, or
/// stratified in proportion) all passing rule out with probability `confidence`: a draw
/// misses a fraction `f` with probability at most `(1 - f)^n`, which is `1 - confidence`
/// at `f = 1 - (1 - confidence)^(1/n)`.
pub fn fraction_caught(n: usize, confidence: f64) -> f64 {
    1.0 - (1.0 - confidence).powf(1.0 / n as f64)
}
