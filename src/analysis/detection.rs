//! The label-free detectors of one model of a study ([`crate::detectors`]) judged by its
//! seeds' drift matrices, as the report shows them: every detector's [`backtest`], the
//! standard retraining policies replayed on the same grids (what the detectors' trigger
//! curves are read against), and the accuracy estimates cell by cell beside the true
//! accuracy.
//!
//! The grids are the runs' full grids, the rows of collapsed checkpoints included, as
//! `drift summarize --detectors` reads them: a replayed deployment serves whatever model it
//! retrained, and a collapsed one is what it would have served. The study's other analyses
//! may leave those rows out ([`super::StudyModel::matrix`]); the policies here are
//! therefore replayed per seed on the full grids, not read from
//! [`super::ModelAnalysis::retraining`] (the seed-mean matrix), so that a detector's curve
//! and the schedules score the same cells.

use serde::Serialize;

use super::backtest::{DetectorBacktest, backtest};
use super::retraining::{Policy, simulate, standard_policies};
use crate::detectors::{DetectorKind, DetectorMatrices, detector_named};
use crate::matrix::{DriftMatrix, Grid};
use crate::{Error, Result};

/// A model's runs with their detectors, as a study hands them to the analyses.
#[derive(Clone, Copy, Debug)]
pub struct SeedDetectors<'a> {
    /// The model's matrix with every row, collapsed checkpoints included.
    pub matrix: &'a DriftMatrix,
    /// Each seed's detector matrices, in the order of `matrix`'s seeds.
    pub detectors: &'a [&'a DetectorMatrices],
}

/// A retraining policy replayed on each seed's full grid, averaged over the seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScheduleMean {
    /// The policy ([`standard_policies`] of the seed-mean full matrix).
    pub policy: Policy,
    /// Mean retrains after the first training.
    pub retrains: f64,
    /// Mean over the seeds of the mean scored cell (seeds without a scored cell left out).
    pub mean: Option<f64>,
}

/// One cell `(cutoff, slice)`, `slice > cutoff`, of one seed where an accuracy estimate
/// and the true accuracy ([`DetectorMatrices::accuracy`]) are both defined.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EstimateCell {
    /// The estimate detector ([`DetectorKind::Estimate`]).
    pub detector: &'static str,
    /// The run's seed.
    pub seed: u64,
    /// The checkpoint (row).
    pub cutoff: usize,
    /// The slice (column).
    pub slice: usize,
    /// The true accuracy of the checkpoint on the slice's evaluated rows, in `[0, 1]`.
    pub accuracy: f64,
    /// The detector's estimate of it, in `[0, 1]`.
    pub estimate: f64,
}

/// The detectors of one model judged by its matrices (see the module docs).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DetectorStudy {
    /// The seeds backtested, ascending.
    pub seeds: Vec<u64>,
    /// Every detector all seeds have, in [`crate::detectors::DETECTORS`] order.
    pub backtest: Vec<DetectorBacktest>,
    /// The standard retraining policies on the same grids.
    pub schedules: Vec<ScheduleMean>,
    /// The accuracy estimates of every seed, detector by detector, then seed, row, column.
    pub estimates: Vec<EstimateCell>,
}

/// The [`standard_policies`] of `matrix`'s seed mean, each replayed on every seed's grid
/// and averaged over the seeds: the schedules a detector's trigger curve is read against.
pub fn schedules_over_seeds(matrix: &DriftMatrix) -> Vec<ScheduleMean> {
    let scale = matrix.metric().display_scale();
    standard_policies(&matrix.mean(), scale)
        .into_iter()
        .map(|policy| {
            let replays: Vec<_> = matrix
                .grids()
                .iter()
                .map(|g| simulate(g, matrix.direction(), policy))
                .collect();
            let means: Vec<f64> = replays.iter().filter_map(|d| d.mean).collect();
            ScheduleMean {
                policy,
                retrains: replays.iter().map(|d| d.retrains as f64).sum::<f64>()
                    / replays.len().max(1) as f64,
                mean: (!means.is_empty()).then(|| means.iter().sum::<f64>() / means.len() as f64),
            }
        })
        .collect()
}

