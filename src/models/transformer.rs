//! Transformer encoders on token states: Linear(D, d) -> post-LN encoder layers
//! ([`super::encoder_layer`]) with a key-padding mask -> masked mean -> Linear.
//!
//! `[B, T, D]` -> `[B, T, d]` -> `[B, T, d]` -> `[B, d]` -> `[B, outputs]`.
//!
//! The reference code has no position embedding (its paper says it has learned ones); here
//! it is [`ModelConfig::positional_embedding`], off by default: on, a learned `[1, max_tokens,
//! d]` embedding (N(0, 0.02²) at start) is added after the projection. Without it the model
//! sees a bag of contextual token states, whose encoder already encoded position.
//! Parameters: `proj`, `pos_embed` (optional), `encoder.layers.{i}.…`, `head`.

use tch::{Tensor, nn, nn::Module};

use super::config::ModelConfig;
use super::encoder_layer::{EncoderConfig, EncoderLayer};
use super::layers;
use super::model::{Input, Model};
use crate::Result;

/// Width, heads, depth and feed-forward width of a text Transformer.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    /// Model width `d`.
    pub dim: i64,
    /// Attention heads.
    pub heads: i64,
    /// Encoder layers.
    pub layers: i64,
    /// Feed-forward width.
    pub feedforward: i64,
}

/// `tx_s`: 83,143 parameters at 768 -> 7.
pub const S: Size = Size {
    dim: 64,
    heads: 4,
    layers: 1,
    feedforward: 128,
};
/// `tx_m`: 493,255 parameters.
pub const M: Size = Size {
    dim: 112,
    heads: 4,
    layers: 4,
    feedforward: 224,
};
/// `tx_l`: 1,880,519 parameters.
pub const L: Size = Size {
    dim: 192,
    heads: 6,
    layers: 5,
    feedforward: 512,
};

/// A small Transformer encoder over frozen token states.
#[derive(Debug)]
pub struct TextTransformer {
    proj: nn::Linear,
    pos_embed: Option<Tensor>,
    layers: Vec<EncoderLayer>,
    head: nn::Linear,
}

impl TextTransformer {
    /// Creates the Transformer under `path`.
    pub fn new(path: &nn::Path, size: &Size, config: &ModelConfig) -> Result<Self> {
        let dim = size.dim;
        let encoder = EncoderConfig {
            dim,
            heads: size.heads,
            feedforward: size.feedforward,
            dropout: config.dropout,
        };
        let pos_embed = config.positional_embedding.then(|| {
            let init = nn::Init::Randn {
                mean: 0.0,
                stdev: 0.02,
            };
            path.var("pos_embed", &[1, config.max_tokens(), dim], init)
        });
        let layers_path = path / "encoder" / "layers";
        Ok(TextTransformer {
            proj: layers::linear(path / "proj", config.feature_dim(), dim),
            pos_embed,
            layers: (0..size.layers)
                .map(|i| EncoderLayer::new(&layers_path / i, encoder))
                .collect(),
            head: layers::linear(path / "head", dim, config.outputs),
        })
    }
}

impl Model for TextTransformer {
    fn forward_t(&self, input: &Input, train: bool) -> Tensor {
        let (states, mask) = input.tokens();
        let mut x = self.proj.forward(states);
        if let Some(pos_embed) = &self.pos_embed {
            let (tokens, max_tokens) = (x.size()[1], pos_embed.size()[1]);
            assert!(
                tokens <= max_tokens,
                "{tokens} tokens exceed the position embedding's {max_tokens}"
            );
            x += pos_embed.narrow(1, 0, tokens);
        }
        let x = self
            .layers
            .iter()
            .fold(x, |x, layer| layer.forward_t(&x, Some(mask), train));
        self.head.forward(&layers::masked_mean(&x, mask))
    }
}
