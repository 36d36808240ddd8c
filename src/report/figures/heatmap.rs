//! The drift-matrix heatmap of one model: raw scores on a sequential scale or deviations
//! from the cohort mean on a zero-centred diverging one ([`Scale`]).
//!
//! Row `i` (trained through slice `i`) runs bottom to top, so row 0 is at the bottom and the
//! origin lower-left; column `j` (evaluated on slice `j`) runs left to right. Cells tile the
//! square (edges at `round(n * side / K)`), one `<rect>` each reaching one pixel under the
//! cells drawn after it so that no seam shows; empty cells are light grey
//! ([`super::colors::EMPTY`]). A dashed line marks the diagonal. Labels are thinned by
//! [`super::ticks::thinned`]; the column labels turn upright when they would overlap.
//!
//! `<rect>` elements of a heatmap: 1 background, `K*K` cells, 1 matrix frame,
//! [`COLORBAR_STEPS`] colour-bar steps and 1 colour-bar frame.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::colors::EMPTY;
use super::scale::Scale;
use super::style::{rgb, style, text, width};
use super::svg::{Area, err, render};
use super::ticks::{MAX_LABELS, nice_ticks, number, thinned};
use crate::matrix::Grid;
use crate::metrics::{Direction, Metric};
use crate::{Error, Result};

/// The number of bands of the colour bar.
pub const COLORBAR_STEPS: usize = 64;

/// Side of the matrix square of a single heatmap, in pixels.
pub const SIDE: i32 = 170;

pub(crate) const TICK_PX: f64 = 13.0;
pub(crate) const AXIS_PX: f64 = 15.0;
pub(crate) const TITLE_PX: f64 = 17.0;

/// Options of a heatmap.
#[derive(Clone, Debug, PartialEq)]
pub struct HeatmapOptions {
    /// A title above the matrix (e.g. the model), or none.
    pub title: Option<String>,
    /// The metric's direction; lower-is-better reverses the colour map.
    pub direction: Direction,
    /// The colour bar's title, e.g. "accuracy ×100" or "Δ accuracy".
    pub value_label: String,
}

/// What a colour bar adds to its title so that no reader takes an error's high end for
/// the good one: nothing for a score, where high is good as a reader expects.
fn better_end(metric: Metric) -> &'static str {
    match metric.direction() {
        Direction::HigherIsBetter => "",
        Direction::LowerIsBetter => " (lower = better)",
    }
}

impl HeatmapOptions {
    /// A heatmap of `metric`'s values (a seed mean or a cohort mean).
    /// An error's colour bar says which end is better (the colour map is reversed for it).
    pub fn raw(metric: Metric, title: Option<String>) -> Self {
        HeatmapOptions {
            title,
            direction: metric.direction(),
            value_label: format!("{}{}", metric.display_unit(), better_end(metric)),
        }
    }

    /// A heatmap of a model's deviation from the cohort mean (`analysis::deviation`).
    pub fn deviation(metric: Metric, title: Option<String>) -> Self {
        HeatmapOptions {
            value_label: format!("Δ from the cohort mean{}", better_end(metric)),
            ..Self::raw(metric, title)
        }
    }
}

impl Default for HeatmapOptions {
    fn default() -> Self {
        HeatmapOptions {
            title: None,
            direction: Direction::HigherIsBetter,
            value_label: String::new(),
        }
    }
}

/// The heatmap of `grid` with slice `labels` (oldest first, one per slice) as an SVG
/// document.
pub fn heatmap(
    grid: &Grid,
    labels: &[String],
    scale: Scale,
    opts: &HeatmapOptions,
) -> Result<String> {
    check(grid, labels)?;
    let probe = probe_layout(grid.k(), labels, SIDE)?;
    let top = if opts.title.is_some() { 34 } else { 12 };
    let bar = colorbar_width(&scale)?;
    let w = probe.left + SIDE + bar;
    let h = top + SIDE + probe.bottom;
    render((w as u32, h as u32), |root| {
        if let Some(title) = &opts.title {
            let s = style(TITLE_PX, HPos::Center, VPos::Center, false);
            text(root, title, (probe.left + SIDE / 2, top / 2), &s)?;
        }
        let diag = draw_matrix(
            root,
            (probe.left, top),
            SIDE,
            grid,
            labels,
            scale,
            opts.direction,
            &probe,
            true,
        )?;
        draw_colorbar(
            root,
            (probe.left + SIDE + 18, top),
            SIDE,
            scale,
            opts.direction,
            &opts.value_label,
        )?;
        Ok(diag)
    })
}

