//! The robustness family of drift-happens (learning-mechanisms/drift-happens,
//! `drift_happens/evaluation/robustness/metrics.py` and `transforms.py`), which scores a
//! drift matrix by its strength in distribution and its retention on the future, per
//! seed, then as the mean and sample standard deviation over seeds.
//!
//! Utility `U = clip(M, 0, 1)` for higher-is-better metrics and `exp(-M)` for errors
//! (MSE, MAE, balanced MSE). Over the future pairs `j > i` whose cell is filled, each
//! weighted `w = exp(-beta (j - i))` (slice-index gaps, uniform at `beta = 0`), with
//! `d_i = U_ii` and `eps = 1e-8` as drift-happens adds it:
//! - `S`: the mean of `d_i` over every cutoff but the last (the one cutoff when K = 1);
//! - `R_abs = 1 - Σ w (d_i - U_ij) / Σ w`;
//! - `R_rel = Σ w U_ij / (d_i + eps) / Σ w`, over the pairs with `d_i >= eps`;
//! - `DRS_alpha = Σ w U_ij / (d_i + eps)^alpha / Σ w`;
//! - `LDRS = exp(Σ w (ln(U_ij + eps) - ln(d_i + eps)) / Σ w)`, over the pairs with
//!   `U_ij > 0` and `d_i > 0`;
//! - `CVaR_tau`: the mean of the (unweighted) `DRS_alpha` terms at or below their
//!   `tau`-quantile (numpy's linear interpolation);
//! - `J_lambda = lambda S + (1 - lambda) R_rel`, `H = 2 S R_rel / (S + R_rel)`.
//!
//! Pairs whose diagonal cell is empty are skipped, as drift-happens skips them. Two
//! choices differ from it where it has no number: `S` averages the filled diagonal cells
//! (drift-happens' is NaN when one is empty, and its reader refuses such a matrix), and
//! `H` is undefined when `S` or `R_rel` is (drift-happens writes 0 there, which would rank
//! an empty matrix like a useless model).

use serde::Serialize;

use crate::matrix::{DriftMatrix, Grid, sample_std};
use crate::metrics::Direction;

/// drift-happens' numerical guard in every ratio.
const EPS: f64 = 1e-8;

/// The family's parameters; [`Default`] is drift-happens' (alpha 1, tau 0.1, lambda 0.5,
/// beta 0).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ScoreParameters {
    /// Power of the diagonal in `DRS_alpha` (1: `R_rel`, 0: the mean future utility).
    pub alpha: f64,
    /// The tail share of `CVaR_tau`, in (0, 1).
    pub cvar_tau: f64,
    /// The weight of `S` in `J_lambda`, in [0, 1].
    pub lambda: f64,
    /// The decay rate of the pairs' weights over slice-index gaps, >= 0.
    pub beta: f64,
}

impl Default for ScoreParameters {
    fn default() -> Self {
        ScoreParameters {
            alpha: 1.0,
            cvar_tau: 0.1,
            lambda: 0.5,
            beta: 0.0,
        }
    }
}

impl ScoreParameters {
    /// Checks the ranges drift-happens requires, naming the flag that is out of range.
    pub fn check(&self) -> Result<(), String> {
        let finite = [
            ("--alpha", self.alpha),
            ("--cvar-tau", self.cvar_tau),
            ("--lambda", self.lambda),
            ("--beta", self.beta),
        ];
        if let Some((flag, v)) = finite.iter().find(|(_, v)| !v.is_finite()) {
            return Err(format!("{flag} {v}: must be a finite number"));
        }
        if !(self.cvar_tau > 0.0 && self.cvar_tau < 1.0) {
            return Err(format!("--cvar-tau {}: must be in (0, 1)", self.cvar_tau));
        }
        if !(0.0..=1.0).contains(&self.lambda) {
            return Err(format!("--lambda {}: must be in [0, 1]", self.lambda));
        }
        if self.beta < 0.0 {
            return Err(format!("--beta {}: must be 0 or more", self.beta));
        }
        Ok(())
    }
}

