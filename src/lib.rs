//! `drift` measures how machine-learning models decay as their data drifts over time.
//!
//! The crate follows the flow of a temporal-drift study, one module per stage:
//!
//! 1. [`data`]: time-stamped rows (synthetic generators, registry corpora, the paper's
//!    formats) with a source identity; [`encoders`] turn text into cached token states or
//!    pooled embeddings of a frozen pretrained encoder.
//! 2. [`slices`]: rows are cut into time slices, each slice is split once into train and
//!    test, and a training [`slices::Regime`] says which slices each model sees.
//! 3. [`models`] and [`train`]: the model registry and one fresh model per cutoff
//!    (libtorch); [`eval`] scores every checkpoint on every slice with [`metrics`];
//!    `run` ties them together for a [`preset`], resumable.
//! 4. [`matrix`]: the K×K drift matrix of one model, one grid per seed.
//! 5. [`analysis`]: in-distribution / future / decay scores, cohorts, forgetting curves,
//!    rankings and the deterioration / adaptation scores of Agarwal & Nenkova (TACL 2022).
//! 6. [`artifacts`]: one folder per (preset, model, seed) run with the matrix and its
//!    provenance, written atomically and loaded only after every check passes;
//!    [`saliency`] maps are saved beside a run.
//! 7. [`report`]: figures, tables and the Typst paper, checked against a manifest.
//! 8. [`notebook`]: matrices, summaries and figures shown inline in the Jupyter notebooks
//!    under `notebooks/`.
//!
//! Training and evaluation on libtorch live behind the `torch` cargo feature; the Typst
//! paper and its tables behind `paper` (on by default).
//!
//! # Example
//!
//! ```
//! use drift::{DriftMatrix, Grid, Metric};
//!
//! // Accuracy of three cumulative models over three yearly slices (row i = trained
//! // through slice i, column j = evaluated on slice j; the past is left empty here).
//! let grid = Grid::from_rows(&[
//!     vec![Some(0.90), Some(0.85), Some(0.80)],
//!     vec![None, Some(0.91), Some(0.86)],
//!     vec![None, None, Some(0.92)],
//! ])?;
//! let slices = vec!["2000".to_string(), "2001".into(), "2002".into()];
//! let mut matrix = DriftMatrix::new(slices, Metric::Accuracy);
//! matrix.add_seed(0, grid)?;
//!
//! let summary = drift::analysis::summarize(&matrix);
//! assert!((summary.id.unwrap() - 0.91).abs() < 1e-12); // mean of the diagonal
//! assert!((summary.future.unwrap() - 2.51 / 3.0).abs() < 1e-12); // mean above it
//! assert!(summary.decay.unwrap() > 0.0); // worse on the future
//! # Ok::<(), drift::Error>(())
//! ```
#![deny(missing_docs)]

pub mod analysis;
pub mod artifacts;
pub mod cli;
mod csv_table;
pub mod data;
pub mod encoders;
mod error;
pub mod eval;
pub mod matrix;
pub mod metrics;
pub mod models;
pub mod notebook;
pub mod preset;
pub mod report;
#[cfg(feature = "torch")]
pub mod run;
pub mod saliency;
pub mod slices;
pub mod train;

pub use error::{Error, Result};
pub use matrix::{DriftMatrix, Grid};
pub use metrics::{Direction, Metric};

/// Lower-case hex of a SHA-256 digest of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
