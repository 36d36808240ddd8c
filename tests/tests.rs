//! The integration tests, one binary with one module per area (as ripgrep's
//! `tests/tests.rs`): each test binary links typst and libtorch, so 27 of them
//! made a target folder of tens of GB and most of the suite's time was linking. Shared
//! helpers are in `support`.

mod support;

mod analysis;
mod artifacts;
mod audit;
#[cfg(feature = "paper")]
mod build_report;
mod claims;
mod cli;
mod committed;
mod corpora;
mod data;
mod detectors;
mod encoder_cache;
mod eval;
mod figures;
mod fine_tuning;
mod formats;
#[cfg(feature = "paper")]
mod gallery;
mod glove;
mod hardening;
mod image_encoders;
mod losses;
mod manifest;
mod models;
mod notebook_display;
mod notebooks;
mod packaged_encoders;
#[cfg(feature = "paper")]
mod paper;
mod presets;
mod rdata;
mod reference;
mod robustness_scores;
mod run;
mod saliency;
mod shift;
mod split;
mod stages;
mod study;
mod synthetic;
#[cfg(feature = "paper")]
mod tables;
mod text;
mod text_encoders;
#[cfg(feature = "paper")]
mod verify_paper;
