//! Why a rebuilt output differs from the committed one: the class of each difference that
//! `build-report` finds, from the two versions' bytes.
//!
//! - *Canonically equal*: the same after canonicalisation, so only identifiers or
//!   metadata changed: a PDF's document information, file identifier and XMP metadata
//!   ([`super::proof::canonical`]), or an SVG's element ids (renumbered in order of
//!   appearance, references included).
//! - *Within tolerance*: a table (`report/build/tables/*`) whose every number, as
//!   written, is within `--tolerance` of the committed one, and whose text around the
//!   numbers is unchanged. The default tolerance is 0: equal values written alike.
//! - *A real change*: anything else, with the first place where the two differ.
//!
//! The first two are accepted: `build-report` lists them and does not fail on them.

use std::fmt;
use std::path::Path;

/// The class of one difference.
#[derive(Clone, Debug, PartialEq)]
pub enum Class {
    /// The same after canonicalisation; says what alone differs.
    Canonical(&'static str),
    /// A table whose numbers all lie within the tolerance of the committed ones.
    WithinTolerance {
        /// The largest absolute difference of two numbers.
        largest: f64,
        /// The tolerance.
        tolerance: f64,
    },
    /// A real change, with where.
    Real(String),
}

impl Class {
    /// Whether the difference is accepted (not a failure).
    pub fn accepted(&self) -> bool {
        !matches!(self, Class::Real(_))
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Class::Canonical(what) => {
                write!(f, "byte-identical after canonicalisation ({what} differ)")
            }
            Class::WithinTolerance { largest, tolerance } => write!(
                f,
                "equal within the tolerance {tolerance} (largest difference {largest})"
            ),
            Class::Real(at) => write!(f, "a real change: {at}"),
        }
    }
}

/// The class of the difference between the committed bytes `old` and the rebuilt `new`
/// of the output `path`.
pub fn classify(path: &str, old: &[u8], new: &[u8], tolerance: f64) -> Class {
    if path.ends_with(".pdf") {
        let p = Path::new(path);
        if let (Ok(a), Ok(b)) = (
            super::proof::canonical(p, old),
            super::proof::canonical(p, new),
        ) {
            if a == b {
                return Class::Canonical("PDF metadata and identifiers only");
            }
            return Class::Real("the pages or attachments differ, not only the metadata".into());
        }
    }
    let (Ok(old), Ok(new)) = (std::str::from_utf8(old), std::str::from_utf8(new)) else {
        return Class::Real("binary content differs".into());
    };
    if path.ends_with(".svg") && canonical_svg(old) == canonical_svg(new) {
        return Class::Canonical("SVG element ids only");
    }
    if path.starts_with("report/build/tables/") {
        return compare_values(old, new, tolerance);
    }
    Class::Real(first_difference(old, new))
}

/// An SVG with its element ids renamed `id0`, `id1`, ... in order of first definition,
/// and every reference to them (`#name` in `url(..)` or `href`) renamed alike.
pub fn canonical_svg(text: &str) -> String {
    let mut ids: Vec<&str> = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(" id=\"") {
        rest = &rest[at + 5..];
        let end = rest.find('"').unwrap_or(rest.len());
        let id = &rest[..end];
        if !id.is_empty() && !ids.contains(&id) {
            ids.push(id);
        }
    }
    // Longest first, so that no id is replaced inside a longer one that contains it.
    let mut order: Vec<(usize, &str)> = ids.iter().copied().enumerate().collect();
    order.sort_by_key(|(_, id)| std::cmp::Reverse(id.len()));
    let mut out = text.to_string();
    for (n, id) in order {
        for (before, after) in [("id=\"", "\""), ("#", ")"), ("#", "\"")] {
            out = out.replace(
                &format!("{before}{id}{after}"),
                &format!("{before}\u{0}{n}{after}"),
            );
        }
    }
    out
}

