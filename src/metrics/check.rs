//! The input checks every metric function shares: predictions as long as the labels, and
//! finite scores (NaN and infinity have no rank or error).

use crate::{Error, Result};

/// Labels and predictions must be the same length.
pub(super) fn check_len(a: usize, b: usize) -> Result<()> {
    if a == b {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "{a} labels but {b} predictions: they must be the same length"
        )))
    }
}

/// Rejects NaN and infinite scores, which have no rank or error.
pub(super) fn check_finite(values: &[f64], what: &str) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(Error::Invalid(format!(
            "{what}[{i}] is {}: values must be finite",
            values[i]
        ))),
    }
}
