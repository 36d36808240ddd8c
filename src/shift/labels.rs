//! Shift in what a classifier predicts, and in the label prior behind it.
//!
//! [`chi_square`]: Pearson's chi-square test of independence on the 2 x C table of
//! predicted-class counts in two samples (scipy's `chi2_contingency(table,
//! correction=False)` after dropping classes neither sample predicts; one class left:
//! statistic 0, p-value 1, as scipy gives for zero degrees of freedom).
//!
//! [`bbse`]: black-box shift estimation (Lipton, Wang and Smola, ICML 2018). Under label
//! shift (`p(x | y)` fixed, `p(y)` moving) the confusion matrix `C[a][b] = P_source(yhat =
//! a, y = b)`, measured on held-out source rows, links the target's predicted-class shares
//! `mu[a]` to the importance weights `w[b] = q(y = b) / p(y = b)`: `C w = mu`. The target
//! prior is then `q = w * p`, with negative entries (estimation noise) set to 0 and the rest
//! renormalised. Checked against `np.linalg.solve` on the same matrices.

use super::sample::ShiftTest;
use crate::{Error, Result};

/// Pearson's chi-square statistic and p-value of the predicted classes `a` and `b` (class
/// numbers below `classes`).
pub fn chi_square(a: &[u32], b: &[u32], classes: usize) -> Result<ShiftTest> {
    let counts = |sample: &[u32]| -> Result<Vec<f64>> {
        let mut counts = vec![0.0; classes];
        for &c in sample {
            *counts.get_mut(c as usize).ok_or_else(|| {
                Error::Invalid(format!("class {c} is not below the {classes} classes"))
            })? += 1.0;
        }
        Ok(counts)
    };
    if a.is_empty() || b.is_empty() {
        return Err(Error::Invalid(format!(
            "the chi-square test needs two non-empty samples, got {} and {} rows",
            a.len(),
            b.len()
        )));
    }
    let (ca, cb) = (counts(a)?, counts(b)?);
    let kept: Vec<(f64, f64)> = ca
        .into_iter()
        .zip(cb)
        .filter(|(x, y)| x + y > 0.0)
        .collect();
    if kept.len() < 2 {
        return Ok(ShiftTest {
            statistic: 0.0,
            p_value: 1.0,
        });
    }
    let (ra, rb) = (a.len() as f64, b.len() as f64);
    let total = ra + rb;
    let mut statistic = 0.0;
    for (row, total_row) in [(0, ra), (1, rb)] {
        for &(x, y) in &kept {
            let observed = if row == 0 { x } else { y };
            let expected = total_row * (x + y) / total;
            statistic += (observed - expected).powi(2) / expected;
        }
    }
    let dof = (kept.len() - 1) as f64;
    Ok(ShiftTest {
        statistic,
        p_value: statrs::function::gamma::gamma_ur(dof / 2.0, statistic / 2.0).clamp(0.0, 1.0),
    })
}

/// What [`bbse`] estimates.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PriorShift {
    /// The importance weights `w = C^-1 mu`, one per class (may be negative).
    pub weights: Vec<f64>,
    /// The source label prior `p` (the confusion matrix's column sums).
    pub source: Vec<f64>,
    /// The estimated target label prior `q`.
    pub target: Vec<f64>,
    /// The total-variation distance between `q` and `p`, in `[0, 1]`.
    pub distance: f64,
}

/// Black-box shift estimation of the target label prior (see the module docs) from source
/// rows' true and predicted classes and the target rows' predicted classes. `None` when the
/// confusion matrix is singular (a class the source rows never show or the model never
/// predicts): the weights are then not identified.
pub fn bbse(
    labels: &[u32],
    predicted: &[u32],
    target: &[u32],
    classes: usize,
) -> Result<Option<PriorShift>> {
    if labels.len() != predicted.len() || labels.is_empty() || target.is_empty() {
        return Err(Error::Invalid(format!(
            "black-box shift estimation needs as many predictions as labels and rows on both \
             sides, got {} labels, {} predictions and {} target rows",
            labels.len(),
            predicted.len(),
            target.len()
        )));
    }
    let class = |c: u32| -> Result<usize> {
        let c = c as usize;
        if c < classes {
            Ok(c)
        } else {
            Err(Error::Invalid(format!(
                "class {c} is not below the {classes} classes"
            )))
        }
    };
    // Sums of 1/n in row order, as numpy's `add.at` accumulates them.
    let share = 1.0 / labels.len() as f64;
    let mut confusion = vec![vec![0.0; classes]; classes];
    for (&y, &yhat) in labels.iter().zip(predicted) {
        confusion[class(yhat)?][class(y)?] += share;
    }
    let mut mu = vec![0.0; classes];
    for &yhat in target {
        mu[class(yhat)?] += 1.0;
    }
    mu.iter_mut().for_each(|v| *v /= target.len() as f64);
    let source: Vec<f64> = (0..classes)
        .map(|b| (0..classes).map(|a| confusion[a][b]).sum())
        .collect();
    let Some(weights) = solve(confusion, mu) else {
        return Ok(None);
    };
    let clipped: Vec<f64> = weights
        .iter()
        .zip(&source)
        .map(|(w, p)| (w * p).max(0.0))
        .collect();
    let sum: f64 = clipped.iter().sum();
    if sum <= 0.0 {
        return Ok(None);
    }
    let target: Vec<f64> = clipped.iter().map(|q| q / sum).collect();
    let distance = 0.5
        * target
            .iter()
            .zip(&source)
            .map(|(q, p)| (q - p).abs())
            .sum::<f64>();
    Ok(Some(PriorShift {
        weights,
        source,
        target,
        distance,
    }))
}

/// `x` with `a x = b` by Gaussian elimination with partial pivoting (as LAPACK's `gesv`);
/// `None` when a pivot vanishes relative to the matrix's largest entry. Written here for
/// the few classes of a classifier: no linear-algebra crate is needed for a 10 x 10 solve.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    let largest = a.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    if largest == 0.0 {
        return None;
    }
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() <= 1e-12 * largest {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let (above, below) = a.split_at_mut(col + 1);
        let pivot_row = &above[col];
        for (offset, row) in below.iter_mut().enumerate() {
            let factor = row[col] / pivot_row[col];
            for (x, p) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                *x -= factor * p;
            }
            b[col + 1 + offset] -= factor * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let rest: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    Some(x)
}
