//! `drift` measures how machine-learning models decay as their data drifts over time.
//!
//! The crate follows the flow of a temporal-drift study, one module per stage; a stage
//! imports only the stages before it, in the order of the list below (the one place it
//! is written: `tests/stages.rs` reads it, and checks the README's module table against
//! it), and no two files import each other, directly or around a loop.
//!
//! 0. Foundations every stage may use, each only those before it: `error` (the crate's
//!    [`Error`]), `output` (printing that ends quietly on a closed pipe), [`files`]
//!    (atomic writes, locks), [`checksum`] (SHA-256, `SHA256SUMS` listings),
//!    [`format`](mod@format) (how numbers are written), [`table`] (the one table type:
//!    Typst, CSV, HTML and the terminal), `csv_table` (hand-made CSV inputs read whole, each row with its line),
//!    `npy` (2-d float32 `.npy` files, read and written),
//!    [`packages`] (pinned registry packages of corpora and encoder weights, fetched
//!    once), `device` (CPU or GPU and the libtorch thread count, with the `torch`
//!    feature), [`metrics`] and [`slices`] (timestamps, slicing, the once-per-slice split,
//!    training regimes), [`shift`] (two-sample tests of distribution shift).
//! 1. [`data`]: time-stamped rows (synthetic generators, registry corpora, the paper's
//!    formats) with a source identity.
//! 2. [`encoders`], [`image`] and [`text`]: images and text become model input: a frozen
//!    image encoder's cached features; hashed words, tokenizer ids, or a frozen text
//!    encoder's cached token states or pooled embeddings.
//! 3. [`models`] and [`train`]: the model registry and one fresh model per cutoff
//!    (libtorch); [`eval`] scores every checkpoint on every slice, and [`detectors`]
//!    measures what each checkpoint could have seen of the shift without labels.
//! 4. [`matrix`]: the K×K drift matrix of one model, one grid per seed.
//! 5. [`analysis`]: in-distribution / future / decay scores, cohorts, forgetting curves,
//!    rankings and the deterioration / adaptation scores of Agarwal & Nenkova (TACL 2022);
//!    [`analysis::StudyAnalysis`] computes all of them for one study, once.
//! 6. [`preset`]: the TOML description of an experiment, checked into the types of the
//!    stages above.
//! 7. [`artifacts`]: one folder per (preset, model, seed) run with the matrix and its
//!    provenance, written atomically and loaded only after every check passes;
//!    [`baseline`] writes the counting baselines every study is measured against; `run`
//!    ties the stages together for a preset, resumable, and `detect` adds the detectors
//!    to a finished run; [`saliency`] maps are saved beside a run.
//! 8. [`report`]: the studies with their analyses, and the figures, tables and Typst paper
//!    that only read them, checked against a manifest.
//! 9. [`study`]: a studies file as a graph of work items (caches, baselines, runs,
//!    saliency maps, the paper), each with its state on disk, run in dependency order on
//!    this machine or as Slurm job arrays; [`audit`]: a reviewer's check that the
//!    committed matrices are what training gives, by retraining a random sample of rows.
//! 10. [`notebook`]: matrices, summaries and figures shown inline in the Jupyter notebooks
//!     under `notebooks/`; [`cli`]: the `drift` command line.
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
pub mod audit;
pub mod baseline;
pub mod checksum;
pub mod cli;
mod csv_table;
pub mod data;
#[cfg(feature = "torch")]
pub mod detect;
pub mod detectors;
#[cfg(feature = "torch")]
pub mod device;
pub mod encoders;
mod error;
pub mod eval;
pub mod files;
pub mod format;
pub mod image;
pub mod matrix;
pub mod metrics;
pub mod models;
pub mod notebook;
mod npy;
mod output;
pub mod packages;
pub mod preset;
pub mod report;
#[cfg(feature = "torch")]
pub mod run;
pub mod saliency;
pub mod shift;
pub mod slices;
pub mod study;
pub mod table;
pub mod text;
pub mod train;

pub use error::{Error, Result};
pub use matrix::{DriftMatrix, Grid};
pub use metrics::{Direction, Metric};
