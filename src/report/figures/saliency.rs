//! Saliency maps as a grid of small images: one row per model, one column per (cutoff,
//! evaluation slice), values in `[0, 1]` on the sequential map with one shared colour bar
//! (protocol.md §6: where the decision rests, and how that moves as the cutoff moves).
//!
//! Each map pixel is one `<rect>`, scaled to an integer number of pixels so that the
//! images stay sharp in the PDF; a (row, column) without a map is drawn light grey.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::colors::{EMPTY, sequential};
use super::heatmap::{TICK_PX, colorbar_width, draw_colorbar};
use super::scale::Scale;
use super::style::{rgb, style, text, width};
use super::svg::{err, render};
use crate::metrics::Direction;
use crate::{Error, Result};

/// The side of one map image, in pixels (rounded down to a multiple of the map's width).
pub const IMAGE_SIDE: i32 = 128;

/// The maps of a saliency figure.
#[derive(Clone, Debug, PartialEq)]
pub struct SaliencyGrid<'a> {
    /// Row labels (the models), top to bottom.
    pub rows: Vec<String>,
    /// Column labels (e.g. "through 1940s, on 2010s"), left to right.
    pub columns: Vec<String>,
    /// `maps[r][c]`: `height` rows of `width` values in `[0, 1]`, or none.
    pub maps: Vec<Vec<Option<&'a [Vec<f64>]>>>,
    /// The colour bar's title.
    pub value_label: String,
}

/// The grid as an SVG document.
pub fn saliency_grid(grid: &SaliencyGrid) -> Result<String> {
    let fail = |m: &str| Err(Error::Invalid(format!("figure: saliency: {m}")));
    if grid.rows.is_empty() || grid.columns.is_empty() {
        return fail("no maps");
    }
    if grid.maps.len() != grid.rows.len() || grid.maps.iter().any(|r| r.len() != grid.columns.len())
    {
        return fail("the maps do not match the row and column labels");
    }
    let present: Vec<&[Vec<f64>]> = grid.maps.iter().flatten().flatten().copied().collect();
    let Some(first) = present.first() else {
        return fail("no maps");
    };
    let (h, w) = (first.len(), first.first().map_or(0, Vec::len));
    if h == 0 || w == 0 {
        return fail("an empty map");
    }
    for m in &present {
        if m.len() != h || m.iter().any(|r| r.len() != w) {
            return fail("maps of different sizes");
        }
        if m.iter().flatten().any(|v| !(0.0..=1.0).contains(v)) {
            return fail("a value outside [0, 1]");
        }
    }
    let px = (IMAGE_SIDE / h.max(w) as i32).max(1);
    let (img_w, img_h) = (px * w as i32, px * h as i32);

    super::fonts::register()?;
    let row_style = style(TICK_PX, HPos::Right, VPos::Center, false);
    let col_style = style(TICK_PX, HPos::Center, VPos::Center, false);
    let (left, col_w) = {
        let mut scratch = String::new();
        let area = SVGBackend::with_string(&mut scratch, (10, 10)).into_drawing_area();
        let mut left = 0;
        for r in &grid.rows {
            left = left.max(width(&area, r, &row_style)?);
        }
        let mut col_w = img_w;
        for c in &grid.columns {
            col_w = col_w.max(width(&area, c, &col_style)? + 8);
        }
        (left + 12, col_w)
    };
    let top = 28;
    let gap = 10;
    let scale = Scale::Sequential { lo: 0.0, hi: 1.0 };
    let bar = colorbar_width(&scale)?;
    let body_w = grid.columns.len() as i32 * (col_w + gap);
    let body_h = grid.rows.len() as i32 * (img_h + gap) - gap;
    let size = ((left + body_w + bar) as u32, (top + body_h + 12) as u32);
    render(size, |root| {
        for (c, label) in grid.columns.iter().enumerate() {
            let x = left + c as i32 * (col_w + gap) + col_w / 2;
            text(root, label, (x, top / 2), &col_style)?;
        }
        for (r, label) in grid.rows.iter().enumerate() {
            let y0 = top + r as i32 * (img_h + gap);
            text(root, label, (left - 8, y0 + img_h / 2), &row_style)?;
            for (c, map) in grid.maps[r].iter().enumerate() {
                let x0 = left + c as i32 * (col_w + gap) + (col_w - img_w) / 2;
                match map {
                    Some(values) => {
                        // Pixels reach one pixel under the next ones, as heatmap cells do.
                        for (y, row) in values.iter().enumerate() {
                            let down = i32::from(y + 1 < h);
                            for (x, &v) in row.iter().enumerate() {
                                let right = i32::from(x + 1 < w);
                                let (xa, ya) = (x0 + x as i32 * px, y0 + y as i32 * px);
                                root.draw(&Rectangle::new(
                                    [(xa, ya), (xa + px + right, ya + px + down)],
                                    rgb(sequential(v)).filled(),
                                ))
                                .map_err(err)?;
                            }
                        }
                    }
                    None => root
                        .draw(&Rectangle::new(
                            [(x0, y0), (x0 + img_w, y0 + img_h)],
                            rgb(EMPTY).filled(),
                        ))
                        .map_err(err)
                        .map(|_| ())?,
                }
                root.draw(&Rectangle::new(
                    [(x0, y0), (x0 + img_w, y0 + img_h)],
                    BLACK.stroke_width(1),
                ))
                .map_err(err)?;
            }
        }
        let bar_h = body_h.min(2 * img_h + gap);
        draw_colorbar(
            root,
            (left + body_w + 6, top),
            bar_h,
            scale,
            Direction::HigherIsBetter,
            &grid.value_label,
        )?;
        Ok(String::new())
    })
}
