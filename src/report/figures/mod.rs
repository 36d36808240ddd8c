//! Figures of the paper: plotters SVG, text in Libertinus Serif (from `typst-assets`, the
//! bytes Typst compiles the paper with), deterministic bytes.
//!
//! Every function is pure: inputs in, the SVG document as a `String` out. The same inputs
//! give byte-identical SVG: coordinates are integer pixels, numbers are formatted with a
//! fixed number of decimals, every collection is iterated in input (or sorted) order, and
//! bars are plain rectangles (plotters' `Histogram` keeps bars in a `HashMap`).
//!
//! | kind | function |
//! |---|---|
//! | raw / deviation heatmap of one model | [`heatmap()`] |
//! | several heatmaps with one shared colour bar (cohort means of the studies) | [`panels()`] |
//! | forgetting curves per model or per family | [`forgetting_curves`] (family curves: [`crate::analysis::StudyAnalysis::family_forgetting`]) |
//! | retraining policies: mean deployed score against retrains, per model | [`retraining()`] |
//! | ranking by future score or decay | [`ranking`] |
//! | deterioration / adaptation scores of Agarwal & Nenkova | [`temporal_effects`] |
//! | saliency maps per model and (cutoff, slice) | [`saliency_grid`] |
//!
//! Colour scales are in [`scale`], colour maps in [`colors`]. Slice labels are thinned by
//! [`thinned`]: with `K` slices, every `step = ceil(K / 12)`-th label is shown starting
//! from the oldest (indices `0, step, 2*step, ..`), so at most [`MAX_LABELS`] per axis.
//!
//! # Printed size
//!
//! The paper places every figure at [`PT_PER_PX`] points per SVG pixel (its width is the
//! SVG's width times that, [`printed_width`]), and [`render`] refuses a figure whose
//! smallest text would then print under [`MIN_TEXT_PT`]: the check is the SVG's smallest
//! `font-size` times [`PT_PER_PX`]. So a figure must be laid out to fit the page at that
//! scale (at most [`MAX_WIDTH_PX`] wide, half of it to sit two in a row) rather than be
//! shrunk until its text is unreadable. Values are shown on the tables' scale (×100 for
//! metrics in `[0, 1]`, [`crate::Metric::display_scale`]).
//!
//! The dashed diagonal is a raw SVG `<line stroke-dasharray="4 3">` (plotters draws dashes
//! as separate segments), added after the cells.

pub mod colors;
pub mod curves;
pub mod effects;
pub mod fonts;
pub mod heatmap;
pub mod panels;
pub mod rankings;
pub mod retraining;
pub mod saliency;
pub mod scale;

pub use curves::{Curve, CurveOptions, forgetting_curves};
pub use effects::{EffectsRow, temporal_effects};
pub use heatmap::{HeatmapOptions, heatmap};
pub use panels::{Panel, panels};
pub use rankings::{RankingOptions, ranking};
pub use retraining::{PolicySeries, retraining};
pub use saliency::{SaliencyGrid, saliency_grid};
pub use scale::{Scale, percentile};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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

/// The most slice labels drawn on one axis.
pub const MAX_LABELS: usize = 12;

/// The indices of the slice labels drawn for `k` slices: `0, step, 2*step, ..` with
/// `step = ceil(k / MAX_LABELS)`.
pub fn thinned(k: usize) -> Vec<usize> {
    let step = k.div_ceil(MAX_LABELS).max(1);
    (0..k).step_by(step).collect()
}

pub(crate) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

pub(crate) fn err(e: impl std::fmt::Display) -> Error {
    Error::Invalid(format!("figure: {e}"))
}

pub(crate) fn rgb(c: colors::Rgb) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

/// Text style of size `px` in [`fonts::FAMILY`], anchored at `(h, v)`, optionally rotated
/// to read upwards.
pub(crate) fn style(px: f64, h: HPos, v: VPos, upward: bool) -> TextStyle<'static> {
    // plotters resolves the font when the style is made and keeps a failure: register
    // first (a registration error surfaces at the first measured or drawn text).
    let _ = fonts::register();
    let font = FontDesc::new(FontFamily::Name(fonts::FAMILY), px, FontStyle::Normal);
    let font = if upward {
        font.transform(FontTransform::Rotate270)
    } else {
        font
    };
    font.color(&BLACK).pos(Pos::new(h, v))
}

pub(crate) fn text(area: &Area, s: &str, at: (i32, i32), style: &TextStyle<'static>) -> Result<()> {
    area.draw(&Text::new(s.to_string(), at, style.clone()))
        .map_err(err)
}

/// The width in pixels of `s` in `style` (measured with the registered font).
pub(crate) fn width(area: &Area, s: &str, style: &TextStyle<'static>) -> Result<i32> {
    Ok(area.estimate_text_size(s, style).map_err(err)?.0 as i32)
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

/// "Nice" tick values in `[lo, hi]` (at most about `max` of them: steps of 1, 2, 2.5 or 5
/// times a power of ten) and the decimals that print them exactly.
pub(crate) fn nice_ticks(lo: f64, hi: f64, max: usize) -> (Vec<f64>, usize) {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater)
        || !lo.is_finite()
        || !hi.is_finite()
    {
        return (vec![lo], 2);
    }
    let raw = (hi - lo) / max.max(1) as f64;
    let exp = raw.log10().floor();
    let base = 10f64.powf(exp);
    let (mult, extra) = [(1.0, 0), (2.0, 0), (2.5, 1), (5.0, 0), (10.0, 0)]
        .into_iter()
        .find(|(m, _)| m * base >= raw * (1.0 - 1e-9))
        .unwrap_or((10.0, 0));
    let step = mult * base;
    let decimals = ((-(step.log10().floor())).max(0.0) as usize + extra).min(9);
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    let ticks = (first..=last).map(|n| n as f64 * step).collect();
    (ticks, decimals)
}

/// `v` with `decimals` decimals; never prints `-0`.
pub(crate) use crate::format::fixed as number;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_numbers() {
        let (t, d) = nice_ticks(0.0, 1.0, 5);
        assert_eq!(t, vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]);
        assert_eq!(d, 1);
        assert_eq!(number(-0.0001, 2), "0.00");
        assert_eq!(number(-0.5, 1), "-0.5");
        let (t, d) = nice_ticks(-2.5, 2.5, 5);
        assert_eq!(d, 0);
        assert_eq!(t.first(), Some(&-2.0));
    }
}
