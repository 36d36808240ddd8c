//! Building a cache: rows (texts or images) encoded in fixed batches into a temporary
//! folder, then renamed into place in one step.

use std::io::Write;
use std::path::Path;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use safetensors::{Dtype, tensor::TensorView};

use super::spec::{
    CHUNK_ROWS, CacheManifest, CacheSpec, ENCODE_BATCH, FileEntry, MANIFEST, POOLED, SUMS,
    chunk_name,
};
use super::store::Cache;
use crate::checksum::{Sums, sha256_hex};
use crate::encoders::encoder::{EmbeddingPooling, Encoded, Encoder, EncoderId};
use crate::{Error, Result};

/// What a cache is encoded from: its rows (texts or images) and the encoder that turns a
/// range of them into token states and pooled embeddings.
pub trait Rows {
    /// How many.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// What a row is, for the progress bar (`texts`, `images`).
    fn unit(&self) -> &'static str;
    /// The encoder's identity.
    fn id(&self) -> &EncoderId;
    /// Where the encoder computes ([`Encoder::computed_on`]).
    fn computed_on(&self) -> String;
    /// The rows `range`, encoded as `spec` asks.
    fn encode(&self, range: std::ops::Range<usize>, spec: &CacheSpec) -> Result<Encoded>;
}

/// `texts` and the text `encoder`.
struct Texts<'a> {
    texts: &'a [String],
    encoder: &'a dyn Encoder,
}

impl Rows for Texts<'_> {
    fn len(&self) -> usize {
        self.texts.len()
    }

    fn unit(&self) -> &'static str {
        "texts"
    }

    fn id(&self) -> &EncoderId {
        self.encoder.id()
    }

    fn computed_on(&self) -> String {
        self.encoder.computed_on()
    }

    fn encode(&self, range: std::ops::Range<usize>, spec: &CacheSpec) -> Result<Encoded> {
        let pooling = spec.pooling.unwrap_or(EmbeddingPooling::Mean);
        self.encoder
            .encode(&self.texts[range], spec.max_len, pooling)
    }
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

/// The cache of `spec` under `root`: opened when it is there (and, with `force`, rebuilt
/// anyway), else built from `rows`. Returns the cache and whether it was built now.
pub fn open_or_build_rows(
    root: &Path,
    spec: &CacheSpec,
    rows: &dyn Rows,
    force: bool,
    progress: bool,
) -> Result<(Cache, bool)> {
    if !force && let Some(cache) = Cache::open(root, spec)? {
        return Ok((cache, false));
    }
    Ok((build_rows(root, spec, rows, progress)?, true))
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
    build_rows(root, spec, &Texts { texts, encoder }, progress)
}

/// Encodes `rows` into the cache of `spec` under `root` (replacing a cache already there),
/// atomically: see the module docs.
pub fn build_rows(root: &Path, spec: &CacheSpec, rows: &dyn Rows, progress: bool) -> Result<Cache> {
    if rows.id() != &spec.encoder {
        return Err(Error::Invalid(format!(
            "encoder {} reports identity {:?}, but the cache is for {:?}",
            spec.encoder.name,
            rows.id(),
            spec.encoder
        )));
    }
    if rows.len() != spec.rows || spec.max_len == 0 {
        return Err(Error::Invalid(format!(
            "encoder cache: {} {} and max_len {} for a spec of {} rows",
            rows.len(),
            rows.unit(),
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
    let result = write_cache(&tmp, spec, &key, rows, progress)
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
    progress_bar_of(rows, "texts", name, progress)
}

/// The bar of encoding `rows` of `unit` (`texts`, `images`) with the encoder `name`.
fn progress_bar_of(rows: usize, unit: &str, name: &str, progress: bool) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(
        Some(rows as u64),
        if progress {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "encoding with {{msg}} [{{bar:24}}] {{human_pos}}/{{human_len}} {unit} ({{eta}} left)"
        ))
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
    rows: &dyn Rows,
    progress: bool,
) -> Result<CacheManifest> {
    let (t, d, total) = (spec.max_len, spec.encoder.dim, rows.len());
    let bar = progress_bar_of(total, rows.unit(), &spec.encoder.name, progress);
    let mut pooled: Vec<u8> = Vec::with_capacity(total * d * 4);
    let mut chunks = Vec::new();
    for c in 0..total.div_ceil(CHUNK_ROWS) {
        let chunk = c * CHUNK_ROWS..total.min((c + 1) * CHUNK_ROWS);
        let mut states: Vec<u8> = Vec::with_capacity(chunk.len() * t * d * 2);
        let mut mask: Vec<u8> = Vec::with_capacity(chunk.len() * t);
        for first in chunk.clone().step_by(ENCODE_BATCH) {
            let n = ENCODE_BATCH.min(chunk.end - first);
            let out = rows.encode(first..first + n, spec)?;
            if out.tokens != t
                || out.dim != d
                || out.states.len() != n * t * d
                || out.lengths.len() != n
                || out.pooled.len() != n * d
            {
                return Err(Error::Invalid(format!(
                    "encoder {}: {} {first}..{}: output of the wrong shape",
                    spec.encoder.name,
                    rows.unit(),
                    first + n
                )));
            }
            for (r, &len) in out.lengths.iter().enumerate() {
                let len = len as usize;
                if !(1..=t).contains(&len) {
                    return Err(Error::Invalid(format!(
                        "encoder {}: row {}: {len} tokens, expected 1..={t}",
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
                                "encoder {}: row {}: state {x} is not finite in 16 bits",
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
                    "encoder {}: {} {first}..{}: pooled value {x}",
                    spec.encoder.name,
                    rows.unit(),
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
    let bytes = safetensors_bytes(vec![("pooled", Dtype::F32, vec![total, d], &pooled)])?;
    let pooled = write_file(tmp, POOLED, total, &bytes)?;
    let manifest = CacheManifest {
        schema: spec.schema,
        key: key.into(),
        source: spec.source.clone(),
        texts_sha256: spec.texts_sha256.clone(),
        encoder: spec.encoder.clone(),
        max_len: t,
        pooling: spec.pooling,
        preprocess: spec.preprocess.clone(),
        rows: total,
        dim: d,
        chunk_rows: CHUNK_ROWS,
        chunks,
        pooled,
        computed_on: rows.computed_on(),
    };
    let json = serde_json::to_string_pretty(&manifest).expect("manifests serialise") + "\n";
    write_file(tmp, MANIFEST, total, json.as_bytes())?;
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
