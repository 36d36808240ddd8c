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
}
