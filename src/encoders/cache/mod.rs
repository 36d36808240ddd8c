//! Content-addressed caches of encoder output: every text of a data set encoded once, so
//! that every model, seed and checkpoint of a preset reads the same states and training
//! never runs the encoder.
//!
//! # Key
//!
//! A cache is identified by the SHA-256 of the canonical JSON of its [`CacheSpec`]: the
//! cache [`SCHEMA`], the data source (name, version, SHA-256), the number of texts and the
//! SHA-256 of the texts themselves (so options that change which rows a source yields,
//! such as `sotu`'s `labels`, change the key too), the encoder's [`EncoderId`], `max_len`
//! and the pooling. Whether a preset reads token states or pooled embeddings is not part
//! of the key: one cache holds both.
//!
//! # Layout
//!
//! `<root>/<key>/` where `root` is [`root`] (`<data cache>/encoded`, see
//! [`crate::packages::cache_dir`]) unless a caller gives another:
//!
//! - `states-00000.safetensors`, `states-00001.safetensors`, ...: [`CHUNK_ROWS`] texts each
//!   (the last one fewer), tensors `states` (F16 `[n, max_len, dim]`, padding zero) and
//!   `mask` (U8 `[n, max_len]`, 1 for the real tokens, which come first);
//! - `pooled.safetensors`: `pooled` (F32 `[rows, dim]`);
//! - `manifest.json`: the spec and key, `rows`, `dim`, `chunk_rows`, and every data file with
//!   its rows and SHA-256;
//! - `SHA256SUMS`: the manifest's own SHA-256, so that no byte of it (where the cache was
//!   computed, which runs record) can change unseen.
//!
//! States are stored as F16 to halve the disk size (a 384-d state of 128 tokens is 96 KB
//! per text in F32), and load as F16 ([`States::F16`]) to halve the memory too; pooled
//! embeddings stay F32 because the linear probe reads only them.
//!
//! # Guarantees
//!
//! - A build writes into `<root>/.building-<key>-<pid>/` and renames the finished folder to
//!   `<root>/<key>/` in one step, so an interrupted build leaves nothing that looks
//!   finished (its leftover folder is removed by the next build of that key once its
//!   process is gone).
//! - Encoding is deterministic (fixed batches of [`ENCODE_BATCH`] texts, no timestamps in
//!   any file), so a cache built twice has identical bytes: on the same device, and for
//!   MiniLM on the CPU with the same libtorch thread count. The key does not name the
//!   device, so a cache built on a GPU serves CPU runs too (its states may differ from
//!   CPU-built ones in their last bits); the manifest records where it was computed, and
//!   so does the data identity of every run that reads it.
//! - Opening checks the manifest against `SHA256SUMS`, and every read checks the file's
//!   SHA-256 against the manifest; a damaged or missing file is an error naming it, never
//!   used.

mod build;
mod spec;
mod store;

pub(crate) use build::progress_bar;
pub use build::{Rows, build, build_rows, open_or_build, open_or_build_rows};
pub use spec::{
    CHUNK_ROWS, CacheManifest, CacheSpec, CachedInput, ENCODE_BATCH, ENCODED_ON, Encoding,
    FileEntry, SCHEMA, encoded_identity, root, texts_sha256,
};
pub use store::Cache;
