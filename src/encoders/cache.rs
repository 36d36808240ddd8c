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

use std::io::Write;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use safetensors::{Dtype, SafeTensors, tensor::TensorView};
use serde::{Deserialize, Serialize};

use super::encoder::{EmbeddingPooling, Encoder, EncoderId};
use crate::checksum::{Hasher, Sums, sha256_hex};
use crate::data::{DataSource, Inputs, States};
use crate::{Error, Result};

/// Version of the cache layout; part of every key.
pub const SCHEMA: u32 = 2;
/// Texts per states file.
pub const CHUNK_ROWS: usize = 1024;
/// Texts per call of the encoder. Fixed, because batch boundaries can change the last bits
/// of a batched encoder's output (changing it means a new [`SCHEMA`]); large enough that
/// MiniLM, which sorts each call's texts by length, pads little.
pub const ENCODE_BATCH: usize = 256;
const MANIFEST: &str = "manifest.json";
const SUMS: &str = "SHA256SUMS";
const POOLED: &str = "pooled.safetensors";

/// Where caches live by default: `<data cache>/encoded`.
pub fn root() -> PathBuf {
    crate::packages::cache_dir().join("encoded")
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
    /// [`texts_sha256`] of the texts.
    pub texts_sha256: String,
    /// The encoder.
    pub encoder: EncoderId,
    /// Tokens kept per text.
    pub max_len: usize,
    /// Pooling of the embeddings.
    pub pooling: EmbeddingPooling,
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
            pooling,
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
    /// Pooling of `pooled`.
    pub pooling: EmbeddingPooling,
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

/// A finished cache on disk.
#[derive(Clone, Debug, PartialEq)]
pub struct Cache {
    /// Its folder, `<root>/<key>`.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: CacheManifest,
}

fn damaged(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::Invalid(format!(
        "{}: {what}; the encoder cache is damaged: delete its folder (or run `drift cache \
         PRESET --force`) to rebuild it",
        path.display()
    ))
}

impl Cache {
    /// The finished cache of `spec` under `root`, or `None` when there is none. Checks the
    /// manifest (its key, its spec, its file list); the data files are checked as they are
    /// read ([`Cache::verify`], [`Cache::inputs`]).
    pub fn open(root: &Path, spec: &CacheSpec) -> Result<Option<Cache>> {
        let key = spec.key();
        let dir = root.join(&key);
        let path = dir.join(MANIFEST);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if dir.exists() {
                    return Err(damaged(&path, "missing"));
                }
                return Ok(None);
            }
            Err(e) => return Err(Error::io(&path, e)),
        };
        let sums_path = dir.join(SUMS);
        let sums = match std::fs::read_to_string(&sums_path) {
            Ok(text) => Sums::parse(&text).map_err(|why| damaged(&sums_path, why))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(damaged(&sums_path, "missing"));
            }
            Err(e) => return Err(damaged(&sums_path, e)),
        };
        sums.verify(MANIFEST, &bytes, &sums_path.display().to_string())
            .map_err(|why| damaged(&path, why))?;
        let manifest: CacheManifest = serde_json::from_slice(&bytes)
            .map_err(|e| damaged(&path, format!("not a cache manifest: {e}")))?;
        if manifest.key != key || manifest.spec() != *spec {
            return Err(damaged(
                &path,
                format!(
                    "it describes cache {} but its folder is {key}",
                    manifest.key
                ),
            ));
        }
        let chunks = manifest.rows.div_ceil(CHUNK_ROWS);
        let counts_ok = manifest.chunk_rows == CHUNK_ROWS
            && manifest.dim == manifest.encoder.dim
            && manifest.chunks.len() == chunks
            && manifest.pooled.rows == manifest.rows
            && manifest.pooled.file == POOLED
            && manifest.chunks.iter().enumerate().all(|(i, c)| {
                c.file == chunk_name(i) && c.rows == CHUNK_ROWS.min(manifest.rows - i * CHUNK_ROWS)
            });
        if !counts_ok {
            return Err(damaged(
                &path,
                "its file list does not fit its rows and chunk size",
            ));
        }
        Ok(Some(Cache { dir, manifest }))
    }

    /// The cache's key.
    pub fn key(&self) -> &str {
        &self.manifest.key
    }

    /// Reads `entry`'s file and checks its SHA-256.
    fn read(&self, entry: &FileEntry) -> Result<Vec<u8>> {
        let path = self.dir.join(&entry.file);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(damaged(&path, "missing"));
            }
            Err(e) => return Err(Error::io(&path, e)),
        };
        let got = sha256_hex(&bytes);
        if got != entry.sha256 {
            return Err(damaged(
                &path,
                format!(
                    "SHA-256 {got} is not the {} that {} records (one of the two is damaged)",
                    entry.sha256,
                    self.dir.join(MANIFEST).display()
                ),
            ));
        }
        Ok(bytes)
    }

    /// Checks every data file against the manifest.
    pub fn verify(&self) -> Result<()> {
        for entry in self.manifest.chunks.iter().chain([&self.manifest.pooled]) {
            self.read(entry)?;
        }
        Ok(())
    }

    /// The cached `input` of every text: token states (back to F32, lengths from the mask)
    /// or pooled embeddings. Every file read is checked first.
    pub fn inputs(&self, input: CachedInput) -> Result<Inputs> {
        match input {
            CachedInput::Tokens => self.tokens(),
            CachedInput::Pooled => self.pooled(),
        }
    }

    fn tokens(&self) -> Result<Inputs> {
        let m = &self.manifest;
        let (t, d) = (m.max_len, m.dim);
        let mut states = Vec::with_capacity(m.rows * t * d);
        let mut lengths = Vec::with_capacity(m.rows);
        for entry in &m.chunks {
            let path = self.dir.join(&entry.file);
            let bytes = self.read(entry)?;
            let file = SafeTensors::deserialize(&bytes)
                .map_err(|e| damaged(&path, format!("not a safetensors file: {e}")))?;
            let s = tensor(&file, &path, "states", Dtype::F16, &[entry.rows, t, d])?;
            let mask = tensor(&file, &path, "mask", Dtype::U8, &[entry.rows, t])?;
            states.extend(
                s.chunks_exact(2)
                    .map(|b| half::f16::from_le_bytes([b[0], b[1]])),
            );
            for (r, row) in mask.chunks_exact(t).enumerate() {
                let n = row.iter().take_while(|&&b| b == 1).count();
                if n == 0 || row[n..].iter().any(|&b| b != 0) {
                    return Err(damaged(
                        &path,
                        format!("mask of row {r} is not 1..1 then 0..0 with at least one 1"),
                    ));
                }
                lengths.push(n as u32);
            }
        }
        Ok(Inputs::Tokens {
            tokens: t,
            dim: d,
            states: States::F16(states),
            lengths,
        })
    }

    fn pooled(&self) -> Result<Inputs> {
        let m = &self.manifest;
        let path = self.dir.join(&m.pooled.file);
        let bytes = self.read(&m.pooled)?;
        let file = SafeTensors::deserialize(&bytes)
            .map_err(|e| damaged(&path, format!("not a safetensors file: {e}")))?;
        let data = tensor(&file, &path, "pooled", Dtype::F32, &[m.rows, m.dim])?;
        Ok(Inputs::Embeddings {
            dim: m.dim,
            values: data
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        })
    }
}

