//! Presets: the TOML description of one experiment (data, slicing, split, regime, models,
//! seeds, optimiser and metric), checked into a typed [`Preset`] before any work starts.
//!
//! `spec.rs` is the checked preset and what follows from it (each seed's data and split,
//! the plan of slices); `file.rs` reads a preset file and checks it into one. Every error
//! names the file and the field path, e.g.
//! `presets/x.toml: models[2].epochs: expected a positive integer, got 0`. A preset's
//! content hash is the SHA-256 of its canonical JSON form (the checked [`Preset`]
//! serialised with fields in declaration order), so comments and layout do not change it.
//! See `presets/README.md` for every field.

mod file;
mod spec;

pub use file::{MAX_NAME, preset_files};
pub use spec::{LoadedPreset, ModelSpec, Plan, Preset, SCHEMA};
