//! The training losses of protocol.md §5, with their weights computed once from the whole
//! training split of a cutoff:
//!
//! - cross-entropy over class logits `[B, C]` and labels `[B]` (mean over rows);
//! - BCE with logits over `[B, C]`, `pos_weight_c = neg_c / pos_c` per label (mean over
//!   rows and labels, as `torch.nn.functional.binary_cross_entropy_with_logits`); a label
//!   with no positive row gets `neg_c / 1` rather than infinity;
//! - weighted MSE over `[B]` (or `[B, 1]`), `mean_b w_b (p_b - y_b)^2` with
//!   `w_b = n / n_r` for a row whose target equals `r`, where `n_r` counts the training
//!   rows with that exact target: every value contributes as much as if it were as common
//!   as the rest together.
//!
//! `tests/losses.rs` compares these with PyTorch (`scripts/loss_fixtures.py`).

use tch::{Kind, Reduction, Tensor};

use super::config::Loss;
use crate::data::Targets;
use crate::{Error, Result};

/// Mean softmax cross-entropy; `labels` are class ids (int64).
pub fn cross_entropy(logits: &Tensor, labels: &Tensor) -> Tensor {
    logits.cross_entropy_loss::<Tensor>(labels, None, Reduction::Mean, -100, 0.0)
}

/// Mean BCE with logits and per-label positive weights; `targets` are 0/1 floats.
pub fn weighted_bce(logits: &Tensor, targets: &Tensor, pos_weight: &Tensor) -> Tensor {
    logits.binary_cross_entropy_with_logits(targets, None, Some(pos_weight), Reduction::Mean)
}

/// Mean of `weights * (predictions - targets)^2` over rows.
pub fn weighted_mse(predictions: &Tensor, targets: &Tensor, weights: &Tensor) -> Tensor {
    let diff = predictions.reshape([-1]) - targets;
    (weights * &diff * &diff).mean(Kind::Float)
}

/// `neg_c / max(pos_c, 1)` per label over `rows` of a row-major `classes`-wide matrix.
pub fn pos_weights(labels: &[bool], classes: usize, rows: &[usize]) -> Vec<f64> {
    (0..classes)
        .map(|c| {
            let pos = rows.iter().filter(|&&r| labels[r * classes + c]).count();
            (rows.len() - pos) as f64 / pos.max(1) as f64
        })
        .collect()
}

/// `n / n_r` for each of `rows`, where `n_r` counts the rows in `rows` with target `r`.
pub fn value_weights(values: &[f64], rows: &[usize]) -> Vec<f64> {
    let mut counts: std::collections::BTreeMap<u64, usize> = Default::default();
    for &r in rows {
        *counts.entry(values[r].to_bits()).or_default() += 1;
    }
    let n = rows.len() as f64;
    rows.iter()
        .map(|&r| n / counts[&values[r].to_bits()] as f64)
        .collect()
}

/// A loss bound to the weights of one training split.
#[derive(Debug)]
pub enum LossFn {
    /// Cross-entropy.
    CrossEntropy,
    /// BCE with these positive weights `[C]`.
    WeightedBce(Tensor),
    /// MSE with a weight per data-set row `[N]` (zero outside the training split).
    WeightedMse(Tensor),
}

impl LossFn {
    /// Binds `kind` to the training `rows` of `targets`; the loss must fit the task.
    pub fn new(kind: Loss, targets: &Targets, rows: &[usize], device: tch::Device) -> Result<Self> {
        let name = |loss: Loss| serde_json::to_string(&loss).expect("loss names serialise");
        let mismatch = || {
            Error::Invalid(format!(
                "loss {} does not fit {} data (use {})",
                name(kind),
                targets.task(),
                name(Loss::for_task(targets.kind()))
            ))
        };
        let tensor = |v: Vec<f64>| {
            Tensor::from_slice(&v)
                .to_kind(Kind::Float)
                .to_device(device)
        };
        Ok(match (kind, targets) {
            (Loss::CrossEntropy, Targets::Classes { .. }) => LossFn::CrossEntropy,
            (Loss::WeightedBce, Targets::MultiLabel { classes, labels }) => {
                LossFn::WeightedBce(tensor(pos_weights(labels, *classes, rows)))
            }
            (Loss::WeightedMse, Targets::Values(values)) => {
                let mut all = vec![0.0; values.len()];
                for (&r, w) in rows.iter().zip(value_weights(values, rows)) {
                    all[r] = w;
                }
                LossFn::WeightedMse(tensor(all))
            }
            _ => return Err(mismatch()),
        })
    }

    /// The loss of a batch: model `outputs`, `targets` as [`super::DataTensors::targets`]
    /// gives them, and the batch's data-set `rows` (int64, on the outputs' device).
    pub fn compute(&self, outputs: &Tensor, targets: &Tensor, rows: &Tensor) -> Tensor {
        match self {
            LossFn::CrossEntropy => cross_entropy(outputs, targets),
            LossFn::WeightedBce(pos_weight) => weighted_bce(outputs, targets, pos_weight),
            LossFn::WeightedMse(weights) => {
                weighted_mse(outputs, targets, &weights.index_select(0, rows))
            }
        }
    }
}