pub(crate) fn check(grid: &Grid, labels: &[String]) -> Result<()> {
    if labels.len() != grid.k() {
        return Err(Error::Invalid(format!(
            "figure: {} slice labels for a {k}x{k} matrix",
            labels.len(),
            k = grid.k()
        )));
    }
    Ok(())
}

/// Margins of one matrix: left of it (axis title and row labels) and below it (column
/// labels and axis title), and whether column labels stand upright.
pub(crate) struct Layout {
    pub left: i32,
    pub bottom: i32,
    pub upright: bool,
}

/// Measures the labels of a `k`-slice matrix of `side` pixels (fonts are registered first).
pub(crate) fn probe_layout(k: usize, labels: &[String], side: i32) -> Result<Layout> {
    super::fonts::register()?;
    let mut scratch = String::new();
    let area = SVGBackend::with_string(&mut scratch, (10, 10)).into_drawing_area();
    layout(&area, k, labels, side)
}

fn layout(area: &Area, k: usize, labels: &[String], side: i32) -> Result<Layout> {
    let shown = thinned(k);
    let s = style(TICK_PX, HPos::Left, VPos::Center, false);
    let mut widest = 0;
    for &n in &shown {
        widest = widest.max(width(area, &labels[n], &s)?);
    }
    let step = k.div_ceil(MAX_LABELS).max(1);
    let spacing = if k == 0 {
        side
    } else {
        side * step as i32 / k as i32
    };
    let upright = shown.len() > 1 && widest + 4 > spacing;
    let below = if upright { widest } else { 14 };
    Ok(Layout {
        left: 8 + 16 + 6 + widest + 6,
        bottom: 6 + below + 8 + 16 + 8,
        upright,
    })
}

/// Cell edge `n` of `k` over `side` pixels, rounded.
fn edge(n: usize, k: usize, side: i32) -> i32 {
    ((2 * n as i64 * side as i64 + k as i64) / (2 * k as i64)) as i32
}

/// Draws the matrix with its top-left corner at `at`; returns the raw dashed diagonal.
#[allow(clippy::too_many_arguments)]
pub(crate) fn draw_matrix(
    area: &Area,
    at: (i32, i32),
    side: i32,
    grid: &Grid,
    labels: &[String],
    scale: Scale,
    direction: Direction,
    lay: &Layout,
    axis_titles: bool,
) -> Result<String> {
    let (x0, y0) = at;
    let k = grid.k();
    let bottom = y0 + side;
    // Each cell reaches one pixel into the neighbours drawn after it (above, right), which
    // cover that pixel: abutting edges would show anti-aliasing seams in every renderer.
    for i in 0..k {
        let up = i32::from(i + 1 < k);
        let (y_lo, y_hi) = (
            bottom - edge(i + 1, k, side) - up,
            bottom - edge(i, k, side),
        );
        for j in 0..k {
            let right = i32::from(j + 1 < k);
            let (x_lo, x_hi) = (x0 + edge(j, k, side), x0 + edge(j + 1, k, side) + right);
            let fill = match grid.get(i, j) {
                Some(v) => rgb(scale.color(v, direction)),
                None => rgb(EMPTY),
            };
            area.draw(&Rectangle::new([(x_lo, y_lo), (x_hi, y_hi)], fill.filled()))
                .map_err(err)?;
        }
    }
    area.draw(&Rectangle::new(
        [(x0, y0), (x0 + side, bottom)],
        BLACK.stroke_width(1),
    ))
    .map_err(err)?;
    let row = style(TICK_PX, HPos::Right, VPos::Center, false);
    let col = if lay.upright {
        style(TICK_PX, HPos::Right, VPos::Center, true)
    } else {
        style(TICK_PX, HPos::Center, VPos::Top, false)
    };
    for n in thinned(k) {
        let centre = (edge(n, k, side) + edge(n + 1, k, side)) / 2;
        text(area, &labels[n], (x0 - 6, bottom - centre), &row)?;
        text(area, &labels[n], (x0 + centre, bottom + 6), &col)?;
    }
    if axis_titles {
        let title = style(AXIS_PX, HPos::Center, VPos::Center, false);
        text(
            area,
            "evaluated on",
            (x0 + side / 2, bottom + lay.bottom - 16),
            &title,
        )?;
        let title = style(AXIS_PX, HPos::Center, VPos::Center, true);
        text(
            area,
            "trained through",
            (x0 - lay.left + 16, y0 + side / 2),
            &title,
        )?;
    }
    Ok(format!(
        "<line x1=\"{x0}\" y1=\"{bottom}\" x2=\"{}\" y2=\"{y0}\" stroke=\"#000000\" \
         stroke-opacity=\"0.6\" stroke-width=\"1\" stroke-dasharray=\"4 3\"/>\n",
        x0 + side
    ))
}

