//! The classifier two-sample test (Lopez-Paz and Oquab, ICLR 2017): if a classifier can tell
//! the rows of A from the rows of B on rows it was not fitted on, the samples differ.
//!
//! Exactly what scikit-learn computes as `cross_val_predict(make_pipeline(StandardScaler(),
//! LogisticRegression()), X, y, cv=StratifiedKFold(5), method="predict_proba")` with A
//! labelled 0 and B 1, in `f64`: per fold, columns standardised with the training rows'
//! mean and population standard deviation (a column constant to rounding scaled by 1, as
//! `StandardScaler` decides it), then a logistic regression with an L2 penalty of `1/2
//! |w|^2` (C = 1, the intercept unpenalised) fitted to its optimum, which is unique.
//! The statistic is the ROC AUC of the out-of-fold probabilities of "B" (0.5: no
//! difference; 1: separable). The p-value is scipy's one-sided Mann-Whitney U test of B's
//! scores over A's (asymptotic, tie- and continuity-corrected), which treats the
//! out-of-fold scores as independent: they come from five fitted models, so it is an
//! approximation, the usual one for this test.
//!
//! The optimiser is a truncated Newton method (conjugate gradients on Hessian-vector
//! products, preconditioned by the Hessian's diagonal; Armijo backtracking; each fold
//! starting from the previous fold's optimum), written here because the crates that fit a logistic
//! regression bring a linear-algebra stack drift does not otherwise use; it stops when
//! every gradient entry is below 1e-9, where the probabilities agree with scikit-learn's
//! Newton-Cholesky solver at tol 1e-12 to about 1e-12 (`tests/shift.rs`).

use super::sample::{Sample, ShiftTest, check, dot, dot32};
use crate::metrics::roc_auc;
use crate::{Error, Result};

/// Folds of the cross-validation.
pub const FOLDS: usize = 5;

/// Gradient tolerance of the fit (largest entry).
const TOLERANCE: f64 = 1e-9;
/// Newton steps before the fit gives up.
const MAX_STEPS: usize = 100;

/// The classifier two-sample test of `a` and `b` (see the module docs): each sample needs
/// at least [`FOLDS`] rows.
pub fn c2st(a: Sample, b: Sample) -> Result<ShiftTest> {
    check(a, b, "the classifier two-sample test", FOLDS)?;
    let (m, n, dims) = (a.rows(), b.rows(), a.dims);
    let x: Vec<f64> = a
        .values
        .iter()
        .chain(b.values)
        .map(|&v| f64::from(v))
        .collect();
    let labels: Vec<bool> = (0..m + n).map(|i| i >= m).collect();
    let folds = stratified_folds(m, n);
    let mut scores = vec![0f64; m + n];
    // Each fold's fit starts from the previous fold's optimum, which is close: four fifths
    // of the rows are shared. The optimum is unique, so only the steps to it change.
    let mut start = vec![0.0; dims + 1];
    for fold in 0..FOLDS {
        let train: Vec<usize> = (0..m + n).filter(|&r| folds[r] != fold).collect();
        let scaler = Scaler::fit(&x, dims, &train);
        let rows: Vec<f64> = train
            .iter()
            .flat_map(|&r| scaler.apply(&x[r * dims..(r + 1) * dims]))
            .collect();
        let targets: Vec<bool> = train.iter().map(|&r| labels[r]).collect();
        let (w, bias) = fit(&rows, dims, &targets, &start)?;
        start = w.iter().copied().chain([bias]).collect();
        for r in (0..m + n).filter(|&r| folds[r] == fold) {
            let row: Vec<f64> = scaler.apply(&x[r * dims..(r + 1) * dims]).collect();
            let z = dot(&row, &w) + bias;
            scores[r] = 1.0 / (1.0 + (-z).exp());
        }
    }
    let statistic = roc_auc(&labels, &scores)?.expect("both samples have rows");
    Ok(ShiftTest {
        statistic,
        p_value: mann_whitney_greater(&scores[m..], &scores[..m]),
    })
}

/// scikit-learn's `StratifiedKFold(5)` test fold of each row, without shuffling, for `m`
/// rows of class A followed by `n` of class B: the sorted labels are dealt round-robin to
/// the folds to fix how many of each class a fold gets, then each class's rows fill the
/// folds in order, in blocks.
pub(crate) fn stratified_folds(m: usize, n: usize) -> Vec<usize> {
    let mut allocation = [[0usize; 2]; FOLDS];
    for i in 0..m + n {
        allocation[i % FOLDS][usize::from(i >= m)] += 1;
    }
    let mut folds = Vec::with_capacity(m + n);
    for class in 0..2 {
        for (fold, counts) in allocation.iter().enumerate() {
            folds.extend(std::iter::repeat_n(fold, counts[class]));
        }
    }
    folds
}

