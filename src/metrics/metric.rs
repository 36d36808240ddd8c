//! The [`Metric`] enum and what each metric is: its name, what it reads ([`Reads`]), which
//! way is better ([`Direction`]) and how its values are shown. Callers (evaluation, the
//! loss check, `drift score`, tables, figures, the paper) ask these properties, never a
//! metric by name, so a new metric is described here, one arm per property, and the
//! compiler points at every arm it lacks (no match here has a catch-all arm).

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

/// What a metric is computed from, which decides what evaluation derives from a model's
/// outputs, which loss can train for it and which columns `drift score` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reads {
    /// Predicted class ids against true ones
    /// ([`Predictions::Classes`](super::Predictions::Classes)): the argmax of class
    /// logits.
    Classes,
    /// Real-valued scores against binary labels, of which only the order counts (a
    /// ranking metric; [`Predictions::Scores`](super::Predictions::Scores) or
    /// [`Predictions::MultiLabel`](super::Predictions::MultiLabel)): softmax
    /// probabilities of class logits, or multi-label logits as they are. A constant score
    /// ranks no row above another, so it scores the same (chance) in every cell.
    Scores,
    /// Regression predictions against true values
    /// ([`Predictions::Values`](super::Predictions::Values)).
    Values,
}

/// The metrics a drift matrix can hold. Names ([`Metric::name`]) are the same everywhere:
/// CLI, presets, artifacts.
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

    /// The metric's name, e.g. `balanced-mse` (its serde and CLI name too).
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

    /// What the metric is computed from.
    pub fn reads(self) -> Reads {
        match self {
            Metric::Accuracy
            | Metric::BalancedAccuracy
            | Metric::F1
            | Metric::MacroF1
            | Metric::MicroF1 => Reads::Classes,
            Metric::MacroAuc => Reads::Scores,
            Metric::BalancedMse | Metric::Mse | Metric::Mae => Reads::Values,
        }
    }

    /// Whether higher values are better.
    pub fn direction(self) -> Direction {
        match self {
            Metric::Accuracy
            | Metric::BalancedAccuracy
            | Metric::MacroAuc
            | Metric::F1
            | Metric::MacroF1
            | Metric::MicroF1 => Direction::HigherIsBetter,
            Metric::BalancedMse | Metric::Mse | Metric::Mae => Direction::LowerIsBetter,
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

    /// Whether the metric is computed from regression outputs (it reads
    /// [`Reads::Values`]).
    pub fn is_regression(self) -> bool {
        self.reads() == Reads::Values
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `ALL` lists every variant once, in enum order: a metric left out of it would be
    /// unknown to `FromStr` and unchecked against scikit-learn.
    #[test]
    fn all_lists_every_variant() {
        use clap::ValueEnum;
        assert_eq!(Metric::ALL.as_slice(), Metric::value_variants());
    }

    /// One name per metric: `name`, serde and the CLI agree.
    #[test]
    fn names_agree_everywhere() {
        use clap::ValueEnum;
        for m in Metric::ALL {
            let serde = serde_json::to_string(&m).unwrap();
            assert_eq!(serde, format!("\"{}\"", m.name()));
            let cli = m.to_possible_value().unwrap();
            assert_eq!(cli.get_name(), m.name());
            assert_eq!(m.name().parse::<Metric>().unwrap(), m);
        }
    }
}
