//! The label-free detectors of a study ([`crate::analysis::DetectorStudy`]):
//!
//! - [`estimates`]: each accuracy estimate against the true accuracy of its cell, one
//!   colour per estimator, with the line `y = x` (dashed) where an estimate is exact;
//! - [`trigger_curves`]: each detector replayed as a retraining trigger over its
//!   thresholds (retrains against the mean deployed score), one panel per model (rows) and
//!   kind of detector (columns), with the standard policies replayed on the same grids as
//!   grey markers (circles: never and every k slices, joined in order of their retrains;
//!   triangles: retrain on a drop).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::colors::TAB10;
use super::heatmap::{AXIS_PX, TICK_PX, TITLE_PX};
use super::style::{rgb, style, text, width};
use super::svg::{Area, err, render};
use super::ticks::{nice_ticks, number};
use crate::{Error, Result};

/// The series' colours: [`TAB10`] without its grey, which the schedules use.
const COLORS: [usize; 9] = [0, 1, 2, 3, 4, 5, 6, 8, 9];
/// The grey of the schedules' markers.
const GREY: RGBColor = RGBColor(90, 90, 90);
const SCHEDULED: &str = "never, every k slices";
const ON_DROP: &str = "retrain on a drop";

fn color(n: usize) -> RGBColor {
    rgb(TAB10[COLORS[n % COLORS.len()]])
}

/// One estimator's cells: `(true, estimated)` on the display scale.
#[derive(Clone, Debug, PartialEq)]
pub struct EstimateSeries {
    /// The legend entry.
    pub label: String,
    /// Its points.
    pub points: Vec<(f64, f64)>,
}

/// `(lo, hi)` of `values` padded by 5% of the range (at least `1e-9`).
fn padded(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
        (l.min(v), h.max(v))
    });
    if !lo.is_finite() || !hi.is_finite() {
        return None;
    }
    let pad = ((hi - lo) * 0.05).max(1e-9);
    Some((lo - pad, hi + pad))
}

/// The widest of `labels` in tick-sized text.
fn widest<'a>(labels: impl Iterator<Item = &'a str>) -> Result<i32> {
    let mut scratch = String::new();
    let area = SVGBackend::with_string(&mut scratch, (10, 10)).into_drawing_area();
    let s = style(TICK_PX, HPos::Left, VPos::Center, false);
    let mut w = 0;
    for label in labels {
        w = w.max(width(&area, label, &s)?);
    }
    Ok(w)
}

const EST_SIDE: u32 = 300;

/// The estimates against the truth, both axes on one range, `unit` naming the axes'
/// scale (e.g. `accuracy ×100`).
pub fn estimates(series: &[EstimateSeries], unit: &str) -> Result<String> {
    let all = series.iter().flat_map(|s| &s.points);
    let Some((lo, hi)) = padded(all.flat_map(|p| [p.0, p.1])) else {
        return Err(Error::Invalid(
            "figure: accuracy estimates without points".into(),
        ));
    };
    super::fonts::register()?;
    let legend_w = widest(series.iter().map(|s| s.label.as_str()))? + 52;
    let size = (EST_SIDE + legend_w as u32, EST_SIDE + 10);
    render(size, |root| {
        let (plot, legend) = root.split_horizontally(EST_SIDE);
        let mut chart = ChartBuilder::on(&plot)
            .margin(10)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d(lo..hi, lo..hi)
            .map_err(err)?;
        let (_, d) = nice_ticks(lo, hi, 6);
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(6)
            .y_labels(6)
            .x_label_formatter(&|v| number(*v, d))
            .y_label_formatter(&|v| number(*v, d))
            .label_style((super::fonts::FAMILY, TICK_PX).into_font())
            .axis_desc_style((super::fonts::FAMILY, AXIS_PX).into_font())
            .x_desc(format!("true {unit}"))
            .y_desc(format!("estimated {unit}"))
            .draw()
            .map_err(err)?;
        for (n, s) in series.iter().enumerate() {
            let c = color(n);
            chart
                .draw_series(
                    s.points
                        .iter()
                        .map(|&p| Circle::new(p, 3, c.mix(0.7).filled())),
                )
                .map_err(err)?;
        }
        let ((x0, y0), (x1, y1)) = (
            chart.backend_coord(&(lo, lo)),
            chart.backend_coord(&(hi, hi)),
        );
        let s = style(TICK_PX, HPos::Left, VPos::Center, false);
        for (n, c) in series.iter().enumerate() {
            let y = 30 + 18 * n as i32;
            legend
                .draw(&Circle::new((14, y), 4, color(n).filled()))
                .map_err(err)?;
            text(&legend, &c.label, (28, y), &s)?;
        }
        let y = 30 + 18 * series.len() as i32;
        text(&legend, "y = x", (28, y), &s)?;
        let line = |(x0, y0): (i32, i32), (x1, y1): (i32, i32)| {
            format!(
                "<line x1=\"{x0}\" y1=\"{y0}\" x2=\"{x1}\" y2=\"{y1}\" stroke=\"#000000\" \
                 stroke-opacity=\"0.6\" stroke-width=\"1\" stroke-dasharray=\"4 3\"/>\n"
            )
        };
        let key = EST_SIDE as i32;
        Ok(line((x0, y0), (x1, y1)) + &line((key + 4, y), (key + 24, y)))
    })
}

