//! Label-free measures of distribution shift, for the drift detectors and `drift shift`:
//! how far apart are what a model was trained on and what it now sees, and how well does it
//! probably do there, without the new labels?
//!
//! Two-sample tests on sets of vectors (embeddings, features, raw rows): [`mmd`] (kernel
//! maximum mean discrepancy, permutation p-value), [`ks`] (Kolmogorov-Smirnov per
//! dimension, Bonferroni-corrected) and [`c2st`] (a classifier two-sample test). On a
//! model's outputs: [`chi_square`] (predicted classes), [`bbse`] (the label prior by
//! black-box shift estimation), and [`average_confidence`] and [`Atc`] (accuracy estimated
//! from confidences). Each file names its definition and the peer it is checked against
//! (`tests/shift.rs`, fixtures by `scripts/shift_fixtures.py`).

mod c2st;
mod confidence;
mod ks;
mod labels;
mod mmd;
mod sample;

pub use c2st::{FOLDS, c2st};
pub use confidence::{Atc, average_confidence};
pub use ks::{KsTest, ks, ks_2samp};
pub use labels::{PriorShift, bbse, chi_square};
pub use mmd::{MmdTest, mmd};
pub use sample::{Sample, ShiftTest};
