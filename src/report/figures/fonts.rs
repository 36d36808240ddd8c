//! The one font family of every figure: Libertinus Serif, Typst's default text font, from
//! the same `typst_assets::fonts()` bytes the paper compiles with.
//!
//! plotters' SVG backend writes text as `<text font-family="Libertinus Serif">`; the font
//! registered here is only used to measure text for the layout. When Typst embeds the SVG
//! it renders that text with its own font of the same family, so the measurements and the
//! glyphs come from identical bytes.

use std::sync::{Once, OnceLock};

use plotters::style::FontStyle;

use crate::{Error, Result};

/// The family name used in every figure (and by Typst).
pub const FAMILY: &str = "Libertinus Serif";

/// The bytes of Libertinus Serif Regular as shipped by `typst_assets::fonts()`: the first
/// font whose name table holds "Libertinus Serif" and "Regular" (UTF-16BE, as OpenType
/// stores names on the Windows platform).
pub fn regular_bytes() -> Option<&'static [u8]> {
    let family = utf16be(FAMILY);
    let regular = utf16be("Regular");
    typst_assets::fonts().find(|f| contains(f, &family) && contains(f, &regular))
}

fn utf16be(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(u16::to_be_bytes).collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

static REGISTER: Once = Once::new();
static OUTCOME: OnceLock<std::result::Result<(), String>> = OnceLock::new();

/// Registers [`FAMILY`] with plotters once per process (later calls return the first
/// outcome).
pub fn register() -> Result<()> {
    REGISTER.call_once(|| {
        let outcome = match regular_bytes() {
            None => Err(format!("typst-assets ships no {FAMILY} Regular")),
            Some(bytes) => plotters::style::register_font(FAMILY, FontStyle::Normal, bytes)
                .map_err(|_| format!("{FAMILY}: plotters cannot read the font")),
        };
        let _ = OUTCOME.set(outcome);
    });
    match OUTCOME.get() {
        Some(Ok(())) => Ok(()),
        Some(Err(e)) => Err(Error::Invalid(format!("figure font: {e}"))),
        None => Err(Error::Invalid(
            "figure font: registration did not run".into(),
        )),
    }
}
