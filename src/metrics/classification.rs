//! Single-label classification metrics: accuracy, balanced accuracy and F1 variants,
//! mirroring scikit-learn's definitions (`zero_division=0`).

use std::collections::BTreeMap;

use super::check::check_len;
use crate::{Error, Result};

/// Per-class counts: true positives, false positives, false negatives.
#[derive(Default, Clone, Copy)]
struct Counts {
    tp: u64,
    fp: u64,
    fn_: u64,
}

/// Counts per class over the union of true and predicted labels, ascending by label.
fn counts(labels: &[u32], predicted: &[u32]) -> BTreeMap<u32, Counts> {
    let mut by_class: BTreeMap<u32, Counts> = BTreeMap::new();
    for (&y, &p) in labels.iter().zip(predicted) {
        if y == p {
            by_class.entry(y).or_default().tp += 1;
        } else {
            by_class.entry(y).or_default().fn_ += 1;
            by_class.entry(p).or_default().fp += 1;
        }
    }
    by_class
}

fn f1(c: Counts) -> f64 {
    let denominator = 2 * c.tp + c.fp + c.fn_;
    if denominator == 0 {
        0.0
    } else {
        (2 * c.tp) as f64 / denominator as f64
    }
}

/// Fraction of correct predictions.
pub fn accuracy(labels: &[u32], predicted: &[u32]) -> Result<Option<f64>> {
    check_len(labels.len(), predicted.len())?;
    if labels.is_empty() {
        return Ok(None);
    }
    let correct = labels.iter().zip(predicted).filter(|(y, p)| y == p).count();
    Ok(Some(correct as f64 / labels.len() as f64))
}

/// Mean recall over the classes present in `labels` (classes only predicted are ignored,
/// as in scikit-learn's `balanced_accuracy_score`).
pub fn balanced_accuracy(labels: &[u32], predicted: &[u32]) -> Result<Option<f64>> {
    check_len(labels.len(), predicted.len())?;
    let recalls: Vec<f64> = counts(labels, predicted)
        .into_values()
        .filter(|c| c.tp + c.fn_ > 0)
        .map(|c| c.tp as f64 / (c.tp + c.fn_) as f64)
        .collect();
    Ok((!recalls.is_empty()).then(|| recalls.iter().sum::<f64>() / recalls.len() as f64))
}

/// F1 of class 1 in a binary task (labels and predictions in {0, 1}); 0 when class 1
/// appears in neither.
pub fn f1_binary(labels: &[u32], predicted: &[u32]) -> Result<Option<f64>> {
    check_len(labels.len(), predicted.len())?;
    if let Some(bad) = labels.iter().chain(predicted).find(|&&c| c > 1) {
        return Err(Error::Invalid(format!(
            "f1 needs binary classes 0 and 1, found class {bad}: use macro-f1 or micro-f1"
        )));
    }
    if labels.is_empty() {
        return Ok(None);
    }
    Ok(Some(
        counts(labels, predicted).get(&1).map_or(0.0, |&c| f1(c)),
    ))
}

/// F1 of every class in the union of true and predicted labels, ascending by label.
pub fn f1_per_class(labels: &[u32], predicted: &[u32]) -> Result<Vec<(u32, f64)>> {
    check_len(labels.len(), predicted.len())?;
    Ok(counts(labels, predicted)
        .into_iter()
        .map(|(class, c)| (class, f1(c)))
        .collect())
}

/// Unweighted mean of [`f1_per_class`].
pub fn macro_f1(labels: &[u32], predicted: &[u32]) -> Result<Option<f64>> {
    let per_class = f1_per_class(labels, predicted)?;
    Ok((!per_class.is_empty())
        .then(|| per_class.iter().map(|(_, f)| f).sum::<f64>() / per_class.len() as f64))
}

/// F1 of counts pooled over all classes.
pub fn micro_f1(labels: &[u32], predicted: &[u32]) -> Result<Option<f64>> {
    check_len(labels.len(), predicted.len())?;
    if labels.is_empty() {
        return Ok(None);
    }
    let total = counts(labels, predicted)
        .into_values()
        .fold(Counts::default(), |a, c| Counts {
            tp: a.tp + c.tp,
            fp: a.fp + c.fp,
            fn_: a.fn_ + c.fn_,
        });
    Ok(Some(f1(total)))
}
