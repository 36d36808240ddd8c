//! How numbers (and text in HTML and Typst) are written wherever drift shows them: figure labels,
//! tables, the paper's text, the notebooks, the gallery and the CLI share these, so a
//! value reads the same everywhere.

/// What an empty cell or an undefined value shows.
pub const MISSING: &str = "–";

/// `value` with exactly `decimals` decimals, as Rust's `{:.N}` writes it (the decimal
/// nearest to the binary value); a result that is zero loses its minus sign, so `-0.00`
/// is `0.00`.
pub fn fixed(value: f64, decimals: usize) -> String {
    let s = format!("{value:.decimals$}");
    match s.strip_prefix('-') {
        Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_string(),
        _ => s,
    }
}

/// [`fixed`] with the typographic minus `−` (U+2212) of typeset tables; [`MISSING`] for a
/// value that is not finite.
pub fn fixed_typeset(value: f64, decimals: usize) -> String {
    if !value.is_finite() {
        return MISSING.into();
    }
    let s = fixed(value, decimals);
    match s.strip_prefix('-') {
        Some(rest) => format!("−{rest}"),
        None => s,
    }
}

/// A p-value: three decimals, `<0.001` when it would round to `0.000`, [`MISSING`] when it
/// is not finite.
pub fn p_value(p: f64) -> String {
    if !p.is_finite() {
        MISSING.into()
    } else if p < 0.0005 {
        "<0.001".into()
    } else {
        fixed(p, 3)
    }
}

/// `value` as [`fixed`] writes it, [`MISSING`] when there is none (the CLI's and the
/// notebooks' plain numbers).
pub fn fixed_or_missing(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| MISSING.into(), |v| fixed(v, decimals))
}

/// A p-value as [`p_value`] writes it, [`MISSING`] when there is none.
pub fn p_value_or_missing(p: Option<f64>) -> String {
    p.map_or_else(|| MISSING.into(), p_value)
}

/// `s` with the five characters HTML gives meaning escaped, so that text from data is
/// always text in a page (the notebooks' tables and the gallery).
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `s` as a quoted Typst string literal: `\`, `"`, and control characters escaped
/// (`\n`, `\r`, `\t`, else `\u{..}`), so that it is always exactly one string value.
pub fn typst_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_has_no_sign_and_tables_use_the_typographic_minus() {
        assert_eq!(fixed(-0.0001, 3), "0.000");
        assert_eq!(fixed(-1.5, 0), "-2");
        assert_eq!(fixed(2.0, 2), "2.00");
        assert_eq!(fixed_typeset(-0.25, 2), "−0.25");
        assert_eq!(fixed_typeset(-0.001, 2), "0.00");
        assert_eq!(fixed_typeset(f64::NAN, 2), MISSING);
        assert_eq!(p_value(0.0004), "<0.001");
        assert_eq!(p_value(0.0005), "0.001");
        assert_eq!(p_value(0.0123), "0.012");
        assert_eq!(p_value(f64::NAN), MISSING);
    }
}
