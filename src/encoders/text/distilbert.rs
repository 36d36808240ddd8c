//! DistilBERT (`model_type = "distilbert"`), as `transformers`' `DistilBertModel`
//! computes it: word and absolute position embeddings (no token types), normalised, then
//! BERT's post-LN layers ([`PostLnLayer`]) under DistilBERT's own parameter names.
//!
//! `ids [B, T]` -> `[B, T, dim]`. Parameters: `embeddings.{word,position}_embeddings`,
//! `embeddings.LayerNorm`, `transformer.layer.{i}.attention.{q,k,v,out}_lin`,
//! `….sa_layer_norm`, `….ffn.lin{1,2}`, `….output_layer_norm`; a task model's
//! checkpoint prefixes them with `distilbert.`.

use serde::Deserialize;
use tch::{Kind, Tensor};

use crate::encoders::hub::Params;

use super::bert::{bert_eps, dropout_rate, gelu};
use super::blocks::{
    Activation, Embedding, LayerNames, LayerNorm, LayerSize, PostLnLayer, attention, dropout,
    key_mask,
};
use super::model::{Family, TextModel, TokenBatch, check_heads, positive};

const NAMES: LayerNames = LayerNames {
    query: "attention.q_lin",
    key: "attention.k_lin",
    value: "attention.v_lin",
    attention_out: "attention.out_lin",
    attention_norm: "sa_layer_norm",
    intermediate: "ffn.lin1",
    output: "ffn.lin2",
    output_norm: "output_layer_norm",
};

/// The fields of `config.json` the forward pass reads (DistilBERT's own names).
#[derive(Clone, Debug, Deserialize)]
pub struct DistilBertConfig {
    vocab_size: i64,
    dim: i64,
    n_layers: i64,
    n_heads: i64,
    hidden_dim: i64,
    max_position_embeddings: i64,
    #[serde(default = "gelu")]
    activation: String,
    #[serde(default = "dropout_rate")]
    dropout: f64,
    #[serde(default = "dropout_rate")]
    attention_dropout: f64,
}

impl Family for DistilBertConfig {
    type Model = DistilBert;

    /// The sizes are positive, the heads divide the width, the activation is known.
    fn check(&self) -> std::result::Result<(), String> {
        positive(&[
            ("vocab_size", self.vocab_size),
            ("dim", self.dim),
            ("n_layers", self.n_layers),
            ("n_heads", self.n_heads),
            ("hidden_dim", self.hidden_dim),
            ("max_position_embeddings", self.max_position_embeddings),
        ])?;
        check_heads(self.dim, self.n_heads)?;
        Activation::from_name(&self.activation).map(|_| ())
    }

    /// Width of the hidden states.
    fn hidden(&self) -> i64 {
        self.dim
    }

    /// The longest input, special tokens included.
    fn max_positions(&self) -> i64 {
        self.max_position_embeddings
    }

    /// The model under `p`.
    fn vocab(&self) -> i64 {
        self.vocab_size
    }

    fn model(&self, p: &Params) -> DistilBert {
        DistilBert::new(p, self)
    }
}

/// A DistilBERT encoder.
#[derive(Debug)]
pub struct DistilBert {
    word: Embedding,
    position: Embedding,
    norm: LayerNorm,
    layers: Vec<PostLnLayer>,
    dropout: f64,
    attention_dropout: f64,
}

impl DistilBert {
    /// The model under `p`.
    pub fn new(p: &Params, config: &DistilBertConfig) -> DistilBert {
        let e = p / "embeddings";
        let size = LayerSize {
            hidden: config.dim,
            heads: config.n_heads,
            intermediate: config.hidden_dim,
            eps: bert_eps(),
            activation: Activation::from_name(&config.activation).expect("checked"),
            dropout: config.dropout,
        };
        let layers = p / "transformer" / "layer";
        DistilBert {
            word: Embedding::new(&e / "word_embeddings", config.vocab_size, config.dim),
            position: Embedding::new(
                &e / "position_embeddings",
                config.max_position_embeddings,
                config.dim,
            ),
            norm: LayerNorm::new(&e / "LayerNorm", config.dim, bert_eps()),
            layers: (0..config.n_layers)
                .map(|i| PostLnLayer::new(&(&layers / i), &NAMES, size))
                .collect(),
            dropout: config.dropout,
            attention_dropout: config.attention_dropout,
        }
    }
}

impl TextModel for DistilBert {
    fn forward_t(&self, inputs: &TokenBatch, train: bool) -> Tensor {
        let width = inputs.ids.size()[1];
        let positions = Tensor::arange(width, (Kind::Int64, inputs.ids.device()));
        let summed =
            self.word.forward(&inputs.ids) + self.position.forward(&positions).unsqueeze(0);
        let mut x = dropout(self.norm.forward(&summed), self.dropout, train);
        let attend = key_mask(&inputs.mask);
        for layer in &self.layers {
            x = layer.forward_t(&x, train, |q, k, v| {
                attention(q, k, v, &attend, self.attention_dropout, train)
            });
        }
        x
    }
}
