//! Where the report's inputs and outputs live, relative to the report root, and the hash
//! of the code that made the outputs.
//!
//! A leaf: the output jobs ([`super::jobs`]) write under these paths and the proof
//! ([`super::proof`]) checks them, so both read them from here rather than from each
//! other.

use std::path::Path;

use crate::checksum::{Sums, sha256_hex};
use crate::{Error, Result};

/// Where the committed artifacts are, relative to the root.
pub const RESULTS: &str = "results";
/// The model listing (`drift models --params`), written by `scripts/make-results`.
pub const MODELS: &str = "results/models.txt";
/// The paper's template, and where its filled source and PDF go.
pub const PAPER_TEMPLATE: &str = "report/paper.typ";
/// The filled paper source.
pub const PAPER_SOURCE: &str = "report/build/paper.typ";
/// The PDF.
pub const PAPER_PDF: &str = "report/build/paper.pdf";
/// The supplement's template (every study's per-model figures and tables), filled from
/// the paper's context.
pub const SUPPLEMENT_TEMPLATE: &str = "report/supplement.typ";
/// The filled supplement source.
pub const SUPPLEMENT_SOURCE: &str = "report/build/supplement.typ";
/// The supplement's PDF.
pub const SUPPLEMENT_PDF: &str = "report/build/supplement.pdf";
/// The study list.
pub const STUDIES: &str = "report/studies.toml";
/// The folders every output is written under (and nothing else is).
pub const OUTPUT_DIRS: [&str; 2] = ["figures", "report/build"];

/// The SHA-256 of the code that renders outputs: every file under `src/` and `report/`
/// (templates and study list; not `report/build/`) and `Cargo.lock`, by sorted path.
pub fn code_hash(root: &Path) -> Result<String> {
    let mut listing = Sums::new();
    for dir in ["src", "report"] {
        if !root.join(dir).is_dir() {
            continue;
        }
        for entry in walkdir::WalkDir::new(root.join(dir)).sort_by_file_name() {
            let entry =
                entry.map_err(|e| Error::io(e.path().unwrap_or(root).to_path_buf(), e.into()))?;
            let rel = entry
                .path()
                .strip_prefix(root)
                .expect("walked under the root")
                .to_string_lossy()
                .replace('\\', "/");
            if !entry.file_type().is_file() || rel.starts_with("report/build/") {
                continue;
            }
            let bytes = std::fs::read(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
            listing.add(rel, &bytes);
        }
    }
    let lock = root.join("Cargo.lock");
    if lock.is_file() {
        let bytes = std::fs::read(&lock).map_err(|e| Error::io(&lock, e))?;
        listing.add("Cargo.lock", &bytes);
    }
    Ok(sha256_hex(listing.to_text().as_bytes()))
}