/// `StandardScaler`: a column's mean and scale over some rows.
struct Scaler {
    mean: Vec<f64>,
    scale: Vec<f64>,
}

impl Scaler {
    fn fit(x: &[f64], dims: usize, rows: &[usize]) -> Self {
        let count = rows.len() as f64;
        let (mut mean, mut scale) = (vec![0.0; dims], vec![1.0; dims]);
        for d in 0..dims {
            let column = || rows.iter().map(|&r| x[r * dims + d]);
            let mu = column().sum::<f64>() / count;
            // scikit-learn's two-pass variance with its correction term.
            let correction: f64 = column().map(|v| v - mu).sum();
            let squares: f64 = column().map(|v| (v - mu) * (v - mu)).sum();
            let var = (squares - correction * correction / count) / count;
            // A column is constant when its variance is inside the two-pass algorithm's
            // error bound (Chan, Golub and LeVeque), as `StandardScaler` decides.
            let eps = f64::EPSILON;
            let constant = var <= count * eps * var + (count * mu * eps).powi(2);
            mean[d] = mu;
            if !constant {
                scale[d] = var.sqrt();
            }
        }
        Scaler { mean, scale }
    }

    fn apply<'a>(&'a self, row: &'a [f64]) -> impl Iterator<Item = f64> + 'a {
        row.iter()
            .zip(&self.mean)
            .zip(&self.scale)
            .map(|((v, m), s)| (v - m) / s)
    }
}

/// `log(1 + exp(u))` without overflow.
fn softplus(u: f64) -> f64 {
    u.max(0.0) + (-u.abs()).exp().ln_1p()
}

/// The L2-penalised logistic regression of `targets` on `rows` (`dims` wide): weights and
/// intercept minimising `sum log(1 + exp(-y z)) + |w|^2 / 2`, `y` = +-1, `z = w.x + b`,
/// from the parameters `start` (weights, then intercept).
fn fit(rows: &[f64], dims: usize, targets: &[bool], start: &[f64]) -> Result<(Vec<f64>, f64)> {
    let count = targets.len();
    let row = |i: usize| &rows[i * dims..(i + 1) * dims];
    let sign: Vec<f64> = targets
        .iter()
        .map(|&t| if t { 1.0 } else { -1.0 })
        .collect();
    // The parameters: `dims` weights, then the intercept.
    let margins = |theta: &[f64]| -> Vec<f64> {
        (0..count)
            .map(|i| dot(row(i), &theta[..dims]) + theta[dims])
            .collect()
    };
    let objective = |theta: &[f64]| -> f64 {
        let z = margins(theta);
        let loss: f64 = z.iter().zip(&sign).map(|(z, y)| softplus(-y * z)).sum();
        loss + 0.5 * dot(&theta[..dims], &theta[..dims])
    };
    // H v for the Hessian at weights `curvature` (p (1 - p) per row), in f32: it only
    // steers the conjugate gradients towards a Newton step, and the gradient that decides
    // convergence is f64, so the optimum is the same; half the bytes of the rows, the
    // most read data of the test, make it about twice as fast.
    let rows32: Vec<f32> = rows.iter().map(|&x| x as f32).collect();
    let hessian_times = |curvature: &[f64], v: &[f64]| -> Vec<f64> {
        let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
        let mut out32 = vec![0f32; dims + 1];
        for (i, c) in curvature.iter().enumerate() {
            let row = &rows32[i * dims..(i + 1) * dims];
            let xv = (dot32(row, &v32[..dims]) + v32[dims]) * *c as f32;
            for (o, x) in out32.iter_mut().zip(row) {
                *o += x * xv;
            }
            out32[dims] += xv;
        }
        let mut out: Vec<f64> = out32.iter().map(|&x| f64::from(x)).collect();
        for (o, v) in out.iter_mut().zip(&v[..dims]) {
            *o += v;
        }
        out
    };
    let gradient_at = |theta: &[f64], p: &[f64]| -> Vec<f64> {
        let mut gradient = theta.to_vec();
        gradient[dims] = 0.0;
        for i in 0..count {
            let residual = p[i] - f64::from(u8::from(targets[i]));
            for (g, x) in gradient.iter_mut().zip(row(i)) {
                *g += x * residual;
            }
            gradient[dims] += residual;
        }
        gradient
    };
    let probabilities = |theta: &[f64]| -> Vec<f64> {
        margins(theta)
            .iter()
            .map(|z| 1.0 / (1.0 + (-z).exp()))
            .collect()
    };
    let largest = |g: &[f64]| g.iter().fold(0.0f64, |m, g| m.max(g.abs()));
    let mut theta = start.to_vec();
    for _ in 0..MAX_STEPS {
        let p = probabilities(&theta);
        let gradient = gradient_at(&theta, &p);
        if largest(&gradient) <= TOLERANCE {
            return Ok((theta[..dims].to_vec(), theta[dims]));
        }
        let curvature: Vec<f64> = p.iter().map(|p| p * (1.0 - p)).collect();
        // The Hessian's diagonal, for a Jacobi preconditioner.
        let mut diagonal = vec![1.0; dims + 1];
        diagonal[dims] = 0.0;
        for (i, c) in curvature.iter().enumerate() {
            for (h, x) in diagonal.iter_mut().zip(row(i)) {
                *h += c * x * x;
            }
            diagonal[dims] += c;
        }
        let step = conjugate_gradients(|v| hessian_times(&curvature, v), &diagonal, &gradient);
        // Armijo backtracking from the full Newton step. Close to the optimum the decrease
        // it promises is below the objective's rounding, so there the full step is taken if
        // it shrinks the gradient (and Newton's quadratic convergence does the rest).
        let slope = dot(&gradient, &step);
        let current = objective(&theta);
        let at = |alpha: f64| -> Vec<f64> {
            theta
                .iter()
                .zip(&step)
                .map(|(t, s)| t + alpha * s)
                .collect()
        };
        let accepted = if -slope <= 64.0 * f64::EPSILON * current.abs() {
            let full = at(1.0);
            (largest(&gradient_at(&full, &probabilities(&full))) < largest(&gradient))
                .then_some(full)
        } else {
            let mut alpha = 1.0;
            loop {
                let trial = at(alpha);
                if objective(&trial) <= current + 1e-4 * alpha * slope {
                    break Some(trial);
                }
                alpha /= 2.0;
                if alpha < 1e-10 {
                    break None;
                }
            }
        };
        match accepted {
            Some(next) => theta = next,
            None => break,
        }
    }
    Err(Error::Invalid(format!(
        "the classifier two-sample test's logistic regression did not converge (largest \
         gradient entry above {TOLERANCE:e} after at most {MAX_STEPS} Newton steps)"
    )))
}

