//! The label-free detectors of a run ([`crate::detectors`]) judged by the drift matrix,
//! which knows what each shift really cost: which detector would have told you to retrain?
//!
//! Per detector and seed:
//!
//! - **Tracking**: Spearman's rank correlation (average ranks for ties, as
//!   `scipy.stats.spearmanr`) between the detector, oriented so that larger means more
//!   shift, and the true drop `M[i][i] - M[i][j]` (oriented by the metric's direction) over
//!   every cell `j > i` where both are defined.
//! - **Error** (the accuracy estimates only): the mean absolute error of the estimated
//!   accuracy against the true accuracy of the cell, in accuracy units.
//! - **As a retraining trigger**: [`replay`] retrains after a slice on which the deployed
//!   model's detector exceeds a threshold; the thresholds are the detector's own values at
//!   the 10 %, 20 %, ..., 90 % points of its cells (nearest rank), so each detector is
//!   swept over its own scale, from retraining almost always to almost never. Each point
//!   gives the retrains and the mean realised performance, to set beside the schedules of
//!   [`standard_policies`](super::standard_policies).
//!
//! Seeds are summarised by their mean and sample standard deviation.

use serde::Serialize;

use super::retraining::{Policy, replay};
use crate::detectors::{DETECTORS, DetectorMatrices};
use crate::matrix::Grid;
use crate::metrics::Direction;

/// One threshold of a detector used as a retraining trigger, averaged over seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TriggerPoint {
    /// The quantile of the detector's cells the threshold sits at (0.1 to 0.9).
    pub quantile: f64,
    /// Mean retrains after the first training.
    pub retrains: f64,
    /// Mean realised performance (the deployed models' cells).
    pub mean: f64,
}

/// One detector's backtest over the seeds of a model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DetectorBacktest {
    /// The detector's name.
    pub detector: &'static str,
    /// Spearman correlation with the true drop, per seed (`None` with fewer than 3 cells).
    pub spearman: Vec<Option<f64>>,
    /// Its mean and sample standard deviation over the seeds that have one.
    pub spearman_mean: Option<f64>,
    /// Sample standard deviation (`None` below two seeds).
    pub spearman_std: Option<f64>,
    /// Accuracy estimates: mean absolute error against the true accuracy, per seed.
    pub mae: Option<Vec<Option<f64>>>,
    /// The trigger's curve: retrains against realised performance.
    pub curve: Vec<TriggerPoint>,
}

/// Backtests every detector present in all of `runs` (one `(grid, detectors)` per seed).
pub fn backtest(
    runs: &[(&Grid, &DetectorMatrices)],
    direction: Direction,
) -> Vec<DetectorBacktest> {
    DETECTORS
        .iter()
        .filter(|d| !runs.is_empty() && runs.iter().all(|(_, m)| m.detectors.contains_key(d.name)))
        .map(|d| {
            let orient = |v: f64| if d.larger_means_shift { v } else { -v };
            let spearman: Vec<Option<f64>> = runs
                .iter()
                .map(|(grid, m)| {
                    let (scores, drops): (Vec<f64>, Vec<f64>) =
                        cells(grid, &m.detectors[d.name], direction)
                            .map(|(v, drop)| (orient(v), drop))
                            .unzip();
                    spearman(&scores, &drops)
                })
                .collect();
            let (spearman_mean, spearman_std) = mean_std(&spearman);
            let mae = (d.kind == crate::detectors::DetectorKind::Estimate).then(|| {
                runs.iter()
                    .map(|(_, m)| {
                        let truth = m.accuracy.as_ref()?;
                        let errors: Vec<f64> = m.detectors[d.name]
                            .iter()
                            .flatten()
                            .zip(truth.iter().flatten())
                            .filter_map(|(e, t)| Some((e.as_ref()? - t.as_ref()?).abs()))
                            .collect();
                        (!errors.is_empty())
                            .then(|| errors.iter().sum::<f64>() / errors.len() as f64)
                    })
                    .collect()
            });
            DetectorBacktest {
                detector: d.name,
                spearman,
                spearman_mean,
                spearman_std,
                mae,
                curve: curve(runs, d.name, &orient, direction),
            }
        })
        .collect()
}

/// `(detector value, true drop)` of every cell after the diagonal where both exist.
fn cells<'a>(
    grid: &'a Grid,
    detector: &'a [Vec<Option<f64>>],
    direction: Direction,
) -> impl Iterator<Item = (f64, f64)> + 'a {
    let k = grid.k();
    (0..k)
        .flat_map(move |i| (i + 1..k).map(move |j| (i, j)))
        .filter_map(move |(i, j)| {
            let value = (*detector.get(i)?.get(j)?)?;
            let (id, cell) = (grid.get(i, i)?, grid.get(i, j)?);
            let drop = match direction {
                Direction::HigherIsBetter => id - cell,
                Direction::LowerIsBetter => cell - id,
            };
            Some((value, drop))
        })
}

