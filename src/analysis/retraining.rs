//! Retraining policies simulated from a cumulative drift matrix, with no new training:
//! what a deployment would have scored had it retrained on a schedule, on an alarm, or
//! never.
//!
//! Time runs over the slices. The model of row 0 is deployed after slice 0; after each
//! slice `s` the policy may retrain, which deploys the model of row `s` (trained on slices
//! `0..=s`, as a cumulative regime trains). During slice `t` the deployed model is the
//! latest one retrained before `t`, so slice `t` scores cell `M[m][t]`, `m < t`. A
//! policy's score is the mean over the slices `1..K` whose cell is filled; its cost is
//! the number of retrains after the first training.

use serde::Serialize;

use crate::matrix::Grid;
use crate::metrics::Direction;

/// When to retrain.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Policy {
    /// Keep the first model.
    Never,
    /// Retrain after every `k`-th slice (after slices `k, 2k, ...`; `k = 1` is always).
    Every {
        /// The period in slices.
        k: usize,
    },
    /// Retrain after a slice on which the deployed model scored more than `drop` worse
    /// than on its own ID cell `M[m][m]` (metric units, oriented by the direction).
    OnDrop {
        /// The tolerated drop.
        drop: f64,
    },
    /// Retrain after a slice on which a label-free detector of the deployed model crossed
    /// `threshold` (oriented so that larger means more shift); the detector is the
    /// caller's ([`replay`]).
    Trigger {
        /// The threshold.
        threshold: f64,
    },
}

impl Policy {
    /// A short name for tables and figures: `never`, `every 2`, `drop > 0.05`.
    pub fn name(&self, scale: f64) -> String {
        match self {
            Policy::Never => "never".into(),
            Policy::Every { k: 1 } => "every slice".into(),
            Policy::Every { k } => format!("every {k}"),
            // Rounded to 6 decimals: 0.07 * 100 is 7.000000000000001.
            Policy::OnDrop { drop } => format!("drop > {}", (drop * scale * 1e6).round() / 1e6),
            Policy::Trigger { threshold } => format!("trigger > {threshold:.4}"),
        }
    }
}

/// One simulated deployment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Deployment {
    /// The policy.
    pub policy: Policy,
    /// Retrains after the first training.
    pub retrains: usize,
    /// The mean of the scored cells.
    pub mean: Option<f64>,
    /// The worst scored cell (minimum, or maximum when lower is better).
    pub worst: Option<f64>,
    /// For each slice `t` in `1..K`, the row of the deployed model.
    pub deployed: Vec<usize>,
}

/// Simulates `policy` on `grid`.
pub fn simulate(grid: &Grid, direction: Direction, policy: Policy) -> Deployment {
    replay(grid, direction, policy, |model, cell| match policy {
        Policy::Never => false,
        Policy::Every { k: period } => period > 0 && cell.slice % period == 0,
        Policy::OnDrop { drop } => match (grid.get(model, model), cell.value) {
            (Some(id), Some(v)) => match direction {
                Direction::HigherIsBetter => id - v > drop,
                Direction::LowerIsBetter => v - id > drop,
            },
            _ => false,
        },
        // A trigger's rule is its caller's (see `replay`); alone it never fires.
        Policy::Trigger { .. } => false,
    })
}

/// What a policy sees after slice `slice`: the deployed model's cell on it.
#[derive(Clone, Copy, Debug)]
pub struct Observed {
    /// The slice just scored.
    pub slice: usize,
    /// The deployed model's cell on it (`None` where empty).
    pub value: Option<f64>,
}

/// The deployment of `grid` when `retrain(deployed_row, observed)` decides after each
/// slice (recorded as `policy`): the one replay loop of [`simulate`] and the detector
/// triggers of [`crate::analysis::backtest`].
pub fn replay(
    grid: &Grid,
    direction: Direction,
    policy: Policy,
    retrain: impl Fn(usize, Observed) -> bool,
) -> Deployment {
    let k = grid.k();
    let mut model = 0;
    let mut retrains = 0;
    let mut deployed = Vec::new();
    let mut scores = Vec::new();
    for t in 1..k {
        deployed.push(model);
        let cell = grid.get(model, t);
        scores.extend(cell);
        let observed = Observed {
            slice: t,
            value: cell,
        };
        // Retraining after the last slice deploys nothing that is scored.
        if retrain(model, observed) && t + 1 < k {
            model = t;
            retrains += 1;
        }
    }
    let worst = scores.iter().copied().reduce(|a, b| match direction {
        Direction::HigherIsBetter => a.min(b),
        Direction::LowerIsBetter => a.max(b),
    });
    Deployment {
        policy,
        retrains,
        mean: (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64),
        worst,
        deployed,
    }
}

/// The policies a study reports: never; every 1, 2, 3 and 5 slices; and retraining on a
/// drop of 1, 2, 5 and 10 points of a `[0, 1]` metric (`scale` 100), or of 1%, 2%, 5%
/// and 10% of the mean ID score for an error metric.
pub fn standard_policies(grid: &Grid, scale: f64) -> Vec<Policy> {
    let unit = if scale == 100.0 {
        0.01
    } else {
        let ids: Vec<f64> = (0..grid.k()).filter_map(|i| grid.get(i, i)).collect();
        let mean = ids.iter().sum::<f64>() / ids.len().max(1) as f64;
        mean.abs() * 0.01
    };
    let mut out = vec![Policy::Never];
    out.extend([1, 2, 3, 5].map(|k| Policy::Every { k }));
    out.extend([1.0, 2.0, 5.0, 10.0].map(|d| Policy::OnDrop { drop: d * unit }));
    out
}