impl DetectorStudy {
    /// The backtest of `runs` (checked by [`check_detectors`]).
    pub fn new(runs: &SeedDetectors) -> DetectorStudy {
        let matrix = runs.matrix;
        let direction = matrix.direction();
        let pairs: Vec<(&Grid, &DetectorMatrices)> = matrix
            .grids()
            .iter()
            .zip(runs.detectors.iter().copied())
            .collect();
        let backtest = backtest(&pairs, direction);
        let schedules = schedules_over_seeds(matrix);
        let estimates = backtest
            .iter()
            .filter(|b| {
                detector_named(b.detector).is_some_and(|d| d.kind == DetectorKind::Estimate)
            })
            .flat_map(|b| {
                matrix
                    .seeds()
                    .iter()
                    .zip(runs.detectors)
                    .flat_map(move |(&seed, m)| estimate_cells(b.detector, seed, m))
            })
            .collect();
        DetectorStudy {
            seeds: matrix.seeds().to_vec(),
            backtest,
            schedules,
            estimates,
        }
    }

    /// The backtest of the detector `name`, if every seed has it.
    pub fn detector(&self, name: &str) -> Option<&DetectorBacktest> {
        self.backtest.iter().find(|b| b.detector == name)
    }
}

/// One detector over the trained models of a study: how well it tracks the true drop.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DetectorRank {
    /// The detector's name.
    pub detector: &'static str,
    /// The mean over the models that have it of each model's seed-mean Spearman
    /// correlation with the true drop (`None` when no model has one).
    pub spearman: Option<f64>,
    /// For an accuracy estimate: the mean over the models of each model's seed-mean
    /// absolute error against the true accuracy (accuracy in `[0, 1]`).
    pub mae: Option<f64>,
    /// How many models have the detector.
    pub models: usize,
}

/// The detectors of `models` ranked by [`DetectorRank::spearman`], best first, those
/// without one last; ties keep [`crate::detectors::DETECTORS`] order.
pub fn rank_detectors(models: &[&DetectorStudy]) -> Vec<DetectorRank> {
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let mut ranked: Vec<DetectorRank> = crate::detectors::DETECTORS
        .iter()
        .filter_map(|d| {
            let found: Vec<&DetectorBacktest> =
                models.iter().filter_map(|m| m.detector(d.name)).collect();
            if found.is_empty() {
                return None;
            }
            let spearman: Vec<f64> = found.iter().filter_map(|b| b.spearman_mean).collect();
            let mae: Vec<f64> = found
                .iter()
                .filter_map(|b| {
                    let seeds: Vec<f64> = b.mae.as_ref()?.iter().flatten().copied().collect();
                    mean(&seeds)
                })
                .collect();
            Some(DetectorRank {
                detector: d.name,
                spearman: mean(&spearman),
                mae: mean(&mae),
                models: found.len(),
            })
        })
        .collect();
    // A stable sort: ties keep the table's order.
    ranked.sort_by(|a, b| match (a.spearman, b.spearman) {
        (Some(x), Some(y)) => y.total_cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    ranked
}

/// The cells after the diagonal where detector `name` of `m` and the true accuracy are
/// both defined.
fn estimate_cells<'a>(
    name: &'static str,
    seed: u64,
    m: &'a DetectorMatrices,
) -> impl Iterator<Item = EstimateCell> + 'a {
    let estimates = m.detectors.get(name);
    let truth = m.accuracy.as_ref();
    let k = m.slices.len();
    (0..k)
        .flat_map(move |i| (i + 1..k).map(move |j| (i, j)))
        .filter_map(move |(i, j)| {
            let estimate = (*estimates?.get(i)?.get(j)?)?;
            let accuracy = (*truth?.get(i)?.get(j)?)?;
            Some(EstimateCell {
                detector: name,
                seed,
                cutoff: i,
                slice: j,
                accuracy,
                estimate,
            })
        })
}

