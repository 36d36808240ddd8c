//! The two-sided Wilcoxon signed-rank test on one vector of differences, with the
//! defaults of `scipy.stats.wilcoxon` in scipy 1.17 (`zero_method="wilcox"`,
//! `correction=False`, `method="auto"`); agreement to 1e-9 is tested against
//! `tests/fixtures/wilcoxon.json`. Written by hand because no maintained Rust crate
//! reproduces scipy's method selection.
//!
//! With `n` differences (zeros included) and `m` non-zero ones, ranked by `|d|` with
//! mid-ranks for ties, `r+` the rank sum of the positive ones:
//! - `n > 50`: normal approximation;
//! - `n <= 50`, no ties, no zeros: exact null distribution of `r+` over `m` ranks,
//!   `p = 2 min(P(R <= r+), P(R >= r+))`, clipped to 1;
//! - ties or zeros and `n <= 13`: every one of the `2^m` sign assignments enumerated
//!   (scipy's exact permutation test), same two-sided rule;
//! - ties or zeros and `n > 13`: normal approximation.
//!
//! The normal approximation uses `z = (r+ - m(m+1)/4) / sqrt((m(m+1)(2m+1) - T/2) / 24)`
//! with `T = Σ (t³ - t)` over tie groups, no continuity correction, `p = 2 Φ(-|z|)`;
//! it is undefined (NaN in scipy, `None` here) when every difference is zero.

use serde::Serialize;

use crate::metrics::sort_key;

/// The test's statistic `min(r+, r-)` and two-sided p-value.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Wilcoxon {
    /// `min(r+, r-)`.
    pub statistic: f64,
    /// The two-sided p-value; `None` where scipy gives NaN (every difference zero and
    /// `n > 13`, so the normal approximation divides 0 by 0).
    pub p_value: Option<f64>,
}

/// Runs the test; `None` without differences. Differences must be finite.
pub fn wilcoxon(differences: &[f64]) -> Option<Wilcoxon> {
    let n = differences.len();
    if n == 0 {
        return None;
    }
    // Only scipy's exact permutation test (n <= 13) reads every rank.
    let ranked = rank_signed(differences, n <= 13);
    let has_zeros = ranked.m < n as u64;
    let has_ties = ranked.tie_sizes.iter().any(|&t| t > 1);
    let (doubled_r_plus, m) = (ranked.doubled_r_plus, ranked.m);
    let doubled_total = m * (m + 1);
    let statistic = doubled_r_plus.min(doubled_total - doubled_r_plus) as f64 / 2.0;

    let p_value = if n > 50 || ((has_ties || has_zeros) && n > 13) {
        normal_p(doubled_r_plus, m, &ranked.tie_sizes)
    } else if !(has_ties || has_zeros) {
        Some(exact_p(doubled_r_plus / 2, m as usize))
    } else {
        Some(permutation_p(doubled_r_plus, &ranked.doubled_ranks))
    };
    Some(Wilcoxon { statistic, p_value })
}

/// The non-zero differences ranked by `|d|` with mid-ranks for ties.
struct Ranked {
    /// How many differences are non-zero.
    m: u64,
    /// Twice the rank sum of the positive ones (doubled mid-ranks are integers).
    doubled_r_plus: u64,
    /// The doubled mid-rank of each, smallest `|d|` first (when asked for).
    doubled_ranks: Vec<u64>,
    /// The size of each tie group.
    tie_sizes: Vec<u64>,
}

fn rank_signed(differences: &[f64], keep_ranks: bool) -> Ranked {
    // (|d| as a sort key, sign) pairs sorted in place: no indirection, about 2x on 1M
    // differences (benches/numerics.rs).
    let mut signed: Vec<(u64, bool)> = differences
        .iter()
        .filter(|&&d| d != 0.0)
        .map(|&d| (sort_key(d.abs()), d > 0.0))
        .collect();
    signed.sort_unstable();
    let mut ranked = Ranked {
        m: signed.len() as u64,
        doubled_r_plus: 0,
        doubled_ranks: Vec::new(),
        tie_sizes: Vec::new(),
    };
    let mut start = 0;
    while start < signed.len() {
        let key = signed[start].0;
        let mut end = start;
        let mut positives = 0;
        while end < signed.len() && signed[end].0 == key {
            positives += u64::from(signed[end].1);
            end += 1;
        }
        let doubled_mid = (start + 1 + end) as u64;
        ranked.doubled_r_plus += doubled_mid * positives;
        if keep_ranks {
            ranked
                .doubled_ranks
                .extend(std::iter::repeat_n(doubled_mid, end - start));
        }
        ranked.tie_sizes.push((end - start) as u64);
        start = end;
    }
    ranked
}

