//! Decay against drift strength: one panel per model, one line per kind of drift, each
//! point the seed mean with a bar from the smallest to the largest seed's value; the
//! panels share the y axis so that models compare at a glance. Lines take the
//! [`super::colors::TAB10`] colours in input order and distinct markers (circle, square,
//! triangle), so that they read in grey print too.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::colors::TAB10;
use super::heatmap::{AXIS_PX, TICK_PX, TITLE_PX};
use super::style::{legend_entry, rgb, style, width};
use super::svg::{err, render};
use super::ticks::{nice_ticks, number};
use crate::{Error, Result};

/// Draws the `k`-th line's marker at `at` on `area`: circle, square, triangle, then again
/// (a macro, since the plot and the legend have different coordinate types).
macro_rules! marker {
    ($area:expr, $k:expr, $at:expr, $color:expr) => {
        match $k % 3 {
            0 => $area.draw(&Circle::new($at, 3, $color.filled())),
            1 => $area.draw(
                &(EmptyElement::at($at) + Rectangle::new([(-3, -3), (3, 3)], $color.filled())),
            ),
            _ => $area.draw(&TriangleMarker::new($at, 4, $color.filled())),
        }
        .map_err(err)
    };
}

/// One point: the strength, the seed mean and the seeds' range (display scale).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StrengthPoint {
    /// The knob's value.
    pub strength: f64,
    /// The seed mean.
    pub mean: f64,
    /// The smallest seed's value.
    pub min: f64,
    /// The largest seed's value.
    pub max: f64,
}

/// One kind of drift in one panel.
#[derive(Clone, Debug, PartialEq)]
pub struct StrengthLine {
    /// The legend entry (the kind of drift).
    pub label: String,
    /// Its points, strength ascending.
    pub points: Vec<StrengthPoint>,
}

/// One model's panel.
#[derive(Clone, Debug, PartialEq)]
pub struct StrengthPanel {
    /// The panel's title (the model).
    pub title: String,
    /// One line per kind, in legend order (every panel lists the kinds alike).
    pub lines: Vec<StrengthLine>,
}

const PLOT_W: u32 = 230;
const PLOT_H: u32 = 240;

/// The panels side by side, one y axis for all, as an SVG document; `y_label` names the
/// statistic and its unit.
pub fn strength_curves(panels: &[StrengthPanel], y_label: &str) -> Result<String> {
    let points = || {
        panels
            .iter()
            .flat_map(|p| p.lines.iter().flat_map(|l| l.points.iter()))
    };
    let lo = points().map(|p| p.min).fold(0.0_f64, f64::min);
    let hi = points().map(|p| p.max).fold(f64::NEG_INFINITY, f64::max);
    let x_hi = points().map(|p| p.strength).fold(0.0_f64, f64::max);
    if !hi.is_finite() || x_hi <= 0.0 {
        return Err(Error::Invalid(
            "figure: strength curves need points above strength 0".into(),
        ));
    }
    let pad = ((hi - lo) * 0.05).max(1e-9);
    let (lo, hi) = (lo - pad, hi + pad);
    let (x_lo, x_hi) = (-0.04 * x_hi, 1.04 * x_hi);
    super::fonts::register()?;
    let labels: Vec<&str> = panels
        .first()
        .map(|p| p.lines.iter().map(|l| l.label.as_str()).collect())
        .unwrap_or_default();
    let legend_w = {
        let mut scratch = String::new();
        let area = SVGBackend::with_string(&mut scratch, (10, 10)).into_drawing_area();
        let s = style(TICK_PX, HPos::Left, VPos::Center, false);
        let mut w = 0;
        for l in &labels {
            w = w.max(width(&area, l, &s)?);
        }
        w + 44
    };
    let n = panels.len() as u32;
    render((PLOT_W * n + legend_w as u32, PLOT_H + 40), |root| {
        let (plots, legend) = root.split_horizontally(PLOT_W * n);
        let areas = plots.split_evenly((1, panels.len()));
        for (at, (panel, area)) in panels.iter().zip(&areas).enumerate() {
            let mut chart = ChartBuilder::on(area)
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(if at == 0 { 56 } else { 30 })
                .caption(&panel.title, (super::fonts::FAMILY, TITLE_PX))
                .build_cartesian_2d(x_lo..x_hi, lo..hi)
                .map_err(err)?;
            let (_, yd) = nice_ticks(lo, hi, 6);
            let label_font = (super::fonts::FAMILY, TICK_PX).into_font();
            let axis_font = (super::fonts::FAMILY, AXIS_PX).into_font();
            let x_format = |v: &f64| number(*v, 2);
            let y_format = |v: &f64| number(*v, yd);
            let mut mesh = chart.configure_mesh();
            mesh.disable_mesh()
                .x_labels(5)
                .y_labels(6)
                .x_label_formatter(&x_format)
                .y_label_formatter(&y_format)
                .label_style(label_font)
                .axis_desc_style(axis_font)
                .x_desc("drift strength");
            if at == 0 {
                mesh.y_desc(y_label);
            }
            mesh.draw().map_err(err)?;
            // Zero decay: the reference every point is read against.
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x_lo, 0.0), (x_hi, 0.0)],
                    RGBColor(0x99, 0x99, 0x99).stroke_width(1),
                )))
                .map_err(err)?;
            for (k, line) in panel.lines.iter().enumerate() {
                let color = rgb(TAB10[k % TAB10.len()]);
                // Each kind's bars shifted a little so that equal strengths do not hide
                // each other.
                let dx = (k as f64 - 1.0) * 0.012 * (x_hi - x_lo);
                for p in &line.points {
                    let x = p.strength + dx;
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            vec![(x, p.min), (x, p.max)],
                            color.stroke_width(1),
                        )))
                        .map_err(err)?;
                }
                let path: Vec<(f64, f64)> = line
                    .points
                    .iter()
                    .map(|p| (p.strength + dx, p.mean))
                    .collect();
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        path.clone(),
                        color.stroke_width(2),
                    )))
                    .map_err(err)?;
                for &p in &path {
                    marker!(chart.plotting_area(), k, p, color)?;
                }
            }
        }
        let font = style(TICK_PX, HPos::Left, VPos::Center, false);
        for (k, label) in labels.iter().enumerate() {
            let color = rgb(TAB10[k % TAB10.len()]);
            legend_entry(
                &legend,
                40 + 16 * k as i32,
                color,
                (label, &font),
                |area, at| marker!(area, k, at, color),
            )?;
        }
        Ok(String::new())
    })
}
