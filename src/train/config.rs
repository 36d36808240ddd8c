//! What a preset says about training one model: optimiser, schedule and loss. Plain data,
//! so presets are checked without libtorch.

use serde::{Deserialize, Serialize};

use crate::data::Task;
use crate::metrics::{Metric, Reads};

/// The optimiser.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Optimizer {
    /// Adam.
    Adam,
    /// AdamW (decoupled weight decay).
    Adamw,
}

/// The training loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Loss {
    /// Softmax cross-entropy over class logits.
    CrossEntropy,
    /// BCE with logits, `pos_weight_c = neg_c / pos_c` (multi-label).
    WeightedBce,
    /// MSE weighted by `w_r = n / n_r` per target value (regression).
    WeightedMse,
}

impl Loss {
    /// The loss of the reference for `task`.
    pub fn for_task(task: Task) -> Loss {
        match task {
            Task::Classification => Loss::CrossEntropy,
            Task::MultiLabel => Loss::WeightedBce,
            Task::Regression => Loss::WeightedMse,
        }
    }

    /// Whether a model trained with this loss yields what `metric` is computed from
    /// ([`Metric::reads`]): class logits give classes and scores, multi-label logits only
    /// scores, a regression output only values.
    pub fn supports(self, metric: Metric) -> bool {
        match metric.reads() {
            Reads::Classes => self == Loss::CrossEntropy,
            Reads::Scores => matches!(self, Loss::CrossEntropy | Loss::WeightedBce),
            Reads::Values => self == Loss::WeightedMse,
        }
    }
}

/// Optimiser and schedule of one model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrainConfig {
    /// The optimiser.
    pub optimizer: Optimizer,
    /// Learning rate.
    pub learning_rate: f64,
    /// Weight decay (0 for none).
    pub weight_decay: f64,
    /// Gradient-norm clipping threshold, if any.
    pub grad_clip: Option<f64>,
    /// Mini-batch size.
    pub batch_size: u64,
    /// Fixed number of epochs; the final checkpoint is kept.
    pub epochs: u64,
    /// The loss.
    pub loss: Loss,
    /// `[train.encoder]`: the pretrained encoder is trained with the head; left out of
    /// the canonical JSON when absent (a frozen encoder, or none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoder: Option<EncoderTraining>,
    /// The convolutional image models (`cnn_*`, `resnet_*`) lay their activations out
    /// channels-last (NHWC), which libtorch's CPU convolutions run faster; results differ
    /// from the default layout by float rounding. Left out of the canonical JSON when off.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub channels_last: bool,
}

/// How a pretrained encoder is fine-tuned with its head: AdamW over its own parameter
/// groups, with a learning rate that rises linearly from 0 over the first `warmup` of the
/// steps and then falls linearly to 0 at the last step (`transformers`'
/// `get_linear_schedule_with_warmup`, warm-up steps `ceil(warmup * steps)`), and weight
/// decay on its weights but not its biases and norms (as `transformers`' `Trainer`). The
/// head keeps `[train]`'s constant learning rate and weight decay.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct EncoderTraining {
    /// The encoder's peak learning rate.
    pub learning_rate: f64,
    /// Its weight decay.
    pub weight_decay: f64,
    /// The fraction of the steps of a cutoff's training spent warming up, in `[0, 1)`.
    pub warmup: f64,
}

impl EncoderTraining {
    /// The encoder's learning rate at step `step` (from 0) of `steps`.
    pub fn learning_rate_at(&self, step: u64, steps: u64) -> f64 {
        let warm = (self.warmup * steps as f64).ceil() as u64;
        let factor = if step < warm {
            step as f64 / warm as f64
        } else {
            (steps.saturating_sub(step) as f64 / steps.saturating_sub(warm).max(1) as f64).max(0.0)
        };
        self.learning_rate * factor
    }
}
