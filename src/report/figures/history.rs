//! A run's training history ([`crate::artifacts::CutoffHistory`]): the mean training loss
//! and the gradient norm before clipping, epoch by epoch, one line per cutoff, side by side.
//! A collapsed checkpoint shows as a loss that stays flat.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::colors::TAB10;
use super::heatmap::{AXIS_PX, TICK_PX};
use super::style::{legend_entry, rgb, style, width};
use super::svg::{err, render};
use super::ticks::{nice_ticks, number};
use crate::artifacts::CutoffHistory;
use crate::{Error, Result};

const PLOT_W: u32 = 290;
const PLOT_H: u32 = 230;

/// The history of one run as an SVG document: loss (left) and gradient norm (right)
/// against the epoch, one colour per cutoff with a model.
pub fn training_history(history: &[CutoffHistory]) -> Result<String> {
    let trained: Vec<&CutoffHistory> = history.iter().filter(|c| !c.epochs.is_empty()).collect();
    if trained.is_empty() {
        return Err(Error::Invalid("figure: a history without epochs".into()));
    }
    let epochs = trained.iter().map(|c| c.epochs.len()).max().unwrap_or(1) as f64;
    super::fonts::register()?;
    let legend_w = {
        let mut scratch = String::new();
        let area = SVGBackend::with_string(&mut scratch, (10, 10)).into_drawing_area();
        let s = style(TICK_PX, HPos::Left, VPos::Center, false);
        let mut w = 0;
        for c in &trained {
            w = w.max(width(&area, &c.cutoff, &s)?);
        }
        w + 44
    };
    let h = (PLOT_H + 50).max(trained.len() as u32 * 16 + 50);
    render((2 * PLOT_W + legend_w as u32, h), |root| {
        let (plots, legend) = root.split_horizontally(2 * PLOT_W);
        let (left, right) = plots.split_horizontally(PLOT_W);
        for (area, name, value) in [
            (
                &left,
                "mean training loss",
                (|e| e.loss) as fn(&crate::train::Epoch) -> f64,
            ),
            (&right, "gradient norm before clipping", |e| e.grad_norm),
        ] {
            let values: Vec<f64> = trained
                .iter()
                .flat_map(|c| c.epochs.iter().map(value))
                .collect();
            let lo = values
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min)
                .min(0.0);
            let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let hi = hi + ((hi - lo) * 0.05).max(1e-9);
            let mut chart = ChartBuilder::on(area)
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(52)
                .build_cartesian_2d(0.5..epochs + 0.5, lo..hi)
                .map_err(err)?;
            let (xt, _) = nice_ticks(1.0, epochs, 6);
            let (_, yd) = nice_ticks(lo, hi, 5);
            chart
                .configure_mesh()
                .disable_mesh()
                .x_labels(xt.len().max(2))
                .y_labels(5)
                .x_label_formatter(&|v| number(*v, 0))
                .y_label_formatter(&|v| number(*v, yd))
                .label_style((super::fonts::FAMILY, TICK_PX).into_font())
                .axis_desc_style((super::fonts::FAMILY, AXIS_PX).into_font())
                .x_desc("epoch")
                .y_desc(name)
                .draw()
                .map_err(err)?;
            for (n, c) in trained.iter().enumerate() {
                let color = rgb(TAB10[n % TAB10.len()]);
                let points: Vec<(f64, f64)> = c
                    .epochs
                    .iter()
                    .map(|e| (e.epoch as f64, value(e)))
                    .collect();
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        points.clone(),
                        color.stroke_width(2),
                    )))
                    .map_err(err)?;
                chart
                    .draw_series(points.iter().map(|&p| Circle::new(p, 2, color.filled())))
                    .map_err(err)?;
            }
        }
        let font = style(TICK_PX, HPos::Left, VPos::Center, false);
        for (n, c) in trained.iter().enumerate() {
            let color = rgb(TAB10[n % TAB10.len()]);
            legend_entry(
                &legend,
                24 + 16 * n as i32,
                color,
                (&c.cutoff, &font),
                |_, _| Ok(()),
            )?;
        }
        Ok(String::new())
    })
}
