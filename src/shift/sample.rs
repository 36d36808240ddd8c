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

/// `sum term(a_i, b_i)` over eight running sums, then the tail: a sum in one accumulator
/// is a chain of dependent additions the compiler may not reorder, and the tests spend
/// most of their time in these sums. One order for every caller, so results are fixed.
fn eight_sums<T: Copy, S>(a: &[T], b: &[T], term: impl Fn(T, T) -> S) -> S
where
    S: Copy + Default + std::ops::AddAssign + std::iter::Sum + std::ops::Add<Output = S>,
{
    let mut sums = [S::default(); 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: S = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(&x, &y)| term(x, y))
        .sum();
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            sums[k] += term(x[k], y[k]);
        }
    }
    sums.into_iter().sum::<S>() + tail
}

/// `sum a_i b_i` ([`eight_sums`]).
pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    eight_sums(a, b, |x, y| x * y)
}

/// [`dot`] of `f32` vectors, in `f32`.
pub(super) fn dot32(a: &[f32], b: &[f32]) -> f32 {
    eight_sums(a, b, |x, y| x * y)
}

/// `|a - b|^2` of two `f32` rows in `f64` ([`eight_sums`]).
pub(super) fn squared_distance(a: &[f32], b: &[f32]) -> f64 {
    eight_sums(a, b, |x, y| (f64::from(x) - f64::from(y)).powi(2))
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
