//! What one epoch of training did, as a run's history records it (`history.json`): the
//! numbers a reader looks at first when a checkpoint collapsed. Wall times are kept apart,
//! in `timing.json`, so that the history of two identical runs is the same bytes.

use serde::{Deserialize, Serialize};

/// One epoch of one cutoff's training.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Epoch {
    /// From 1.
    pub epoch: u64,
    /// The mean batch loss, each batch weighted by its rows.
    pub loss: f64,
    /// The mean over the epoch's steps of the global L2 norm of the gradients before
    /// clipping.
    pub grad_norm: f64,
    /// The optimiser's learning rate (of the head, when an encoder is fine-tuned with it).
    pub learning_rate: f64,
    /// A fine-tuned encoder's learning rate at the epoch's last step (its schedule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoder_learning_rate: Option<f64>,
}

impl Epoch {
    /// Why the record cannot be what training wrote, if it cannot.
    pub fn check(&self) -> std::result::Result<(), String> {
        let finite = [self.loss, self.grad_norm, self.learning_rate]
            .into_iter()
            .chain(self.encoder_learning_rate)
            .all(f64::is_finite);
        if self.epoch == 0 || !finite || self.grad_norm < 0.0 || self.learning_rate < 0.0 {
            return Err(format!(
                "epoch {}: loss {}, grad_norm {}, learning_rate {} are not an epoch's record \
                 (epochs count from 1; every value finite, the norm and rate not negative)",
                self.epoch, self.loss, self.grad_norm, self.learning_rate
            ));
        }
        Ok(())
    }
}
