//! MPNet (`model_type = "mpnet"`), as `transformers`' `MPNetModel` computes it: word and
//! position embeddings (positions counted from `pad_token_id + 1` as RoBERTa's, no token
//! types), normalised, then post-LN layers ([`PostLnLayer`]) whose attention scores carry
//! a relative position bias: T5's bidirectional buckets (`relative_attention_num_buckets`,
//! exact below a quarter of them, logarithmic up to a distance of 128), one learned value
//! per bucket and head, shared by every layer. all-mpnet-base-v2 is an MPNet.
//!
//! `ids [B, T]` -> `[B, T, hidden]`. Parameters: `embeddings.{word,position}_embeddings`,
//! `embeddings.LayerNorm`, `encoder.layer.{i}.attention.attn.{q,k,v,o}`,
//! `….attention.LayerNorm`, `….intermediate.dense`, `….output.{dense,LayerNorm}`,
//! `encoder.relative_attention_bias`; a task model's checkpoint prefixes them with `mpnet.`.

use serde::Deserialize;
use tch::{Kind, Tensor};

use crate::encoders::hub::Params;

use super::blocks::{
    Embedding, LayerNames, LayerNorm, PostLnLayer, additive_key_mask, attention, dropout,
    positions_after_padding,
};
use super::model::{Family, TextModel, TokenBatch};
use super::roberta::RobertaConfig;

const NAMES: LayerNames = LayerNames {
    query: "attention.attn.q",
    key: "attention.attn.k",
    value: "attention.attn.v",
    attention_out: "attention.attn.o",
    attention_norm: "attention.LayerNorm",
    intermediate: "intermediate.dense",
    output: "output.dense",
    output_norm: "output.LayerNorm",
};

/// The largest distance the buckets tell apart (`MPNetEncoder.compute_position_bias`).
const MAX_DISTANCE: i64 = 128;

/// RoBERTa's fields of `config.json` (BERT's and the padding id the positions count
/// from), and the buckets.
#[derive(Clone, Debug, Deserialize)]
pub struct MpNetConfig {
    #[serde(flatten)]
    roberta: RobertaConfig,
    #[serde(default = "buckets")]
    relative_attention_num_buckets: i64,
}

fn buckets() -> i64 {
    32
}

impl Family for MpNetConfig {
    type Model = MpNet;

    /// RoBERTa's checks (room for positions after the padding id), and at least four
    /// buckets.
    fn check(&self) -> std::result::Result<(), String> {
        self.roberta.check()?;
        if self.relative_attention_num_buckets < 4 {
            return Err(format!(
                "relative_attention_num_buckets {} must be at least 4",
                self.relative_attention_num_buckets
            ));
        }
        Ok(())
    }

    /// Width of the hidden states.
    fn hidden(&self) -> i64 {
        self.roberta.hidden()
    }

    /// The longest input: the positions after the padding id's.
    fn max_positions(&self) -> i64 {
        self.roberta.max_positions()
    }

    /// The model under `p`.
    fn vocab(&self) -> i64 {
        self.roberta.vocab()
    }

    fn model(&self, p: &Params) -> MpNet {
        MpNet::new(p, self)
    }
}

/// An MPNet encoder.
#[derive(Debug)]
pub struct MpNet {
    word: Embedding,
    position: Embedding,
    norm: LayerNorm,
    layers: Vec<PostLnLayer>,
    bias: Embedding,
    buckets: i64,
    pad_token_id: i64,
    dropout: f64,
    attention_dropout: f64,
}

impl MpNet {
    /// The model under `p`.
    pub fn new(p: &Params, config: &MpNetConfig) -> MpNet {
        let c = &config.roberta.bert;
        let size = c.layer_size();
        let e = p / "embeddings";
        let encoder = p / "encoder";
        MpNet {
            word: Embedding::new(&e / "word_embeddings", c.vocab(), size.hidden),
            position: Embedding::new(&e / "position_embeddings", c.max_positions(), size.hidden),
            norm: LayerNorm::new(&e / "LayerNorm", size.hidden, size.eps),
            layers: (0..c.layers())
                .map(|i| PostLnLayer::new(&(&encoder / "layer" / i), &NAMES, size))
                .collect(),
            bias: Embedding::new(
                &encoder / "relative_attention_bias",
                config.relative_attention_num_buckets,
                size.heads,
            ),
            buckets: config.relative_attention_num_buckets,
            pad_token_id: config.roberta.pad_token_id,
            dropout: size.dropout,
            attention_dropout: c.attention_dropout(),
        }
    }

    /// The position bias `[1, heads, T, T]` of a width-`width` batch.
    fn position_bias(&self, width: i64, device: tch::Device) -> Tensor {
        let at = Tensor::arange(width, (Kind::Int64, device));
        let relative = at.unsqueeze(0) - at.unsqueeze(1);
        let buckets = bucket(&relative, self.buckets, MAX_DISTANCE);
        self.bias.forward(&buckets).permute([2, 0, 1]).unsqueeze(0)
    }
}

/// T5's bidirectional bucket of each relative position (`memory - context`), as
/// `MPNetEncoder.relative_position_bucket` computes it, float32 logarithm included, so
/// that the boundaries fall where the reference's do.
fn bucket(relative: &Tensor, buckets: i64, max_distance: i64) -> Tensor {
    let n = -relative;
    let half = buckets / 2;
    let sign = n.lt(0).to_kind(Kind::Int64) * half;
    let n = n.abs();
    let exact = half / 2;
    let small = n.lt(exact);
    let large = ((n.to_kind(Kind::Float) / exact as f64).log()
        / (max_distance as f64 / exact as f64).ln()
        * (half - exact) as f64)
        .to_kind(Kind::Int64)
        + exact;
    let large = large.clamp_max(half - 1);
    sign + n.where_self(&small, &large)
}

impl TextModel for MpNet {
    fn forward_t(&self, inputs: &TokenBatch, train: bool) -> Tensor {
        let positions = positions_after_padding(&inputs.mask, self.pad_token_id);
        let summed = self.word.forward(&inputs.ids) + self.position.forward(&positions);
        let mut x = dropout(self.norm.forward(&summed), self.dropout, train);
        let width = inputs.ids.size()[1];
        let scores =
            self.position_bias(width, inputs.ids.device()) + additive_key_mask(&inputs.mask);
        for layer in &self.layers {
            x = layer.forward_t(&x, train, |q, k, v| {
                attention(q, k, v, &scores, self.attention_dropout, train)
            });
        }
        x
    }
}
