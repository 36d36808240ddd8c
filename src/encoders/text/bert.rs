//! BERT (`model_type = "bert"`), as `transformers`' `BertModel` computes it: word,
//! absolute position and token-type (type 0) embeddings summed and normalised, then
//! post-LN layers ([`PostLnLayer`]) with padding masked out of the attention. all-MiniLM-L6-v2
//! is a BERT.
//!
//! `ids [B, T]` -> `[B, T, hidden]`. Parameters: `embeddings.{word,position,
//! token_type}_embeddings`, `embeddings.LayerNorm`, `encoder.layer.{i}.…` (BERT's names);
//! a task model's checkpoint prefixes them with `bert.`.

use serde::Deserialize;
use tch::{Kind, Tensor};

use crate::encoders::hub::Params;

use super::blocks::{
    Activation, BERT_NAMES, Embedding, LayerNorm, LayerSize, PostLnLayer, attention, dropout,
    key_mask,
};
use super::model::{Family, TextModel, TokenBatch, check_heads, positive};

/// The fields of `config.json` the forward pass reads.
#[derive(Clone, Debug, Deserialize)]
pub struct BertConfig {
    hidden_size: i64,
    num_hidden_layers: i64,
    num_attention_heads: i64,
    intermediate_size: i64,
    max_position_embeddings: i64,
    #[serde(default = "two")]
    type_vocab_size: i64,
    vocab_size: i64,
    #[serde(default = "gelu")]
    hidden_act: String,
    #[serde(default = "bert_eps")]
    layer_norm_eps: f64,
    #[serde(default)]
    position_embedding_type: Option<String>,
    #[serde(default = "dropout_rate")]
    hidden_dropout_prob: f64,
    #[serde(default = "dropout_rate")]
    attention_probs_dropout_prob: f64,
}

fn two() -> i64 {
    2
}
pub(super) fn gelu() -> String {
    "gelu".into()
}
pub(super) fn bert_eps() -> f64 {
    1e-12
}
pub(super) fn dropout_rate() -> f64 {
    0.1
}

impl Family for BertConfig {
    type Model = Bert;

    /// The sizes are positive and the heads divide the width; the activation and position
    /// embedding are ones this module computes.
    fn check(&self) -> std::result::Result<(), String> {
        positive(&[
            ("hidden_size", self.hidden_size),
            ("num_hidden_layers", self.num_hidden_layers),
            ("num_attention_heads", self.num_attention_heads),
            ("intermediate_size", self.intermediate_size),
            ("max_position_embeddings", self.max_position_embeddings),
            ("type_vocab_size", self.type_vocab_size),
            ("vocab_size", self.vocab_size),
        ])?;
        check_heads(self.hidden_size, self.num_attention_heads)?;
        Activation::from_name(&self.hidden_act)?;
        if let Some(kind) = &self.position_embedding_type
            && kind != "absolute"
        {
            return Err(format!(
                "position_embedding_type {kind:?}: only absolute is supported"
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

    fn model(&self, p: &Params) -> Bert {
        Bert::new(p, self)
    }
}

impl BertConfig {
    /// Number of layers.
    pub(super) fn layers(&self) -> i64 {
        self.num_hidden_layers
    }

    /// Dropout of the attention probabilities, in training.
    pub(super) fn attention_dropout(&self) -> f64 {
        self.attention_probs_dropout_prob
    }

    pub(super) fn layer_size(&self) -> LayerSize {
        LayerSize {
            hidden: self.hidden_size,
            heads: self.num_attention_heads,
            intermediate: self.intermediate_size,
            eps: self.layer_norm_eps,
            activation: Activation::from_name(&self.hidden_act).expect("checked"),
            dropout: self.hidden_dropout_prob,
        }
    }
}

/// BERT's embeddings: word + position + token type 0, normalised. With `embedding` the
/// width of the tables (ELECTRA's may be narrower than its hidden states).
#[derive(Debug)]
pub(super) struct BertEmbeddings {
    word: Embedding,
    position: Embedding,
    token_type: Embedding,
    norm: LayerNorm,
    dropout: f64,
}

impl BertEmbeddings {
    pub(super) fn new(p: &Params, config: &BertConfig, embedding: i64) -> BertEmbeddings {
        let p = p / "embeddings";
        BertEmbeddings {
            word: Embedding::new(&p / "word_embeddings", config.vocab_size, embedding),
            position: Embedding::new(
                &p / "position_embeddings",
                config.max_position_embeddings,
                embedding,
            ),
            token_type: Embedding::new(
                &p / "token_type_embeddings",
                config.type_vocab_size,
                embedding,
            ),
            norm: LayerNorm::new(&p / "LayerNorm", embedding, config.layer_norm_eps),
            dropout: config.hidden_dropout_prob,
        }
    }

    /// The embeddings of `ids` at `positions` (`[T]` shared by every row, or `[B, T]`).
    pub(super) fn forward_t(&self, ids: &Tensor, positions: &Tensor, train: bool) -> Tensor {
        let position = self.position.forward(positions);
        let position = if positions.dim() == 1 {
            position.unsqueeze(0)
        } else {
            position
        };
        let summed = self.word.forward(ids) + position + self.token_type.table().get(0);
        dropout(self.norm.forward(&summed), self.dropout, train)
    }
}

/// A BERT encoder.
#[derive(Debug)]
pub struct Bert {
    embeddings: BertEmbeddings,
    layers: Vec<PostLnLayer>,
    attention_dropout: f64,
}

impl Bert {
    /// The model under `p`.
    pub fn new(p: &Params, config: &BertConfig) -> Bert {
        Bert {
            embeddings: BertEmbeddings::new(p, config, config.hidden_size),
            layers: post_ln_layers(&(p / "encoder" / "layer"), config),
            attention_dropout: config.attention_probs_dropout_prob,
        }
    }
}

/// `num_hidden_layers` post-LN layers with BERT's names under `p` (`p / i`).
pub(super) fn post_ln_layers(p: &Params, config: &BertConfig) -> Vec<PostLnLayer> {
    (0..config.num_hidden_layers)
        .map(|i| PostLnLayer::new(&(p / i), &BERT_NAMES, config.layer_size()))
        .collect()
}

/// The layers on `x` with padding masked out of the attention.
pub(super) fn encode_t(
    layers: &[PostLnLayer],
    mut x: Tensor,
    mask: &Tensor,
    attention_dropout: f64,
    train: bool,
) -> Tensor {
    let attend = key_mask(mask);
    for layer in layers {
        x = layer.forward_t(&x, train, |q, k, v| {
            attention(q, k, v, &attend, attention_dropout, train)
        });
    }
    x
}

impl TextModel for Bert {
    fn forward_t(&self, inputs: &TokenBatch, train: bool) -> Tensor {
        let width = inputs.ids.size()[1];
        let positions = Tensor::arange(width, (Kind::Int64, inputs.ids.device()));
        let x = self.embeddings.forward_t(&inputs.ids, &positions, train);
        encode_t(&self.layers, x, &inputs.mask, self.attention_dropout, train)
    }
}
