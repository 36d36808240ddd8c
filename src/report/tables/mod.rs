//! The appendix tables of the paper (protocol.md §6), each a polars [`DataFrame`] read
//! from the analyses of one study ([`crate::analysis::StudyAnalysis`]), and their
//! rendering as a Typst `#table(..)` block ([`to_typst`]) or CSV ([`to_csv`]).
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
//! - [`compute_table`]: training and evaluation wall-clock seconds from `timing.json`.
//!
//! Units: scores of metrics in `[0, 1]` (accuracy, balanced accuracy, macro AUC, the F1s)
//! are multiplied by 100 in the frames ([`crate::Metric::display_scale`]); error metrics (MSE, MAE,
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
//! ([`typst_string`]), so no data can inject Typst code. The CSV holds the frame's raw
//! values instead (full precision, empty for null).
//!
//! The table type is here, its rendering in `tables/render.rs`, and the tables of the
//! paper are built in `tables/builders.rs`.

mod builders;
mod render;

use polars::prelude::DataFrame;

use crate::Error;

pub use builders::{
    ModelListing, bootstrap_table, claims_table, collapsed_table, compute_table, cutoff_tables,
    data_table, family_table, group_table, health_table, hyperparameters, parse_models_listing,
    retraining_table, robustness, roster, temporal_effects_table, wild_time_table,
};
pub use render::{to_csv, to_html, to_typst, typst_string};

/// How one column is written in Typst.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// A string column, as is.
    Text,
    /// An integer column in plain digits.
    Integer,
    /// An integer column grouped by thousands with commas (`1,234,567`).
    Grouped,
    /// A float column with this many decimals.
    Fixed(usize),
    /// A float column with this many decimals and the significance marks of the p-value
    /// in the named column of the same row: `**` p < 0.01, `*` p < 0.05.
    Marked {
        /// Decimals.
        decimals: usize,
        /// The p-value column.
        p_value: String,
    },
    /// A p-value: 3 decimals, `<0.001` when it would round to `0.000`.
    PValue,
    /// A mean with this many decimals, then `± sd` and, on a second line, the range
    /// `[min, max]`, read from the named float columns of the same row (a missing sd, as with
    /// one seed, is left out).
    Spread {
        /// Decimals.
        decimals: usize,
        /// The sample standard deviation column.
        sd: String,
        /// The minimum column.
        min: String,
        /// The maximum column.
        max: String,
    },
    /// In the CSV only: the Typst table leaves the column out (e.g. the sd, min and max a
    /// [`Format::Spread`] column shows).
    Hidden,
}

/// One table: a name (the output file stem), a caption and the frame, with one
/// [`Format`] per column.
#[derive(Clone, Debug)]
pub struct Table {
    /// File stem, e.g. `robustness`, `cutoff-1` (never derived from data).
    pub name: String,
    /// Caption (plain text; may contain slice labels and the metric name: escape it with
    /// [`typst_string`] when it goes into Typst).
    pub caption: String,
    /// The values; column names are the header.
    pub frame: DataFrame,
    /// How each column is rendered, in column order.
    pub formats: Vec<Format>,
}

/// Turns a polars error into one naming the table.
fn polars_error(name: &str) -> impl Fn(polars::error::PolarsError) -> Error + '_ {
    move |e| Error::Invalid(format!("table {name}: {e}"))
}
