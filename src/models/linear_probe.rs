//! The linear probe on a frozen encoder: pooled embeddings `[B, D]` -> one Linear
//! `[B, outputs]`. Parameters: `head`.

use tch::{Tensor, nn, nn::Module};

use super::config::ModelConfig;
use super::layers;
use super::model::{Input, Model};
use crate::Result;

/// A linear head on pooled embeddings.
#[derive(Debug)]
pub struct LinearProbe {
    head: nn::Linear,
}

impl LinearProbe {
    /// Creates the head under `path`; the probe has a single size, `()`.
    pub fn new(path: &nn::Path, _size: &(), config: &ModelConfig) -> Result<Self> {
        let head = layers::linear(path / "head", config.feature_dim(), config.outputs);
        Ok(LinearProbe { head })
    }
}

impl Model for LinearProbe {
    fn forward_t(&self, input: &Input, _train: bool) -> Tensor {
        self.head.forward(input.embeddings())
    }
}
