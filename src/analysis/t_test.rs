//! The tests the claims are decided by: Welch's two-sample t-test and the one-sample
//! t-test on per-seed values, two-sided, Spearman's rank correlation of paired run values
//! with its t-test, and Holm's step-down adjustment of a family of p-values.
//! `src/report/claims/mod.rs` says why these tests fit seed values; the p-values agree
//! with scipy's `ttest_ind(equal_var=False)`, `ttest_1samp` and `spearmanr`, and the
//! adjusted ones with statsmodels' `multipletests(method="holm")`
//! (tests/fixtures/t_test.json).

use serde::Serialize;

/// One t-test's result.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TTest {
    /// The estimate: `mean(a) - mean(b)` (Welch) or `mean(a) - mu` (one sample).
    pub difference: f64,
    /// The t statistic; infinite when every value of both sides is the same on each side
    /// and the means differ (see [`welch`]).
    pub t: f64,
    /// Degrees of freedom (Welch–Satterthwaite for two samples, `n - 1` for one).
    pub df: f64,
    /// The two-sided p-value.
    pub p: f64,
}

/// Welch's t-test of `mean(a) = mean(b)` (unequal variances), two-sided; `None` when a
/// side has fewer than two values (no variance to estimate).
///
/// When both sides are constant (a standard error of 0) the statistic is the test's limit
/// as the spread goes to 0: p = 0 when the means differ, 1 when they do not. scipy returns
/// NaN there; a run whose every seed gives the same number has no noise for a test to
/// weigh, and its difference is exact.
pub fn welch(a: &[f64], b: &[f64]) -> Option<TTest> {
    let (ma, va) = mean_and_var(a)?;
    let (mb, vb) = mean_and_var(b)?;
    let (sa, sb) = (va / a.len() as f64, vb / b.len() as f64);
    let se2 = sa + sb;
    let df = if se2 > 0.0 {
        se2 * se2 / (sa * sa / (a.len() - 1) as f64 + sb * sb / (b.len() - 1) as f64)
    } else {
        (a.len() + b.len() - 2) as f64
    };
    Some(test(ma - mb, se2.sqrt(), df))
}

/// The one-sample t-test of `mean(a) = mu`, two-sided; `None` under two values.
/// A constant sample is decided as in [`welch`].
pub fn one_sample(a: &[f64], mu: f64) -> Option<TTest> {
    let (m, v) = mean_and_var(a)?;
    let n = a.len() as f64;
    Some(test(m - mu, (v / n).sqrt(), n - 1.0))
}

/// Spearman's rank correlation of the pairs `(a[i], b[i])` and its two-sided test of no
/// correlation, as scipy's `spearmanr` computes them: rho is the Pearson correlation of
/// the average ranks ([`crate::analysis::backtest::spearman`]), and
/// `t = rho * sqrt((n - 2) / ((1 + rho)(1 - rho)))` on `n - 2` degrees of freedom.
/// `difference` holds rho. `None` under 3 pairs or when a side is constant.
pub fn spearman(a: &[f64], b: &[f64]) -> Option<TTest> {
    let rho = crate::analysis::backtest::spearman(a, b)?;
    let df = (a.len() - 2) as f64;
    let t = rho * (df / ((rho + 1.0) * (1.0 - rho))).max(0.0).sqrt();
    Some(TTest {
        difference: rho,
        t,
        df,
        p: two_sided_p(t, df),
    })
}

/// The mean and the sample variance (ddof 1) as scipy computes them: numpy's mean, and
/// the mean squared deviation from it scaled by `n / (n - 1)`. The order of the sums is
/// numpy's ([`pairwise_sum`]): when two means are close, their difference cancels most
/// digits, and only the same rounding gives the same t to the last digits.
fn mean_and_var(values: &[f64]) -> Option<(f64, f64)> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = pairwise_sum(values) / n as f64;
    let squares: Vec<f64> = values.iter().map(|v| (v - mean) * (v - mean)).collect();
    let var = pairwise_sum(&squares) / n as f64 * (n as f64 / (n - 1) as f64);
    Some((mean, var))
}

/// numpy's summation order (`pairwise_sum` in its `loops_utils`), written by hand because
/// the order is the point: under 8 values one running sum; up to 128, eight running sums
/// over the values' positions mod 8, combined pairwise, then the rest one by one; above,
/// the two halves (the first a multiple of 8 long) summed so and added.
pub fn pairwise_sum(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 8 {
        return values.iter().fold(0.0, |s, v| s + v);
    }
    if n <= 128 {
        let mut r = [0.0; 8];
        r.copy_from_slice(&values[..8]);
        let whole = n - n % 8;
        for chunk in values[8..whole].chunks_exact(8) {
            for (acc, v) in r.iter_mut().zip(chunk) {
                *acc += v;
            }
        }
        let head = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        return values[whole..].iter().fold(head, |s, v| s + v);
    }
    let half = n / 2 - (n / 2) % 8;
    pairwise_sum(&values[..half]) + pairwise_sum(&values[half..])
}

fn test(difference: f64, se: f64, df: f64) -> TTest {
    if se == 0.0 {
        let exact = difference == 0.0;
        return TTest {
            difference,
            t: if exact {
                0.0
            } else {
                f64::INFINITY.copysign(difference)
            },
            df,
            p: if exact { 1.0 } else { 0.0 },
        };
    }
    let t = difference / se;
    TTest {
        difference,
        t,
        df,
        p: two_sided_p(t, df),
    }
}

/// `P(|T| >= |t|)` for Student's t with `df` degrees of freedom: the regularized
/// incomplete beta `I_{df / (df + t²)}(df / 2, 1 / 2)`, which keeps small p-values
/// exact where `1 - cdf` would cancel.
pub fn two_sided_p(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    statrs::function::beta::beta_reg(df / 2.0, 0.5, x).clamp(0.0, 1.0)
}

/// Holm's step-down adjustment: the i-th smallest p-value of m is multiplied by
/// `m - i + 1`, made non-decreasing in that order and capped at 1; returned in the input
/// order. Ties keep their input order, which does not change the result.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]).then(a.cmp(&b)));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0_f64;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constant_pair_is_decided_by_its_means() {
        let same = welch(&[0.5, 0.5, 0.5], &[0.5, 0.5]).unwrap();
        assert_eq!((same.p, same.t), (1.0, 0.0));
        let apart = welch(&[0.5, 0.5, 0.5], &[0.4, 0.4]).unwrap();
        assert_eq!(apart.p, 0.0);
        assert!(apart.t.is_infinite() && apart.t > 0.0);
        assert!(welch(&[0.5], &[0.4, 0.3]).is_none());
        assert!(one_sample(&[0.1], 0.0).is_none());
    }

    #[test]
    fn holm_by_hand() {
        // Sorted 0.01, 0.02, 0.04 over m = 3: 0.03, 0.04, 0.04 (made monotone).
        let adjusted = holm(&[0.04, 0.01, 0.02]);
        let want = [0.04, 0.03, 0.04];
        for (a, w) in adjusted.iter().zip(want) {
            assert!((a - w).abs() < 1e-15, "{adjusted:?}");
        }
        assert_eq!(holm(&[0.6, 0.9]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }
}
