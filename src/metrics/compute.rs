//! [`Predictions`], what a metric is computed from, and [`Metric::compute`], which sends
//! each metric to its function in `classification`, `regression` or `auc`.

use super::auc::{macro_auc, roc_auc};
use super::check::check_len;
use super::classification::{accuracy, balanced_accuracy, f1_binary, macro_f1, micro_f1};
use super::metric::{Metric, Reads};
use super::regression::{balanced_mse, mae, mse};
use crate::{Error, Result};

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

impl Predictions<'_> {
    /// What a metric must read to be computed from these.
    pub fn kind(&self) -> Reads {
        match self {
            Predictions::Classes { .. } => Reads::Classes,
            Predictions::Values { .. } => Reads::Values,
            Predictions::Scores { .. } | Predictions::MultiLabel { .. } => Reads::Scores,
        }
    }
}

impl Metric {
    /// Computes the metric; `Ok(None)` for an empty evaluation set or an undefined value
    /// (e.g. AUC with one class only), an error when the predictions do not fit the metric
    /// (they are not what [`Metric::reads`] says).
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `Metric::reads` is true of `compute`: every metric accepts exactly the
    /// predictions of the kind it reads (empty ones here, which give `None`).
    #[test]
    fn each_metric_computes_from_what_it_reads() {
        let empty = [
            Predictions::Classes {
                labels: &[],
                predicted: &[],
            },
            Predictions::Values {
                targets: &[],
                predicted: &[],
            },
            Predictions::Scores {
                labels: &[],
                scores: &[],
            },
            Predictions::MultiLabel {
                classes: 2,
                labels: &[],
                scores: &[],
            },
        ];
        for metric in Metric::ALL {
            for p in &empty {
                let got = metric.compute(p);
                if p.kind() == metric.reads() {
                    assert_eq!(got.unwrap(), None, "{metric} from {p:?}");
                } else {
                    assert!(got.is_err(), "{metric} from {p:?}");
                }
            }
        }
    }
}