/// Normal approximation without continuity correction.
fn normal_p(doubled_r_plus: u64, m: u64, tie_sizes: &[u64]) -> Option<f64> {
    let m = m as f64;
    let mean = m * (m + 1.0) * 0.25;
    let tie_term: f64 = tie_sizes.iter().map(|&t| (t * t * t - t) as f64).sum();
    let se = ((m * (m + 1.0) * (2.0 * m + 1.0) - tie_term / 2.0) / 24.0).sqrt();
    let z = (doubled_r_plus as f64 / 2.0 - mean) / se;
    if !z.is_finite() {
        return None;
    }
    Some(2.0 * standard_normal_sf(z.abs()))
}

/// `P(Z > x)` for a standard normal `Z` (scipy's `ndtr(-x)`).
fn standard_normal_sf(x: f64) -> f64 {
    0.5 * libm::erfc(x / std::f64::consts::SQRT_2)
}

/// Exact null distribution of `r+` over ranks 1..=m, built as scipy builds it.
fn exact_p(r_plus: u64, m: usize) -> f64 {
    let mut pmf = vec![1.0];
    for k in 1..=m {
        let mut next = vec![0.0; k * (k + 1) / 2 + 1];
        let offset = next.len() - pmf.len();
        for (t, p) in pmf.iter().enumerate() {
            next[t] += p * 0.5;
            next[t + offset] += p * 0.5;
        }
        pmf = next;
    }
    let r = r_plus as usize;
    let mean = (m * (m + 1)) as f64 / 4.0;
    let cdf = |k: usize| -> f64 {
        if k as f64 <= mean {
            pmf[..=k].iter().sum()
        } else {
            1.0 - pmf[k + 1..].iter().sum::<f64>()
        }
    };
    let sf = |k: usize| -> f64 {
        if k as f64 <= mean {
            pmf[k..].iter().sum()
        } else {
            1.0 - pmf[..k].iter().sum::<f64>()
        }
    };
    (2.0 * sf(r).min(cdf(r))).clamp(0.0, 1.0)
}

/// Two-sided p-value over all `2^m` sign assignments of the non-zero differences: the
/// counts of rank sums at most and at least the observed one, by dynamic programming on
/// doubled (integer) ranks. Zeros only repeat each assignment, so they drop out.
fn permutation_p(doubled_r_plus: u64, doubled_ranks: &[u64]) -> f64 {
    let total: u64 = doubled_ranks.iter().sum();
    let mut ways = vec![0u64; total as usize + 1];
    ways[0] = 1;
    for &r in doubled_ranks {
        for s in (r as usize..ways.len()).rev() {
            ways[s] += ways[s - r as usize];
        }
    }
    let all = (1u64 << doubled_ranks.len()) as f64;
    let observed = doubled_r_plus as usize;
    let at_most: u64 = ways[..=observed].iter().sum();
    let at_least: u64 = ways[observed..].iter().sum();
    (2.0 * (at_most.min(at_least) as f64 / all)).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_cases_by_hand() {
        // All positive, n = 5, exact: P(R >= 15) = 1/32, two-sided 1/16.
        let w = wilcoxon(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!(w.statistic, 0.0);
        assert!((w.p_value.unwrap() - 0.0625).abs() < 1e-15);
        // All zero with n <= 13: every assignment ties the observed sum.
        assert_eq!(wilcoxon(&[0.0; 5]).unwrap().p_value, Some(1.0));
        assert_eq!(wilcoxon(&[0.0; 20]).unwrap().p_value, None);
        assert_eq!(wilcoxon(&[]), None);
    }
}
