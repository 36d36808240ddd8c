//! Vision Transformers (Dosovitskiy et al. 2021) for small images, patch size 4.
//!
//! `[B, C, H, W]` -> Conv2d(k = s = 4) `[B, d, H/4, W/4]` -> `[B, N, d]` patches
//! (N = 64 at 32x32) -> CLS token prepended `[B, N+1, d]` + learned position embedding
//! `[1, N+1, d]` -> post-LN encoder layers ([`super::encoder_layer`]) -> LayerNorm of the
//! CLS token `[B, d]` -> Linear `[B, outputs]`.
//!
//! CLS token and position embedding start from N(0, 0.02²). Parameters: `patch_embed`,
//! `cls_token`, `pos_embed`, `encoder.layers.{i}.…`, `norm`, `head`.

use tch::{Tensor, nn, nn::Module};

use super::config::ModelConfig;
use super::encoder_layer::{EncoderConfig, EncoderLayer};
use super::layers;
use super::model::{Input, Model};
use crate::{Error, Result};

const PATCH: i64 = 4;

/// Width, depth and heads of a ViT.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    /// Token width `d`.
    pub dim: i64,
    /// Encoder layers.
    pub layers: i64,
    /// Attention heads.
    pub heads: i64,
    /// Feed-forward width as a multiple of `dim`.
    pub mlp_ratio: f64,
}

/// `vit_s`: 74,562 parameters at 3x32x32 -> 2.
pub const S: Size = Size {
    dim: 64,
    layers: 2,
    heads: 4,
    mlp_ratio: 2.0,
};
/// `vit_m`: 545,154 parameters.
pub const M: Size = Size {
    dim: 128,
    layers: 4,
    heads: 4,
    mlp_ratio: 2.0,
};
/// `vit_l`: 2,248,514 parameters.
pub const L: Size = Size {
    dim: 192,
    layers: 6,
    heads: 6,
    mlp_ratio: 3.0,
};

/// A ViT classifier on its CLS token.
#[derive(Debug)]
pub struct Vit {
    patch_embed: nn::Conv2D,
    cls_token: Tensor,
    pos_embed: Tensor,
    layers: Vec<EncoderLayer>,
    norm: nn::LayerNorm,
    head: nn::Linear,
}

impl Vit {
    /// Creates the ViT under `path`; image sides must be multiples of the patch size.
    pub fn new(path: &nn::Path, size: &Size, config: &ModelConfig) -> Result<Self> {
        let (channels, height, width) = config.image_shape();
        if height % PATCH != 0 || width % PATCH != 0 {
            return Err(Error::Invalid(format!(
                "image sides must be multiples of the patch size {PATCH}, got {height}x{width}"
            )));
        }
        let dim = size.dim;
        let tokens = (height / PATCH) * (width / PATCH) + 1;
        let embedding_init = nn::Init::Randn {
            mean: 0.0,
            stdev: 0.02,
        };
        let encoder = EncoderConfig {
            dim,
            heads: size.heads,
            feedforward: (size.mlp_ratio * dim as f64).round() as i64,
            dropout: config.dropout,
        };
        let layers_path = path / "encoder" / "layers";
        Ok(Vit {
            patch_embed: layers::conv2d(path / "patch_embed", channels, dim, PATCH, PATCH, 0, true),
            cls_token: path.var("cls_token", &[1, 1, dim], embedding_init),
            pos_embed: path.var("pos_embed", &[1, tokens, dim], embedding_init),
            layers: (0..size.layers)
                .map(|i| EncoderLayer::new(&layers_path / i, encoder))
                .collect(),
            norm: layers::layer_norm(path / "norm", dim),
            head: layers::linear(path / "head", dim, config.outputs),
        })
    }
}

impl Model for Vit {
    fn forward_t(&self, input: &Input, train: bool) -> Tensor {
        let patches = self
            .patch_embed
            .forward(input.images())
            .flatten(2, -1)
            .transpose(1, 2);
        let batch = patches.size()[0];
        let cls = self.cls_token.expand([batch, -1, -1], false);
        let x = Tensor::cat(&[cls, patches], 1) + &self.pos_embed;
        let x = self
            .layers
            .iter()
            .fold(x, |x, layer| layer.forward_t(&x, None, train));
        self.head.forward(&self.norm.forward(&x.select(1, 0)))
    }
}
