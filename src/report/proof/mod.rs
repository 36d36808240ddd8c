//! The proof a paper carries, and its check (`drift verify-paper`).
//!
//! `build-report` writes three files under `report/build/proof/` and the paper attaches
//! them to its PDF:
//!
//! - `SHA256SUMS`: the lines of `checksums/SHA256SUMS` for every *proved output*;
//! - `inputs.json`: the same outputs' records of `checksums/inputs.json`, in its layout;
//! - `provenance.json` ([`PaperProvenance`]): that manifest's SHA-256, the hash of the code that
//!   built the paper, `Cargo.lock`'s hash, the commits the runs were made at, and per
//!   study its presets (hash, data identity) and runs (the SHA-256 of each run folder's
//!   `SHA256SUMS`, which lists its matrix, health and `run.json`).
//!
//! The proved outputs are every output but the paper's and the supplement's own files
//! (`report/build/paper.*`, `report/build/supplement.*`, which attach the same proof) and
//! the proof files: a file cannot list its own hash, and the paper's source prints the
//! manifest's hash, so neither can be in it. For the same reason the paper cannot name
//! the commit that commits it: it names the commits its runs were made at and the code
//! hash ([`super::layout::code_hash`]), which a checkout reproduces. The manifest's
//! SHA-256 is printed on the last page after [`PRINTED`].
//!
//! [`verify`] checks a PDF: alone, that its attachments agree with each other and with its
//! last page; with a checkout, that the checkout's manifest is the attached one, that its
//! outputs on disk match it, that its code hashes to the attached code hash, and that the
//! PDF's bytes are the listed ones, or differ from them in metadata only ([`canonical`]:
//! a publisher's re-stamp).

mod format;
mod pdf;
mod verify;
mod write;

pub use format::{
    Commit, DIR, DataRecord, FILES, INPUTS, PRINTED, PROVENANCE, PaperProvenance, PresetRecord,
    ProofFiles, RunRecord, SCHEMA, SUMS, StudyRecord, is_proved,
};
pub use pdf::{Carried, canonical, printed_hash, read_pdf};
pub use verify::{Finding, verify};
pub use write::build;