/// How one detector's curve is drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct TriggerKey {
    /// The legend entry.
    pub label: String,
    /// Its colour, an index into the figure's palette (a statistic and its p-value share
    /// one).
    pub color: usize,
    /// Dashed (a p-value) rather than solid.
    pub dashed: bool,
}

/// A column of [`TriggerFigure`]: one kind of detector.
#[derive(Clone, Debug, PartialEq)]
pub struct TriggerColumn {
    /// Shown above the column.
    pub title: String,
    /// Its detectors, in legend order.
    pub detectors: Vec<TriggerKey>,
}

/// A row of [`TriggerFigure`]: one model.
#[derive(Clone, Debug, PartialEq)]
pub struct TriggerRow {
    /// Shown above the row.
    pub title: String,
    /// Per column, per detector of it: `(retrains, mean)` at each threshold, on the
    /// display scale, in threshold order (empty where the model has no such detector).
    pub curves: Vec<Vec<Vec<(f64, f64)>>>,
    /// The scheduled policies' `(retrains, mean)`.
    pub scheduled: Vec<(f64, f64)>,
    /// The policies that retrain on a drop.
    pub on_drop: Vec<(f64, f64)>,
}

/// The trigger curves of every model and kind of detector.
#[derive(Clone, Debug, PartialEq)]
pub struct TriggerFigure {
    /// The kinds of detector.
    pub columns: Vec<TriggerColumn>,
    /// The models.
    pub rows: Vec<TriggerRow>,
    /// Names the y axis (the mean deployed score), one line each, left to right.
    pub y_label: Vec<String>,
}

/// The panels' height, unless the figure would not fit a page.
const PANEL_H: i32 = 170;
/// The tallest the figure gets: 644 pt printed, a page's text height less a caption's.
const MAX_HEIGHT_PX: i32 = 920;
const ROW_HEAD: i32 = 24;
const LEFT: i32 = 44;
const LEGEND_ROW: i32 = 17;

/// The trigger curves as an SVG document: panels in rows (models) and columns (kinds),
/// one y range per row, one x range for all.
pub fn trigger_curves(figure: &TriggerFigure) -> Result<String> {
    let (cols, rows) = (figure.columns.len(), figure.rows.len());
    if cols == 0 || rows == 0 || figure.rows.iter().any(|r| r.curves.len() != cols) {
        return Err(Error::Invalid(
            "figure: trigger curves without panels".into(),
        ));
    }
    let points = |r: &TriggerRow| -> Vec<(f64, f64)> {
        let curves = r.curves.iter().flatten().flatten();
        curves
            .chain(&r.scheduled)
            .chain(&r.on_drop)
            .copied()
            .collect()
    };
    let x_hi = figure
        .rows
        .iter()
        .flat_map(|r| points(r).into_iter().map(|p| p.0))
        .fold(1.0, f64::max)
        + 0.5;
    super::fonts::register()?;
    let panel_w = (super::MAX_WIDTH_PX - LEFT) / cols as i32;
    let head = 26;
    let legend_h = (legend_lines(figure) + 1) * LEGEND_ROW + 12;
    // Many models (a study of ten) share the page's height: flatter panels, not a figure
    // that runs off the page.
    let panel_h = PANEL_H.min((MAX_HEIGHT_PX - head - 30 - legend_h) / rows as i32 - ROW_HEAD);
    let legend_top = head + rows as i32 * (ROW_HEAD + panel_h) + 30;
    let height = legend_top + legend_h;
    let size = (super::MAX_WIDTH_PX as u32, height as u32);
    render(size, |root| {
        let title = style(AXIS_PX, HPos::Center, VPos::Center, false);
        for (c, column) in figure.columns.iter().enumerate() {
            let x = LEFT + c as i32 * panel_w + panel_w / 2;
            text(root, &column.title, (x, head / 2 + 2), &title)?;
        }
        let upward = style(AXIS_PX, HPos::Center, VPos::Center, true);
        let plots_h = rows as i32 * (ROW_HEAD + panel_h);
        for (n, line) in figure.y_label.iter().enumerate() {
            text(
                root,
                line,
                (10 + 18 * n as i32, head + plots_h / 2),
                &upward,
            )?;
        }
        let mut raw = String::new();
        let row_title = style(TITLE_PX - 3.0, HPos::Left, VPos::Center, false);
        for (r, row) in figure.rows.iter().enumerate() {
            let top = head + r as i32 * (ROW_HEAD + panel_h);
            text(
                root,
                &row.title,
                (LEFT + 4, top + ROW_HEAD / 2 + 2),
                &row_title,
            )?;
            let Some((lo, hi)) = padded(points(row).into_iter().map(|p| p.1)) else {
                continue;
            };
            for c in 0..cols {
                let area = root.clone().shrink(
                    (LEFT + c as i32 * panel_w, top + ROW_HEAD),
                    (panel_w as u32, panel_h as u32),
                );
                raw += &panel(&area, row, &figure.columns[c], c, (x_hi, lo, hi))?;
            }
        }
        let x_label = style(AXIS_PX, HPos::Center, VPos::Center, false);
        let x_mid = LEFT + (cols as i32 * panel_w) / 2;
        text(
            root,
            "retrains after the first training",
            (x_mid, legend_top - 16),
            &x_label,
        )?;
        Ok(raw + &legend(root, figure, panel_w, legend_top)?)
    })
}

