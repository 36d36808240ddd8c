//! ELECTRA's discriminator (`model_type = "electra"`), as `transformers`' `ElectraModel`
//! computes it: BERT ([`super::bert`]) with embeddings of their own width
//! (`embedding_size`), normalised at that width and projected to the hidden width
//! (`embeddings_project`) when the two differ.
//!
//! `ids [B, T]` -> `[B, T, hidden]`. Parameters: BERT's names plus `embeddings_project`;
//! the hub's discriminators (`ElectraForPreTraining`) prefix them with `electra.`.

use serde::Deserialize;
use tch::{Kind, Tensor};

use crate::encoders::hub::Params;

use super::bert::{self, BertEmbeddings};
use super::blocks::{Linear, PostLnLayer};
use super::model::{Family, TextModel, TokenBatch, positive};

/// BERT's fields of `config.json`, and the embeddings' width.
#[derive(Clone, Debug, Deserialize)]
pub struct ElectraConfig {
    #[serde(flatten)]
    bert: bert::BertConfig,
    /// `ElectraConfig`'s default.
    #[serde(default = "default_embedding")]
    embedding_size: i64,
}

fn default_embedding() -> i64 {
    128
}

impl Family for ElectraConfig {
    type Model = Electra;

    /// BERT's checks, and a positive embedding width.
    fn check(&self) -> std::result::Result<(), String> {
        self.bert.check()?;
        positive(&[("embedding_size", self.embedding_size)])
    }

    /// Width of the hidden states.
    fn hidden(&self) -> i64 {
        self.bert.hidden()
    }

    /// The longest input, special tokens included.
    fn max_positions(&self) -> i64 {
        self.bert.max_positions()
    }

    /// The model under `p`.
    fn vocab(&self) -> i64 {
        self.bert.vocab()
    }

    fn model(&self, p: &Params) -> Electra {
        Electra::new(p, self)
    }
}

/// An ELECTRA discriminator.
#[derive(Debug)]
pub struct Electra {
    embeddings: BertEmbeddings,
    project: Option<Linear>,
    layers: Vec<PostLnLayer>,
    attention_dropout: f64,
}

impl Electra {
    /// The model under `p`.
    pub fn new(p: &Params, config: &ElectraConfig) -> Electra {
        let (embedding, hidden) = (config.embedding_size, config.hidden());
        Electra {
            embeddings: BertEmbeddings::new(p, &config.bert, embedding),
            project: (embedding != hidden)
                .then(|| Linear::new(p / "embeddings_project", embedding, hidden)),
            layers: bert::post_ln_layers(&(p / "encoder" / "layer"), &config.bert),
            attention_dropout: config.bert.attention_dropout(),
        }
    }
}

impl TextModel for Electra {
    fn forward_t(&self, inputs: &TokenBatch, train: bool) -> Tensor {
        let width = inputs.ids.size()[1];
        let positions = Tensor::arange(width, (Kind::Int64, inputs.ids.device()));
        let mut x = self.embeddings.forward_t(&inputs.ids, &positions, train);
        if let Some(project) = &self.project {
            x = project.forward(&x);
        }
        bert::encode_t(&self.layers, x, &inputs.mask, self.attention_dropout, train)
    }
}
