//! Evaluation: a trained model's outputs on every row, and from them one metric value per
//! drift-matrix cell under the regime's ID/OOD rule (cell `(i, j)` scores slice `j`'s
//! test part when cutoff `i` trained on slice `j`, else the whole slice).
//!
//! The model runs once per checkpoint over every row of every slice, in batched no-grad
//! passes in evaluation mode; each cell then picks its rows. How outputs become what a
//! metric reads ([`Metric::reads`]): class logits give the argmax class (and, for a metric
//! that reads scores, softmax scores: the positive-class probability for two classes,
//! one-vs-rest otherwise); multi-label logits are ranked as they are (a ranking metric
//! such as AUC is invariant to the sigmoid); a regression output is the prediction itself.
//!
//! [`health`] says whether a checkpoint learned anything: a model that predicts one class
//! for (almost) every row, or a constant value, scores whatever that constant scores, and
//! its cells measure the label distribution, not the model.

use serde::{Deserialize, Serialize};

use crate::data::Targets;
use crate::metrics::{Metric, Predictions, Reads};
use crate::slices::{Regime, SliceSplit};
use crate::{Error, Result};

/// Rows per evaluation batch of `drift run`: as many as a training batch. Larger batches
/// ran slower per row on the CPU (`benches/eval_speed.rs`): at 256 rows of 128x768 token
/// states a batch's temporaries are 100 MB, above glibc's largest mmap threshold (32 MiB),
/// so every batch faulted in fresh pages, and `ffn_s` evaluated 2-4x slower per row than
/// at 64.
pub const EVAL_BATCH: usize = 64;

/// Model outputs for the rows of a data set, `width` values per row (row-major). Rows that
/// were not evaluated hold NaN.
#[derive(Clone, Debug, PartialEq)]
pub struct Outputs {
    /// Values per row.
    pub width: usize,
    /// `rows * width` values.
    pub values: Vec<f32>,
}

impl Outputs {
    /// Row `r`'s values.
    pub fn row(&self, r: usize) -> &[f32] {
        &self.values[r * self.width..(r + 1) * self.width]
    }
}

/// The index of the first largest value (as `torch.argmax`): the predicted class.
pub(crate) fn argmax(v: &[f32]) -> u32 {
    // The first maximum, as torch.argmax.
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best as u32
}

/// Softmax probabilities of one row of logits, in `f64`.
pub(crate) fn softmax(v: &[f32]) -> Vec<f64> {
    let max = v
        .iter()
        .fold(f64::NEG_INFINITY, |m, &x| m.max(f64::from(x)));
    let exp: Vec<f64> = v.iter().map(|&x| (f64::from(x) - max).exp()).collect();
    let sum: f64 = exp.iter().sum();
    exp.into_iter().map(|e| e / sum).collect()
}

/// The metric of `rows` from `outputs`.
pub fn score(
    metric: Metric,
    targets: &Targets,
    outputs: &Outputs,
    rows: &[usize],
) -> Result<Option<f64>> {
    if outputs.width != targets.outputs() {
        return Err(Error::Invalid(format!(
            "{} outputs per row for {} targets of width {}",
            outputs.width,
            targets.task(),
            targets.outputs()
        )));
    }
    match targets {
        Targets::Classes { classes, labels } => {
            let truth: Vec<u32> = rows.iter().map(|&r| labels[r]).collect();
            match metric.reads() {
                // A metric of values cannot be computed from classes: `compute` says so.
                Reads::Classes | Reads::Values => {
                    let predicted: Vec<u32> =
                        rows.iter().map(|&r| argmax(outputs.row(r))).collect();
                    metric.compute(&Predictions::Classes {
                        labels: &truth,
                        predicted: &predicted,
                    })
                }
                Reads::Scores => class_scores(metric, *classes, &truth, outputs, rows),
            }
        }
        Targets::MultiLabel { classes, labels } => {
            let truth: Vec<bool> = rows
                .iter()
                .flat_map(|&r| labels[r * classes..(r + 1) * classes].iter().copied())
                .collect();
            let scores: Vec<f64> = rows
                .iter()
                .flat_map(|&r| outputs.row(r).iter().map(|&x| f64::from(x)))
                .collect();
            metric.compute(&Predictions::MultiLabel {
                classes: *classes,
                labels: &truth,
                scores: &scores,
            })
        }
        Targets::Values(values) => {
            let truth: Vec<f64> = rows.iter().map(|&r| values[r]).collect();
            let predicted: Vec<f64> = rows.iter().map(|&r| f64::from(outputs.row(r)[0])).collect();
            metric.compute(&Predictions::Values {
                targets: &truth,
                predicted: &predicted,
            })
        }
    }
}