/// The bytes of tensor `name`, checked for dtype and shape.
fn tensor<'a>(
    file: &SafeTensors<'a>,
    path: &Path,
    name: &str,
    dtype: Dtype,
    shape: &[usize],
) -> Result<&'a [u8]> {
    let view = file
        .tensor(name)
        .map_err(|e| damaged(path, format!("tensor {name:?}: {e}")))?;
    if view.dtype() != dtype || view.shape() != shape {
        return Err(damaged(
            path,
            format!(
                "tensor {name:?} is {:?} {:?}, expected {dtype:?} {shape:?}",
                view.dtype(),
                view.shape()
            ),
        ));
    }
    Ok(view.data())
}

fn chunk_name(i: usize) -> String {
    format!("states-{i:05}.safetensors")
}

/// The cache of `spec` under `root`: opened when it is there (and, with `force`, rebuilt
/// anyway), else built with the encoder `open_encoder` returns (called only to build).
/// Returns the cache and whether it was built now.
pub fn open_or_build(
    root: &Path,
    spec: &CacheSpec,
    texts: &[String],
    open_encoder: impl FnOnce() -> Result<Box<dyn Encoder>>,
    force: bool,
    progress: bool,
) -> Result<(Cache, bool)> {
    if !force && let Some(cache) = Cache::open(root, spec)? {
        return Ok((cache, false));
    }
    let encoder = open_encoder()?;
    Ok((build(root, spec, texts, encoder.as_ref(), progress)?, true))
}