/// The trigger curve of detector `name` (see the module docs), averaged over seeds.
fn curve(
    runs: &[(&Grid, &DetectorMatrices)],
    name: &str,
    orient: &dyn Fn(f64) -> f64,
    direction: Direction,
) -> Vec<TriggerPoint> {
    (1..=9)
        .filter_map(|tenth| {
            let quantile = f64::from(tenth) / 10.0;
            let points: Vec<(f64, f64)> = runs
                .iter()
                .filter_map(|(grid, m)| {
                    let detector = &m.detectors[name];
                    let mut values: Vec<f64> = detector
                        .iter()
                        .flatten()
                        .flatten()
                        .map(|&v| orient(v))
                        .collect();
                    if values.is_empty() {
                        return None;
                    }
                    values.sort_by(f64::total_cmp);
                    // Nearest rank: the smallest value with at least `quantile` of the cells
                    // at or below it.
                    let rank = ((quantile * values.len() as f64).ceil() as usize).max(1);
                    let threshold = values[rank - 1];
                    let deployment = replay(
                        grid,
                        direction,
                        Policy::Trigger { threshold },
                        |model, seen| {
                            detector[model][seen.slice].is_some_and(|v| orient(v) > threshold)
                        },
                    );
                    Some((deployment.retrains as f64, deployment.mean?))
                })
                .collect();
            (!points.is_empty()).then(|| {
                let n = points.len() as f64;
                TriggerPoint {
                    quantile,
                    retrains: points.iter().map(|p| p.0).sum::<f64>() / n,
                    mean: points.iter().map(|p| p.1).sum::<f64>() / n,
                }
            })
        })
        .collect()
}

/// Spearman's rank correlation of `a` and `b` with average ranks for ties (scipy's
/// `spearmanr`): the Pearson correlation of the ranks. `None` below 3 pairs or when either
/// side is constant.
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 3 {
        return None;
    }
    let (ra, rb) = (average_ranks(a), average_ranks(b));
    let n = ra.len() as f64;
    let (ma, mb) = (ra.iter().sum::<f64>() / n, rb.iter().sum::<f64>() / n);
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in ra.iter().zip(&rb) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    (saa > 0.0 && sbb > 0.0).then(|| sab / (saa * sbb).sqrt())
}

fn average_ranks(v: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
    let mut ranks = vec![0.0; v.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start;
        while end < order.len() && v[order[end]] == v[order[start]] {
            end += 1;
        }
        let mid = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = mid;
        }
        start = end;
    }
    ranks
}

fn mean_std(values: &[Option<f64>]) -> (Option<f64>, Option<f64>) {
    let v: Vec<f64> = values.iter().flatten().copied().collect();
    if v.is_empty() {
        return (None, None);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let std = (v.len() > 1)
        .then(|| (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt());
    (Some(mean), std)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_of_a_monotone_pair_is_one_and_ties_take_average_ranks() {
        assert_eq!(
            spearman(&[1.0, 2.0, 3.0, 4.0], &[10.0, 20.0, 30.0, 40.0]),
            Some(1.0)
        );
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), Some(-1.0));
        assert_eq!(spearman(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
        // scipy.stats.spearmanr([1, 2, 2, 3], [1, 3, 2, 4]).statistic = 0.9486832980505139
        let r = spearman(&[1.0, 2.0, 2.0, 3.0], &[1.0, 3.0, 2.0, 4.0]).unwrap();
        assert!((r - 0.948_683_298_050_513_8).abs() < 1e-12, "{r}");
    }

    #[test]
    fn a_detector_equal_to_the_drop_tracks_it_and_triggers_less_as_its_threshold_rises() {
        use std::collections::BTreeMap;
        let k = 5;
        let rows: Vec<Vec<Option<f64>>> = (0..k)
            .map(|i| {
                (0..k)
                    .map(|j| (j >= i).then(|| 1.0 - 0.1 * (j - i) as f64))
                    .collect()
            })
            .collect();
        let grid = Grid::from_rows(&rows).unwrap();
        let lag: Vec<Vec<Option<f64>>> = (0..k)
            .map(|i| (0..k).map(|j| (j > i).then_some((j - i) as f64)).collect())
            .collect();
        let matrices = DetectorMatrices {
            schema: crate::detectors::SCHEMA,
            slices: (0..k).map(|i| i.to_string()).collect(),
            sample_rows: 1,
            permutations: 1,
            detectors: BTreeMap::from([("mmd".to_string(), lag)]),
            accuracy: None,
            id_priors: None,
            estimated_priors: None,
        };
        let result = backtest(&[(&grid, &matrices)], Direction::HigherIsBetter);
        assert_eq!(result.len(), 1);
        assert_eq!(result[0].spearman_mean, Some(1.0));
        let retrains: Vec<f64> = result[0].curve.iter().map(|p| p.retrains).collect();
        assert!(retrains.windows(2).all(|w| w[0] >= w[1]), "{retrains:?}");
        assert!(retrains[0] > *retrains.last().unwrap(), "{retrains:?}");
    }
}