/// The family's scores of one grid; `None` where a score has no pair (or no diagonal
/// cell) to average.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct RobustnessScores {
    /// Strength: mean diagonal utility over every cutoff but the last.
    #[serde(rename = "S")]
    pub strength: Option<f64>,
    /// One minus the mean absolute drop from the diagonal.
    #[serde(rename = "R_abs")]
    pub r_abs: Option<f64>,
    /// The mean retention `U_ij / U_ii`.
    #[serde(rename = "R_rel")]
    pub r_rel: Option<f64>,
    /// The mean power-normalised retention `U_ij / U_ii^alpha`.
    #[serde(rename = "DRS_alpha")]
    pub drs_alpha: Option<f64>,
    /// The geometric mean retention.
    #[serde(rename = "LDRS")]
    pub ldrs: Option<f64>,
    /// The mean of the worst `tau` share of the `DRS_alpha` terms.
    #[serde(rename = "CVaR_tau")]
    pub cvar: Option<f64>,
    /// `lambda S + (1 - lambda) R_rel`.
    #[serde(rename = "J_lambda")]
    pub j_lambda: Option<f64>,
    /// The harmonic mean of `S` and `R_rel`.
    #[serde(rename = "H")]
    pub h: Option<f64>,
}

/// Reads one score off a [`RobustnessScores`].
pub type PickScore = fn(&RobustnessScores) -> Option<f64>;

/// Each score's name as drift-happens writes it, and how to read it off.
pub const SCORE_NAMES: [(&str, PickScore); 8] = [
    ("S", |s| s.strength),
    ("R_abs", |s| s.r_abs),
    ("R_rel", |s| s.r_rel),
    ("DRS_alpha", |s| s.drs_alpha),
    ("LDRS", |s| s.ldrs),
    ("CVaR_tau", |s| s.cvar),
    ("J_lambda", |s| s.j_lambda),
    ("H", |s| s.h),
];

/// A score over seeds: the mean and sample standard deviation (ddof 1, `None` for one
/// seed) of the seeds where it is defined.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SeedMean {
    /// Mean over the seeds.
    pub mean: f64,
    /// Sample standard deviation; `None` under two seeds.
    pub sd: Option<f64>,
}

/// The scores of one grid of a metric whose direction is `direction`.
pub fn robustness_scores(
    grid: &Grid,
    direction: Direction,
    p: &ScoreParameters,
) -> RobustnessScores {
    let k = grid.k();
    let utility = |v: f64| match direction {
        Direction::HigherIsBetter => v.clamp(0.0, 1.0),
        Direction::LowerIsBetter => (-v).exp(),
    };
    let u = |i: usize, j: usize| grid.get(i, j).map(utility);
    let counted = if k > 1 { k - 1 } else { k };
    let strength = mean((0..counted).filter_map(|i| u(i, i)));
    // The future pairs with a diagonal: (d_i, U_ij, weight).
    let pairs: Vec<(f64, f64, f64)> = (0..k)
        .flat_map(|i| (i + 1..k).map(move |j| (i, j)))
        .filter_map(|(i, j)| {
            let weight = (-p.beta * (j - i) as f64).exp();
            Some((u(i, i)?, u(i, j)?, weight))
        })
        .collect();
    let weighted = |terms: &mut dyn Iterator<Item = (f64, f64)>| {
        let (sum, total) = terms.fold((0.0, 0.0), |(s, t), (v, w)| (s + w * v, t + w));
        (total > 0.0).then(|| sum / total)
    };
    let r_abs = weighted(&mut pairs.iter().map(|&(d, v, w)| (d - v, w))).map(|drop| 1.0 - drop);
    let r_rel = weighted(
        &mut pairs
            .iter()
            .filter(|&&(d, _, _)| d >= EPS)
            .map(|&(d, v, w)| (v / (d + EPS), w)),
    );
    let drs_terms: Vec<(f64, f64)> = pairs
        .iter()
        .map(|&(d, v, w)| (v / (d + EPS).powf(p.alpha), w))
        .collect();
    let drs_alpha = weighted(&mut drs_terms.iter().copied());
    let ldrs = weighted(
        &mut pairs
            .iter()
            .filter(|&&(d, v, _)| v > 0.0 && d > 0.0)
            .map(|&(d, v, w)| ((v + EPS).ln() - (d + EPS).ln(), w)),
    )
    .map(f64::exp);
    let terms: Vec<f64> = drs_terms.iter().map(|t| t.0).collect();
    let cvar =
        quantile(&terms, p.cvar_tau).and_then(|q| mean(terms.iter().copied().filter(|&t| t <= q)));
    let j_lambda = strength
        .zip(r_rel)
        .map(|(s, r)| p.lambda * s + (1.0 - p.lambda) * r);
    let h = strength.zip(r_rel).map(|(s, r)| {
        if s + r > 0.0 {
            2.0 * s * r / (s + r)
        } else {
            0.0
        }
    });
    RobustnessScores {
        strength,
        r_abs,
        r_rel,
        drs_alpha,
        ldrs,
        cvar,
        j_lambda,
        h,
    }
}

