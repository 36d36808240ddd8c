//! ModernBERT (`model_type = "modernbert"`), as `transformers`' `ModernBertModel`
//! computes it on padded batches: token embeddings, normalised (no position embeddings),
//! then pre-LN layers (the first without its attention norm) whose attention rotates
//! queries and keys (rotary embeddings, base `rope_theta` of the layer's kind) and is
//! either global or local (a token sees the tokens within `local_attention / 2` of it);
//! the feed-forward block is a GeGLU (`Wi` gives the input and the gate); a final norm.
//! Norms and projections have no biases unless `norm_bias` / `attention_bias` /
//! `mlp_bias` say so.
//!
//! The layer kinds come from `layer_types` (`full_attention` / `sliding_attention`,
//! `transformers` 5) or from `global_attn_every_n_layers` (every n-th layer global, as
//! the hub's configurations say), the rotary bases from `rope_parameters` or from
//! `global_rope_theta` / `local_rope_theta`.
//!
//! `ids [B, T]` -> `[B, T, hidden]`. Parameters: `embeddings.tok_embeddings`,
//! `embeddings.norm`, `layers.{i}.attn_norm` (not layer 0), `layers.{i}.attn.{Wqkv,Wo}`,
//! `layers.{i}.mlp_norm`, `layers.{i}.mlp.{Wi,Wo}`, `final_norm`; a task model's
//! checkpoint prefixes them with `model.`.

use std::collections::BTreeMap;

use serde::Deserialize;
use tch::{Kind, Tensor};

use crate::encoders::hub::Params;

use super::blocks::{
    Activation, Embedding, LayerNorm, Linear, additive_key_mask, attention, dropout,
};
use super::model::{Family, TextModel, TokenBatch, check_heads, positive};

/// One kind's rotary parameters (`rope_parameters.<kind>`).
#[derive(Clone, Debug, Deserialize)]
struct Rope {
    rope_theta: f64,
    #[serde(default)]
    rope_type: Option<String>,
}

/// The fields of `config.json` the forward pass reads, with `ModernBertConfig`'s defaults.
#[derive(Clone, Debug, Deserialize)]
pub struct ModernBertConfig {
    vocab_size: i64,
    hidden_size: i64,
    num_hidden_layers: i64,
    num_attention_heads: i64,
    intermediate_size: i64,
    #[serde(default = "positions")]
    max_position_embeddings: i64,
    #[serde(default = "gelu")]
    hidden_activation: String,
    #[serde(default = "eps")]
    norm_eps: f64,
    #[serde(default)]
    norm_bias: bool,
    #[serde(default)]
    attention_bias: bool,
    #[serde(default)]
    mlp_bias: bool,
    #[serde(default)]
    embedding_dropout: f64,
    #[serde(default)]
    attention_dropout: f64,
    #[serde(default)]
    mlp_dropout: f64,
    #[serde(default = "window")]
    local_attention: i64,
    #[serde(default)]
    layer_types: Option<Vec<String>>,
    #[serde(default = "every")]
    global_attn_every_n_layers: i64,
    #[serde(default)]
    rope_parameters: Option<BTreeMap<String, Rope>>,
    #[serde(default)]
    global_rope_theta: Option<f64>,
    #[serde(default)]
    local_rope_theta: Option<f64>,
}

fn positions() -> i64 {
    8192
}
fn gelu() -> String {
    "gelu".into()
}
fn eps() -> f64 {
    1e-5
}
fn window() -> i64 {
    128
}
fn every() -> i64 {
    3
}

/// `ModernBertConfig`'s bases when a configuration names none.
const GLOBAL_THETA: f64 = 160_000.0;
const LOCAL_THETA: f64 = 10_000.0;

impl Family for ModernBertConfig {
    type Model = ModernBert;

