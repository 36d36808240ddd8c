//! Rankings as horizontal bars: one bar per model in the given order (rank 1 at the top),
//! from zero to the value, the value printed beside it, and a whisker over the model's
//! range over seeds when given, so a reader sees which places the seeds separate. Bars are
//! plain rectangles.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::colors::TAB10;
use super::heatmap::{AXIS_PX, TICK_PX, TITLE_PX};
use super::style::{rgb, style, text, width};
use super::svg::{err, render};
use super::ticks::{nice_ticks, number};
use crate::analysis::Ranked;
use crate::{Error, Result};

/// Options of a ranking figure.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RankingOptions {
    /// A title above the bars, or none.
    pub title: Option<String>,
    /// The value axis title, e.g. "future accuracy ×100" or "decay".
    pub value_label: String,
    /// Each entry's range over seeds (min, max), in entry order; empty for none.
    pub ranges: Vec<Option<(f64, f64)>>,
}

const BAR_W: i32 = 200;
const ROW_H: i32 = 18;

/// The ranking `entries` (already sorted, e.g. by [`crate::analysis::rank_by_future`] or
/// [`crate::analysis::rank_by_decay`]) as an SVG document.
pub fn ranking(entries: &[Ranked], opts: &RankingOptions) -> Result<String> {
    if entries.is_empty() {
        return Err(Error::Invalid("figure: an empty ranking".into()));
    }
    if entries.iter().any(|e| !e.value.is_finite()) {
        return Err(Error::Invalid(
            "figure: a ranking value is not finite".into(),
        ));
    }
    if !opts.ranges.is_empty() && opts.ranges.len() != entries.len() {
        return Err(Error::Invalid(format!(
            "figure: {} seed ranges for {} ranked models",
            opts.ranges.len(),
            entries.len()
        )));
    }
    let range = |n: usize| opts.ranges.get(n).copied().flatten();
    let ends = entries
        .iter()
        .enumerate()
        .flat_map(|(n, e)| [Some(e.value), range(n).map(|r| r.0), range(n).map(|r| r.1)])
        .flatten();
    if ends.clone().any(|v| !v.is_finite()) {
        return Err(Error::Invalid("figure: a seed range is not finite".into()));
    }
    let lo = ends.clone().fold(0.0, f64::min);
    let hi = ends.fold(0.0, f64::max);
    let (ticks, decimals) = nice_ticks(lo, hi, 5);
    let lo = ticks.first().copied().unwrap_or(lo).min(lo);
    let hi = ticks.last().copied().unwrap_or(hi).max(hi);
    let (lo, hi) = if hi > lo { (lo, hi) } else { (lo, lo + 1.0) };
    super::fonts::register()?;
    let label_style = style(TICK_PX, HPos::Right, VPos::Center, false);
    let names = entries
        .iter()
        .map(|e| format!("{}. {}", e.rank, e.model))
        .collect::<Vec<_>>();
    let left = {
        let mut scratch = String::new();
        let area = SVGBackend::with_string(&mut scratch, (10, 10)).into_drawing_area();
        let mut w = 0;
        for n in &names {
            w = w.max(width(&area, n, &label_style)?);
        }
        // room for the printed value of a negative bar between the names and the bars
        w + 16 + if lo < 0.0 { 44 } else { 0 }
    };
    let value_decimals = decimals + 1;
    let top = if opts.title.is_some() { 36 } else { 12 };
    let plot_h = ROW_H * entries.len() as i32;
    let right = 56;
    let size = ((left + BAR_W + right) as u32, (top + plot_h + 48) as u32);
    let x_of = move |v: f64| left + ((v - lo) / (hi - lo) * BAR_W as f64).round() as i32;
    render(size, |root| {
        if let Some(title) = &opts.title {
            let s = style(TITLE_PX, HPos::Center, VPos::Center, false);
            text(root, title, (left + BAR_W / 2, top / 2), &s)?;
        }
        let zero = x_of(0.0);
        let color = rgb(TAB10[0]);
        let value_left = style(TICK_PX, HPos::Left, VPos::Center, false);
        let value_right = style(TICK_PX, HPos::Right, VPos::Center, false);
        for (n, (e, name)) in entries.iter().zip(&names).enumerate() {
            let y = top + ROW_H * n as i32;
            let x = x_of(e.value);
            let (a, b) = (zero.min(x), zero.max(x));
            root.draw(&Rectangle::new(
                [(a, y + 3), (b, y + ROW_H - 3)],
                color.filled(),
            ))
            .map_err(err)?;
            let name_x = left - 8 - if lo < 0.0 { 44 } else { 0 };
            text(root, name, (name_x, y + ROW_H / 2), &label_style)?;
            // The whisker over the seeds' range, with end caps, drawn over the bar.
            let (mut a, mut b) = (a, b);
            if let Some((min, max)) = range(n) {
                let (x0, x1, mid) = (x_of(min), x_of(max), y + ROW_H / 2);
                let ink = RGBColor(40, 40, 40).stroke_width(1);
                for path in [
                    vec![(x0, mid), (x1, mid)],
                    vec![(x0, mid - 4), (x0, mid + 4)],
                    vec![(x1, mid - 4), (x1, mid + 4)],
                ] {
                    root.draw(&PathElement::new(path, ink)).map_err(err)?;
                }
                (a, b) = (a.min(x0), b.max(x1));
            }
            let label = number(e.value, value_decimals);
            if e.value >= 0.0 {
                text(root, &label, (b + 4, y + ROW_H / 2), &value_left)?;
            } else {
                text(root, &label, (a - 4, y + ROW_H / 2), &value_right)?;
            }
        }
        let axis_y = top + plot_h;
        root.draw(&PathElement::new(vec![(zero, top), (zero, axis_y)], BLACK))
            .map_err(err)?;
        root.draw(&PathElement::new(
            vec![(left, axis_y), (left + BAR_W, axis_y)],
            BLACK,
        ))
        .map_err(err)?;
        let tick_style = style(TICK_PX, HPos::Center, VPos::Top, false);
        for t in ticks {
            let x = x_of(t);
            root.draw(&PathElement::new(vec![(x, axis_y), (x, axis_y + 4)], BLACK))
                .map_err(err)?;
            text(root, &number(t, decimals), (x, axis_y + 6), &tick_style)?;
        }
        if !opts.value_label.is_empty() {
            let s = style(AXIS_PX, HPos::Center, VPos::Center, false);
            text(root, &opts.value_label, (left + BAR_W / 2, axis_y + 34), &s)?;
        }
        Ok(String::new())
    })
}