/// `metric` (one that reads scores) of single-label `rows` with true classes `truth`:
/// the softmax probability of class 1 for two classes, one-vs-rest over every class
/// otherwise.
fn class_scores(
    metric: Metric,
    classes: usize,
    truth: &[u32],
    outputs: &Outputs,
    rows: &[usize],
) -> Result<Option<f64>> {
    let probs: Vec<Vec<f64>> = rows.iter().map(|&r| softmax(outputs.row(r))).collect();
    if classes == 2 {
        let labels: Vec<bool> = truth.iter().map(|&l| l == 1).collect();
        let scores: Vec<f64> = probs.iter().map(|p| p[1]).collect();
        metric.compute(&Predictions::Scores {
            labels: &labels,
            scores: &scores,
        })
    } else {
        let labels: Vec<bool> = truth
            .iter()
            .flat_map(|&l| (0..classes as u32).map(move |c| c == l))
            .collect();
        let scores: Vec<f64> = probs.concat();
        metric.compute(&Predictions::MultiLabel {
            classes,
            labels: &labels,
            scores: &scores,
        })
    }
}

/// A checkpoint predicting one class for at least this share of its ID test rows is
/// collapsed.
pub const COLLAPSED_SHARE: f64 = 0.99;

/// A regression checkpoint whose prediction variance is below this fraction of the
/// target variance (on its ID test rows) is collapsed.
pub const COLLAPSED_VARIANCE: f64 = 1e-6;

/// [`Health::collapsed`] in words (written into `health.json` so the file explains itself).
pub const COLLAPSE_RULE: &str = "one prediction for at least 99% of the ID test rows, or a \
    prediction variance below 1e-6 of the target variance";

/// How one checkpoint behaves on its ID test set (the test parts of the slices it trained
/// on): the evidence that it learned something, or that it did not.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Health {
    /// The cutoff's slice label.
    pub cutoff: String,
    /// ID test rows the figures below are read from.
    pub rows: usize,
    /// Single-label classification: the most frequently predicted class (the lowest of
    /// equally frequent ones).
    pub majority_class: Option<u32>,
    /// Classification and multi-label: the share of `rows` given the most frequent
    /// prediction (class, or set of labels whose logit is above 0).
    pub majority_share: Option<f64>,
    /// Regression: the population variance of the predictions.
    pub prediction_variance: Option<f64>,
    /// Regression: the population variance of the true values.
    pub target_variance: Option<f64>,
    /// The mean training loss over the rows of the last epoch (`None` for the counting
    /// baselines, which are not trained).
    pub final_loss: Option<f64>,
    /// `majority_share >= COLLAPSED_SHARE`, or `prediction_variance <
    /// COLLAPSED_VARIANCE * target_variance`.
    pub collapsed: bool,
}

