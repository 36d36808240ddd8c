//! Axis labels: "nice" tick values, numbers with fixed decimals, and the thinning of
//! slice labels so that at most [`MAX_LABELS`] show on one axis.

/// The most slice labels drawn on one axis.
pub const MAX_LABELS: usize = 12;

/// The indices of the slice labels drawn for `k` slices: `0, step, 2*step, ..` with
/// `step = ceil(k / MAX_LABELS)`.
pub fn thinned(k: usize) -> Vec<usize> {
    let step = k.div_ceil(MAX_LABELS).max(1);
    (0..k).step_by(step).collect()
}

/// "Nice" tick values in `[lo, hi]` (at most about `max` of them: steps of 1, 2, 2.5 or 5
/// times a power of ten) and the decimals that print them exactly.
pub(crate) fn nice_ticks(lo: f64, hi: f64, max: usize) -> (Vec<f64>, usize) {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater)
        || !lo.is_finite()
        || !hi.is_finite()
    {
        return (vec![lo], 2);
    }
    let raw = (hi - lo) / max.max(1) as f64;
    let exp = raw.log10().floor();
    let base = 10f64.powf(exp);
    let (mult, extra) = [(1.0, 0), (2.0, 0), (2.5, 1), (5.0, 0), (10.0, 0)]
        .into_iter()
        .find(|(m, _)| m * base >= raw * (1.0 - 1e-9))
        .unwrap_or((10.0, 0));
    let step = mult * base;
    let decimals = ((-(step.log10().floor())).max(0.0) as usize + extra).min(9);
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    let ticks = (first..=last).map(|n| n as f64 * step).collect();
    (ticks, decimals)
}

/// `v` with `decimals` decimals; never prints `-0`.
pub(crate) use crate::format::fixed as number;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_numbers() {
        let (t, d) = nice_ticks(0.0, 1.0, 5);
        assert_eq!(t, vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]);
        assert_eq!(d, 1);
        assert_eq!(number(-0.0001, 2), "0.00");
        assert_eq!(number(-0.5, 1), "-0.5");
        let (t, d) = nice_ticks(-2.5, 2.5, 5);
        assert_eq!(d, 0);
        assert_eq!(t.first(), Some(&-2.0));
    }
}
