//! Regression metrics on raw (unclipped, unrounded) predictions.

use std::collections::BTreeMap;

use super::check::{check_finite, check_len};
use crate::Result;

fn checked(targets: &[f64], predicted: &[f64]) -> Result<bool> {
    check_len(targets.len(), predicted.len())?;
    check_finite(targets, "label")?;
    check_finite(predicted, "score")?;
    Ok(!targets.is_empty())
}

fn mean_of(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    sum / n as f64
}

/// Mean squared error.
pub fn mse(targets: &[f64], predicted: &[f64]) -> Result<Option<f64>> {
    Ok(checked(targets, predicted)?.then(|| {
        mean_of(
            targets
                .iter()
                .zip(predicted)
                .map(|(y, p)| (p - y) * (p - y)),
        )
    }))
}

/// Mean absolute error.
pub fn mae(targets: &[f64], predicted: &[f64]) -> Result<Option<f64>> {
    Ok(checked(targets, predicted)?
        .then(|| mean_of(targets.iter().zip(predicted).map(|(y, p)| (p - y).abs()))))
}

/// Balanced MSE: the MSE within each distinct true value present, averaged with equal
/// weight over those values (so rare ratings count as much as common ones).
pub fn balanced_mse(targets: &[f64], predicted: &[f64]) -> Result<Option<f64>> {
    if !checked(targets, predicted)? {
        return Ok(None);
    }
    // Keyed by the exact bits of the value (+0.0 and -0.0 merged): ratings are exact.
    let mut groups: BTreeMap<u64, (f64, usize)> = BTreeMap::new();
    for (&y, &p) in targets.iter().zip(predicted) {
        let key = if y == 0.0 { 0 } else { y.to_bits() };
        let entry = groups.entry(key).or_default();
        entry.0 += (p - y) * (p - y);
        entry.1 += 1;
    }
    Ok(Some(mean_of(groups.values().map(|(s, n)| s / *n as f64))))
}
