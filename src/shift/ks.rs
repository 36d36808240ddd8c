//! The two-sample Kolmogorov-Smirnov test, as scipy's `ks_2samp(a, b, method="auto")`
//! (two-sided) computes it, and its use on vectors: one test per dimension, Bonferroni
//! corrected.
//!
//! The statistic is the largest distance between the two empirical CDFs, evaluated at
//! every pooled value. Its p-value is exact while neither sample has more than 10,000
//! rows (scipy's `MAX_AUTO_N`): the share of lattice paths from (0, 0) to (n1, n2) that
//! leave the band the statistic draws, by Hodges' "inside" recursion for the complement
//! (Viehmann, arXiv:2102.08037) or, for equal sizes, the alternating binomial sum in Horner
//! form, with scipy's operations in scipy's order, so the p-values agree to rounding
//! (`tests/shift.rs`: to 1e-9). Past 10,000 rows scipy uses the finite-n Kolmogorov
//! distribution at `n = round(n1 n2 / (n1 + n2))`; drift uses its limit (Kolmogorov's
//! series at `sqrt(n) D`), which differs from scipy's by O(1/sqrt(n)): for such samples
//! the p-value is asymptotic, and [`KsTest::exact`] says so.

use super::sample::{Sample, ShiftTest, check};
use crate::{Error, Result};

/// Largest sample size with an exact p-value (scipy's `MAX_AUTO_N`).
const MAX_EXACT: usize = 10_000;

/// [`ks`]'s outcome.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct KsTest {
    /// The largest per-dimension statistic, and the smallest p-value times the dimensions
    /// (at most 1).
    pub test: ShiftTest,
    /// The dimension with the largest statistic (the first, on a tie).
    pub dimension: usize,
    /// Whether every p-value was exact (no sample over 10,000 rows).
    pub exact: bool,
}

/// One two-sample KS test per dimension of `a` and `b`, Bonferroni-corrected.
pub fn ks(a: Sample, b: Sample) -> Result<KsTest> {
    check(a, b, "the KS test", 1)?;
    let mut best = (f64::NEG_INFINITY, 0);
    let mut smallest = f64::INFINITY;
    for d in 0..a.dims {
        let test = ks_2samp(&a.column(d), &b.column(d))?;
        if test.statistic > best.0 {
            best = (test.statistic, d);
        }
        smallest = smallest.min(test.p_value);
    }
    Ok(KsTest {
        test: ShiftTest {
            statistic: best.0,
            p_value: (smallest * a.dims as f64).min(1.0),
        },
        dimension: best.1,
        exact: a.rows().max(b.rows()) <= MAX_EXACT,
    })
}

/// scipy's two-sided `ks_2samp(a, b, method="auto")` of two non-empty samples of finite
/// values (see the module docs).
pub fn ks_2samp(a: &[f64], b: &[f64]) -> Result<ShiftTest> {
    if a.is_empty() || b.is_empty() {
        return Err(Error::Invalid(format!(
            "the KS test needs two non-empty samples, got {} and {} values",
            a.len(),
            b.len()
        )));
    }
    if let Some(v) = a.iter().chain(b).find(|v| !v.is_finite()) {
        return Err(Error::Invalid(format!("a value is not finite: {v}")));
    }
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    // Values equal under `total_cmp` are the same bits, so an unstable sort gives the same
    // order, faster.
    a.sort_unstable_by(f64::total_cmp);
    b.sort_unstable_by(f64::total_cmp);
    let (n1, n2) = (a.len(), b.len());
    // The CDF difference at every pooled value, as scipy divides: counts over sizes.
    let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut i, mut j) = (0, 0);
    while i < n1 || j < n2 {
        let v = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) => x.min(y),
            (Some(&x), None) => x,
            (None, Some(&y)) => y,
            (None, None) => unreachable!(),
        };
        while i < n1 && a[i] <= v {
            i += 1;
        }
        while j < n2 && b[j] <= v {
            j += 1;
        }
        let diff = i as f64 / n1 as f64 - j as f64 / n2 as f64;
        low = low.min(diff);
        high = high.max(diff);
    }
    let below = (-low).clamp(0.0, 1.0);
    let d = if below > high { below } else { high };
    if n1.max(n2) <= MAX_EXACT
        && let Some(test) = exact(n1 as i64, n2 as i64, d)
    {
        return Ok(test);
    }
    let (m, n) = (n1.max(n2) as f64, n1.min(n2) as f64);
    let en = (m * n / (m + n)).round_ties_even();
    Ok(ShiftTest {
        statistic: d,
        p_value: kolmogorov_sf(en.sqrt() * d).clamp(0.0, 1.0),
    })
}

