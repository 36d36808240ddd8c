//! Figures of the paper: plotters SVG, text in Libertinus Serif (from `typst-assets`, the
//! bytes Typst compiles the paper with), deterministic bytes.
//!
//! Every function is pure: inputs in, the SVG document as a `String` out. The same inputs
//! give byte-identical SVG: coordinates are integer pixels, numbers are formatted with a
//! fixed number of decimals, every collection is iterated in input (or sorted) order, and
//! bars are plain rectangles (plotters' `Histogram` keeps bars in a `HashMap`).
//!
//! | kind | function |
//! |---|---|
//! | raw / deviation heatmap of one model | [`heatmap()`] |
//! | several heatmaps with one shared colour bar (cohort means of the studies) | [`panels()`] |
//! | forgetting curves per model or per family | [`forgetting_curves`] (family curves: [`crate::analysis::StudyAnalysis::family_forgetting`]) |
//! | retraining policies: mean deployed score against retrains, per model | [`retraining()`] |
//! | label-free detectors: accuracy estimates against the truth; trigger curves beside the policies | [`estimates()`], [`trigger_curves`] |
//! | ranking by future score or decay | [`ranking`] |
//! | deterioration / adaptation scores of Agarwal & Nenkova | [`temporal_effects`] |
//! | saliency maps per model and (cutoff, slice) | [`saliency_grid`] |
//! | a drift-strength sweep: decay against strength per kind, one panel per model | [`strength_curves`] |
//! | one run's training history: loss and gradient norm by epoch, per cutoff (notebooks) | [`training_history`] |
//!
//! Colour scales are in [`scale`], colour maps in [`colors`], the embedded font in
//! [`fonts`]. What every figure shares sits in leaf files: `svg.rs` (the document:
//! `render`, the printed-size rules below, the figures' errors), `style.rs` (colours, text
//! styles, drawing and measuring text) and `ticks.rs` (tick values, numbers, label
//! thinning). Slice labels are thinned by [`thinned`]: with `K` slices, every
//! `step = ceil(K / 12)`-th label is shown starting from the oldest (indices
//! `0, step, 2*step, ..`), so at most [`MAX_LABELS`] per axis.
//!
//! # Adding a figure
//!
//! 1. The renderer: a file here with one pure function, inputs in, SVG `String` out,
//!    drawn through `svg::render` (which refuses a figure that breaks the printed-size
//!    rules below); re-export it from this module and add its line to the table above.
//! 2. Its job: in `src/report/jobs/figures.rs`, a function
//!    `fn name(s: &StudyFigures) -> Result<Vec<OutputJob>>` whose `s.job("stem", ..)` calls
//!    the renderer (the output is `figures/<study>/<stem>.svg`, its inputs the study's),
//!    and its line in `FAMILIES` there.
//! 3. The paper: the study's entry in the paper's context (`src/report/paper/context.rs`)
//!    names it (`"key": figure("stem")?`, read as the path and printed width) and a template
//!    places it with `{{ fig(s.key) }}` (`report/paper.typ` or the `report/paper-*.typ`
//!    it includes; the macro is in `report/paper-macros.typ`).
//! 4. The manifest: `cargo run --release --bin build-report -- --update` records the new
//!    SVG's hash under `checksums/` (without `--update`, an output the manifest does not
//!    list is an error).
//! 5. A test in `tests/figures.rs`: the SVG is balanced, holds what it should (e.g. one
//!    element per value), prints no text under [`MIN_TEXT_PT`], and renders to the same
//!    bytes twice.
//!
//! # Printed size
//!
//! The paper places every figure at [`PT_PER_PX`] points per SVG pixel (its width is the
//! SVG's width times that, [`printed_width`]), and `svg::render` refuses a figure whose
//! smallest text would then print under [`MIN_TEXT_PT`]: the check is the SVG's smallest
//! `font-size` times [`PT_PER_PX`]. So a figure must be laid out to fit the page at that
//! scale (at most [`MAX_WIDTH_PX`] wide, half of it to sit two in a row) rather than be
//! shrunk until its text is unreadable. Values are shown on the tables' scale (×100 for
//! metrics in `[0, 1]`, [`crate::Metric::display_scale`]).
//!
//! The dashed diagonal is a raw SVG `<line stroke-dasharray="4 3">` (plotters draws dashes
//! as separate segments), added after the cells.

pub mod colors;
pub mod curves;
pub mod detectors;
pub mod effects;
pub mod fonts;
pub mod heatmap;
pub mod history;
pub mod panels;
pub mod rankings;
pub mod retraining;
pub mod saliency;
pub mod scale;
pub mod strength;
mod style;
mod svg;
mod ticks;

pub use curves::{Curve, CurveOptions, forgetting_curves};
pub use detectors::{
    EstimateSeries, TriggerColumn, TriggerFigure, TriggerKey, TriggerRow, estimates, trigger_curves,
};
pub use effects::{EffectsRow, temporal_effects};
pub use heatmap::{HeatmapOptions, heatmap};
pub use history::training_history;
pub use panels::{Panel, panels};
pub use rankings::{RankingOptions, ranking};
pub use retraining::{PolicySeries, retraining};
pub use saliency::{SaliencyGrid, saliency_grid};
pub use scale::{Scale, percentile};
pub use strength::{StrengthLine, StrengthPanel, StrengthPoint, strength_curves};
pub use svg::{MAX_WIDTH_PX, MIN_TEXT_PT, PT_PER_PX, printed_width, smallest_text_pt};
pub use ticks::{MAX_LABELS, thinned};
