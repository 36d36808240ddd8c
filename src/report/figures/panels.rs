//! Several matrices side by side with one shared colour bar: the cohort means of all
//! studies (protocol.md §6). Each panel keeps its own slice labels and a title; the axis
//! titles are drawn once, on the first panel.

use plotters::style::text_anchor::{HPos, VPos};

use super::heatmap::{
    HeatmapOptions, TITLE_PX, check, colorbar_width, draw_colorbar, draw_matrix, probe_layout,
};
use super::scale::Scale;
use super::{render, style, text};
use crate::matrix::Grid;
use crate::{Error, Result};

/// Side of each panel's matrix, in pixels.
pub const PANEL_SIDE: i32 = 220;

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

/// The panels left to right with one colour bar for `scale`; `opts.title` goes above all.
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
    let top = head + 30;
    let bottom = layouts.iter().map(|l| l.bottom).max().unwrap_or(0);
    let width: i32 = layouts.iter().map(|l| l.left + PANEL_SIDE + 12).sum();
    let bar = colorbar_width(&scale)?;
    let size = ((width + bar) as u32, (top + PANEL_SIDE + bottom) as u32);
    render(size, |root| {
        if let Some(title) = &opts.title {
            let s = style(TITLE_PX, HPos::Center, VPos::Center, false);
            text(root, title, (width / 2, head / 2 + 4), &s)?;
        }
        let mut raw = String::new();
        let mut x = 0;
        for (n, (p, lay)) in panels.iter().zip(&layouts).enumerate() {
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
                n == 0,
            )?;
            x = x0 + PANEL_SIDE + 12;
        }
        draw_colorbar(
            root,
            (x + 6, top),
            PANEL_SIDE,
            scale,
            opts.direction,
            &opts.value_label,
        )?;
        Ok(raw)
    })
}
