//! Retraining policies: the mean score a deployment sees against how often it retrained
//! ([`crate::analysis::simulate`]), one colour per model; the scheduled policies (never,
//! every k slices) as circles joined in order of their retrains, the policies that retrain
//! on a drop as triangles.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::colors::TAB10;
use super::heatmap::{AXIS_PX, TICK_PX};
use super::style::{legend_entry, rgb, style, text, width};
use super::svg::{err, render};
use super::ticks::{nice_ticks, number};
use crate::analysis::{Deployment, Policy};
use crate::{Error, Result};

/// One model's simulated deployments.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicySeries {
    /// The legend entry.
    pub label: String,
    /// Its deployments, the mean already on the display scale.
    pub deployments: Vec<Deployment>,
}

const PLOT_W: u32 = 480;
/// The legend's key to the two marker shapes.
const SCHEDULED: &str = "every k slices, or never";
const ON_DROP: &str = "retrain on a drop";
const PLOT_H: u32 = 230;

/// The policies of every series as an SVG document, `y_label` naming the score.
pub fn retraining(series: &[PolicySeries], y_label: &str) -> Result<String> {
    let points = |s: &PolicySeries, scheduled: bool| -> Vec<(f64, f64)> {
        let mut out: Vec<(f64, f64)> = s
            .deployments
            .iter()
            .filter(|d| matches!(d.policy, Policy::OnDrop { .. }) != scheduled)
            .filter_map(|d| Some((d.retrains as f64, d.mean?)))
            .collect();
        out.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        out
    };
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| points(s, true).into_iter().chain(points(s, false)))
        .collect();
    if all.is_empty() {
        return Err(Error::Invalid("figure: retraining without scores".into()));
    }
    let (lo, hi) = all
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| {
            (l.min(p.1), h.max(p.1))
        });
    let pad = ((hi - lo) * 0.08).max(1e-9);
    let (lo, hi) = (lo - pad, hi + pad);
    let x_hi = all.iter().map(|p| p.0).fold(1.0, f64::max) + 0.5;
    super::fonts::register()?;
    let legend_w = {
        let mut scratch = String::new();
        let area = SVGBackend::with_string(&mut scratch, (10, 10)).into_drawing_area();
        let s = style(TICK_PX, HPos::Left, VPos::Center, false);
        let mut w = 0;
        for key in [SCHEDULED, ON_DROP] {
            w = w.max(width(&area, key, &s)?);
        }
        for c in series {
            w = w.max(width(&area, &c.label, &s)?);
        }
        w + 44
    };
    let rows = series.len() as u32 + 3;
    let h = (PLOT_H + 60).max(rows * 16 + 50);
    render((PLOT_W + legend_w as u32, h), |root| {
        let (plot, legend) = root.split_horizontally(PLOT_W);
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(-0.5..x_hi, lo..hi)
            .map_err(err)?;
        let (xt, _) = nice_ticks(0.0, x_hi, 8);
        let (_, yd) = nice_ticks(lo, hi, 6);
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(xt.len().max(2))
            .y_labels(6)
            .x_label_formatter(&|v| number(*v, 0))
            .y_label_formatter(&|v| number(*v, yd))
            .label_style((super::fonts::FAMILY, TICK_PX).into_font())
            .axis_desc_style((super::fonts::FAMILY, AXIS_PX).into_font())
            .x_desc("retrains after the first training")
            .y_desc(y_label)
            .draw()
            .map_err(err)?;
        for (n, s) in series.iter().enumerate() {
            let color = rgb(TAB10[n % TAB10.len()]);
            let scheduled = points(s, true);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    scheduled.clone(),
                    color.stroke_width(2),
                )))
                .map_err(err)?;
            chart
                .draw_series(scheduled.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(err)?;
            chart
                .draw_series(
                    points(s, false)
                        .into_iter()
                        .map(|p| TriangleMarker::new(p, 5, color.stroke_width(1))),
                )
                .map_err(err)?;
        }
        let font = style(TICK_PX, HPos::Left, VPos::Center, false);
        for (n, c) in series.iter().enumerate() {
            let color = rgb(TAB10[n % TAB10.len()]);
            legend_entry(
                &legend,
                30 + 16 * n as i32,
                color,
                (&c.label, &font),
                |_, _| Ok(()),
            )?;
        }
        let s = style(TICK_PX, HPos::Left, VPos::Center, false);
        let grey = RGBColor(90, 90, 90);
        let y = 30 + 16 * (series.len() as i32 + 1);
        legend
            .draw(&Circle::new((16, y), 3, grey.filled()))
            .map_err(err)?;
        text(&legend, SCHEDULED, (34, y), &s)?;
        legend
            .draw(&TriangleMarker::new((16, y + 16), 5, grey.stroke_width(1)))
            .map_err(err)?;
        text(&legend, ON_DROP, (34, y + 16), &s)?;
        Ok(String::new())
    })
}