/// A dashed polyline through `points` (pixels) in `color`, as raw SVG (plotters draws
/// dashes as separate segments).
fn dashed(points: &[(i32, i32)], color: RGBColor) -> String {
    let points: Vec<String> = points.iter().map(|(x, y)| format!("{x},{y}")).collect();
    format!(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"#{:02X}{:02X}{:02X}\" \
         stroke-width=\"2\" stroke-dasharray=\"5 3\"/>\n",
        points.join(" "),
        color.0,
        color.1,
        color.2
    )
}

/// Column `c` (`column`) of `row` on `area`; `(x_hi, lo, hi)` the axes' ranges. Returns
/// the dashed curves as raw SVG.
fn panel(
    area: &Area,
    row: &TriggerRow,
    column: &TriggerColumn,
    c: usize,
    (x_hi, lo, hi): (f64, f64, f64),
) -> Result<String> {
    let mut chart = ChartBuilder::on(area)
        .margin_right(10)
        .margin_top(4)
        .x_label_area_size(24)
        .y_label_area_size(40)
        .build_cartesian_2d(-0.5..x_hi, lo..hi)
        .map_err(err)?;
    let (xt, _) = nice_ticks(0.0, x_hi, 6);
    // A flat panel (a study of many models) gets fewer labels, which would overlap.
    let y_count = if area.dim_in_pixel().1 < 100 { 2 } else { 5 };
    let (_, yd) = nice_ticks(lo, hi, y_count);
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(xt.len().max(2))
        .y_labels(y_count)
        .x_label_formatter(&|v| number(*v, 0))
        .y_label_formatter(&|v| number(*v, yd))
        .label_style((super::fonts::FAMILY, TICK_PX).into_font())
        .draw()
        .map_err(err)?;
    let mut scheduled = row.scheduled.clone();
    scheduled.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    chart
        .draw_series(std::iter::once(PathElement::new(
            scheduled.clone(),
            GREY.mix(0.6).stroke_width(1),
        )))
        .map_err(err)?;
    chart
        .draw_series(scheduled.iter().map(|&p| Circle::new(p, 3, GREY.filled())))
        .map_err(err)?;
    chart
        .draw_series(
            row.on_drop
                .iter()
                .map(|&p| TriangleMarker::new(p, 4, GREY.stroke_width(1))),
        )
        .map_err(err)?;
    let mut raw = String::new();
    for (key, curve) in column.detectors.iter().zip(&row.curves[c]) {
        let stroke = color(key.color);
        if key.dashed {
            let pixels: Vec<(i32, i32)> = curve.iter().map(|p| chart.backend_coord(p)).collect();
            raw += &dashed(&pixels, stroke);
        } else {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    curve.clone(),
                    stroke.stroke_width(2),
                )))
                .map_err(err)?;
        }
        chart
            .draw_series(curve.iter().map(|&p| Circle::new(p, 2, stroke.filled())))
            .map_err(err)?;
    }
    Ok(raw)
}