/// Encodes `texts` with `encoder` into the cache of `spec` under `root` (replacing a cache
/// already there), atomically: see the module docs.
pub fn build(
    root: &Path,
    spec: &CacheSpec,
    texts: &[String],
    encoder: &dyn Encoder,
    progress: bool,
) -> Result<Cache> {
    if encoder.id() != &spec.encoder {
        return Err(Error::Invalid(format!(
            "encoder {} reports identity {:?}, but the cache is for {:?}",
            spec.encoder.name,
            encoder.id(),
            spec.encoder
        )));
    }
    if texts.len() != spec.rows || spec.max_len == 0 {
        return Err(Error::Invalid(format!(
            "encoder cache: {} texts and max_len {} for a spec of {} rows",
            texts.len(),
            spec.max_len,
            spec.rows
        )));
    }
    let key = spec.key();
    std::fs::create_dir_all(root).map_err(|e| Error::io(root, e))?;
    remove_stale(root, &key);
    let tmp = root.join(format!(".building-{key}-{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
    }
    std::fs::create_dir(&tmp).map_err(|e| Error::io(&tmp, e))?;
    let result = write_cache(&tmp, spec, &key, texts, encoder, progress)
        .and_then(|manifest| finish(root, &tmp, &key, manifest));
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}

/// Removes build folders of `key` left by processes that are gone (Linux: no `/proc/<pid>`;
/// elsewhere they are left alone).
fn remove_stale(root: &Path, key: &str) {
    let prefix = format!(".building-{key}-");
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        if crate::files::process_gone(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Writes `bytes` to `dir/name`, synced, and returns its entry.
fn write_file(dir: &Path, name: &str, rows: usize, bytes: &[u8]) -> Result<FileEntry> {
    let path = dir.join(name);
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::File::create(&path)?;
        file.write_all(bytes)?;
        file.sync_all()
    };
    write().map_err(|e| Error::io(&path, e))?;
    Ok(FileEntry {
        file: name.into(),
        rows,
        sha256: sha256_hex(bytes),
    })
}

fn safetensors_bytes(tensors: Vec<(&str, Dtype, Vec<usize>, &[u8])>) -> Result<Vec<u8>> {
    let views = tensors
        .into_iter()
        .map(|(name, dtype, shape, data)| TensorView::new(dtype, shape, data).map(|v| (name, v)))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::Invalid(format!("encoder cache: {e}")))?;
    safetensors::serialize(views, None).map_err(|e| Error::Invalid(format!("encoder cache: {e}")))
}

/// The bar of encoding `rows` texts with the encoder `name` (hidden unless `progress`).
pub(crate) fn progress_bar(rows: usize, name: &str, progress: bool) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(
        Some(rows as u64),
        if progress {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template(
            "encoding with {msg} [{bar:24}] {human_pos}/{human_len} texts ({eta} left)",
        )
        .expect("the template is valid")
        .progress_chars("=> "),
    );
    bar.set_message(name.to_string());
    bar
}

fn write_cache(
    tmp: &Path,
    spec: &CacheSpec,
    key: &str,
    texts: &[String],
    encoder: &dyn Encoder,
    progress: bool,
) -> Result<CacheManifest> {
    let (t, d) = (spec.max_len, spec.encoder.dim);
    let bar = progress_bar(texts.len(), &spec.encoder.name, progress);
    let mut pooled: Vec<u8> = Vec::with_capacity(texts.len() * d * 4);
    let mut chunks = Vec::new();
    for (c, chunk) in texts.chunks(CHUNK_ROWS).enumerate() {
        let mut states: Vec<u8> = Vec::with_capacity(chunk.len() * t * d * 2);
        let mut mask: Vec<u8> = Vec::with_capacity(chunk.len() * t);
        for (b, batch) in chunk.chunks(ENCODE_BATCH).enumerate() {
            let first = c * CHUNK_ROWS + b * ENCODE_BATCH;
            let out = encoder.encode(batch, t, spec.pooling)?;
            let n = batch.len();
            if out.tokens != t
                || out.dim != d
                || out.states.len() != n * t * d
                || out.lengths.len() != n
                || out.pooled.len() != n * d
            {
                return Err(Error::Invalid(format!(
                    "encoder {}: texts {first}..{}: output of the wrong shape",
                    spec.encoder.name,
                    first + n
                )));
            }
            for (r, &len) in out.lengths.iter().enumerate() {
                let len = len as usize;
                if !(1..=t).contains(&len) {
                    return Err(Error::Invalid(format!(
                        "encoder {}: text {}: {len} tokens, expected 1..={t}",
                        spec.encoder.name,
                        first + r
                    )));
                }
                for (p, state) in out.states[r * t * d..(r + 1) * t * d]
                    .chunks_exact(d)
                    .enumerate()
                {
                    for &x in state {
                        // Padding is stored as zeros whatever the encoder left there.
                        let h = half::f16::from_f32(if p < len { x } else { 0.0 });
                        if !h.is_finite() {
                            return Err(Error::Invalid(format!(
                                "encoder {}: text {}: state {x} is not finite in 16 bits",
                                spec.encoder.name,
                                first + r
                            )));
                        }
                        states.extend(h.to_le_bytes());
                    }
                    mask.push(u8::from(p < len));
                }
            }
            if let Some(x) = out.pooled.iter().find(|x| !x.is_finite()) {
                return Err(Error::Invalid(format!(
                    "encoder {}: texts {first}..{}: pooled value {x}",
                    spec.encoder.name,
                    first + n
                )));
            }
            pooled.extend(out.pooled.iter().flat_map(|x| x.to_le_bytes()));
            bar.inc(n as u64);
        }
        let n = chunk.len();
        let bytes = safetensors_bytes(vec![
            ("states", Dtype::F16, vec![n, t, d], &states),
            ("mask", Dtype::U8, vec![n, t], &mask),
        ])?;
        chunks.push(write_file(tmp, &chunk_name(c), n, &bytes)?);
    }
    bar.finish_and_clear();
    let bytes = safetensors_bytes(vec![("pooled", Dtype::F32, vec![texts.len(), d], &pooled)])?;
    let pooled = write_file(tmp, POOLED, texts.len(), &bytes)?;
    let manifest = CacheManifest {
        schema: spec.schema,
        key: key.into(),
        source: spec.source.clone(),
        texts_sha256: spec.texts_sha256.clone(),
        encoder: spec.encoder.clone(),
        max_len: t,
        pooling: spec.pooling,
        rows: texts.len(),
        dim: d,
        chunk_rows: CHUNK_ROWS,
        chunks,
        pooled,
        computed_on: encoder.computed_on(),
    };
    let json = serde_json::to_string_pretty(&manifest).expect("manifests serialise") + "\n";
    write_file(tmp, MANIFEST, texts.len(), json.as_bytes())?;
    let mut sums = Sums::new();
    sums.add(MANIFEST, json.as_bytes());
    write_file(tmp, SUMS, 0, sums.to_text().as_bytes())?;
    Ok(manifest)
}

/// Renames the finished build `tmp` to `<root>/<key>`, replacing an older one.
fn finish(root: &Path, tmp: &Path, key: &str, manifest: CacheManifest) -> Result<Cache> {
    let dir = root.join(key);
    if dir.exists() {
        // Move the old cache aside first: a rename cannot replace a non-empty folder.
        let old = root.join(format!(".replaced-{key}-{}", std::process::id()));
        std::fs::rename(&dir, &old).map_err(|e| Error::io(&dir, e))?;
        std::fs::rename(tmp, &dir).map_err(|e| Error::io(&dir, e))?;
        let _ = std::fs::remove_dir_all(&old);
    } else {
        std::fs::rename(tmp, &dir).map_err(|e| Error::io(&dir, e))?;
    }
    // Make the rename itself durable.
    if let Ok(folder) = std::fs::File::open(root) {
        let _ = folder.sync_all();
    }
    Ok(Cache { dir, manifest })
}
