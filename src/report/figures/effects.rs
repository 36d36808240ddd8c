//! The deterioration and adaptation scores of Agarwal & Nenkova as a dot plot: one panel
//! per score, one row per model; the dot is the score on the seed-mean matrix (filled when
//! its Wilcoxon p < 0.05, hollow otherwise), the bar its min-max over seeds, and a grey
//! line marks zero. All panels share one value axis, so the four scores compare directly.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::colors::TAB10;
use super::heatmap::{AXIS_PX, TICK_PX};
use super::style::{rgb, style, text, width};
use super::svg::{err, render};
use super::ticks::{nice_ticks, number};
use crate::analysis::TemporalScore;
use crate::{Error, Result};

/// Width of one score panel, in pixels.
pub const PANEL_W: i32 = 130;
const ROW_H: i32 = 20;
const GAP: i32 = 16;

/// The significance level of a filled dot.
pub const ALPHA: f64 = 0.05;

/// One model's four scores, in the order of the panel titles.
#[derive(Clone, Debug, PartialEq)]
pub struct EffectsRow {
    /// Shown left of the row.
    pub model: String,
    /// The scores, one per panel.
    pub scores: Vec<TemporalScore>,
}

/// The dot plot of `rows` with one panel per title; values are multiplied by `factor`
/// (the tables' display scale) and the axis reads `value_label`.
pub fn temporal_effects(
    titles: &[&str],
    rows: &[EffectsRow],
    factor: f64,
    value_label: &str,
) -> Result<String> {
    let fail = |m: &str| Err(Error::Invalid(format!("figure: temporal effects: {m}")));
    if titles.is_empty() || rows.is_empty() {
        return fail("no scores");
    }
    if rows.iter().any(|r| r.scores.len() != titles.len()) {
        return fail("every model needs one score per panel");
    }
    let values: Vec<f64> = rows
        .iter()
        .flat_map(|r| &r.scores)
        .flat_map(|s| [s.score, s.min, s.max])
        .flatten()
        .map(|v| v * factor)
        .collect();
    if values.iter().any(|v| !v.is_finite()) {
        return fail("a score is not finite");
    }
    let lo = values.iter().copied().fold(0.0, f64::min);
    let hi = values.iter().copied().fold(0.0, f64::max);
    // A margin, so the outermost dot and bar end are drawn inside the panel frame.
    let pad = 0.06 * (hi - lo);
    let (lo, hi) = (lo - pad, hi + pad);
    let (ticks, decimals) = nice_ticks(lo, hi, 4);
    let lo = ticks.first().copied().unwrap_or(lo).min(lo);
    let hi = ticks.last().copied().unwrap_or(hi).max(hi);
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else {
        (lo - 1.0, hi + 1.0)
    };

    super::fonts::register()?;
    let name_style = style(TICK_PX, HPos::Right, VPos::Center, false);
    let left = {
        let mut scratch = String::new();
        let area = SVGBackend::with_string(&mut scratch, (10, 10)).into_drawing_area();
        let mut w = 0;
        for r in rows {
            w = w.max(width(&area, &r.model, &name_style)?);
        }
        w + 14
    };
    let top = 30;
    let plot_h = ROW_H * rows.len() as i32;
    let axis_y = top + plot_h;
    let total_w = left + titles.len() as i32 * (PANEL_W + GAP);
    let size = (total_w as u32, (axis_y + 70) as u32);
    let x_of = move |panel: usize, v: f64| {
        left + panel as i32 * (PANEL_W + GAP)
            + ((v * factor - lo) / (hi - lo) * PANEL_W as f64).round() as i32
    };
    render(size, |root| {
        let color = rgb(TAB10[0]);
        let grey = RGBColor(0x99, 0x99, 0x99);
        for (n, r) in rows.iter().enumerate() {
            let y = top + ROW_H * n as i32 + ROW_H / 2;
            text(root, &r.model, (left - 8, y), &name_style)?;
        }
        let tick_style = style(TICK_PX, HPos::Center, VPos::Top, false);
        for (p, title) in titles.iter().enumerate() {
            let x0 = left + p as i32 * (PANEL_W + GAP);
            let s = style(TICK_PX, HPos::Center, VPos::Center, false);
            text(root, title, (x0 + PANEL_W / 2, top / 2), &s)?;
            root.draw(&Rectangle::new(
                [(x0, top), (x0 + PANEL_W, axis_y)],
                BLACK.stroke_width(1),
            ))
            .map_err(err)?;
            let zero = x_of(p, 0.0);
            root.draw(&PathElement::new(vec![(zero, top), (zero, axis_y)], grey))
                .map_err(err)?;
            for t in &ticks {
                let x = x0 + ((t - lo) / (hi - lo) * PANEL_W as f64).round() as i32;
                root.draw(&PathElement::new(vec![(x, axis_y), (x, axis_y + 4)], BLACK))
                    .map_err(err)?;
                text(root, &number(*t, decimals), (x, axis_y + 6), &tick_style)?;
            }
            for (n, r) in rows.iter().enumerate() {
                let y = top + ROW_H * n as i32 + ROW_H / 2;
                let s = &r.scores[p];
                if let (Some(a), Some(b)) = (s.min, s.max) {
                    root.draw(&PathElement::new(
                        vec![(x_of(p, a), y), (x_of(p, b), y)],
                        color.stroke_width(2),
                    ))
                    .map_err(err)?;
                }
                if let Some(v) = s.score {
                    let at = (x_of(p, v), y);
                    let significant = s.p_value.is_some_and(|p| p < ALPHA);
                    let fill = if significant { color } else { WHITE };
                    root.draw(&Circle::new(at, 4, fill.filled())).map_err(err)?;
                    root.draw(&Circle::new(at, 4, color.stroke_width(1)))
                        .map_err(err)?;
                }
            }
        }
        let s = style(AXIS_PX, HPos::Center, VPos::Center, false);
        let mid = left + (total_w - left) / 2;
        text(root, value_label, (mid, axis_y + 34), &s)?;
        let s = style(TICK_PX, HPos::Center, VPos::Center, false);
        let legend =
            format!("dot: seed-mean matrix, filled when p < {ALPHA}; bar: min to max over seeds");
        text(root, &legend, (mid, axis_y + 56), &s)?;
        Ok(String::new())
    })
}
