//! What an encoder is to the rest of drift: the [`Encoder`] trait, its identity
//! ([`EncoderId`]), its output ([`Encoded`]) and how token states become one embedding per
//! text ([`EmbeddingPooling`]). Every encoder and the cache read these, so they live below
//! all of them.

use serde::{Deserialize, Serialize};

use crate::Result;

/// Who an encoder is, as recorded in caches and provenance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EncoderId {
    /// `minilm`, `glove`, or `local` for weights a user supplies.
    pub name: String,
    /// The package (or local folder) it was read from.
    pub package: String,
    /// Package version (`local` for a folder).
    pub version: String,
    /// SHA-256 of the package archive (or of the local weights file).
    pub sha256: String,
    /// Width of a token state and of a pooled embedding.
    pub dim: usize,
}

/// The version a local folder's identity records: `local`, with its `model_type` when it
/// is not a BERT, so that two architectures never share a cache (BERT folders keep the
/// `local` they had before drift read other architectures, so their caches keep their
/// keys).
pub fn local_version(model_type: &str) -> String {
    match model_type {
        "bert" => "local".into(),
        other => format!("local {other}"),
    }
}

/// How token states become one embedding per text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EmbeddingPooling {
    /// The first token's state (`[CLS]`).
    Cls,
    /// The mean over real (unmasked) tokens.
    Mean,
}

impl EmbeddingPooling {
    /// The name presets and caches use: `cls` or `mean`.
    pub fn name(self) -> &'static str {
        match self {
            EmbeddingPooling::Cls => "cls",
            EmbeddingPooling::Mean => "mean",
        }
    }
}

/// An encoder's output for a batch of texts.
#[derive(Clone, Debug, PartialEq)]
pub struct Encoded {
    /// Tokens per row (`max_len`).
    pub tokens: usize,
    /// State width.
    pub dim: usize,
    /// Token states, `rows * tokens * dim`, padding positions zero.
    pub states: Vec<f32>,
    /// Real tokens per row (at least 1).
    pub lengths: Vec<u32>,
    /// Pooled embeddings, `rows * dim`.
    pub pooled: Vec<f32>,
}

/// A frozen encoder.
pub trait Encoder: Send + Sync {
    /// Its identity.
    fn id(&self) -> &EncoderId;
    /// Token states (the first `max_len` tokens of each text) and pooled embeddings of
    /// `texts`, as the reference implementation computes them.
    fn encode(
        &self,
        texts: &[String],
        max_len: usize,
        pooling: EmbeddingPooling,
    ) -> Result<Encoded>;
    /// Where and how it computes, e.g. `cpu, 1 libtorch thread`: a batched float
    /// computation's last bits depend on it, so caches and provenance record it.
    fn computed_on(&self) -> String {
        "cpu".into()
    }
}