/// The lines of the legend's detectors: one per colour.
fn legend_lines(figure: &TriggerFigure) -> i32 {
    let colors = figure
        .columns
        .iter()
        .flat_map(|c| &c.detectors)
        .map(|k| k.color + 1);
    colors.max().unwrap_or(0) as i32
}

/// Each column's detectors under it (one line per colour, a dashed key right of the solid
/// one), then the key to the grey markers.
fn legend(root: &Area, figure: &TriggerFigure, panel_w: i32, top: i32) -> Result<String> {
    let s = style(TICK_PX, HPos::Left, VPos::Center, false);
    let mut raw = String::new();
    for (c, column) in figure.columns.iter().enumerate() {
        let x = LEFT + c as i32 * panel_w + 40;
        // A statistic on its colour's line, its p-value right of it.
        for key in &column.detectors {
            let y = top + key.color as i32 * LEGEND_ROW;
            let x = if key.dashed { x + panel_w / 2 - 10 } else { x };
            let line = vec![(x, y), (x + 20, y)];
            if key.dashed {
                raw += &dashed(&line, color(key.color));
            } else {
                root.draw(&PathElement::new(line, color(key.color).stroke_width(2)))
                    .map_err(err)?;
            }
            text(root, &key.label, (x + 26, y), &s)?;
        }
    }
    let y = top + legend_lines(figure) * LEGEND_ROW + 4;
    let x = LEFT + 40;
    root.draw(&Circle::new((x + 10, y), 3, GREY.filled()))
        .map_err(err)?;
    text(root, SCHEDULED, (x + 26, y), &s)?;
    let x2 = x + 26 + widest(std::iter::once(SCHEDULED))? + 30;
    root.draw(&TriangleMarker::new((x2 + 10, y), 4, GREY.stroke_width(1)))
        .map_err(err)?;
    text(root, ON_DROP, (x2 + 26, y), &s)?;
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(label: &str, color: usize, dashed: bool) -> TriggerKey {
        TriggerKey {
            label: label.into(),
            color,
            dashed,
        }
    }

    fn figure() -> TriggerFigure {
        let curve = |y: f64| vec![(5.0, y + 2.0), (3.0, y + 1.0), (0.0, y)];
        TriggerFigure {
            columns: vec![
                TriggerColumn {
                    title: "representation".into(),
                    detectors: vec![key("mmd", 0, false), key("mmd_p", 0, true)],
                },
                TriggerColumn {
                    title: "estimate".into(),
                    detectors: vec![key("atc", 0, false)],
                },
            ],
            rows: vec![TriggerRow {
                title: "linear".into(),
                curves: vec![vec![curve(60.0), curve(61.0)], vec![curve(62.0)]],
                scheduled: vec![(0.0, 58.0), (5.0, 66.0), (2.0, 63.0)],
                on_drop: vec![(4.0, 65.0)],
            }],
            y_label: vec!["mean deployed".into(), "accuracy ×100".into()],
        }
    }

    #[test]
    fn trigger_curves_draw_every_panel_and_marker_and_repeat_their_bytes() {
        let f = figure();
        let svg = trigger_curves(&f).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        for label in [
            "representation",
            "estimate",
            "linear",
            "mmd_p",
            "atc",
            ON_DROP,
        ] {
            assert!(svg.contains(label), "{label}");
        }
        // Per panel: 3 schedule circles; per curve: 3 threshold dots; 1 legend circle.
        assert_eq!(svg.matches("<circle").count(), 2 * 3 + 3 * 3 + 1);
        // mmd_p's curve and its legend line are dashed.
        assert_eq!(svg.matches("stroke-dasharray=\"5 3\"").count(), 2);
        assert_eq!(svg, trigger_curves(&f).unwrap());
        let mut bad = f.clone();
        bad.rows[0].curves.pop();
        assert!(trigger_curves(&bad).is_err());
    }

    #[test]
    fn estimates_draw_one_dot_per_cell_and_the_diagonal() {
        let series = vec![
            EstimateSeries {
                label: "average confidence".into(),
                points: vec![(80.0, 85.0), (60.0, 70.0)],
            },
            EstimateSeries {
                label: "ATC".into(),
                points: vec![(80.0, 79.0)],
            },
        ];
        let svg = estimates(&series, "accuracy ×100").unwrap();
        // 3 cells and 2 legend dots.
        assert_eq!(svg.matches("<circle").count(), 5);
        // The diagonal and its key.
        assert_eq!(svg.matches("stroke-dasharray=\"4 3\"").count(), 2);
        assert!(svg.contains("estimated accuracy ×100"));
        assert!(estimates(&[], "accuracy").is_err());
    }
}
