//! Training one model: [`build`] makes it from a [`TrainJob`] with the job's seed, and
//! [`train`] runs the fixed epochs of mini-batch steps (seeded batch order, optional
//! gradient clipping), stopping on a non-finite loss. A job with a [`Backbone`] trains the
//! pretrained encoder with the head, the encoder's optimiser groups on their own learning
//! rate schedule ([`super::EncoderTraining`]).

use std::time::Instant;

use tch::nn::{self, OptimizerConfig, VarStore};
use tch::{Kind, Tensor};

use super::checkpoint::{self, CheckpointId};
use super::config::{Optimizer, TrainConfig};
use super::history::Epoch;
use super::loss::LossFn;
use super::seeds::epoch_order;
use super::tensors::{DataTensors, index};
use crate::models::{self, Backbone, ENCODER_DECAY, ENCODER_NO_DECAY, Model, ModelConfig};
use crate::{Error, Result};

/// What one cutoff trains.
#[derive(Clone, Copy, Debug)]
pub struct TrainJob<'a> {
    /// Registry key of the model.
    pub model: &'a str,
    /// Its shapes.
    pub config: &'a ModelConfig,
    /// Optimiser, batches, epochs and loss.
    pub train: &'a TrainConfig,
    /// Data-set rows to train on.
    pub rows: &'a [usize],
    /// The cutoff's [`super::seeds::training_seed`].
    pub training_seed: u32,
    /// Where to train.
    pub device: tch::Device,
    /// The pretrained encoder the model is the head of, trained with it
    /// (`[train.encoder]`); `config` is then the head's ([`Backbone::head_config`]).
    pub backbone: Option<&'a Backbone>,
}

/// A model and the store that owns its variables.
#[derive(Debug)]
pub struct BuiltModel {
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

/// A trained model and what its training did.
#[derive(Debug)]
pub struct Trained {
    /// The model.
    pub built: BuiltModel,
    /// The mean batch loss of the last epoch, each batch weighted by its rows.
    pub final_loss: f64,
    /// Each epoch's record.
    pub epochs: Vec<Epoch>,
    /// Each epoch's wall seconds.
    pub epoch_seconds: Vec<f64>,
}

/// One optimiser step on a batch's loss, what [`train`] does per batch (and what
/// `benches/train_step.rs` times): clears the gradients, back-propagates, measures their
/// global L2 norm before clipping, clips it to `clip` when given, and steps. Returns that
/// norm as an `f64` scalar tensor, which the caller sums and reads once an epoch; it is
/// read, never changed, so training is the same with or without it.
///
/// The clipping is tch's `Optimizer::clip_grad_norm` (float32 norms per variable, their
/// norm read as the total, every gradient scaled by `max / (total + 1e-6)` when that is
/// below 1), written out so that the recorded norm reuses its per-variable norms: a second
/// pass in float64 cost 10-30 % of an `ffn_l` or `mlp_l` step. The recorded norm combines
/// those float32 norms in float64. They are computed with denormals flushed
/// ([`crate::device::without_denormals`]): once a model fits its batch, denormal squares
/// made them 25 times slower.
pub fn optimise(
    opt: &mut nn::Optimizer,
    vs: &VarStore,
    loss: &Tensor,
    clip: Option<f64>,
) -> Tensor {
    opt.zero_grad();
    loss.backward();
    let norm = tch::no_grad(|| {
        let grads: Vec<Tensor> = vs
            .trainable_variables()
            .iter()
            .map(Tensor::grad)
            .filter(Tensor::defined)
            .collect();
        if grads.is_empty() {
            return Tensor::from(0f64);
        }
        let norms = crate::device::without_denormals(|| {
            Tensor::stack(&grads.iter().map(Tensor::norm).collect::<Vec<_>>(), 0)
        });
        if let Some(max) = clip {
            let total = f64::try_from(norms.norm()).expect("a norm is a scalar");
            let coefficient = max / (total + 1e-6);
            if coefficient < 1.0 {
                for mut g in grads {
                    let _ = g.g_mul_scalar_(coefficient);
                }
            }
        }
        norms.to_kind(Kind::Double).norm()
    });
    opt.step();
    norm
}

/// Builds the model of a job with the job's seed (its initial weights).
pub fn build(job: &TrainJob) -> Result<BuiltModel> {
    tch::manual_seed(i64::from(job.training_seed));
    let vs = VarStore::new(job.device);
    let model = match job.backbone {
        Some(backbone) => models::build_fine_tuned(job.model, &vs.root(), job.config, backbone)?,
        None => models::build(job.model, &vs.root(), job.config)?,
    };
    Ok(BuiltModel { vs, model })
}

/// Trains a model for `job`, fresh or (with `init`) starting from the weights of the
/// checkpoint at that path made for that id, calling `on_step` after every step, and
/// returns it with each epoch's record. The optimiser starts afresh either way. A NaN or
/// infinite loss stops training with an error naming the epoch and batch.
pub fn train(
    job: &TrainJob,
    init: Option<(&std::path::Path, &CheckpointId)>,
    data: &DataTensors,
    loss: &LossFn,
    mut on_step: impl FnMut(Step),
) -> Result<Trained> {
    let built = build(job)?;
    if let Some((path, id)) = init {
        checkpoint::load(&built.vs, id, path)?;
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
    let fine_tuning = t.encoder.filter(|_| job.backbone.is_some());
    if let Some(encoder) = fine_tuning {
        opt.set_weight_decay_group(ENCODER_DECAY, encoder.weight_decay);
        opt.set_weight_decay_group(ENCODER_NO_DECAY, 0.0);
    }
    let steps = t.epochs * job.rows.len().div_ceil(t.batch_size as usize) as u64;
    let mut step = 0;
    let (mut epochs, mut epoch_seconds) = (Vec::new(), Vec::new());
    for epoch in 1..=t.epochs {
        let started = Instant::now();
        // Loss sum and rows; the gradient norms summed on the device, read once an epoch.
        let (mut loss_sum, mut loss_rows) = (0.0, 0usize);
        let (mut norm_sum, mut norm_steps) = (Tensor::from(0f64).to_device(job.device), 0usize);
        let mut encoder_learning_rate = None;
        let order = epoch_order(job.rows, job.training_seed, epoch);
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
            if let Some(encoder) = fine_tuning {
                let lr = encoder.learning_rate_at(step, steps);
                opt.set_lr_group(ENCODER_DECAY, lr);
                opt.set_lr_group(ENCODER_NO_DECAY, lr);
                encoder_learning_rate = Some(lr);
            }
            norm_sum += optimise(&mut opt, &built.vs, &value, t.grad_clip);
            norm_steps += 1;
            step += 1;
            loss_sum += scalar * rows.len() as f64;
            loss_rows += rows.len();
            on_step(Step {
                epoch,
                rows: rows.len(),
                loss: scalar,
            });
        }
        let norms = f64::try_from(&norm_sum)
            .map_err(|e| Error::Invalid(format!("reading the gradient norms: {e}")))?;
        epochs.push(Epoch {
            epoch,
            loss: loss_sum / loss_rows.max(1) as f64,
            grad_norm: norms / norm_steps.max(1) as f64,
            learning_rate: t.learning_rate,
            encoder_learning_rate,
        });
        epoch_seconds.push(started.elapsed().as_secs_f64());
    }
    Ok(Trained {
        built,
        final_loss: epochs.last().map_or(0.0, |e| e.loss),
        epochs,
        epoch_seconds,
    })
}
