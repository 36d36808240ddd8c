//! RoBERTa (`model_type = "roberta"`, also XLM-RoBERTa's `xlm-roberta`), as
//! `transformers`' `RobertaModel` computes it: BERT ([`super::bert`]) but for the position
//! ids, which count from `pad_token_id + 1` over each row's real tokens (padding sits at
//! `pad_token_id`), so the longest input is `max_position_embeddings - pad_token_id - 1`
//! tokens. The seed paper's text families read RoBERTa-base token states.
//!
//! `ids [B, T]` -> `[B, T, hidden]`. Parameters: BERT's names; a task model's checkpoint
//! prefixes them with `roberta.`.

use serde::Deserialize;
use tch::Tensor;

use crate::encoders::hub::Params;

use super::bert::{self, BertEmbeddings};
use super::blocks::{PostLnLayer, positions_after_padding};
use super::model::{Family, TextModel, TokenBatch};

/// BERT's fields of `config.json`, and the padding id the positions count from.
#[derive(Clone, Debug, Deserialize)]
pub struct RobertaConfig {
    #[serde(flatten)]
    pub(super) bert: bert::BertConfig,
    #[serde(default = "one")]
    pub(super) pad_token_id: i64,
}

fn one() -> i64 {
    1
}

impl Family for RobertaConfig {
    type Model = Roberta;

    /// BERT's checks, and room for at least two positions after the padding id.
    fn check(&self) -> std::result::Result<(), String> {
        self.bert.check()?;
        if self.pad_token_id < 0 || self.max_positions() < 2 {
            return Err(format!(
                "pad_token_id {} leaves no room in max_position_embeddings {}",
                self.pad_token_id,
                self.bert.max_positions()
            ));
        }
        Ok(())
    }

    /// Width of the hidden states.
    fn hidden(&self) -> i64 {
        self.bert.hidden()
    }

    /// The longest input: the positions after the padding id's.
    fn max_positions(&self) -> i64 {
        self.bert.max_positions() - self.pad_token_id - 1
    }

    /// The model under `p`.
    fn vocab(&self) -> i64 {
        self.bert.vocab()
    }

    fn model(&self, p: &Params) -> Roberta {
        Roberta::new(p, self)
    }
}

/// A RoBERTa encoder.
#[derive(Debug)]
pub struct Roberta {
    embeddings: BertEmbeddings,
    layers: Vec<PostLnLayer>,
    pad_token_id: i64,
    attention_dropout: f64,
}

impl Roberta {
    /// The model under `p`.
    pub fn new(p: &Params, config: &RobertaConfig) -> Roberta {
        Roberta {
            embeddings: BertEmbeddings::new(p, &config.bert, config.hidden()),
            layers: bert::post_ln_layers(&(p / "encoder" / "layer"), &config.bert),
            pad_token_id: config.pad_token_id,
            attention_dropout: config.bert.attention_dropout(),
        }
    }
}

impl TextModel for Roberta {
    fn forward_t(&self, inputs: &TokenBatch, train: bool) -> Tensor {
        let positions = positions_after_padding(&inputs.mask, self.pad_token_id);
        let x = self.embeddings.forward_t(&inputs.ids, &positions, train);
        bert::encode_t(&self.layers, x, &inputs.mask, self.attention_dropout, train)
    }
}
