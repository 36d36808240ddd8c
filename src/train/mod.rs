//! Training: one fresh model per cutoff, trained on the rows its regime gives it, for a
//! fixed number of epochs; the final weights are the checkpoint (protocol.md §1, §5).
//!
//! Everything random is seeded from the cutoff's [`training_seed`]: libtorch's generator
//! (initial weights, dropout) via `manual_seed`, and the batch order by a ChaCha20 stream
//! per epoch, keyed like the splits (`drift-batches-v1:{training seed}:{epoch}`). Batches
//! are consecutive chunks of the shuffled rows, the last one possibly smaller. With the
//! same thread count on the CPU, a cutoff trains to bit-identical weights.
//!
//! The files: `config.rs` what a preset says about training (no libtorch, so presets are
//! checked without it), `seeds.rs` the seeds and batch order, `tensors.rs` a data set as
//! tensors, `loss.rs` the losses, `fit.rs` building and training a model, and
//! `checkpoint.rs` its weights on disk, `history.rs` what each epoch did.

#[cfg(feature = "torch")]
pub mod checkpoint;
mod config;
#[cfg(feature = "torch")]
mod fit;
mod history;
#[cfg(feature = "torch")]
pub mod loss;
mod seeds;
#[cfg(feature = "torch")]
mod tensors;

pub use config::{EncoderTraining, Loss, Optimizer, TrainConfig};
#[cfg(feature = "torch")]
pub use fit::{BuiltModel, Step, TrainJob, Trained, build, optimise, train};
pub use history::Epoch;
pub use seeds::{epoch_order, training_seed};
#[cfg(feature = "torch")]
pub use tensors::{DataTensors, index};
