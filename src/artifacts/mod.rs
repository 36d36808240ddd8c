//! Drift-matrix artifacts: one folder per (preset, model, seed) run,
//! `<root>/<preset>/<model>/seed-<seed>/`, holding
//!
//! - `matrix.json`: the K×K cells (null for empty cells), slices, metric and direction;
//! - `matrix.csv`: the same cells long-form, `train_slice,eval_slice,metric,value` (an
//!   empty value is an empty cell);
//! - `run.json`: provenance: preset name, path and hash, git commit and dirty flag,
//!   `Cargo.lock` SHA-256, crate version, data source (name, version, SHA-256), device,
//!   thread count and seed;
//! - `health.json` (schema 2): per cutoff, how the checkpoint behaves on its ID test set
//!   ([`Health`](crate::eval::Health): majority share or prediction variance, final
//!   training loss, and whether it collapsed to a constant predictor);
//! - `SHA256SUMS`: the SHA-256 of the other files in `sha256sum` format, written last, so
//!   `sha256sum -c SHA256SUMS` checks a folder by hand and its absence marks an
//!   unfinished run;
//! - `timing.json` (optional): wall-clock seconds of training and evaluation. It is the
//!   one file that differs between identical runs, so it is kept out of `run.json` and out
//!   of `SHA256SUMS`: the same preset, seed, code and thread count give byte-identical
//!   checked files.
//!
//! Schema 1 folders (written before health was recorded) still load, with no health.
//!
//! Every file is written atomically (temporary file in the same folder, fsync, rename).
//! [`load_run`] trusts nothing: it checks the hashes, every field, and that the JSON and
//! CSV agree, and says which file is wrong and how (missing, truncated, modified).
//!
//! The parts: `record.rs` the types a folder records, `layout.rs` its file names and the
//! canonical bytes of each file, `check.rs` the field checks, `write.rs` writing,
//! `load.rs` checked loading (and finding and locking the folders under a root), and
//! `import.rs` importing a folder made elsewhere.

mod check;
mod import;
mod layout;
mod load;
mod record;
mod write;

pub use import::{Imported, import_run};
pub use layout::{DETECTORS_JSON, HISTORY_JSON, run_dir};
pub use load::{ModelRuns, find_runs, hold_runs, load_all, load_run};
pub use record::{
    CodeVersion, CutoffHistory, PresetRef, RunArtifact, RunProvenance, SCHEMA, WallTimes, host_kind,
};
pub use write::write_run;