/// An approximate solution of `H s = -g` by conjugate gradients preconditioned with `H`'s
/// `diagonal`, to the relative residual `min(0.5, sqrt|g|)` that keeps Newton's method
/// superlinear.
fn conjugate_gradients(
    h: impl Fn(&[f64]) -> Vec<f64>,
    diagonal: &[f64],
    gradient: &[f64],
) -> Vec<f64> {
    let norm = dot(gradient, gradient).sqrt();
    let target = norm * norm.sqrt().min(0.5);
    let precondition = |r: &[f64]| -> Vec<f64> {
        r.iter()
            .zip(diagonal)
            .map(|(r, d)| if *d > 0.0 { r / d } else { *r })
            .collect()
    };
    let mut s = vec![0.0; gradient.len()];
    let mut r: Vec<f64> = gradient.iter().map(|g| -g).collect();
    let mut z = precondition(&r);
    let mut d = z.clone();
    let mut rz = dot(&r, &z);
    for _ in 0..10 * gradient.len() {
        if dot(&r, &r).sqrt() <= target {
            break;
        }
        let hd = h(&d);
        let alpha = rz / dot(&d, &hd);
        for k in 0..s.len() {
            s[k] += alpha * d[k];
            r[k] -= alpha * hd[k];
        }
        z = precondition(&r);
        let next = dot(&r, &z);
        let beta = next / rz;
        rz = next;
        for k in 0..d.len() {
            d[k] = z[k] + beta * d[k];
        }
    }
    s
}

/// scipy's `mannwhitneyu(x, y, alternative="greater", method="asymptotic")`: the normal
/// approximation of U with the tie correction of its variance and a continuity correction
/// of 1/2. Every score tied gives 1.
fn mann_whitney_greater(x: &[f64], y: &[f64]) -> f64 {
    let (n1, n2) = (x.len() as f64, y.len() as f64);
    let mut pooled: Vec<(f64, bool)> = x
        .iter()
        .map(|&v| (v, true))
        .chain(y.iter().map(|&v| (v, false)))
        .collect();
    pooled.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Mid-ranks of x's values and the tie groups' sizes.
    let (mut rank_sum, mut ties) = (0.0, 0.0);
    let mut start = 0;
    while start < pooled.len() {
        let mut end = start;
        while end < pooled.len() && pooled[end].0 == pooled[start].0 {
            end += 1;
        }
        let mid = (start + 1 + end) as f64 / 2.0;
        rank_sum += mid * pooled[start..end].iter().filter(|p| p.1).count() as f64;
        let t = (end - start) as f64;
        ties += t * t * t - t;
        start = end;
    }
    let u = rank_sum - n1 * (n1 + 1.0) / 2.0;
    let n = n1 + n2;
    let s = (n1 * n2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)))).sqrt();
    if s <= 0.0 {
        return 1.0;
    }
    let z = (u - n1 * n2 / 2.0 - 0.5) / s;
    (0.5 * statrs::function::erf::erfc(z / std::f64::consts::SQRT_2)).clamp(0.0, 1.0)
}