/// Checks that `runs` has one detector file per seed of its matrix, each over the
/// matrix's slices with K x K matrices; `model` names it in the error.
pub fn check_detectors(model: &str, runs: &SeedDetectors) -> Result<()> {
    let matrix = runs.matrix;
    let k = matrix.k();
    let fail = |what: String| Err(Error::Invalid(format!("model {model}: detectors: {what}")));
    if runs.detectors.len() != matrix.seeds().len() {
        return fail(format!(
            "{} files for {} seeds",
            runs.detectors.len(),
            matrix.seeds().len()
        ));
    }
    let square = |rows: &[Vec<Option<f64>>]| rows.len() == k && rows.iter().all(|r| r.len() == k);
    for (seed, m) in matrix.seeds().iter().zip(runs.detectors) {
        if m.slices != matrix.slices() {
            return fail(format!("seed {seed}: other slices than the matrix"));
        }
        if let Some((name, _)) = m.detectors.iter().find(|(_, rows)| !square(rows)) {
            return fail(format!("seed {seed}: {name} is not {k} x {k}"));
        }
        if m.accuracy.as_ref().is_some_and(|rows| !square(rows)) {
            return fail(format!("seed {seed}: the accuracy is not {k} x {k}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::metrics::Metric;

    type Rows = Vec<Vec<Option<f64>>>;

    /// The detector file of a 3-slice run with `detectors`, true accuracy `accuracy`.
    fn file(detectors: &[(&str, Rows)], accuracy: Option<Rows>) -> DetectorMatrices {
        DetectorMatrices {
            schema: crate::detectors::SCHEMA,
            slices: vec!["a".into(), "b".into(), "c".into()],
            sample_rows: 1,
            permutations: 1,
            detectors: detectors
                .iter()
                .map(|(n, r)| (n.to_string(), r.clone()))
                .collect::<BTreeMap<_, _>>(),
            accuracy,
            id_priors: None,
            estimated_priors: None,
        }
    }

    fn upper(a: f64, b: f64, c: f64) -> Rows {
        vec![
            vec![None, Some(a), Some(b)],
            vec![None, None, Some(c)],
            vec![None, None, None],
        ]
    }

    fn grid(rows: [[f64; 3]; 3]) -> Grid {
        Grid::from_rows(&rows.map(|r| r.map(Some).to_vec())).unwrap()
    }

    #[test]
    fn estimates_are_paired_with_the_true_accuracy_cell_by_cell_and_policies_averaged() {
        let mut matrix =
            DriftMatrix::new(vec!["a".into(), "b".into(), "c".into()], Metric::Accuracy);
        // Seed 0: drops 0.1, 0.3 (row 0) and 0.2 (row 1); seed 1 the same, 0.1 lower.
        matrix
            .add_seed(0, grid([[0.9, 0.8, 0.6], [0.9, 0.9, 0.7], [0.9, 0.9, 0.9]]))
            .unwrap();
        matrix
            .add_seed(1, grid([[0.8, 0.7, 0.5], [0.8, 0.8, 0.6], [0.8, 0.8, 0.8]]))
            .unwrap();
        let seed0 = file(
            &[
                ("atc", upper(0.85, 0.5, 0.75)),
                ("mmd", upper(1.0, 3.0, 2.0)),
            ],
            Some(upper(0.8, 0.6, 0.7)),
        );
        // Seed 1 has no accuracy for cell (0, 2): that cell is left out.
        let seed1 = file(
            &[("atc", upper(0.7, 0.4, 0.6)), ("mmd", upper(1.0, 2.0, 3.0))],
            Some(vec![
                vec![None, Some(0.7), None],
                vec![None, None, Some(0.6)],
                vec![None, None, None],
            ]),
        );
        let runs = SeedDetectors {
            matrix: &matrix,
            detectors: &[&seed0, &seed1],
        };
        check_detectors("m", &runs).unwrap();
        let study = DetectorStudy::new(&runs);
        assert_eq!(study.seeds, vec![0, 1]);
        // In DETECTORS order: mmd before atc.
        let names: Vec<&str> = study.backtest.iter().map(|b| b.detector).collect();
        assert_eq!(names, ["mmd", "atc"]);
        // mmd ranks seed 0's drops (0.1, 0.3, 0.2) exactly: rho 1; seed 1's (1, 2, 3)
        // against (0.1, 0.3, 0.2): rho 0.5.
        let mmd = study.detector("mmd").unwrap();
        assert_eq!(mmd.spearman, vec![Some(1.0), Some(0.5)]);
        assert!((mmd.spearman_mean.unwrap() - 0.75).abs() < 1e-12);
        let cells: Vec<(u64, usize, usize, f64, f64)> = study
            .estimates
            .iter()
            .map(|c| (c.seed, c.cutoff, c.slice, c.accuracy, c.estimate))
            .collect();
        assert_eq!(
            cells,
            [
                (0, 0, 1, 0.8, 0.85),
                (0, 0, 2, 0.6, 0.5),
                (0, 1, 2, 0.7, 0.75),
                (1, 0, 1, 0.7, 0.7),
                (1, 1, 2, 0.6, 0.6),
            ]
        );
        assert!(study.estimates.iter().all(|c| c.detector == "atc"));
        // Never: cells (0, 1), (0, 2) of each seed: (0.8 + 0.6) / 2 and (0.7 + 0.5) / 2.
        let never = &study.schedules[0];
        assert_eq!(never.policy, Policy::Never);
        assert_eq!(never.retrains, 0.0);
        assert!((never.mean.unwrap() - 0.65).abs() < 1e-12);
        // Every slice: cells (0, 1) and (1, 2), one retrain.
        let every = &study.schedules[1];
        assert_eq!(every.policy, Policy::Every { k: 1 });
        assert_eq!(every.retrains, 1.0);
        assert!((every.mean.unwrap() - 0.7).abs() < 1e-12);
    }

    #[test]
    fn detectors_rank_by_the_mean_over_models_and_the_mae_averages_seeds_then_models() {
        let point = |detector, spearman_mean, mae: Option<Vec<Option<f64>>>| DetectorBacktest {
            detector,
            spearman: vec![spearman_mean],
            spearman_mean,
            spearman_std: None,
            mae,
            curve: Vec::new(),
        };
        let study = |backtest| DetectorStudy {
            seeds: vec![0],
            backtest,
            schedules: Vec::new(),
            estimates: Vec::new(),
        };
        let a = study(vec![
            point("mmd", Some(0.2), None),
            point("ks", None, None),
            point("atc", Some(0.8), Some(vec![Some(0.1), Some(0.3)])),
        ]);
        let b = study(vec![
            point("mmd", Some(0.6), None),
            point("atc", Some(0.4), Some(vec![Some(0.4), None])),
        ]);
        let ranked = rank_detectors(&[&a, &b]);
        let names: Vec<&str> = ranked.iter().map(|r| r.detector).collect();
        // atc (0.8 + 0.4) / 2 = 0.6 before mmd (0.2 + 0.6) / 2 = 0.4; ks (none) last.
        assert_eq!(names, ["atc", "mmd", "ks"]);
        assert!((ranked[0].spearman.unwrap() - 0.6).abs() < 1e-12);
        assert!((ranked[1].spearman.unwrap() - 0.4).abs() < 1e-12);
        // MAE: model a (0.1 + 0.3) / 2 = 0.2, model b 0.4: 0.3.
        assert!((ranked[0].mae.unwrap() - 0.3).abs() < 1e-12);
        assert_eq!((ranked[0].models, ranked[2].models), (2, 1));
        assert_eq!((ranked[1].mae, ranked[2].spearman), (None, None));
    }

    #[test]
    fn detectors_of_another_shape_or_count_are_refused() {
        let mut matrix =
            DriftMatrix::new(vec!["a".into(), "b".into(), "c".into()], Metric::Accuracy);
        matrix.add_seed(0, grid([[0.9; 3]; 3])).unwrap();
        let good = file(&[("mmd", upper(1.0, 2.0, 3.0))], None);
        let short = file(&[("mmd", vec![vec![None; 3]; 2])], None);
        let none: [&DetectorMatrices; 0] = [];
        for detectors in [&[&short][..], &[&good, &good][..], &none[..]] {
            let runs = SeedDetectors {
                matrix: &matrix,
                detectors,
            };
            assert!(check_detectors("m", &runs).is_err());
        }
    }
}