/// The width a colour bar takes right of a matrix (gap, bar, ticks, title).
pub(crate) fn colorbar_width(scale: &Scale) -> Result<i32> {
    super::fonts::register()?;
    let mut scratch = String::new();
    let area = SVGBackend::with_string(&mut scratch, (10, 10)).into_drawing_area();
    let (lo, hi) = scale.range();
    let (ticks, decimals) = nice_ticks(lo, hi, 6);
    let s = style(TICK_PX, HPos::Left, VPos::Center, false);
    let mut widest = 0;
    for t in ticks {
        widest = widest.max(width(&area, &number(t, decimals), &s)?);
    }
    Ok(18 + 16 + 4 + 4 + widest + 10 + 16 + 10)
}

/// A vertical colour bar of `height` at `at` (top-left), low values at the bottom.
pub(crate) fn draw_colorbar(
    area: &Area,
    at: (i32, i32),
    height: i32,
    scale: Scale,
    direction: Direction,
    title: &str,
) -> Result<()> {
    let (x, y) = at;
    let (lo, hi) = scale.range();
    let bottom = y + height;
    for n in 0..COLORBAR_STEPS {
        let v = lo + (hi - lo) * (n as f64 + 0.5) / COLORBAR_STEPS as f64;
        // One pixel into the next band up, as the matrix cells do.
        let (y_lo, y_hi) = (
            bottom - edge(n + 1, COLORBAR_STEPS, height) - i32::from(n + 1 < COLORBAR_STEPS),
            bottom - edge(n, COLORBAR_STEPS, height),
        );
        let fill = rgb(scale.color(v, direction));
        area.draw(&Rectangle::new([(x, y_lo), (x + 16, y_hi)], fill.filled()))
            .map_err(err)?;
    }
    area.draw(&Rectangle::new(
        [(x, y), (x + 16, bottom)],
        BLACK.stroke_width(1),
    ))
    .map_err(err)?;
    let (ticks, decimals) = nice_ticks(lo, hi, 6);
    let s = style(TICK_PX, HPos::Left, VPos::Center, false);
    let mut widest = 0;
    for t in ticks {
        let ty = bottom - ((t - lo) / (hi - lo) * height as f64).round() as i32;
        area.draw(&PathElement::new(vec![(x + 16, ty), (x + 20, ty)], BLACK))
            .map_err(err)?;
        let label = number(t, decimals);
        widest = widest.max(width(area, &label, &s)?);
        text(area, &label, (x + 24, ty), &s)?;
    }
    if !title.is_empty() {
        let s = style(AXIS_PX, HPos::Center, VPos::Center, true);
        text(area, title, (x + 24 + widest + 18, y + height / 2), &s)?;
    }
    Ok(())
}
