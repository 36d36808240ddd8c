//! Metrics: one scalar per drift-matrix cell, computed from predictions (protocol.md §2).
//!
//! Every function returns `None` for an empty evaluation set, never 0: an empty cell is
//! empty. Values agree with scikit-learn 1.9 (`tests/fixtures/metrics.json`, made by
//! `scripts/make-fixtures`) to 1e-12.
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

mod auc;
mod classification;
mod regression;

pub use auc::{macro_auc, per_class_auc, roc_auc};
pub use classification::{
    accuracy, balanced_accuracy, f1_binary, f1_per_class, macro_f1, micro_f1,
};
pub use regression::{balanced_mse, mae, mse};

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Whether a larger metric value is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// Accuracy, AUC, F1.
    HigherIsBetter,
    /// Errors: MSE, MAE, balanced MSE.
    LowerIsBetter,
}

/// The metrics a drift matrix can hold. Names are the same everywhere (CLI, presets,
/// artifacts): `accuracy`, `balanced-accuracy`, `balanced-mse`, `mse`, `mae`, `macro-auc`,
/// `f1`, `macro-f1`, `micro-f1`.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// Fraction of rows whose predicted class is the true class.
    Accuracy,
    /// Mean recall over the classes present in the true labels.
    BalancedAccuracy,
    /// Mean over the true values present of the MSE within that value (Amazon ratings).
    BalancedMse,
    /// Mean squared error.
    Mse,
    /// Mean absolute error.
    Mae,
    /// Mean ROC AUC over the classes that have both positives and negatives.
    MacroAuc,
    /// F1 of class 1 in a binary task.
    F1,
    /// Unweighted mean of per-class F1 over the classes in the labels or predictions.
    MacroF1,
    /// F1 from counts pooled over classes (equals accuracy for single-label tasks).
    MicroF1,
}

/// What a metric is computed from. Slices are parallel: row `r` of every field belongs to
/// the same example.
#[derive(Clone, Copy, Debug)]
pub enum Predictions<'a> {
    /// Single-label classification: true and predicted class ids.
    Classes {
        /// True classes.
        labels: &'a [u32],
        /// Predicted classes.
        predicted: &'a [u32],
    },
    /// Regression: true values and raw predictions.
    Values {
        /// True values.
        targets: &'a [f64],
        /// Predictions, not clipped or rounded.
        predicted: &'a [f64],
    },
    /// Binary labels with a real-valued score for the positive class.
    Scores {
        /// True labels.
        labels: &'a [bool],
        /// Scores, larger means more likely positive.
        scores: &'a [f64],
    },
    /// Multi-label: `classes` columns per row, row-major.
    MultiLabel {
        /// Number of classes (columns).
        classes: usize,
        /// True labels, `rows * classes`.
        labels: &'a [bool],
        /// Scores, `rows * classes`.
        scores: &'a [f64],
    },
}

impl Metric {
    /// Every metric, in the order of the enum.
    pub const ALL: [Metric; 9] = [
        Metric::Accuracy,
        Metric::BalancedAccuracy,
        Metric::BalancedMse,
        Metric::Mse,
        Metric::Mae,
        Metric::MacroAuc,
        Metric::F1,
        Metric::MacroF1,
        Metric::MicroF1,
    ];

