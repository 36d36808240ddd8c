//! Colour scales of the heatmaps (protocol.md §6) and the percentile helpers that share
//! them across the models of a study.
//!
//! - [`Scale::Sequential`] maps raw scores `[lo, hi]` onto [`super::colors::VIRIDIS`];
//!   [`Scale::shared_sequential`] takes the 5th and 95th percentiles of every filled cell of
//!   a study's models, so one colour means one score across the study;
//!   [`Scale::full_sequential`] spans the smallest to the largest cell (the panels of a
//!   group of studies, whose ranges differ too much for percentiles).
//! - [`Scale::Diverging`] maps deviations `[-max_abs, max_abs]` onto
//!   [`super::colors::RDBU`], white at zero; [`Scale::shared_diverging`] takes the 99th
//!   percentile of `|Δ|` over every filled deviation cell.
//!
//! Values beyond the range take the end colour. Direction: for higher-is-better metrics
//! high scores are yellow and positive deviations blue; for lower-is-better metrics (MSE,
//! MAE, balanced MSE) the maps are reversed, so yellow and blue still mean "better".
//! Percentiles interpolate linearly between order statistics (numpy's default `linear`).

use super::colors::{self, Rgb};
use crate::matrix::Grid;
use crate::metrics::Direction;

/// The colour scale of a heatmap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    /// Raw scores from `lo` to `hi` (viridis).
    Sequential {
        /// The value at the low end of the map.
        lo: f64,
        /// The value at the high end of the map.
        hi: f64,
    },
    /// Zero-centred deviations from `-max_abs` to `max_abs` (RdBu).
    Diverging {
        /// The magnitude at both ends of the map.
        max_abs: f64,
    },
}

/// The `q`-th percentile (0..=100) of `values`, linear interpolation between order
/// statistics; `None` when `values` is empty. NaN values are ignored.
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 100.0) / 100.0 * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    Some(v[lo] + (v[hi] - v[lo]) * (pos - lo as f64))
}

impl Scale {
    /// The raw-score scale shared by `grids`: the 5th to 95th percentile of all their
    /// filled cells; `None` when no cell is filled.
    pub fn shared_sequential(grids: &[&Grid]) -> Option<Scale> {
        let values: Vec<f64> = grids.iter().flat_map(|g| g.filled().map(|c| c.2)).collect();
        Some(Scale::Sequential {
            lo: percentile(&values, 5.0)?,
            hi: percentile(&values, 95.0)?,
        })
    }

    /// The sequential scale over every filled cell of `grids`, from the smallest to the
    /// largest: no cell outside it (for panels that compare studies whose ranges differ
    /// widely); `None` when no cell is filled.
    pub fn full_sequential(grids: &[&Grid]) -> Option<Scale> {
        let values = grids.iter().flat_map(|g| g.filled().map(|c| c.2));
        let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        lo.is_finite().then_some(Scale::Sequential { lo, hi })
    }

    /// The deviation scale shared by `deviations` (grids of `Δ = M - M̄`): `max_abs` is the
    /// 99th percentile of `|Δ|` over all filled cells; `None` when no cell is filled.
    pub fn shared_diverging(deviations: &[&Grid]) -> Option<Scale> {
        let values: Vec<f64> = deviations
            .iter()
            .flat_map(|g| g.filled().map(|c| c.2.abs()))
            .collect();
        Some(Scale::Diverging {
            max_abs: percentile(&values, 99.0)?,
        })
    }

    /// The values at the low and high ends of the colour bar. A degenerate range (both
    /// ends equal) is widened by 1 % of the magnitude (or 1e-9) each way.
    pub fn range(&self) -> (f64, f64) {
        let (lo, hi) = match *self {
            Scale::Sequential { lo, hi } => (lo.min(hi), lo.max(hi)),
            Scale::Diverging { max_abs } => (-max_abs.abs(), max_abs.abs()),
        };
        if hi > lo {
            (lo, hi)
        } else {
            let pad = (lo.abs() * 0.01).max(1e-9);
            (lo - pad, hi + pad)
        }
    }

    /// Where `v` falls on the map, `0..=1` (clamped), before any reversal.
    pub fn position(&self, v: f64) -> f64 {
        let (lo, hi) = self.range();
        ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
    }

    /// The colour of `v`; lower-is-better metrics reverse the map.
    pub fn color(&self, v: f64, direction: Direction) -> Rgb {
        let t = self.position(v);
        let t = match direction {
            Direction::HigherIsBetter => t,
            Direction::LowerIsBetter => 1.0 - t,
        };
        match self {
            Scale::Sequential { .. } => colors::sequential(t),
            Scale::Diverging { .. } => colors::diverging(t),
        }
    }
}
