//! Feed-forward heads on token states: masked mean over the real tokens `[B, T, D]` ->
//! `[B, D]` -> Linear+ReLU+Dropout `[B, h]` -> Linear `[B, outputs]`.
//!
//! Parameters: `hidden`, `head`.

use tch::{Tensor, nn, nn::Module};

use super::config::ModelConfig;
use super::layers;
use super::model::{Input, Model};
use crate::Result;

/// Hidden width of an FFN.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    /// Width `h` of the hidden layer.
    pub hidden: i64,
}

/// `ffn_s`: 99,335 parameters at 768 -> 7 (98,561 at 768 -> 1).
pub const S: Size = Size { hidden: 128 };
/// `ffn_m`: 397,319 parameters (394,241).
pub const M: Size = Size { hidden: 512 };
/// `ffn_l`: 1,589,255 parameters (1,576,961).
pub const L: Size = Size { hidden: 2048 };

/// Masked mean pooling and a one-hidden-layer MLP.
#[derive(Debug)]
pub struct Ffn {
    hidden: nn::Linear,
    head: nn::Linear,
    dropout: f64,
}

impl Ffn {
    /// Creates the FFN under `path`.
    pub fn new(path: &nn::Path, size: &Size, config: &ModelConfig) -> Result<Self> {
        Ok(Ffn {
            hidden: layers::linear(path / "hidden", config.feature_dim(), size.hidden),
            head: layers::linear(path / "head", size.hidden, config.outputs),
            dropout: config.dropout,
        })
    }
}

impl Model for Ffn {
    fn forward_t(&self, input: &Input, train: bool) -> Tensor {
        let (states, mask) = input.tokens();
        let pooled = layers::masked_mean(states, mask);
        let hidden = self
            .hidden
            .forward(&pooled)
            .relu()
            .dropout(self.dropout, train);
        self.head.forward(&hidden)
    }
}
