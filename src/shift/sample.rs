//! What the tests read: a sample of vectors, a test's outcome, and the checks every
//! two-sample test makes of its input.

use crate::{Error, Result};

/// A sample: `rows` vectors of `dims` values, row-major.
#[derive(Clone, Copy, Debug)]
pub struct Sample<'a> {
    /// The values, `rows * dims`.
    pub values: &'a [f32],
    /// The width of a row.
    pub dims: usize,
}

impl Sample<'_> {
    /// Rows.
    pub fn rows(&self) -> usize {
        self.values.len() / self.dims.max(1)
    }

    pub(super) fn row(&self, i: usize) -> &[f32] {
        &self.values[i * self.dims..(i + 1) * self.dims]
    }

    /// Column `d` as `f64`.
    pub(super) fn column(&self, d: usize) -> Vec<f64> {
        (0..self.rows())
            .map(|i| f64::from(self.values[i * self.dims + d]))
            .collect()
    }
}

/// A test's outcome.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ShiftTest {
    /// The test statistic (MMD^2, the largest KS distance, the classifier's AUC).
    pub statistic: f64,
    /// The p-value under "both samples come from one distribution".
    pub p_value: f64,
}

/// Both samples have the same positive width, at least `min_rows` rows, and finite values.
pub(super) fn check(a: Sample, b: Sample, test: &str, min_rows: usize) -> Result<()> {
    if a.dims != b.dims || a.dims == 0 {
        return Err(Error::Invalid(format!(
            "the two samples have {} and {} dimensions; they need the same, at least 1",
            a.dims, b.dims
        )));
    }
    if !a.values.len().is_multiple_of(a.dims) || !b.values.len().is_multiple_of(b.dims) {
        return Err(Error::Invalid(format!(
            "{} and {} values do not form rows of {} dimensions",
            a.values.len(),
            b.values.len(),
            a.dims
        )));
    }
    let (m, n) = (a.rows(), b.rows());
    if m < min_rows || n < min_rows {
        return Err(Error::Invalid(format!(
            "{test} needs at least {min_rows} rows in each sample, got {m} and {n}"
        )));
    }
    if let Some(v) = a.values.iter().chain(b.values).find(|v| !v.is_finite()) {
        return Err(Error::Invalid(format!("a value is not finite: {v}")));
    }
    Ok(())
}
