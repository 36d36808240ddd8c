//! The tables of the paper (protocol.md §6), each a [`Table`] (the crate's one table type,
//! [`crate::table`]) read from the analyses of one study
//! ([`crate::analysis::StudyAnalysis`]) or from the paper's presets and claims, and
//! written as a Typst `#table(..)` block ([`Table::typst`]), CSV ([`Table::csv`]) and
//! HTML for the gallery ([`Table::html_styled`]).
//!
//! Tables:
//! - [`roster`]: model, family, input, architecture, parameter count (from the committed
//!   output of `drift models --params`, read by [`parse_models_listing`]);
//! - [`robustness`]: rank by future score, model, family, seeds, ID, future, decay (each
//!   with its sd and range over seeds), the margin over the counting baseline, ties;
//! - [`cutoff_tables`]: one per evenly spread cutoff
//!   ([`crate::analysis::StudyAnalysis::spread`]): rank, model, ID, future, decay there;
//! - [`family_table`]: the family averages of those cutoff figures, per cutoff and over
//!   all (families from the study's presets);
//! - [`temporal_effects_table`]: the four Agarwal & Nenkova scores per model with their
//!   Wilcoxon p-value, N, and min / max over seeds;
//! - [`wild_time_table`]: Wild-Time's Eval-Fix and Eval-Stream per model;
//! - [`retraining_table`]: the retraining policies' mean deployed score and retrains;
//! - [`bootstrap_table`]: bootstrap intervals of ID, future, decay and the gap to the best;
//! - [`collapsed_table`] (in the paper) and [`health_table`] (CSV only, one row per
//!   checkpoint): checkpoint health from the runs' `health.json`;
//! - [`compute_table`]: training and evaluation wall-clock seconds from `timing.json`;
//! - [`detectors_table`] (studies whose runs have detectors): the label-free detectors
//!   ranked by their Spearman correlation with the true drop, with the accuracy
//!   estimates' error;
//! - [`decay_definitions_table`]: decay under its three definitions side by side, with
//!   each model's rank under each; [`robustness_scores_table`]: drift-happens' robustness
//!   family per model, ranked by H;
//! - paper-wide: [`claims_table`] (the findings' claims), [`hyperparameters`] (the presets
//!   and their training settings), [`data_table`] (sources and encoders), [`group_table`]
//!   (a group of studies side by side).
//!
//! Units: scores of metrics in `[0, 1]` (accuracy, balanced accuracy, macro AUC, the F1s)
//! are multiplied by 100 in the columns ([`crate::Metric::display_scale`]); error metrics (MSE, MAE,
//! balanced MSE) are left as they are. ID / future / decay are computed on the per-cell
//! mean over seeds.
//!
//! Order: ranked tables by rank (future score, best first, ties by model key; models
//! without a future score last, by key), other per-model tables by model key, the family
//! table by family name, then cutoff in timeline order, then the mean over the cutoffs.
//!
//! Rendering ([`Format`], one per column): text as is; integers in plain digits
//! ([`Format::Integer`]) or grouped by thousands with commas ([`Format::Grouped`]);
//! scores with fixed decimals ([`Format::Fixed`]: 2 for ×100 metrics, 3 for error
//! metrics; seconds 1); the A&N scores with significance marks ([`Format::Marked`]: `*`
//! for p < 0.05, `**` for p < 0.01, from the p-value column of the same row); p-values
//! with 3 decimals, `<0.001` below 0.0005 ([`Format::PValue`]). A missing (null) or
//! non-finite value is `–` (en dash). In Typst a negative number starts with `−` (U+2212);
//! `-0.00` is written `0.00`. Every Typst cell, header included, is a quoted string literal
//! ([`typst_string`]), so no data can inject Typst code. The CSV holds the raw values
//! instead (full precision, empty for null).
//!
//! The builders are grouped by what they read: `roster.rs` (the models listing),
//! `ranking.rs` (robustness, cutoffs, families), `scores.rs` (A&N, Wild-Time, retraining,
//! bootstrap), `sensitivity.rs` (decay definitions, the robustness family), `runs.rs`
//! (compute and health, from the runs' records), `detectors.rs` (the detectors'
//! backtest) and `paper.rs` (the
//! paper-wide tables); `rows.rs` holds what they share.

mod detectors;
mod paper;
mod ranking;
mod roster;
mod rows;
mod runs;
mod scores;
mod sensitivity;

pub use crate::format::typst_string;
pub use crate::table::{Format, Table};
pub use detectors::detectors_table;
pub use paper::{claims_table, data_table, group_table, hyperparameters, strength_table};
pub use ranking::{cutoff_tables, family_table, robustness};
pub use roster::{ModelListing, parse_models_listing, roster};
pub use runs::{collapsed_table, compute_table, health_table};
pub use scores::{bootstrap_table, retraining_table, temporal_effects_table, wild_time_table};
pub use sensitivity::{decay_definitions_table, robustness_scores_table};
