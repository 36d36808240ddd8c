//! A classifier's accuracy on unlabelled rows, estimated from its confidences (the largest
//! softmax probability of a row).
//!
//! [`average_confidence`]: the mean confidence, which equals the accuracy for a calibrated
//! model. [`Atc`], average thresholded confidence (Garg et al., ICLR 2022): on held-out
//! source rows with labels, choose the threshold `t` below which as many rows fall as the
//! model got wrong (`t` the (e + 1)-th smallest confidence for `e` errors; no threshold
//! when every row is wrong); on target rows, the estimated accuracy is the share with
//! confidence at least `t`. Checked against numpy computations of these formulas.

use crate::{Error, Result};

/// The mean of `confidences`; `None` for none.
pub fn average_confidence(confidences: &[f64]) -> Option<f64> {
    (!confidences.is_empty()).then(|| confidences.iter().sum::<f64>() / confidences.len() as f64)
}

/// ATC's threshold, fitted on labelled source rows.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Atc {
    /// The threshold; `None` when every source row was wrong (nothing counts as right).
    pub threshold: Option<f64>,
}

impl Atc {
    /// The threshold for source rows' `confidences` and whether each was `correct`.
    pub fn fit(confidences: &[f64], correct: &[bool]) -> Result<Atc> {
        if confidences.len() != correct.len() || confidences.is_empty() {
            return Err(Error::Invalid(format!(
                "ATC needs one correctness per confidence and at least one row, got {} and {}",
                confidences.len(),
                correct.len()
            )));
        }
        if let Some(c) = confidences.iter().find(|c| !c.is_finite()) {
            return Err(Error::Invalid(format!("a confidence is not finite: {c}")));
        }
        let errors = correct.iter().filter(|&&c| !c).count();
        let mut sorted = confidences.to_vec();
        sorted.sort_by(f64::total_cmp);
        Ok(Atc {
            threshold: sorted.get(errors).copied(),
        })
    }

    /// The estimated accuracy on target rows' `confidences`; `None` for none.
    pub fn estimate(&self, confidences: &[f64]) -> Option<f64> {
        if confidences.is_empty() {
            return None;
        }
        let above = match self.threshold {
            Some(t) => confidences.iter().filter(|&&c| c >= t).count(),
            None => 0,
        };
        Some(above as f64 / confidences.len() as f64)
    }
}
