//! The proof files' paths and `provenance.json`'s records: what `build-report` attaches
//! to the PDF and `drift verify-paper` reads back.

use serde::{Deserialize, Serialize};

/// The folder of the proof files, relative to the report root.
pub const DIR: &str = "report/build/proof";
/// The attached manifest of the proved outputs.
pub const SUMS: &str = "report/build/proof/SHA256SUMS";
/// The attached inputs of the proved outputs.
pub const INPUTS: &str = "report/build/proof/inputs.json";
/// The attached provenance.
pub const PROVENANCE: &str = "report/build/proof/provenance.json";
/// The proof files, in the order the build writes them (the provenance, which holds the
/// manifest's hash, last).
pub const FILES: [&str; 3] = [SUMS, INPUTS, PROVENANCE];
/// What the last page prints right before the manifest's SHA-256 (whitespace aside).
pub const PRINTED: &str = "Manifest SHA-256:";
/// The `provenance.json` schema version this crate writes and reads.
pub const SCHEMA: u32 = 1;

/// Whether an output is proved: listed in the attached manifest. The paper's and the
/// supplement's own files are built after the proof and attach it, so they are not.
pub fn is_proved(path: &str) -> bool {
    !(path.starts_with("report/build/paper.")
        || path.starts_with("report/build/supplement.")
        || path.starts_with("report/build/proof/"))
}

/// `provenance.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperProvenance {
    /// Schema version ([`SCHEMA`]).
    pub schema: u32,
    /// SHA-256 of the attached `SHA256SUMS`.
    pub manifest_sha256: String,
    /// Number of proved outputs.
    pub outputs: usize,
    /// The code that built the paper ([`crate::report::layout::code_hash`]).
    pub code_sha256: String,
    /// SHA-256 of the build's `Cargo.lock` (null in a report root without one).
    pub cargo_lock_sha256: Option<String>,
    /// The commits the runs were made at, sorted.
    pub commits: Vec<Commit>,
    /// Every study, in the paper's order.
    pub studies: Vec<StudyRecord>,
}

/// A commit some runs were made at.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Commit {
    /// The commit id, or `unknown` when the runs were not made in a git checkout.
    pub commit: String,
    /// Whether the tree had uncommitted changes (unknown counts as dirty).
    pub dirty: bool,
}

/// One study's presets and runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyRecord {
    /// LoadedStudy name.
    pub name: String,
    /// Its presets, as configured.
    pub presets: Vec<PresetRecord>,
    /// Its run folders, in run order.
    pub runs: Vec<RunRecord>,
}

/// A preset and the data its runs read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PresetRecord {
    /// Preset name.
    pub name: String,
    /// Its file, relative to the root.
    pub path: String,
    /// Its content hash, as its runs recorded it.
    pub sha256: String,
    /// The data identity its runs recorded.
    pub data: DataRecord,
}

/// A data set's identity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataRecord {
    /// Source name.
    pub name: String,
    /// Source version.
    pub version: String,
    /// SHA-256 of the data (for a generator, of its options and version).
    pub sha256: String,
}

/// One run folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRecord {
    /// The folder, relative to the root.
    pub path: String,
    /// SHA-256 of its `SHA256SUMS`, which lists its matrix, health and `run.json`.
    pub sha256sums: String,
    /// The commit it was made at (`unknown` outside git).
    pub commit: String,
    /// Whether that tree had uncommitted changes.
    pub dirty: bool,
    /// Its device (`cpu`, `cuda`, `cuda:N`).
    pub device: String,
    /// Its libtorch thread count.
    pub threads: u32,
}

/// The three proof files' bytes, in [`FILES`] order.
#[derive(Clone, Debug)]
pub struct ProofFiles {
    /// The provenance they describe.
    pub provenance: PaperProvenance,
    /// `(path, bytes)` per file.
    pub files: Vec<(&'static str, Vec<u8>)>,
}
