//! What a cache is: its key's spec ([`CacheSpec`]), its manifest, the names of its files,
//! and where caches live ([`Encoding`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::checksum::{Hasher, sha256_hex};
use crate::data::DataSource;
use crate::encoders::encoder::{EmbeddingPooling, EncoderId};

/// Version of the cache layout; part of every key.
pub const SCHEMA: u32 = 2;
/// Texts per states file.
pub const CHUNK_ROWS: usize = 1024;
/// Texts per call of the encoder. Fixed, because batch boundaries can change the last bits
/// of a batched encoder's output (changing it means a new [`SCHEMA`]); large enough that
/// MiniLM, which sorts each call's texts by length, pads little.
pub const ENCODE_BATCH: usize = 256;
pub(super) const MANIFEST: &str = "manifest.json";
pub(super) const SUMS: &str = "SHA256SUMS";
pub(super) const POOLED: &str = "pooled.safetensors";

/// Where caches live by default: `<data cache>/encoded`.
pub fn root() -> PathBuf {
    crate::packages::cache_dir().join("encoded")
}

/// What an encoded data set's version says before the place its cache was encoded.
pub const ENCODED_ON: &str = "; encoded on ";

/// The bytes whose SHA-256 identifies an encoded data set: the cache key, the input kind
/// and where the cache was encoded.
pub fn encoded_identity(key: &str, input: &str, computed_on: &str) -> Vec<u8> {
    format!("{key}\n{input}\n{computed_on}").into_bytes()
}

/// Where encoder caches are read and built, and how.
#[derive(Clone, Debug)]
pub struct Encoding {
    /// Root of the caches ([`root`] by default).
    pub root: PathBuf,
    /// The data cache holding the encoder packages ([`crate::packages::cache_dir`] by default).
    pub packages: PathBuf,
    /// Rebuild even when the cache is there.
    pub force: bool,
    /// Show a progress bar while encoding (on a terminal).
    pub progress: bool,
    /// Where MiniLM runs when it builds a cache: `cpu` (the default), `auto`, `cuda` or
    /// `cuda:N`. The bytes of a cache are reproducible on one device (and, on the CPU,
    /// one thread count); another device may change the last bits of the states.
    pub device: String,
}

impl Default for Encoding {
    fn default() -> Self {
        Encoding {
            root: root(),
            packages: crate::packages::cache_dir(),
            force: false,
            progress: true,
            device: "cpu".into(),
        }
    }
}

/// Everything a cache's content depends on; its key is the SHA-256 of this as JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheSpec {
    /// [`SCHEMA`].
    pub schema: u32,
    /// The data source the texts came from.
    pub source: DataSource,
    /// Number of texts.
    pub rows: usize,
    /// [`texts_sha256`] of the texts (of an image cache: the SHA-256 of its images).
    pub texts_sha256: String,
    /// The encoder.
    pub encoder: EncoderId,
    /// Tokens kept per text (1 for an image cache: its one feature).
    pub max_len: usize,
    /// Pooling of the embeddings; none for an image cache, whose encoder pools as its
    /// architecture does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pooling: Option<EmbeddingPooling>,
    /// An image cache's preprocessing (input size, resize, interpolation, mean, std), so
    /// that the key names it; none for text (and absent from text keys, which keep theirs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preprocess: Option<serde_json::Value>,
}

impl CacheSpec {
    /// The spec of encoding `texts` of `source` with `encoder`.
    pub fn new(
        source: &DataSource,
        texts: &[String],
        encoder: EncoderId,
        max_len: usize,
        pooling: EmbeddingPooling,
    ) -> Self {
        CacheSpec {
            schema: SCHEMA,
            source: source.clone(),
            rows: texts.len(),
            texts_sha256: texts_sha256(texts),
            encoder,
            max_len,
            pooling: Some(pooling),
            preprocess: None,
        }
    }

    /// The cache key: SHA-256 (hex) of the spec's JSON.
    pub fn key(&self) -> String {
        sha256_hex(
            serde_json::to_string(self)
                .expect("specs serialise")
                .as_bytes(),
        )
    }
}

/// SHA-256 of `texts`, each as its byte length (u64, little-endian) then its UTF-8 bytes, so
/// that no two lists of texts hash the same way.
pub fn texts_sha256(texts: &[String]) -> String {
    let mut hasher = Hasher::new();
    for text in texts {
        hasher.update((text.len() as u64).to_le_bytes());
        hasher.update(text.as_bytes());
    }
    hasher.finish()
}

/// One data file of a cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    /// File name inside the cache folder.
    pub file: String,
    /// Texts in it.
    pub rows: usize,
    /// SHA-256 of its bytes.
    pub sha256: String,
}

/// `manifest.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheManifest {
    /// [`SCHEMA`].
    pub schema: u32,
    /// The key (the folder's name).
    pub key: String,
    /// The data source.
    pub source: DataSource,
    /// SHA-256 of the texts ([`texts_sha256`]).
    pub texts_sha256: String,
    /// The encoder.
    pub encoder: EncoderId,
    /// Tokens per text.
    pub max_len: usize,
    /// Pooling of `pooled` (none for images).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pooling: Option<EmbeddingPooling>,
    /// An image cache's preprocessing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preprocess: Option<serde_json::Value>,
    /// Texts.
    pub rows: usize,
    /// State and embedding width.
    pub dim: usize,
    /// Texts per states file (the last may have fewer).
    pub chunk_rows: usize,
    /// The states files, in row order.
    pub chunks: Vec<FileEntry>,
    /// The pooled embeddings.
    pub pooled: FileEntry,
    /// Where the encoder ran ([`Encoder::computed_on`]); not part of the key, so a cache
    /// serves runs on any device, and the data identity of those runs names it.
    pub computed_on: String,
}

impl CacheManifest {
    /// The spec it was built from.
    pub fn spec(&self) -> CacheSpec {
        CacheSpec {
            schema: self.schema,
            source: self.source.clone(),
            rows: self.rows,
            texts_sha256: self.texts_sha256.clone(),
            encoder: self.encoder.clone(),
            max_len: self.max_len,
            pooling: self.pooling,
            preprocess: self.preprocess.clone(),
        }
    }
}

/// Which input a data set reads from a cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CachedInput {
    /// Token states ([`Inputs::Tokens`]), for the text models.
    Tokens,
    /// Pooled embeddings ([`Inputs::Embeddings`]), for a linear head.
    Pooled,
}

impl CachedInput {
    /// The name presets use: `tokens` or `pooled`.
    pub fn name(self) -> &'static str {
        match self {
            CachedInput::Tokens => "tokens",
            CachedInput::Pooled => "pooled",
        }
    }
}

pub(super) fn chunk_name(i: usize) -> String {
    format!("states-{i:05}.safetensors")
}
