//! The paper build behind `build-report`: committed drift-matrix artifacts in, figures,
//! tables, a Typst paper and its PDF out, every output checked against the manifest under
//! `checksums/`.
//!
//! Stages, in order: load the studies' artifacts (checked by [`crate::artifacts`]), run
//! the analyses, render [`figures`], build tables, fill and compile the paper, and compare
//! every output with the [`manifest`].

pub mod figures;
pub mod manifest;
