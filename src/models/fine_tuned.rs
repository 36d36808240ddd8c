//! A pretrained text encoder trained end to end with a head on its output (the regime of
//! Agarwal & Nenkova, who fine-tune BERT and RoBERTa): token ids `[B, T]` -> the
//! encoder's last hidden states -> the head, either a text model of the registry on the
//! token states (`ffn_*`, `textcnn_*`, `bigru_s`, `tx_*`, ...) or `linear` on the pooled
//! embedding, pooled as the frozen encoder pools ([`pool`]). Before its first update it
//! computes what the same head computes on the frozen encoder's cached output.
//!
//! Parameters: the head's under its own names, the encoder's under `backbone.` with the
//! hub's names (`backbone.embeddings.word_embeddings.weight`), the encoder's in the
//! optimiser groups [`ENCODER_DECAY`] and [`ENCODER_NO_DECAY`] (its biases and norms) so
//! that training gives the encoder its own learning rate and schedule, the head's in
//! group 0.

use tch::{Tensor, nn};

use super::config::{InputShape, ModelConfig};
use super::model::{Input, Model};
use crate::encoders::EmbeddingPooling;
use crate::encoders::cache::CachedInput;
use crate::encoders::hub::Groups;
use crate::encoders::text::{Pretrained, TextModel, TokenBatch, pool};
use crate::{Error, Result};

/// The optimiser group of the encoder's weights and embeddings.
pub const ENCODER_DECAY: usize = 1;
/// The optimiser group of the encoder's biases and norms (no weight decay).
pub const ENCODER_NO_DECAY: usize = 2;

/// A pretrained encoder to fine-tune, and what of its output the head reads.
pub struct Backbone {
    pretrained: Pretrained,
    pooling: EmbeddingPooling,
    input: CachedInput,
}

impl Backbone {
    /// `pretrained`, read by the head as `input` says (token states, or embeddings pooled
    /// by `pooling`).
    pub fn new(pretrained: Pretrained, pooling: EmbeddingPooling, input: CachedInput) -> Self {
        Backbone {
            pretrained,
            pooling,
            input,
        }
    }

    /// The encoder.
    pub fn pretrained(&self) -> &Pretrained {
        &self.pretrained
    }

    /// The config of the head on this encoder, from the config of the data
    /// (`config.input` the encoder's token ids): what it reads of the encoder's output.
    pub fn head_config(&self, config: &ModelConfig) -> Result<ModelConfig> {
        let InputShape::EncoderIds { max_tokens } = config.input else {
            return Err(Error::Invalid(format!(
                "a fine-tuned encoder reads its own token ids, but the data gives {}",
                config.input.kind().noun()
            )));
        };
        let dim = self.pretrained.profile().hidden();
        let input = match self.input {
            CachedInput::Tokens => InputShape::Tokens { dim, max_tokens },
            CachedInput::Pooled => InputShape::Embedding { dim },
        };
        Ok(ModelConfig { input, ..*config })
    }
}

impl std::fmt::Debug for Backbone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backbone")
            .field("encoder", self.pretrained.profile().id())
            .field("pooling", &self.pooling)
            .field("input", &self.input)
            .finish()
    }
}

/// The encoder and its head.
#[derive(Debug)]
pub struct FineTuned {
    encoder: Box<dyn TextModel>,
    head: Box<dyn Model>,
    pooling: EmbeddingPooling,
    normalize: bool,
    input: CachedInput,
}

impl FineTuned {
    /// The encoder of `backbone` under `path / "backbone"` with its pretrained weights,
    /// below `head` (built under `path` for [`Backbone::head_config`]).
    pub(super) fn new(path: &nn::Path, backbone: &Backbone, head: Box<dyn Model>) -> Result<Self> {
        let groups = Groups {
            decay: ENCODER_DECAY,
            no_decay: ENCODER_NO_DECAY,
        };
        let encoder = backbone.pretrained.declare(path / "backbone", groups)?;
        Ok(FineTuned {
            encoder,
            head,
            pooling: backbone.pooling,
            normalize: backbone.pretrained.profile().normalizes(),
            input: backbone.input,
        })
    }
}

impl Model for FineTuned {
    fn forward_t(&self, input: &Input, train: bool) -> Tensor {
        let (ids, mask) = input.encoder_ids();
        let batch = TokenBatch {
            ids: ids.shallow_clone(),
            mask: mask.shallow_clone(),
        };
        let x = self.encoder.forward_t(&batch, train);
        let (states, pooled) = pool(x, mask, self.pooling, self.normalize);
        let read = match self.input {
            CachedInput::Tokens => Input::Tokens {
                states,
                mask: mask.shallow_clone(),
            },
            CachedInput::Pooled => Input::Embeddings(pooled),
        };
        self.head.forward_t(&read, train)
    }
}