    /// The sizes are positive, the heads divide the width into even halves, the
    /// activation, layer kinds and rotary types are ones this module computes.
    fn check(&self) -> std::result::Result<(), String> {
        positive(&[
            ("vocab_size", self.vocab_size),
            ("hidden_size", self.hidden_size),
            ("num_hidden_layers", self.num_hidden_layers),
            ("num_attention_heads", self.num_attention_heads),
            ("intermediate_size", self.intermediate_size),
            ("max_position_embeddings", self.max_position_embeddings),
            ("local_attention", self.local_attention),
            (
                "global_attn_every_n_layers",
                self.global_attn_every_n_layers,
            ),
        ])?;
        check_heads(self.hidden_size, self.num_attention_heads)?;
        if (self.hidden_size / self.num_attention_heads) % 2 != 0 {
            return Err("the rotary embeddings need an even head width".into());
        }
        Activation::from_name(&self.hidden_activation)?;
        let kinds = self.kinds()?;
        if kinds.len() != self.num_hidden_layers as usize {
            return Err(format!(
                "layer_types has {} entries for {} layers",
                kinds.len(),
                self.num_hidden_layers
            ));
        }
        if let Some(rope) = &self.rope_parameters
            && let Some((kind, r)) = rope
                .iter()
                .find(|(_, r)| r.rope_type.as_deref().is_some_and(|t| t != "default"))
        {
            return Err(format!(
                "rope_parameters.{kind}.rope_type {:?}: only default rotary embeddings are \
                 supported",
                r.rope_type.as_deref().unwrap_or_default()
            ));
        }
        Ok(())
    }

    /// Width of the hidden states.
    fn hidden(&self) -> i64 {
        self.hidden_size
    }

    /// The longest input, special tokens included.
    fn max_positions(&self) -> i64 {
        self.max_position_embeddings
    }

    /// The model under `p`.
    fn vocab(&self) -> i64 {
        self.vocab_size
    }

    fn model(&self, p: &Params) -> ModernBert {
        ModernBert::new(p, self)
    }
}

impl ModernBertConfig {
    /// Whether each layer's attention is local.
    fn kinds(&self) -> std::result::Result<Vec<bool>, String> {
        match &self.layer_types {
            Some(types) => types
                .iter()
                .map(|t| match t.as_str() {
                    "sliding_attention" => Ok(true),
                    "full_attention" => Ok(false),
                    other => Err(format!(
                        "layer_types: {other:?} is not full_attention or sliding_attention"
                    )),
                })
                .collect(),
            None => Ok((0..self.num_hidden_layers)
                .map(|i| i % self.global_attn_every_n_layers != 0)
                .collect()),
        }
    }

    /// The rotary base of local (`true`) or global layers.
    fn theta(&self, local: bool) -> f64 {
        let kind = if local {
            "sliding_attention"
        } else {
            "full_attention"
        };
        if let Some(rope) = self.rope_parameters.as_ref().and_then(|r| r.get(kind)) {
            return rope.rope_theta;
        }
        match local {
            true => self.local_rope_theta.unwrap_or(LOCAL_THETA),
            false => self.global_rope_theta.unwrap_or(GLOBAL_THETA),
        }
    }
}

#[derive(Debug)]
struct Layer {
    attn_norm: Option<LayerNorm>,
    qkv: Linear,
    attn_out: Linear,
    mlp_norm: LayerNorm,
    mlp_in: Linear,
    mlp_out: Linear,
    local: bool,
}

/// A ModernBERT encoder.
#[derive(Debug)]
pub struct ModernBert {
    embeddings: Embedding,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    final_norm: LayerNorm,
    heads: i64,
    activation: Activation,
    /// The inverse frequencies of global and local layers, `[head_dim / 2]`.
    inv_freq: [Vec<f32>; 2],
    window: i64,
    dropouts: [f64; 3],
}

