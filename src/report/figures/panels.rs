//! Several matrices in rows with one shared colour bar: the cohort means of a group of
//! studies that share a metric (protocol.md §6). Each panel keeps its own slice labels and
//! a title; the axis titles are drawn on the first panel of each row.

use plotters::style::text_anchor::{HPos, VPos};

use super::heatmap::{
    HeatmapOptions, TITLE_PX, check, colorbar_width, draw_colorbar, draw_matrix, probe_layout,
};
use super::scale::Scale;
use super::style::{style, text};
use super::svg::render;
use crate::matrix::Grid;
use crate::{Error, Result};

/// Side of each panel's matrix, in pixels.
pub const PANEL_SIDE: i32 = 110;

/// The most panels in one row (a fourth starts the next row).
pub const PER_ROW: usize = 3;

/// One panel: a title (e.g. the study), its matrix and its slice labels.
#[derive(Clone, Copy, Debug)]
pub struct Panel<'a> {
    /// Shown above the matrix.
    pub title: &'a str,
    /// The matrix.
    pub grid: &'a Grid,
    /// One label per slice, oldest first.
    pub labels: &'a [String],
}

/// The panels in rows of at most [`PER_ROW`], left to right, with one colour bar for
/// `scale` right of the first row; `opts.title` goes above all. Every panel must show the
/// same metric, so that one bar reads them all.
pub fn panels(panels: &[Panel], scale: Scale, opts: &HeatmapOptions) -> Result<String> {
    if panels.is_empty() {
        return Err(Error::Invalid("figure: no panels".into()));
    }
    let mut layouts = Vec::new();
    for p in panels {
        check(p.grid, p.labels)?;
        layouts.push(probe_layout(p.grid.k(), p.labels, PANEL_SIDE)?);
    }
    let head = if opts.title.is_some() { 30 } else { 0 };
    let rows: Vec<&[_]> = layouts.chunks(PER_ROW).collect();
    let row_height = |row: &[super::heatmap::Layout]| {
        30 + PANEL_SIDE + row.iter().map(|l| l.bottom).max().unwrap_or(0)
    };
    let row_width = |row: &[super::heatmap::Layout]| -> i32 {
        row.iter().map(|l| l.left + PANEL_SIDE + 12).sum()
    };
    let width = rows.iter().map(|r| row_width(r)).max().unwrap_or(0);
    let height: i32 = head + rows.iter().map(|r| row_height(r)).sum::<i32>();
    let bar = colorbar_width(&scale)?;
    let size = ((width + bar) as u32, height as u32);
    render(size, |root| {
        if let Some(title) = &opts.title {
            let s = style(TITLE_PX, HPos::Center, VPos::Center, false);
            text(root, title, (width / 2, head / 2 + 4), &s)?;
        }
        let mut raw = String::new();
        let mut top = head + 30;
        let mut n = 0;
        for (r, row) in rows.iter().enumerate() {
            let mut x = 0;
            for lay in row.iter() {
                let p = &panels[n];
                let x0 = x + lay.left;
                let s = style(TITLE_PX - 1.0, HPos::Center, VPos::Center, false);
                text(root, p.title, (x0 + PANEL_SIDE / 2, top - 14), &s)?;
                raw += &draw_matrix(
                    root,
                    (x0, top),
                    PANEL_SIDE,
                    p.grid,
                    p.labels,
                    scale,
                    opts.direction,
                    lay,
                    n % PER_ROW == 0,
                )?;
                x = x0 + PANEL_SIDE + 12;
                n += 1;
            }
            if r == 0 {
                draw_colorbar(
                    root,
                    (width + 6, top),
                    PANEL_SIDE,
                    scale,
                    opts.direction,
                    &opts.value_label,
                )?;
            }
            top += row_height(row);
        }
        Ok(raw)
    })
}