/// The scores of every seed's grid, in the matrix's seed order.
pub fn scores_per_seed(matrix: &DriftMatrix, p: &ScoreParameters) -> Vec<(u64, RobustnessScores)> {
    matrix
        .seeds()
        .iter()
        .zip(matrix.grids())
        .map(|(&seed, grid)| (seed, robustness_scores(grid, matrix.direction(), p)))
        .collect()
}

/// Each score's mean and sample standard deviation over `per_seed`, by name
/// ([`SCORE_NAMES`] order); `None` for a score no seed defines.
pub fn over_seeds(per_seed: &[RobustnessScores]) -> Vec<(&'static str, Option<SeedMean>)> {
    SCORE_NAMES
        .iter()
        .map(|&(name, pick)| {
            let values: Vec<f64> = per_seed.iter().filter_map(pick).collect();
            let seed_mean = mean(values.iter().copied()).map(|m| SeedMean {
                mean: m,
                sd: sample_std(&values),
            });
            (name, seed_mean)
        })
        .collect()
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// numpy's default (linear) quantile, `q` in [0, 1], with its interpolation written as
/// numpy writes it (from the upper neighbour when the fraction is 0.5 or more) so the
/// threshold is the same number.
fn quantile(values: &[f64], q: f64) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let last = sorted.len().checked_sub(1)?;
    let at = q * last as f64;
    let lo = (at.floor() as usize).min(last);
    let hi = (lo + 1).min(last);
    let (a, b, t) = (sorted[lo], sorted[hi], at - lo as f64);
    let diff = b - a;
    Some(if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(rows: &[&[Option<f64>]]) -> Grid {
        Grid::from_rows(&rows.iter().map(|r| r.to_vec()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn a_two_slice_matrix_by_hand() {
        // U = [[0.8, 0.6], [_, 0.9]]: S = 0.8 (the last diagonal cell left out), one pair
        // with drop 0.2 and retention 0.75.
        let g = grid(&[&[Some(0.8), Some(0.6)], &[None, Some(0.9)]]);
        let s = robustness_scores(&g, Direction::HigherIsBetter, &ScoreParameters::default());
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-7;
        assert!(close(s.strength, 0.8));
        assert!(close(s.r_abs, 0.8));
        assert!(close(s.r_rel, 0.75));
        assert!(close(s.ldrs, 0.75));
        assert!(close(s.cvar, 0.75));
        assert!(close(s.h, 2.0 * 0.8 * 0.75 / 1.55));
    }

    #[test]
    fn an_empty_diagonal_cell_is_left_out_and_no_pair_means_no_score() {
        let g = grid(&[
            &[None, Some(0.6), Some(0.5)],
            &[None, Some(0.7), Some(0.7)],
            &[None, None, Some(0.9)],
        ]);
        let s = robustness_scores(&g, Direction::HigherIsBetter, &ScoreParameters::default());
        assert_eq!(s.strength, Some(0.7));
        assert!((s.r_rel.unwrap() - 0.7 / (0.7 + EPS)).abs() < 1e-15);
        let lone = grid(&[&[Some(0.9)]]);
        let s = robustness_scores(
            &lone,
            Direction::HigherIsBetter,
            &ScoreParameters::default(),
        );
        assert_eq!((s.strength, s.r_rel, s.h), (Some(0.9), None, None));
    }

    #[test]
    fn errors_become_utilities_by_exp_minus() {
        let g = grid(&[&[Some(0.0), Some(1.0)], &[None, Some(0.5)]]);
        let s = robustness_scores(&g, Direction::LowerIsBetter, &ScoreParameters::default());
        assert_eq!(s.strength, Some(1.0));
        assert!((s.r_abs.unwrap() - (-1.0_f64).exp()).abs() < 1e-15);
    }

    #[test]
    fn parameters_out_of_range_name_their_flag() {
        let bad = ScoreParameters {
            cvar_tau: 1.0,
            ..ScoreParameters::default()
        };
        assert!(bad.check().unwrap_err().contains("--cvar-tau"));
        let bad = ScoreParameters {
            beta: -0.1,
            ..ScoreParameters::default()
        };
        assert!(bad.check().unwrap_err().contains("--beta"));
        assert!(ScoreParameters::default().check().is_ok());
    }
}
