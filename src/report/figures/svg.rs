//! The SVG document of a figure: [`render`] paints on a white root with plotters and
//! checks the result against the printed page ([`PT_PER_PX`], [`MAX_WIDTH_PX`],
//! [`MIN_TEXT_PT`]); [`err`] makes the figures' errors.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::fonts;
use crate::{Error, Result};

/// Points per SVG pixel at which the paper places every figure.
pub const PT_PER_PX: f64 = 0.7;

/// The smallest text a printed figure may have, in points.
pub const MIN_TEXT_PT: f64 = 7.0;

/// The widest figure that fits the paper's text width (482 pt) at [`PT_PER_PX`].
pub const MAX_WIDTH_PX: i32 = 688;

/// The printed width in points of an SVG document made here: its `width` times
/// [`PT_PER_PX`].
pub fn printed_width(svg: &str) -> Result<f64> {
    let px = attribute(svg, "width")
        .ok_or_else(|| Error::Invalid("figure: the SVG has no width".into()))?;
    Ok(px * PT_PER_PX)
}

/// The smallest text of `svg` in points when printed at [`PT_PER_PX`]; `None` without
/// text.
pub fn smallest_text_pt(svg: &str) -> Option<f64> {
    svg.match_indices("font-size=\"")
        .filter_map(|(at, _)| attribute(&svg[at..], "font-size"))
        .reduce(f64::min)
        .map(|px| px * PT_PER_PX)
}

/// The first `name="number"` attribute of `text`.
fn attribute(text: &str, name: &str) -> Option<f64> {
    let key = format!("{name}=\"");
    let start = text.find(&key)? + key.len();
    let end = start + text[start..].find('"')?;
    text[start..end].parse().ok()
}

pub(crate) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

pub(crate) fn err(e: impl std::fmt::Display) -> Error {
    Error::Invalid(format!("figure: {e}"))
}

/// Renders a figure of `size` pixels: `draw` paints on a white root, its returned raw SVG
/// elements go last, before `</svg>`.
pub(crate) fn render(
    size: (u32, u32),
    draw: impl FnOnce(&Area) -> Result<String>,
) -> Result<String> {
    fonts::register()?;
    let mut svg = String::new();
    let extra = {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let extra = draw(&root)?;
        root.present().map_err(err)?;
        extra
    };
    match svg.rfind("</svg>") {
        Some(at) => svg.insert_str(at, &extra),
        None => return Err(err("plotters wrote no </svg>")),
    }
    if size.0 as i32 > MAX_WIDTH_PX {
        return Err(err(format!(
            "{} px wide: wider than the page at {PT_PER_PX} pt per pixel (at most {MAX_WIDTH_PX})",
            size.0
        )));
    }
    if let Some(pt) = smallest_text_pt(&svg)
        && pt < MIN_TEXT_PT
    {
        return Err(err(format!(
            "its smallest text prints at {pt:.2} pt, under {MIN_TEXT_PT} pt"
        )));
    }
    Ok(svg)
}
