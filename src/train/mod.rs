//! Training: one fresh model per cutoff, trained on the rows its regime gives it, for a
//! fixed number of epochs; the final weights are the checkpoint (protocol.md §1, §5).
//!
//! Everything random is seeded from the cutoff's [`training_seed`]: libtorch's generator
//! (initial weights, dropout) via `manual_seed`, and the batch order by a ChaCha20 stream
//! per epoch, keyed like the splits (`drift-batches-v1:{training seed}:{epoch}`). Batches
//! are consecutive chunks of the shuffled rows, the last one possibly smaller. With the
//! same thread count on the CPU, a cutoff trains to bit-identical weights.

#[cfg(feature = "torch")]
pub mod checkpoint;
mod config;
#[cfg(feature = "torch")]
pub mod loss;
#[cfg(feature = "torch")]
mod tensors;

pub use config::{Loss, Optimizer, TrainConfig};
#[cfg(feature = "torch")]
pub use tensors::{DataTensors, index};

/// The per-cutoff training seed of the reference: the first 4 bytes (big-endian) of
/// `sha256("{seed}:{model}:{cutoff}")`, where `cutoff` is the cutoff slice's label.
pub fn training_seed(seed: u64, model: &str, cutoff: &str) -> u32 {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("{seed}:{model}:{cutoff}").as_bytes());
    u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
}

/// The order training visits `rows` in epoch `epoch` (from 1): the rows sorted, then
/// shuffled by the ChaCha20 stream `drift-batches-v1:{training_seed}:{epoch}`. Batches
/// are consecutive chunks of it.
pub fn epoch_order(rows: &[usize], training_seed: u32, epoch: u64) -> Vec<usize> {
    let mut order = rows.to_vec();
    order.sort_unstable();
    let mut rng = crate::slices::stream(
        "drift-batches-v1",
        u64::from(training_seed),
        &epoch.to_string(),
    );
    crate::slices::shuffle(&mut rng, &mut order);
    order
}

#[cfg(feature = "torch")]
pub use self::torch::*;

#[cfg(feature = "torch")]
mod torch {
    use tch::nn::{self, OptimizerConfig, VarStore};

    use super::{DataTensors, index, loss::LossFn};
    use super::{Optimizer, TrainConfig};
    use crate::models::{self, Model, ModelConfig};
    use crate::{Error, Result};

    /// What one cutoff trains.
    #[derive(Clone, Copy, Debug)]
    pub struct Job<'a> {
        /// Registry key of the model.
        pub model: &'a str,
        /// Its shapes.
        pub config: &'a ModelConfig,
        /// Optimiser, batches, epochs and loss.
        pub train: &'a TrainConfig,
        /// Data-set rows to train on.
        pub rows: &'a [usize],
        /// The cutoff's [`super::training_seed`].
        pub training_seed: u32,
        /// Where to train.
        pub device: tch::Device,
    }

    /// A model and the store that owns its variables.
    #[derive(Debug)]
    pub struct Built {
        /// The variables (what a checkpoint saves).
        pub vs: VarStore,
        /// The model.
        pub model: Box<dyn Model>,
    }

    /// One optimisation step, for progress reports.
    #[derive(Clone, Copy, Debug)]
    pub struct Step {
        /// Epoch, from 1.
        pub epoch: u64,
        /// Rows in this batch.
        pub rows: usize,
        /// The batch's loss.
        pub loss: f64,
    }

    /// Builds the model of a job with the job's seed (its initial weights).
    pub fn build(job: &Job) -> Result<Built> {
        tch::manual_seed(i64::from(job.training_seed));
        let vs = VarStore::new(job.device);
        let model = models::build(job.model, &vs.root(), job.config)?;
        Ok(Built { vs, model })
    }

    /// Trains a model for `job`, fresh or (with `init`) starting from the weights of the
    /// checkpoint at that path made for that id, calling `on_step` after every step, and
    /// returns it with its final loss: the mean batch loss of the last epoch, each batch
    /// weighted by its rows. The optimiser starts afresh either way. A NaN or infinite
    /// loss stops training with an error naming the epoch and batch.
    pub fn train(
        job: &Job,
        init: Option<(&std::path::Path, &super::checkpoint::CheckpointId)>,
        data: &DataTensors,
        loss: &LossFn,
        mut on_step: impl FnMut(Step),
    ) -> Result<(Built, f64)> {
        let built = build(job)?;
        if let Some((path, id)) = init {
            super::checkpoint::load(&built.vs, id, path)?;
        }
        if job.rows.is_empty() {
            return Err(Error::Invalid("no training rows".into()));
        }
        let t = job.train;
        let mut opt = match t.optimizer {
            Optimizer::Adam => nn::Adam::default()
                .wd(t.weight_decay)
                .build(&built.vs, t.learning_rate),
            Optimizer::Adamw => nn::AdamW::default()
                .wd(t.weight_decay)
                .build(&built.vs, t.learning_rate),
        }
        .map_err(|e| Error::Invalid(format!("building the optimiser: {e}")))?;
        let mut last_epoch = (0.0, 0usize);
        for epoch in 1..=t.epochs {
            last_epoch = (0.0, 0);
            let order = super::epoch_order(job.rows, job.training_seed, epoch);
            for (b, rows) in order.chunks(t.batch_size as usize).enumerate() {
                let input = data.input(rows, job.device);
                let targets = data.targets(rows, job.device);
                let outputs = built.model.forward_t(&input, true);
                let value = loss.compute(&outputs, &targets, &index(rows).to_device(job.device));
                let scalar = f64::try_from(&value)
                    .map_err(|e| Error::Invalid(format!("reading the loss: {e}")))?;
                if !scalar.is_finite() {
                    return Err(Error::Invalid(format!(
                        "the loss became {scalar} at epoch {epoch}, batch {}",
                        b + 1
                    )));
                }
                opt.zero_grad();
                value.backward();
                if let Some(max) = t.grad_clip {
                    opt.clip_grad_norm(max);
                }
                opt.step();
                last_epoch.0 += scalar * rows.len() as f64;
                last_epoch.1 += rows.len();
                on_step(Step {
                    epoch,
                    rows: rows.len(),
                    loss: scalar,
                });
            }
        }
        Ok((built, last_epoch.0 / last_epoch.1.max(1) as f64))
    }
}