    /// The metric's name, e.g. `balanced-mse`.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Accuracy => "accuracy",
            Metric::BalancedAccuracy => "balanced-accuracy",
            Metric::BalancedMse => "balanced-mse",
            Metric::Mse => "mse",
            Metric::Mae => "mae",
            Metric::MacroAuc => "macro-auc",
            Metric::F1 => "f1",
            Metric::MacroF1 => "macro-f1",
            Metric::MicroF1 => "micro-f1",
        }
    }

    /// Whether higher values are better.
    pub fn direction(self) -> Direction {
        match self {
            Metric::BalancedMse | Metric::Mse | Metric::Mae => Direction::LowerIsBetter,
            _ => Direction::HigherIsBetter,
        }
    }

    /// The factor tables, figures and the paper apply to its values: 100 for metrics in
    /// `[0, 1]` (accuracy, balanced accuracy, macro AUC, F1, macro F1, micro F1), 1 for the
    /// error metrics.
    pub fn display_scale(self) -> f64 {
        match self {
            Metric::BalancedMse | Metric::Mse | Metric::Mae => 1.0,
            Metric::Accuracy
            | Metric::BalancedAccuracy
            | Metric::MacroAuc
            | Metric::F1
            | Metric::MacroF1
            | Metric::MicroF1 => 100.0,
        }
    }

    /// Decimals of its displayed (scaled) values: 2 when ×100, else 3.
    pub fn display_decimals(self) -> usize {
        if self.display_scale() == 100.0 { 2 } else { 3 }
    }

    /// How captions name its displayed values, e.g. `accuracy ×100` or `mse`.
    pub fn display_unit(self) -> String {
        if self.display_scale() == 100.0 {
            format!("{} ×100", self.name())
        } else {
            self.name().to_string()
        }
    }

    /// Whether the metric is computed from regression outputs.
    pub fn is_regression(self) -> bool {
        self.direction() == Direction::LowerIsBetter
    }

    /// Computes the metric; `Ok(None)` for an empty evaluation set or an undefined value
    /// (e.g. AUC with one class only), an error when the predictions do not fit the metric.
    pub fn compute(self, predictions: &Predictions) -> Result<Option<f64>> {
        use Predictions as P;
        let wrong = |kind: &str| {
            Error::Invalid(format!(
                "metric {} cannot be computed from {kind}",
                self.name()
            ))
        };
        match (self, *predictions) {
            (Metric::Accuracy, P::Classes { labels, predicted }) => accuracy(labels, predicted),
            (Metric::BalancedAccuracy, P::Classes { labels, predicted }) => {
                balanced_accuracy(labels, predicted)
            }
            (Metric::F1, P::Classes { labels, predicted }) => f1_binary(labels, predicted),
            (Metric::MacroF1, P::Classes { labels, predicted }) => macro_f1(labels, predicted),
            (Metric::MicroF1, P::Classes { labels, predicted }) => micro_f1(labels, predicted),
            (Metric::Mse, P::Values { targets, predicted }) => mse(targets, predicted),
            (Metric::Mae, P::Values { targets, predicted }) => mae(targets, predicted),
            (Metric::BalancedMse, P::Values { targets, predicted }) => {
                balanced_mse(targets, predicted)
            }
            (Metric::MacroAuc, P::Scores { labels, scores }) => {
                check_len(labels.len(), scores.len())?;
                roc_auc(labels, scores)
            }
            (
                Metric::MacroAuc,
                P::MultiLabel {
                    classes,
                    labels,
                    scores,
                },
            ) => macro_auc(classes, labels, scores),
            (_, P::Classes { .. }) => Err(wrong("predicted classes")),
            (_, P::Values { .. }) => Err(wrong("regression values")),
            (_, P::Scores { .. }) => Err(wrong("binary scores")),
            (_, P::MultiLabel { .. }) => Err(wrong("multi-label scores")),
        }
    }
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Metric {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Metric::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Metric::ALL.iter().map(|m| m.name()).collect();
                Error::Invalid(format!(
                    "unknown metric {s:?} (expected one of {})",
                    names.join(", ")
                ))
            })
    }
}

fn check_len(a: usize, b: usize) -> Result<()> {
    if a == b {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "{a} labels but {b} predictions: they must be the same length"
        )))
    }
}

/// A key whose unsigned order is the numeric order of a finite `v`, with `-0.0` and `0.0`
/// equal (as `==` has them): sorting plain `u64` keys is faster than comparing floats.
pub(crate) fn sort_key(v: f64) -> u64 {
    // Adding 0.0 turns -0.0 into 0.0 and leaves every other value as it is.
    let bits = (v + 0.0).to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// Rejects NaN and infinite scores, which have no rank or error.
fn check_finite(values: &[f64], what: &str) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(Error::Invalid(format!(
            "{what}[{i}] is {}: values must be finite",
            values[i]
        ))),
    }
}