impl ModernBert {
    /// The model under `p`.
    pub fn new(p: &Params, config: &ModernBertConfig) -> ModernBert {
        let h = config.hidden_size;
        let (eps, bias) = (config.norm_eps, config.norm_bias);
        let norm = |path: Params| LayerNorm::with_bias(path, h, eps, bias);
        let kinds = config.kinds().expect("checked");
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let at = p / "layers" / i;
                let attn = &at / "attn";
                let mlp = &at / "mlp";
                Layer {
                    attn_norm: (i > 0).then(|| norm(&at / "attn_norm")),
                    qkv: Linear::with_bias(&attn / "Wqkv", h, 3 * h, config.attention_bias),
                    attn_out: Linear::with_bias(&attn / "Wo", h, h, config.attention_bias),
                    mlp_norm: norm(&at / "mlp_norm"),
                    mlp_in: Linear::with_bias(
                        &mlp / "Wi",
                        h,
                        2 * config.intermediate_size,
                        config.mlp_bias,
                    ),
                    mlp_out: Linear::with_bias(
                        &mlp / "Wo",
                        config.intermediate_size,
                        h,
                        config.mlp_bias,
                    ),
                    local: kinds[i as usize],
                }
            })
            .collect();
        let head_dim = h / config.num_attention_heads;
        // As `compute_default_rope_parameters`: 1 / base^(2i / d) in float32.
        let inv_freq = |theta: f64| -> Vec<f32> {
            let exponents =
                Tensor::arange_start_step(0, head_dim, 2, (Kind::Float, tch::Device::Cpu))
                    / head_dim as f64;
            let freq = (Tensor::from(theta as f32).pow(&exponents)).reciprocal();
            Vec::<f32>::try_from(&freq).expect("a float vector")
        };
        let e = p / "embeddings";
        ModernBert {
            embeddings: Embedding::new(&e / "tok_embeddings", config.vocab_size, h),
            embedding_norm: norm(&e / "norm"),
            layers,
            final_norm: norm(p / "final_norm"),
            heads: config.num_attention_heads,
            activation: Activation::from_name(&config.hidden_activation).expect("checked"),
            inv_freq: [inv_freq(config.theta(false)), inv_freq(config.theta(true))],
            window: config.local_attention / 2,
            dropouts: [
                config.embedding_dropout,
                config.attention_dropout,
                config.mlp_dropout,
            ],
        }
    }

    /// `cos` and `sin` `[T, head_dim]` of the positions `0..width` for base `local`.
    fn rotary(&self, width: i64, local: bool, device: tch::Device) -> (Tensor, Tensor) {
        let inv = Tensor::from_slice(&self.inv_freq[usize::from(local)]).to_device(device);
        let at = Tensor::arange(width, (Kind::Float, device));
        let freqs = at.unsqueeze(-1) * inv.unsqueeze(0);
        let emb = Tensor::cat(&[&freqs, &freqs], -1);
        (emb.cos(), emb.sin())
    }
}

/// `x cos + rotate_half(x) sin`, `rotate_half(x) = [-x2, x1]` over the halves of the last
/// dimension.
fn rotate(x: &Tensor, cos: &Tensor, sin: &Tensor) -> Tensor {
    let half = x.size()[3] / 2;
    let (x1, x2) = (x.narrow(-1, 0, half), x.narrow(-1, half, half));
    let rotated = Tensor::cat(&[&(-x2), &x1], -1);
    x * cos + rotated * sin
}

impl TextModel for ModernBert {
    fn forward_t(&self, inputs: &TokenBatch, train: bool) -> Tensor {
        let [embedding_dropout, attention_dropout, mlp_dropout] = self.dropouts;
        let (rows, width) = (inputs.ids.size()[0], inputs.ids.size()[1]);
        let device = inputs.ids.device();
        let mut x = dropout(
            self.embedding_norm
                .forward(&self.embeddings.forward(&inputs.ids)),
            embedding_dropout,
            train,
        );
        let global = additive_key_mask(&inputs.mask);
        let at = Tensor::arange(width, (Kind::Int64, device));
        let far = (at.unsqueeze(0) - at.unsqueeze(1)).abs().gt(self.window);
        let local = global.masked_fill(&far.view([1, 1, width, width]), f64::NEG_INFINITY);
        let rotary = [
            self.rotary(width, false, device),
            self.rotary(width, true, device),
        ];
        let h = x.size()[2];
        let head_dim = h / self.heads;
        for layer in &self.layers {
            let normed = match &layer.attn_norm {
                Some(norm) => norm.forward(&x),
                None => x.shallow_clone(),
            };
            let qkv = layer
                .qkv
                .forward(&normed)
                .view([rows, width, 3, self.heads, head_dim]);
            let part = |i: i64| qkv.select(2, i).transpose(1, 2);
            let (cos, sin) = &rotary[usize::from(layer.local)];
            let q = rotate(&part(0), cos, sin);
            let k = rotate(&part(1), cos, sin);
            let mask = if layer.local { &local } else { &global };
            let context = attention(&q, &k, &part(2), mask, attention_dropout, train)
                .transpose(1, 2)
                .reshape([rows, width, h]);
            x = &x + dropout(layer.attn_out.forward(&context), attention_dropout, train);
            let gated = layer
                .mlp_in
                .forward(&layer.mlp_norm.forward(&x))
                .chunk(2, -1);
            let inner = self.activation.forward(&gated[0]) * &gated[1];
            x = &x + layer.mlp_out.forward(&dropout(inner, mlp_dropout, train));
        }
        self.final_norm.forward(&x)
    }
}
