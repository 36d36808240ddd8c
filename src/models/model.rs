//! What every model is under libtorch: the [`Model`] trait and a batch of its [`Input`].

use tch::Tensor;

use super::config::InputKind;

/// One batch of model input.
#[derive(Debug)]
pub enum Input {
    /// [B, C, H, W] float.
    Images(Tensor),
    /// [B, T, D] float states and [B, T] bool mask (true = real token).
    Tokens {
        /// Token states; padded positions may hold anything.
        states: Tensor,
        /// True at real tokens; padding only at the end and at least one real token.
        mask: Tensor,
    },
    /// [B, D] float.
    Embeddings(Tensor),
    /// [B, T] int64 ids of a pretrained encoder's tokenizer and [B, T] bool mask (true =
    /// real token; padding id 0 at the end).
    EncoderIds {
        /// The ids.
        ids: Tensor,
        /// True at real tokens.
        mask: Tensor,
    },
}

impl Input {
    /// What kind of input this is.
    pub fn kind(&self) -> InputKind {
        match self {
            Input::Images(_) => InputKind::Image,
            Input::Tokens { .. } => InputKind::Tokens,
            Input::Embeddings(_) => InputKind::Embedding,
            Input::EncoderIds { .. } => InputKind::EncoderIds,
        }
    }

    fn wrong(&self, want: InputKind) -> ! {
        panic!(
            "the model reads {}, but the batch holds {}",
            want.noun(),
            self.kind().noun()
        )
    }

    pub(super) fn images(&self) -> &Tensor {
        match self {
            Input::Images(images) => images,
            _ => self.wrong(InputKind::Image),
        }
    }

    pub(super) fn tokens(&self) -> (&Tensor, &Tensor) {
        match self {
            Input::Tokens { states, mask } => (states, mask),
            _ => self.wrong(InputKind::Tokens),
        }
    }

    pub(super) fn encoder_ids(&self) -> (&Tensor, &Tensor) {
        match self {
            Input::EncoderIds { ids, mask } => (ids, mask),
            _ => self.wrong(InputKind::EncoderIds),
        }
    }

    pub(super) fn embeddings(&self) -> &Tensor {
        match self {
            Input::Embeddings(embeddings) => embeddings,
            _ => self.wrong(InputKind::Embedding),
        }
    }
}

/// A built model: logits [B, outputs] (regression: outputs = 1, raw value).
pub trait Model: std::fmt::Debug {
    /// Runs one batch; `train` switches dropout on and BatchNorm to batch statistics.
    ///
    /// Panics when `input` is not the kind the model was built for
    /// ([`build`](super::build) checks the config, the caller keeps batches consistent
    /// with it).
    fn forward_t(&self, input: &Input, train: bool) -> Tensor;
}
