//! The post-LN Transformer encoder layer shared by the ViTs and the text Transformers.
//!
//! Same computation, parameter names and initialisation as PyTorch's
//! `nn.TransformerEncoderLayer(d, heads, ff, dropout, activation="gelu", batch_first=True,
//! norm_first=False)`, on `x [B, T, d]`:
//!
//! ```text
//! x = norm1(x + Dropout(SelfAttn(x)))                      attention dropout on the weights
//! x = norm2(x + Dropout(linear2(Dropout(GELU(linear1(x))))))
//! ```
//!
//! Self-attention projects with `self_attn.in_proj_weight [3d, d]` (+ bias) and
//! `self_attn.out_proj [d, d]`; an optional key mask `[B, T]` (true = real token) keeps
//! padded keys out of every softmax, so real positions never see padding.

use tch::{Tensor, nn, nn::Module};

use super::layers;

/// Sizes of one encoder layer.
#[derive(Clone, Copy, Debug)]
pub struct EncoderConfig {
    /// Model width `d`.
    pub dim: i64,
    /// Attention heads; divides `dim`.
    pub heads: i64,
    /// Hidden width of the feed-forward block.
    pub feedforward: i64,
    /// Dropout of attention weights, both residual branches and the feed-forward block.
    pub dropout: f64,
}

/// One post-LN encoder layer.
#[derive(Debug)]
pub struct EncoderLayer {
    in_proj_weight: Tensor,
    in_proj_bias: Tensor,
    out_proj: nn::Linear,
    linear1: nn::Linear,
    linear2: nn::Linear,
    norm1: nn::LayerNorm,
    norm2: nn::LayerNorm,
    config: EncoderConfig,
}

impl EncoderLayer {
    /// Creates the layer's parameters under `path` (PyTorch's initialisation).
    pub fn new(path: nn::Path, config: EncoderConfig) -> Self {
        let EncoderConfig {
            dim, feedforward, ..
        } = config;
        let attn = &path / "self_attn";
        // nn.MultiheadAttention: Xavier-uniform packed projection, zero biases.
        let bound = (6.0 / (4 * dim) as f64).sqrt();
        let in_proj_weight = attn.var(
            "in_proj_weight",
            &[3 * dim, dim],
            nn::Init::Uniform {
                lo: -bound,
                up: bound,
            },
        );
        let in_proj_bias = attn.zeros("in_proj_bias", &[3 * dim]);
        let out_proj = nn::linear(
            &attn / "out_proj",
            dim,
            dim,
            nn::LinearConfig {
                ws_init: layers::uniform(dim),
                bs_init: Some(nn::Init::Const(0.0)),
                bias: true,
            },
        );
        EncoderLayer {
            in_proj_weight,
            in_proj_bias,
            out_proj,
            linear1: layers::linear(&path / "linear1", dim, feedforward),
            linear2: layers::linear(&path / "linear2", feedforward, dim),
            norm1: layers::layer_norm(&path / "norm1", dim),
            norm2: layers::layer_norm(&path / "norm2", dim),
            config,
        }
    }

    /// `x [B, T, d]` -> `[B, T, d]`; `key_mask [B, T]` bool (true = real token) or `None`.
    pub fn forward_t(&self, x: &Tensor, key_mask: Option<&Tensor>, train: bool) -> Tensor {
        let p = self.config.dropout;
        let attended = self.self_attention(x, key_mask, train).dropout(p, train);
        let x = self.norm1.forward(&(x + attended));
        let hidden = self.linear1.forward(&x).gelu("none").dropout(p, train);
        let fed = self.linear2.forward(&hidden).dropout(p, train);
        self.norm2.forward(&(x + fed))
    }

    fn self_attention(&self, x: &Tensor, key_mask: Option<&Tensor>, train: bool) -> Tensor {
        let (batch, tokens, dim) = x.size3().expect("encoder input must be [B, T, d]");
        let heads = self.config.heads;
        let split = |t: &Tensor| {
            t.reshape([batch, tokens, heads, dim / heads])
                .transpose(1, 2)
        };
        let qkv = x.linear(&self.in_proj_weight, Some(&self.in_proj_bias));
        let qkv = qkv.chunk(3, -1);
        // sdpa's boolean mask marks the keys that take part: [B, 1, 1, T] covers all queries.
        let mask = key_mask.map(|m| m.view([batch, 1, 1, tokens]));
        let dropout = if train { self.config.dropout } else { 0.0 };
        let attended = Tensor::scaled_dot_product_attention(
            &split(&qkv[0]),
            &split(&qkv[1]),
            &split(&qkv[2]),
            mask,
            dropout,
            false,
            None,
            false,
        );
        let merged = attended.transpose(1, 2).reshape([batch, tokens, dim]);
        self.out_proj.forward(&merged)
    }
}
