//! A finished cache on disk: opened with every check of its manifest, its files read only
//! after their SHA-256 matches.

use std::path::{Path, PathBuf};

use safetensors::{Dtype, SafeTensors};

use super::spec::{
    CHUNK_ROWS, CacheManifest, CacheSpec, CachedInput, FileEntry, MANIFEST, POOLED, SUMS,
    chunk_name,
};
use crate::checksum::{Sums, sha256_hex};
use crate::data::{Inputs, States};
use crate::{Error, Result};

/// A finished cache on disk.
#[derive(Clone, Debug, PartialEq)]
pub struct Cache {
    /// Its folder, `<root>/<key>`.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: CacheManifest,
}

pub(super) fn damaged(path: &Path, what: impl std::fmt::Display) -> Error {
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