/// The [`Health`] of the checkpoint of cutoff `cutoff` (label) from its outputs on
/// `rows` (its ID test rows).
pub fn health(
    targets: &Targets,
    outputs: &Outputs,
    rows: &[usize],
    cutoff: &str,
    final_loss: Option<f64>,
) -> Health {
    let mut h = Health {
        rows: rows.len(),
        final_loss,
        ..Health::without_model(cutoff)
    };
    if rows.is_empty() {
        return h;
    }
    let n = rows.len() as f64;
    match targets {
        Targets::Classes { classes, .. } => {
            let mut counts = vec![0usize; *classes];
            for &r in rows {
                counts[argmax(outputs.row(r)) as usize] += 1;
            }
            // The first of equal counts, as argmax breaks ties.
            let (class, count) =
                counts.iter().enumerate().fold(
                    (0, 0),
                    |best, (c, &k)| if k > best.1 { (c, k) } else { best },
                );
            h.majority_class = Some(class as u32);
            h.majority_share = Some(count as f64 / n);
        }
        Targets::MultiLabel { .. } => {
            let mut sets: std::collections::BTreeMap<Vec<bool>, usize> = Default::default();
            for &r in rows {
                let set = outputs.row(r).iter().map(|&x| x > 0.0).collect();
                *sets.entry(set).or_default() += 1;
            }
            let most = sets.values().copied().max().unwrap_or(0);
            h.majority_share = Some(most as f64 / n);
        }
        Targets::Values(values) => {
            let variance = |xs: &[f64]| {
                let mean = xs.iter().sum::<f64>() / xs.len() as f64;
                xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64
            };
            let predicted: Vec<f64> = rows.iter().map(|&r| f64::from(outputs.row(r)[0])).collect();
            let truth: Vec<f64> = rows.iter().map(|&r| values[r]).collect();
            h.prediction_variance = Some(variance(&predicted));
            h.target_variance = Some(variance(&truth));
        }
    }
    h.collapsed = h.meets_collapse_rule();
    h
}

impl Health {
    /// The record of a cutoff with no model (a self-labelling row before the anchor): no
    /// rows, no figures, not collapsed.
    pub fn without_model(cutoff: &str) -> Health {
        Health {
            cutoff: cutoff.to_string(),
            rows: 0,
            majority_class: None,
            majority_share: None,
            prediction_variance: None,
            target_variance: None,
            final_loss: None,
            collapsed: false,
        }
    }

    /// Whether the figures meet [`COLLAPSE_RULE`] (what `collapsed` must say).
    pub fn meets_collapse_rule(&self) -> bool {
        self.majority_share.is_some_and(|s| s >= COLLAPSED_SHARE)
            || self
                .prediction_variance
                .zip(self.target_variance)
                .is_some_and(|(p, t)| p < COLLAPSED_VARIANCE * t)
    }
}

/// The ID test rows of cutoff `cutoff`: the test parts of the slices its model has seen
/// ([`Regime::seen_slices`]), ascending.
pub fn id_test_rows(regime: &Regime, splits: &[SliceSplit], cutoff: usize) -> Vec<usize> {
    let mut rows: Vec<usize> = regime
        .seen_slices(cutoff)
        .into_iter()
        .flat_map(|k| splits[k].test.iter().copied())
        .collect();
    rows.sort_unstable();
    rows
}

/// `targets` with the rows `rows` relabelled by a model's `outputs` (self-labelling): the
/// predicted class, the labels whose logit is above 0, or the predicted value.
pub fn predicted_targets(targets: &Targets, outputs: &Outputs, rows: &[usize]) -> Targets {
    let mut out = targets.clone();
    match &mut out {
        Targets::Classes { labels, .. } => {
            for &r in rows {
                labels[r] = argmax(outputs.row(r));
            }
        }
        Targets::MultiLabel { classes, labels } => {
            for &r in rows {
                for (c, &x) in outputs.row(r).iter().enumerate() {
                    labels[r * *classes + c] = x > 0.0;
                }
            }
        }
        Targets::Values(values) => {
            for &r in rows {
                values[r] = f64::from(outputs.row(r)[0]);
            }
        }
    }
    out
}

/// Row `cutoff` of the drift matrix: one cell per slice.
pub fn matrix_row(
    metric: Metric,
    targets: &Targets,
    outputs: &Outputs,
    regime: &Regime,
    splits: &[SliceSplit],
    cutoff: usize,
) -> Result<Vec<Option<f64>>> {
    row_where(metric, targets, outputs, (regime, splits, cutoff), |_| true)
}

