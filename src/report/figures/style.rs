//! Colour and text on a figure: plotters colours from [`super::colors`], text styles in
//! the embedded font ([`super::fonts::FAMILY`]), drawing and measuring text.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::svg::{Area, err};
use super::{colors, fonts};
use crate::Result;

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

/// One legend entry at height `y`: a 24-pixel line in `color`, then `marker` (drawn over
/// the line's middle, `(16, y)`, for figures whose lines carry markers), then `label` in
/// `font` right of it. The figures with legends share it so that their entries look alike.
pub(crate) fn legend_entry(
    area: &Area,
    y: i32,
    color: RGBColor,
    (label, font): (&str, &TextStyle<'static>),
    marker: impl FnOnce(&Area, (i32, i32)) -> Result<()>,
) -> Result<()> {
    area.draw(&PathElement::new(
        vec![(4, y), (28, y)],
        color.stroke_width(2),
    ))
    .map_err(err)?;
    marker(area, (16, y))?;
    text(area, label, (34, y), font)
}
