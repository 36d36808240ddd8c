//! Forgetting curves (protocol.md §3): the mean score at each lag `l = j - i`, one line per
//! model or per family, with a legend right of the plot and an optional ±1 std band.
//!
//! Lines take the [`super::colors::TAB10`] colours in input order; series 11-20 add circle
//! markers and 21-30 triangle markers, so up to 30 lines stay distinguishable.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::colors::TAB10;
use super::heatmap::{AXIS_PX, TICK_PX, TITLE_PX};
use super::style::{legend_entry, rgb, style, width};
use super::svg::{err, render};
use super::ticks::{nice_ticks, number};
use crate::analysis::{ForgettingPoint, forgetting_curve, forgetting_over_seeds};
use crate::matrix::{DriftMatrix, Grid};
use crate::metrics::Metric;
use crate::{Error, Result};

/// One line: a label and its points (lag, mean, optional std), lags ascending.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    /// The legend entry (model or family).
    pub label: String,
    /// The points, lags ascending.
    pub points: Vec<ForgettingPoint>,
}

impl Curve {
    /// A curve of computed points, e.g. a model's or a family's of
    /// [`crate::analysis::StudyAnalysis`].
    pub fn new(label: &str, points: &[ForgettingPoint]) -> Curve {
        Curve {
            label: label.to_string(),
            points: points.to_vec(),
        }
    }

    /// A model's curve over its seeds ([`forgetting_over_seeds`]).
    pub fn from_matrix(label: &str, matrix: &DriftMatrix) -> Curve {
        Curve {
            label: label.to_string(),
            points: forgetting_over_seeds(matrix),
        }
    }

    /// The curve of one grid ([`forgetting_curve`]), without std.
    pub fn from_grid(label: &str, grid: &Grid) -> Curve {
        Curve {
            label: label.to_string(),
            points: forgetting_curve(grid)
                .into_iter()
                .map(|(lag, mean)| ForgettingPoint {
                    lag,
                    mean,
                    std: None,
                })
                .collect(),
        }
    }
}

/// Options of a forgetting-curve figure.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CurveOptions {
    /// A title above the plot, or none.
    pub title: Option<String>,
    /// The y axis title, e.g. "accuracy ×100".
    pub y_label: String,
    /// Whether to shade mean ± std where the std is known.
    pub std_band: bool,
}

impl CurveOptions {
    /// Forgetting curves of `metric`, with the std band.
    pub fn forgetting(metric: Metric, title: Option<String>) -> Self {
        CurveOptions {
            title,
            y_label: metric.display_unit(),
            std_band: true,
        }
    }
}

const PLOT_W: u32 = 240;
const PLOT_H: u32 = 230;

/// The forgetting curves as an SVG document.
pub fn forgetting_curves(curves: &[Curve], opts: &CurveOptions) -> Result<String> {
    let points = curves.iter().flat_map(|c| c.points.iter());
    let (mut lo, mut hi, mut max_lag) = (f64::INFINITY, f64::NEG_INFINITY, 0usize);
    for p in points {
        let s = if opts.std_band {
            p.std.unwrap_or(0.0)
        } else {
            0.0
        };
        lo = lo.min(p.mean - s);
        hi = hi.max(p.mean + s);
        max_lag = max_lag.max(p.lag);
    }
    if !lo.is_finite() {
        return Err(Error::Invalid(
            "figure: forgetting curves without points".into(),
        ));
    }
    let pad = ((hi - lo) * 0.05).max(1e-9);
    let (lo, hi) = (lo - pad, hi + pad);
    let x_hi = (max_lag as f64).max(1.0);
    super::fonts::register()?;
    let legend_w = {
        let mut scratch = String::new();
        let area = SVGBackend::with_string(&mut scratch, (10, 10)).into_drawing_area();
        let s = style(TICK_PX, HPos::Left, VPos::Center, false);
        let mut w = 0;
        for c in curves {
            w = w.max(width(&area, &c.label, &s)?);
        }
        w + 44
    };
    let rows = curves.len() as u32;
    let h = (PLOT_H + 60).max(rows * 16 + 50);
    render((PLOT_W + legend_w as u32, h), |root| {
        let (plot, legend) = root.split_horizontally(PLOT_W);
        let mut builder = ChartBuilder::on(&plot);
        builder
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56);
        if let Some(title) = &opts.title {
            builder.caption(title, (super::fonts::FAMILY, TITLE_PX));
        }
        let mut chart = builder.build_cartesian_2d(0.0..x_hi, lo..hi).map_err(err)?;
        let (xt, _) = nice_ticks(0.0, x_hi, 8);
        let (_, yd) = nice_ticks(lo, hi, 6);
        let label_font = (super::fonts::FAMILY, TICK_PX).into_font();
        let axis_font = (super::fonts::FAMILY, AXIS_PX).into_font();
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(xt.len().max(2))
            .y_labels(6)
            .x_label_formatter(&|v| number(*v, 0))
            .y_label_formatter(&|v| number(*v, yd))
            .label_style(label_font)
            .axis_desc_style(axis_font)
            .x_desc("lag (slices after the training cutoff)")
            .y_desc(opts.y_label.as_str())
            .draw()
            .map_err(err)?;
        for (n, c) in curves.iter().enumerate() {
            let color = rgb(TAB10[n % TAB10.len()]);
            if opts.std_band && c.points.iter().any(|p| p.std.is_some()) {
                let upper = c
                    .points
                    .iter()
                    .map(|p| (p.lag as f64, p.mean + p.std.unwrap_or(0.0)));
                let lower = c
                    .points
                    .iter()
                    .rev()
                    .map(|p| (p.lag as f64, p.mean - p.std.unwrap_or(0.0)));
                let band: Vec<(f64, f64)> = upper.chain(lower).collect();
                chart
                    .draw_series(std::iter::once(Polygon::new(
                        band,
                        color.mix(0.15).filled(),
                    )))
                    .map_err(err)?;
            }
            let line: Vec<(f64, f64)> = c.points.iter().map(|p| (p.lag as f64, p.mean)).collect();
            chart
                .draw_series(std::iter::once(PathElement::new(
                    line.clone(),
                    color.stroke_width(2),
                )))
                .map_err(err)?;
            match (n / TAB10.len()) % 3 {
                1 => {
                    chart
                        .draw_series(line.iter().map(|&p| Circle::new(p, 3, color.filled())))
                        .map_err(err)?;
                }
                2 => {
                    chart
                        .draw_series(
                            line.iter()
                                .map(|&p| TriangleMarker::new(p, 4, color.filled())),
                        )
                        .map_err(err)?;
                }
                _ => {}
            }
        }
        let font = style(TICK_PX, HPos::Left, VPos::Center, false);
        for (n, c) in curves.iter().enumerate() {
            let color = rgb(TAB10[n % TAB10.len()]);
            legend_entry(
                &legend,
                30 + 16 * n as i32,
                color,
                (&c.label, &font),
                |area, at| {
                    match (n / TAB10.len()) % 3 {
                        1 => area.draw(&Circle::new(at, 3, color.filled())),
                        2 => area.draw(&TriangleMarker::new(at, 4, color.filled())),
                        _ => Ok(()),
                    }
                    .map_err(err)
                },
            )?;
        }
        Ok(String::new())
    })
}