/// Row `cutoff` scored, cell by cell, on the rows of each cell (the regime's ID/OOD rule)
/// that `keep` keeps; a cell left without rows is empty, as the metrics say.
fn row_where(
    metric: Metric,
    targets: &Targets,
    outputs: &Outputs,
    (regime, splits, cutoff): (&Regime, &[SliceSplit], usize),
    keep: impl Fn(usize) -> bool,
) -> Result<Vec<Option<f64>>> {
    (0..splits.len())
        .map(|j| {
            let rows: Vec<usize> = regime
                .eval_rows(splits, cutoff, j)
                .into_iter()
                .filter(|&r| keep(r))
                .collect();
            score(metric, targets, outputs, &rows)
        })
        .collect()
}

/// Row `cutoff` of the seen-classes matrix: each cell of [`matrix_row`] scored on the rows
/// whose true class is among the classes of `training_rows`, so that a class the model
/// never saw (an outlet that started later) does not count against it. A cell with no such
/// row is empty. Single-label classification only.
pub fn seen_classes_row(
    metric: Metric,
    targets: &Targets,
    outputs: &Outputs,
    regime: &Regime,
    splits: &[SliceSplit],
    cutoff: usize,
    training_rows: &[usize],
) -> Result<Vec<Option<f64>>> {
    let Targets::Classes { classes, labels } = targets else {
        return Err(Error::Invalid(format!(
            "seen_classes scores single-label classes, not {} targets",
            targets.task()
        )));
    };
    let mut seen = vec![false; *classes];
    for &r in training_rows {
        seen[labels[r] as usize] = true;
    }
    row_where(metric, targets, outputs, (regime, splits, cutoff), |r| {
        seen[labels[r] as usize]
    })
}

/// Runs `model` over `rows` in no-grad batches of `batch` rows, in evaluation mode.
///
/// Token rows are batched longest first ([`crate::train::DataTensors::by_length`]): a
/// batch is cut to its longest row, so rows of similar length pad little. The outputs stay
/// on the device, in one tensor, until the last batch and come back in one copy (one
/// synchronisation on a GPU instead of one per batch).
#[cfg(feature = "torch")]
pub fn predict(
    model: &dyn crate::models::Model,
    data: &crate::train::DataTensors,
    total_rows: usize,
    rows: &[usize],
    batch: usize,
    device: tch::Device,
) -> Result<Outputs> {
    let order = data.by_length(rows);
    if order.is_empty() {
        return Ok(Outputs {
            width: 0,
            values: Vec::new(),
        });
    }
    let batch = batch.max(1);
    let out = tch::no_grad(|| {
        // One tensor for every output, filled batch by batch: the batches' own outputs,
        // kept until the end, fragmented the heap (0.5 GB more at the peak for ffn_s on
        // the SOTU token states).
        let mut all: Option<tch::Tensor> = None;
        for (k, chunk) in order.chunks(batch).enumerate() {
            let out = model.forward_t(&data.input(chunk, device), false);
            let out = out.reshape([chunk.len() as i64, -1]);
            let all = all.get_or_insert_with(|| {
                tch::Tensor::empty(
                    [order.len() as i64, out.size()[1]],
                    (out.kind(), out.device()),
                )
            });
            all.narrow(0, (k * batch) as i64, chunk.len() as i64)
                .copy_(&out);
        }
        all.expect("there is at least one row")
    })
    .to_device(tch::Device::Cpu)
    .to_kind(tch::Kind::Float);
    let width = out.size()[1] as usize;
    let flat = Vec::<f32>::try_from(out.reshape([-1]))
        .map_err(|e| Error::Invalid(format!("reading model outputs: {e}")))?;
    let mut values = vec![f32::NAN; total_rows * width];
    for (k, &r) in order.iter().enumerate() {
        values[r * width..(r + 1) * width].copy_from_slice(&flat[k * width..(k + 1) * width]);
    }
    Ok(Outputs { width, values })
}
