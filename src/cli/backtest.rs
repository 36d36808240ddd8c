//! `drift summarize RUN_DIR --detectors`: the run's label-free detectors backtested
//! against its drift matrix ([`crate::analysis::backtest`]), beside the fixed retraining
//! schedules.

use serde::Serialize;

use crate::analysis::{DetectorBacktest, backtest, schedules_over_seeds};
use crate::artifacts::ModelRuns;
use crate::detectors::{DetectorMatrices, detector_named};
use crate::matrix::DriftMatrix;
use crate::{Error, Result};

/// A fixed schedule's deployment, averaged over seeds.
#[derive(Serialize)]
pub(super) struct Schedule {
    policy: String,
    retrains: f64,
    mean: Option<f64>,
}

/// The backtest of every detector, and the schedules to read it against.
#[derive(Serialize)]
pub(super) struct Backtest {
    /// Ranked by the seed-mean Spearman correlation with the true drop (best first).
    detectors: Vec<DetectorBacktest>,
    /// Never, every 1/2/3/5 slices (every slice is the oracle's cost), and on a drop.
    schedules: Vec<Schedule>,
    /// The detector that tracks the true drop best.
    best: Option<&'static str>,
}

impl Backtest {
    /// The backtest of `runs` on `matrix`: every row, collapsed ones included, since a
    /// replayed deployment serves whatever model it retrained, and a collapsed one is what
    /// it would have served.
    pub(super) fn new(runs: &ModelRuns, matrix: &DriftMatrix) -> Result<Backtest> {
        let mut pairs: Vec<(&crate::matrix::Grid, &DetectorMatrices)> = Vec::new();
        for (seed, grid) in matrix.seeds().iter().zip(matrix.grids()) {
            let detectors = runs
                .provenance
                .iter()
                .zip(&runs.detectors)
                .find(|(p, _)| p.seed == *seed)
                .and_then(|(_, d)| d.as_ref())
                .ok_or_else(|| {
                    Error::Invalid(format!(
                        "--detectors: seed {seed} of {}/{} has no detectors.json; rerun it \
                         with `drift run --detectors` (finished cutoffs are reused)",
                        runs.preset, runs.model
                    ))
                })?;
            pairs.push((grid, detectors));
        }
        let mut detectors = backtest(&pairs, matrix.direction());
        detectors.sort_by(|a, b| {
            b.spearman_mean
                .unwrap_or(f64::NEG_INFINITY)
                .total_cmp(&a.spearman_mean.unwrap_or(f64::NEG_INFINITY))
        });
        let scale = matrix.metric().display_scale();
        let schedules = schedules_over_seeds(matrix)
            .into_iter()
            .map(|s| Schedule {
                policy: s.policy.name(scale),
                retrains: s.retrains,
                mean: s.mean,
            })
            .collect();
        let best = detectors
            .iter()
            .find(|d| d.spearman_mean.is_some())
            .map(|d| d.detector);
        Ok(Backtest {
            detectors,
            schedules,
            best,
        })
    }

    /// The backtest for people.
    pub(super) fn table(&self) -> String {
        let number = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
        let mut out = String::from(
            "\ndetectors backtested against the matrix (Spearman with the true drop M[i][i] - \
             M[i][j], mean ± sd over seeds; MAE of the accuracy estimates)\n",
        );
        for d in &self.detectors {
            let about = detector_named(d.detector).map_or("", |d| d.about);
            let sd = d
                .spearman_std
                .map_or(String::new(), |s| format!(" ± {s:.3}"));
            let mae = d
                .mae
                .as_ref()
                .map(|m| {
                    let v: Vec<f64> = m.iter().flatten().copied().collect();
                    format!(
                        "  MAE {}",
                        number((!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64))
                    )
                })
                .unwrap_or_default();
            out += &format!(
                "  {:<11} rho {}{sd}{mae}  ({about})\n",
                d.detector,
                number(d.spearman_mean)
            );
        }
        if let Some(best) = self.best {
            out += &format!("best tracker: {best}\n");
        }
        out += "\nas retraining triggers (threshold at the detector's 10%..90% points): retrains -> mean realised\n";
        for d in &self.detectors {
            let points: Vec<String> = d
                .curve
                .iter()
                .map(|p| format!("{:.1}->{:.3}", p.retrains, p.mean))
                .collect();
            out += &format!("  {:<11} {}\n", d.detector, points.join("  "));
        }
        out += "schedules: ";
        let schedules: Vec<String> = self
            .schedules
            .iter()
            .map(|s| format!("{} {:.1}->{}", s.policy, s.retrains, number(s.mean)))
            .collect();
        out += &schedules.join(", ");
        out + "\n"
    }
}