/// Splits text into numbers and the text between them.
fn tokens(text: &str) -> Vec<Token<'_>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut start) = (0, 0);
    while i < bytes.len() {
        let sign = bytes[i] == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
        if bytes[i].is_ascii_digit() || sign {
            let mut j = i + usize::from(sign);
            while j < bytes.len() && (bytes[j].is_ascii_digit() || bytes[j] == b'.') {
                j += 1;
            }
            if j < bytes.len() && (bytes[j] == b'e' || bytes[j] == b'E') {
                let mut k = j + 1;
                if k < bytes.len() && (bytes[k] == b'-' || bytes[k] == b'+') {
                    k += 1;
                }
                if k < bytes.len() && bytes[k].is_ascii_digit() {
                    j = k;
                    while j < bytes.len() && bytes[j].is_ascii_digit() {
                        j += 1;
                    }
                }
            }
            if let Ok(value) = text[i..j].parse::<f64>() {
                if start < i {
                    out.push(Token::Text(&text[start..i]));
                }
                out.push(Token::Number(value, &text[i..j]));
                start = j;
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    if start < text.len() {
        out.push(Token::Text(&text[start..]));
    }
    out
}

#[derive(Debug)]
enum Token<'a> {
    Text(&'a str),
    Number(f64, &'a str),
}

/// Compares two tables value by value: numbers within `tolerance`, text exactly.
fn compare_values(old: &str, new: &str, tolerance: f64) -> Class {
    let (a, b) = (tokens(old), tokens(new));
    if a.len() != b.len() {
        return Class::Real(format!(
            "the table's shape changed ({} values and texts, now {}); {}",
            a.len(),
            b.len(),
            first_difference(old, new)
        ));
    }
    let mut largest = 0.0f64;
    for (x, y) in a.iter().zip(&b) {
        match (x, y) {
            (Token::Number(u, s), Token::Number(v, t)) => {
                let d = (u - v).abs();
                if d > tolerance {
                    return Class::Real(format!(
                        "{s} became {t} (difference {d} > tolerance {tolerance})"
                    ));
                }
                largest = largest.max(d);
            }
            (Token::Text(s), Token::Text(t)) if s == t => {}
            _ => return Class::Real(first_difference(old, new)),
        }
    }
    Class::WithinTolerance { largest, tolerance }
}

/// Where two texts first differ: line number and both lines, shortened.
fn first_difference(old: &str, new: &str) -> String {
    let short = |l: &str| {
        let l: String = l.chars().take(80).collect();
        format!("{l:?}")
    };
    for (n, (a, b)) in old.lines().zip(new.lines()).enumerate() {
        if a != b {
            return format!("line {} was {}, is {}", n + 1, short(a), short(b));
        }
    }
    format!("{} lines, now {}", old.lines().count(), new.lines().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_ids_are_renumbered_with_their_references() {
        let a = r##"<svg><clipPath id="c1"><rect/></clipPath><g clip-path="url(#c1)"/><use href="#c1"/></svg>"##;
        let b = r##"<svg><clipPath id="x9"><rect/></clipPath><g clip-path="url(#x9)"/><use href="#x9"/></svg>"##;
        assert_eq!(canonical_svg(a), canonical_svg(b));
        let c = r##"<svg><clipPath id="x9"><rect width="2"/></clipPath><g clip-path="url(#x9)"/><use href="#x9"/></svg>"##;
        assert_ne!(canonical_svg(a), canonical_svg(c));
        assert_eq!(
            classify("figures/a.svg", a.as_bytes(), b.as_bytes(), 0.0),
            Class::Canonical("SVG element ids only")
        );
    }

    #[test]
    fn tables_are_compared_value_by_value() {
        let old = "model,decay\ncnn_s,0.4125\nmlp_s,-1.5e-3\n";
        let near = "model,decay\ncnn_s,0.4126\nmlp_s,-1.4e-3\n";
        let path = "report/build/tables/t.csv";
        let class = classify(path, old.as_bytes(), near.as_bytes(), 1e-3);
        let Class::WithinTolerance { largest, .. } = class else {
            panic!("{class:?}")
        };
        assert!((largest - 1e-4).abs() < 1e-12, "{largest}");
        let class = classify(path, old.as_bytes(), near.as_bytes(), 0.0);
        assert!(
            matches!(&class, Class::Real(m) if m.starts_with("0.4125 became 0.4126 (difference 0.0001")),
            "{class:?}"
        );
        let renamed = "model,decay\ncnn_m,0.4125\nmlp_s,-1.5e-3\n";
        assert_eq!(
            classify(path, old.as_bytes(), renamed.as_bytes(), 1.0),
            Class::Real("line 2 was \"cnn_s,0.4125\", is \"cnn_m,0.4125\"".into())
        );
        let longer = "model,decay\ncnn_s,0.4125\nmlp_s,-1.5e-3\nvit_s,0.1\n";
        assert!(matches!(
            classify(path, old.as_bytes(), longer.as_bytes(), 1.0),
            Class::Real(m) if m.starts_with("the table's shape changed")
        ));
        // Outside the tables, numbers are not compared with a tolerance.
        assert!(
            !classify(
                "report/build/paper.typ",
                old.as_bytes(),
                near.as_bytes(),
                1.0
            )
            .accepted()
        );
    }
}
