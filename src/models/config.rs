//! What a model is built for: the kind and shape of its input ([`InputKind`],
//! [`InputShape`]) and everything its size depends on ([`ModelConfig`]). Plain Rust, so
//! presets are checked without libtorch; every model reads it, so it lives below them.

use crate::{Error, Result};

/// What a model reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputKind {
    /// Images `[C, H, W]`.
    Image,
    /// Frozen-encoder token states `[T, D]` with a padding mask.
    Tokens,
    /// One pooled frozen-encoder embedding `[D]`.
    Embedding,
    /// A pretrained encoder's token ids `[T]` with a padding mask, read by a model that
    /// fine-tunes the encoder ([`super::Backbone`]); no registry model reads them alone.
    EncoderIds,
}

impl InputKind {
    /// The plural noun used in error messages.
    #[cfg_attr(not(feature = "torch"), allow(dead_code))]
    pub(super) fn noun(self) -> &'static str {
        match self {
            InputKind::Image => "images",
            InputKind::Tokens => "token states",
            InputKind::Embedding => "pooled embeddings",
            InputKind::EncoderIds => "encoder token ids",
        }
    }
}

/// Shape of one input row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputShape {
    /// An image.
    Image {
        /// Colour channels.
        channels: i64,
        /// Height in pixels.
        height: i64,
        /// Width in pixels.
        width: i64,
    },
    /// Token states of a frozen text encoder.
    Tokens {
        /// Width of one token state.
        dim: i64,
        /// Most tokens a row can have (the length the states were cached at).
        max_tokens: i64,
    },
    /// A pooled embedding of a frozen encoder.
    Embedding {
        /// Width of the embedding.
        dim: i64,
    },
    /// A pretrained encoder's token ids, for a model that fine-tunes it.
    EncoderIds {
        /// Most tokens a row can have, special tokens included.
        max_tokens: i64,
    },
}

impl InputShape {
    /// The kind of input this shape describes.
    pub fn kind(&self) -> InputKind {
        match self {
            InputShape::Image { .. } => InputKind::Image,
            InputShape::Tokens { .. } => InputKind::Tokens,
            InputShape::Embedding { .. } => InputKind::Embedding,
            InputShape::EncoderIds { .. } => InputKind::EncoderIds,
        }
    }
}

/// Everything a model's size depends on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelConfig {
    /// Shape of one input row.
    pub input: InputShape,
    /// Width of the output: classes, labels, or 1 for regression.
    pub outputs: i64,
    /// Dropout probability of the layers that have one (0.1 in the reference).
    pub dropout: f64,
    /// Learned position embedding for the text Transformers (off in the reference code).
    pub positional_embedding: bool,
    /// Channels-last activations in the convolutional image models
    /// ([`crate::train::TrainConfig::channels_last`]).
    pub channels_last: bool,
}

impl ModelConfig {
    /// The reference shapes: images 3x32x32 -> 2 logits.
    pub fn reference_image() -> Self {
        Self::reference(
            InputShape::Image {
                channels: 3,
                height: 32,
                width: 32,
            },
            2,
        )
    }

    /// The reference shapes: 768-d token states (max 256 tokens) -> 7 outputs.
    pub fn reference_text() -> Self {
        Self::reference(
            InputShape::Tokens {
                dim: 768,
                max_tokens: 256,
            },
            7,
        )
    }

    /// Pooled 768-d embeddings -> 2 outputs.
    pub fn reference_embedding() -> Self {
        Self::reference(InputShape::Embedding { dim: 768 }, 2)
    }

    fn reference(input: InputShape, outputs: i64) -> Self {
        ModelConfig {
            input,
            outputs,
            dropout: 0.1,
            positional_embedding: false,
            channels_last: false,
        }
    }

    /// Rejects sizes no model can be built with.
    #[cfg_attr(not(feature = "torch"), allow(dead_code))]
    pub(super) fn check(&self) -> Result<()> {
        let dims_positive = match self.input {
            InputShape::Image {
                channels,
                height,
                width,
            } => channels > 0 && height > 0 && width > 0,
            InputShape::Tokens { dim, max_tokens } => dim > 0 && max_tokens > 0,
            InputShape::Embedding { dim } => dim > 0,
            InputShape::EncoderIds { max_tokens } => max_tokens > 0,
        };
        if !dims_positive {
            return Err(Error::Invalid(format!(
                "model input sizes must be positive, got {:?}",
                self.input
            )));
        }
        if self.outputs < 1 {
            return Err(Error::Invalid(format!(
                "a model needs at least one output, got {}",
                self.outputs
            )));
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return Err(Error::Invalid(format!(
                "dropout must lie in [0, 1), got {}",
                self.dropout
            )));
        }
        Ok(())
    }
}

#[cfg(feature = "torch")]
impl ModelConfig {
    /// `(channels, height, width)` of an image config.
    pub(super) fn image_shape(&self) -> (i64, i64, i64) {
        match self.input {
            InputShape::Image {
                channels,
                height,
                width,
            } => (channels, height, width),
            other => unreachable!("build checks the input kind, got {other:?}"),
        }
    }

    /// Width of one token state or pooled embedding.
    pub(super) fn feature_dim(&self) -> i64 {
        match self.input {
            InputShape::Tokens { dim, .. } | InputShape::Embedding { dim } => dim,
            other => unreachable!("build checks the input kind, got {other:?}"),
        }
    }

    /// Most tokens per row of a token config.
    pub(super) fn max_tokens(&self) -> i64 {
        match self.input {
            InputShape::Tokens { max_tokens, .. } => max_tokens,
            other => unreachable!("build checks the input kind, got {other:?}"),
        }
    }
}
