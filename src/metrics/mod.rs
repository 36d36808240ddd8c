//! Metrics: one scalar per drift-matrix cell, computed from predictions (protocol.md §2).
//!
//! Every function returns `None` for an empty evaluation set, never 0: an empty cell is
//! empty. Values agree with scikit-learn 1.9 (`tests/fixtures/metrics.json`, made by
//! `scripts/make-fixtures`) to 1e-12.
//!
//! The files: `metric.rs` holds [`Metric`] and its properties (name, what it [`Reads`],
//! [`Direction`], how it is shown); `compute.rs` holds [`Predictions`] and
//! [`Metric::compute`]; `classification.rs`, `regression.rs` and `auc.rs` the functions by
//! what they read; `check.rs` the input checks they share.
//!
//! ```
//! use drift::metrics::{Metric, Predictions};
//!
//! let cell = |labels: &[u32], predicted: &[u32]| {
//!     Metric::BalancedAccuracy.compute(&Predictions::Classes { labels, predicted })
//! };
//! // Recall 1/2 on class 0 and 1/1 on class 1; class 2 is only predicted, so it is ignored.
//! assert_eq!(cell(&[0, 0, 1], &[0, 2, 1])?, Some(0.75));
//! assert_eq!(cell(&[], &[])?, None); // an empty evaluation set is an empty cell
//! # Ok::<(), drift::Error>(())
//! ```
//!
//! # Adding a metric
//!
//! The rest of the crate asks a metric's properties, never its name: evaluation
//! (`crate::eval`) derives classes, scores or values from a model's outputs by
//! [`Metric::reads`], the preset check (`Loss::supports` in `crate::train`) and
//! `drift score` go by it too, and tables, figures and the paper show values by
//! [`Metric::direction`] and [`Metric::display_scale`]. A metric that reads classes,
//! scores (only their order counting) or values therefore touches:
//!
//! 1. `metric.rs`: the variant of [`Metric`] (its doc says what it computes), its place
//!    in [`Metric::ALL`] (a unit test fails without it), and one arm in each property
//!    match: [`Metric::name`] (kebab-case, as serde and the CLI spell it: a unit test
//!    checks), [`Metric::reads`], [`Metric::direction`], [`Metric::display_scale`]. No
//!    match has a catch-all arm, so the compiler names each missing one.
//! 2. The computation: a function in `classification.rs`, `regression.rs` or `auc.rs`
//!    (by what it reads), re-exported below, and its arm in [`Metric::compute`]
//!    (`compute.rs`); a unit test checks that it accepts exactly what `reads` says.
//! 3. Its reference values: cases in `scripts/fixtures.py`, then `scripts/make-fixtures`
//!    to regenerate `tests/fixtures/metrics.json` (`tests/reference.rs` wants at least
//!    200 scikit-learn cases of every metric).
//! 4. Its name in the metric lists of `README.md` and `presets/README.md`.
//!
//! A metric that reads something else (probabilities whose values count, say) needs a
//! new [`Reads`] variant: the compiler then names the matches on it in `crate::eval`,
//! `crate::train` (`Loss::supports`) and `drift score` (`crate::cli`). A task whose
//! default metric it becomes maps to it in `data/dataset.rs`.

mod auc;
mod check;
mod classification;
mod compute;
mod metric;
mod regression;

pub(crate) use auc::sort_key;
pub use auc::{macro_auc, per_class_auc, roc_auc};
pub use classification::{
    accuracy, balanced_accuracy, f1_binary, f1_per_class, macro_f1, micro_f1,
};
pub use compute::Predictions;
pub use metric::{Direction, Metric, Reads};
pub use regression::{balanced_mse, mae, mse};
