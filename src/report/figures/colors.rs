//! Colour maps as interpolation tables: eleven evenly spaced anchors, linear interpolation
//! in sRGB between neighbours, channels rounded half away from zero.
//!
//! - [`VIRIDIS`]: matplotlib's `viridis` sampled at `t = 0, 0.1, .., 1` (dark purple to
//!   yellow), the sequential map of raw scores.
//! - [`RDBU`]: ColorBrewer's 11-class `RdBu` (= matplotlib `RdBu` at the same points):
//!   dark red, white at `t = 0.5`, dark blue; the diverging map of deviations.

/// An sRGB colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// `#RRGGBB`, upper case, as plotters writes colours into the SVG.
    pub fn hex(self) -> String {
        format!("#{:02X}{:02X}{:02X}", self.0, self.1, self.2)
    }
}

const fn c(hex: u32) -> Rgb {
    Rgb((hex >> 16) as u8, (hex >> 8) as u8, hex as u8)
}

/// viridis at `t = 0, 0.1, .., 1`.
pub const VIRIDIS: [Rgb; 11] = [
    c(0x440154),
    c(0x482475),
    c(0x414487),
    c(0x355F8D),
    c(0x2A788E),
    c(0x21918C),
    c(0x22A884),
    c(0x44BF70),
    c(0x7AD151),
    c(0xBDDF26),
    c(0xFDE725),
];

/// RdBu (ColorBrewer, 11 classes) at `t = 0, 0.1, .., 1`: red for low, blue for high.
pub const RDBU: [Rgb; 11] = [
    c(0x67001F),
    c(0xB2182B),
    c(0xD6604D),
    c(0xF4A582),
    c(0xFDDBC7),
    c(0xF7F7F7),
    c(0xD1E5F0),
    c(0x92C5DE),
    c(0x4393C3),
    c(0x2166AC),
    c(0x053061),
];

/// Light grey of empty cells.
pub const EMPTY: Rgb = Rgb(0xDD, 0xDD, 0xDD);

/// The colour at `t` of an evenly spaced `table`; `t` is clamped to `[0, 1]` (NaN reads as
/// 0).
pub fn interpolate(table: &[Rgb], t: f64) -> Rgb {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let last = table.len() - 1;
    let x = t * last as f64;
    let n = (x.floor() as usize).min(last.saturating_sub(1));
    if last == 0 {
        return table[0];
    }
    let f = x - n as f64;
    let (a, b) = (table[n], table[n + 1]);
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    Rgb(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// [`VIRIDIS`] at `t`.
pub fn sequential(t: f64) -> Rgb {
    interpolate(&VIRIDIS, t)
}

/// [`RDBU`] at `t`.
pub fn diverging(t: f64) -> Rgb {
    interpolate(&RDBU, t)
}

/// A qualitative palette for lines and bars (matplotlib `tab10`).
pub const TAB10: [Rgb; 10] = [
    c(0x1F77B4),
    c(0xFF7F0E),
    c(0x2CA02C),
    c(0xD62728),
    c(0x9467BD),
    c(0x8C564B),
    c(0xE377C2),
    c(0x7F7F7F),
    c(0xBCBD22),
    c(0x17BECF),
];