/// scipy's `_attempt_exact_2kssamp`, two-sided: the statistic snapped to the lattice and
/// its exact p-value; `None` where the computation leaves `[0, 1]` (scipy then falls back
/// to the asymptotic p-value).
fn exact(n1: i64, n2: i64, d: f64) -> Option<ShiftTest> {
    let g = gcd(n1, n2);
    let lcm = (n1 / g) * n2;
    let h = (d * lcm as f64).round_ties_even() as i64;
    let statistic = h as f64 / lcm as f64;
    if h == 0 {
        return Some(ShiftTest {
            statistic,
            p_value: 1.0,
        });
    }
    let p = if n1 == n2 {
        outside_square(n1, h)
    } else {
        outside_band(n1, n2, g, h)
    };
    (p.is_finite() && (0.0..=1.0).contains(&p)).then_some(ShiftTest {
        statistic,
        p_value: p,
    })
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// P(D_{n,n} >= h/n): `2 (A0 (1 - A1 (1 - A2 (...))))`, each `A_k` a ratio of binomials
/// built from `h` factors (scipy's `_compute_prob_outside_square`).
fn outside_square(n: i64, h: i64) -> f64 {
    let mut p = 0.0;
    let mut k = n / h;
    while k >= 0 {
        let mut p1 = 1.0;
        for j in 0..h {
            p1 = (n - k * h - j) as f64 * p1 / (n + k * h + j + 1) as f64;
        }
        p = p1 * (1.0 - p);
        k -= 1;
    }
    2.0 * p
}

/// The share of lattice paths from (0, 0) to (m, n) that do not stay strictly inside
/// `|x/m - y/n| < h / lcm(m, n)`, column by column over a sliding window of `y`, each entry
/// already the complement's share (scipy's `_compute_outer_prob_inside_method`).
fn outside_band(m: i64, n: i64, g: i64, h: i64) -> f64 {
    let (m, n) = if m < n { (n, m) } else { (m, n) };
    let (mg, ng) = (m / g, n / g);
    let mut minj = 0i64;
    let mut maxj = ((h as f64 / mg as f64).ceil() as i64).min(n + 1);
    let mut curlen = maxj - minj;
    let len = (2 * maxj + 2).min(n + 1) as usize;
    let mut a = vec![1.0f64; len];
    a[minj as usize..maxj as usize].fill(0.0);
    for i in 1..=m {
        let (lastminj, lastlen) = (minj, curlen);
        minj = ((((ng * i - h) as f64 / mg as f64).floor() as i64) + 1).max(0);
        minj = minj.min(n);
        maxj = (((ng * i + h) as f64 / mg as f64).ceil() as i64).min(n + 1);
        if maxj <= minj {
            return 1.0;
        }
        let mut val = if minj == 0 { 0.0 } else { 1.0 };
        for jj in 0..maxj - minj {
            let j = jj + minj;
            val = (a[(jj + minj - lastminj) as usize] * i as f64 + val * j as f64) / (i + j) as f64;
            a[jj as usize] = val;
        }
        curlen = maxj - minj;
        if lastlen > curlen {
            let from = (maxj - minj) as usize;
            let to = (from + (lastlen - curlen) as usize).min(len);
            a[from..to].fill(1.0);
        }
    }
    a[(maxj - minj - 1) as usize]
}

/// The survival function of Kolmogorov's limiting distribution, P(K > y): the
/// theta-function form `1 - sqrt(2 pi)/y sum exp(-(2k-1)^2 pi^2 / (8 y^2))` for small `y`,
/// the alternating series `2 sum (-1)^(k-1) exp(-2 k^2 y^2)` otherwise; both converge in a
/// few terms on their side of 1.
fn kolmogorov_sf(y: f64) -> f64 {
    use std::f64::consts::PI;
    if y <= 0.0 {
        return 1.0;
    }
    if y < 1.0 {
        let cdf: f64 = (1..=20)
            .map(|k| {
                let odd = (2 * k - 1) as f64;
                (-odd * odd * PI * PI / (8.0 * y * y)).exp()
            })
            .sum::<f64>()
            * (2.0 * PI).sqrt()
            / y;
        return 1.0 - cdf;
    }
    2.0 * (1..=100)
        .map(|k| {
            let k = k as f64;
            let sign = if k as i64 % 2 == 1 { 1.0 } else { -1.0 };
            sign * (-2.0 * k * k * y * y).exp()
        })
        .sum::<f64>()
}
