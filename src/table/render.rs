//! A [`Table`] written out: each cell as its column's [`Format`] says (a missing or
//! non-finite value is [`MISSING`]; a negative number starts with `−`, U+2212, and `-0.00`
//! is `0.00`), then the cells as Typst, CSV (the raw values instead), HTML or aligned
//! plain text.

use std::fmt::Write as _;

use super::{Format, Pad, Table, TextLayout, Values};
use crate::format::{MISSING, fixed_typeset, html_escape, p_value, typst_string};

fn grouped(value: i64) -> String {
    let digits = value.unsigned_abs().to_string();
    let mut out = String::new();
    for (n, ch) in digits.chars().enumerate() {
        if n > 0 && (digits.len() - n).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if value < 0 { format!("−{out}") } else { out }
}

fn marks(p: Option<f64>) -> &'static str {
    match p {
        Some(p) if p < 0.01 => "**",
        Some(p) if p < 0.05 => "*",
        _ => "",
    }
}

impl Table {
    /// The float (or missing value) of the float column `name` in `row` (checked to exist
    /// when the table was made).
    fn float_at(&self, name: &str, row: usize) -> Option<f64> {
        match self.column(name).map(|c| &c.values) {
            Some(Values::Float(v)) => v[row],
            _ => None,
        }
    }

    /// Cell (`col`, `row`) as its format writes it.
    fn cell(&self, col: usize, row: usize) -> String {
        let format = &self.formats[col];
        match (&self.columns[col].values, format) {
            (Values::Text(v), _) => v[row].clone(),
            (Values::Int(v), _) => match v[row] {
                None => MISSING.into(),
                Some(v) if *format == Format::Grouped => grouped(v),
                Some(v) if v < 0 => format!("−{}", v.unsigned_abs()),
                Some(v) => v.to_string(),
            },
            (Values::Float(v), _) => match v[row] {
                None => MISSING.into(),
                Some(v) => self.float_cell(format, v, row),
            },
        }
    }

    /// A float `v` in `row` as `format` writes it.
    fn float_cell(&self, format: &Format, v: f64, row: usize) -> String {
        match format {
            Format::PValue => p_value(v),
            Format::Spread {
                decimals,
                sd,
                min,
                max,
            } => {
                let mean = fixed_typeset(v, *decimals);
                let sd = self.float_at(sd, row).map_or(String::new(), |sd| {
                    format!(" ± {}", fixed_typeset(sd, *decimals))
                });
                match (self.float_at(min, row), self.float_at(max, row)) {
                    (Some(lo), Some(hi)) => format!(
                        "{mean}{sd}\n[{}, {}]",
                        fixed_typeset(lo, *decimals),
                        fixed_typeset(hi, *decimals)
                    ),
                    _ => format!("{mean}{sd}"),
                }
            }
            Format::Marked { decimals, p_value } => {
                let s = fixed_typeset(v, *decimals);
                if s == MISSING {
                    s
                } else {
                    format!("{s}{}", marks(self.float_at(p_value, row)))
                }
            }
            Format::Fixed(decimals) => fixed_typeset(v, *decimals),
            // `from_columns` lets no other format hold a float column but the hidden one.
            _ => v.to_string(),
        }
    }

    /// The columns a rendering shows: all but the hidden ones, in order.
    fn shown(&self) -> Vec<usize> {
        (0..self.formats.len())
            .filter(|&c| self.formats[c] != Format::Hidden)
            .collect()
    }

    /// Whether column `c` holds text (set left) rather than numbers (set right).
    fn is_text(&self, c: usize) -> bool {
        self.formats[c] == Format::Text
    }

    /// The shown columns' names.
    pub fn header(&self) -> Vec<&str> {
        self.shown()
            .into_iter()
            .map(|c| self.columns[c].name.as_str())
            .collect()
    }

    /// The shown cells row by row, each as its format writes it.
    pub fn rows(&self) -> Vec<Vec<String>> {
        let shown = self.shown();
        (0..self.height())
            .map(|row| shown.iter().map(|&c| self.cell(c, row)).collect())
            .collect()
    }

    /// The table as a Typst `#table(..)` block: `columns`, `align` (text left, numbers
    /// right), a `table.header` of `strong` column names, then one line of cells per row;
    /// every cell a quoted string literal ([`typst_string`]), so no data can inject Typst
    /// code. Ends with a newline.
    pub fn typst(&self) -> String {
        let shown = self.shown();
        let align: Vec<&str> = shown
            .iter()
            .map(|&c| if self.is_text(c) { "left" } else { "right" })
            .collect();
        let header: Vec<String> = self
            .header()
            .iter()
            .enumerate()
            .map(|(c, name)| match self.typst_upright_after {
                Some(n) if c >= n => format!(
                    "rotate(-90deg, reflow: true, strong({}))",
                    typst_string(name)
                ),
                _ => format!("strong({})", typst_string(name)),
            })
            .collect();
        let mut out = String::new();
        out.push_str("#table(\n");
        match &self.typst_widths {
            Some(widths) => {
                let _ = writeln!(out, "  columns: ({}),", widths.join(", "));
            }
            None => {
                let _ = writeln!(out, "  columns: {},", shown.len());
            }
        }
        let _ = writeln!(out, "  align: ({}),", align.join(", "));
        let _ = writeln!(out, "  table.header({}),", header.join(", "));
        for row in self.rows() {
            let line: Vec<String> = row.iter().map(|s| typst_string(s)).collect();
            let _ = writeln!(out, "  {},", line.join(", "));
        }
        out.push_str(")\n");
        out
    }

    /// The table as CSV: a header of every column's name (hidden ones included), then the
    /// raw values (floats in Rust's shortest round-trip form, integers in digits, a missing
    /// or non-finite value as an empty field), fields quoted when they hold `,`, `"`, a
    /// line break or edge spaces; lines end with `\n`.
    pub fn csv(&self) -> String {
        let mut out = String::new();
        let header: Vec<String> = self.columns.iter().map(|c| csv_field(&c.name)).collect();
        out.push_str(&header.join(","));
        out.push('\n');
        for row in 0..self.height() {
            let line: Vec<String> = self
                .columns
                .iter()
                .map(|c| match &c.values {
                    Values::Text(v) => csv_field(&v[row]),
                    Values::Int(v) => v[row].map_or(String::new(), |v| v.to_string()),
                    Values::Float(v) => match v[row] {
                        Some(v) if v.is_finite() => v.to_string(),
                        _ => String::new(),
                    },
                })
                .collect();
            out.push_str(&line.join(","));
            out.push('\n');
        }
        out
    }

    /// The table as a bare HTML `<table>` on one line (the notebooks): its caption when it
    /// has one, a header row, then one row per record, every string escaped.
    pub fn html(&self) -> String {
        let mut s = String::from("<table>");
        if !self.caption.is_empty() {
            let _ = write!(s, "<caption>{}</caption>", html_escape(&self.caption));
        }
        s.push_str("<thead><tr>");
        for h in self.header() {
            let _ = write!(s, "<th>{}</th>", html_escape(h));
        }
        s.push_str("</tr></thead><tbody>");
        for row in self.rows() {
            s.push_str("<tr>");
            for c in row {
                let _ = write!(s, "<td>{}</td>", html_escape(&c));
            }
            s.push_str("</tr>");
        }
        s.push_str("</tbody></table>");
        s
    }

    /// The table as an HTML `<table>` for a page (the gallery): its name as id, its
    /// caption, a header row of column names, then one row per record on a line each,
    /// cells as in [`Table::typst`] with class `t` (text, set left) or `n` (numbers, set
    /// right), line breaks kept, every string escaped. Ends with a newline.
    pub fn html_styled(&self) -> String {
        let shown = self.shown();
        let class = |c: usize| if self.is_text(c) { "t" } else { "n" };
        let mut out = format!(
            "<table id=\"{}\">\n<caption>{}</caption>\n<thead><tr>",
            html_escape(&self.name),
            html_escape(&self.caption)
        );
        for &c in &shown {
            let _ = write!(
                out,
                "<th class=\"{}\">{}</th>",
                class(c),
                html_escape(&self.columns[c].name)
            );
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for row in 0..self.height() {
            out.push_str("<tr>");
            for &c in &shown {
                let text = html_escape(&self.cell(c, row)).replace('\n', "<br>");
                let _ = write!(out, "<td class=\"{}\">{text}</td>", class(c));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
        out
    }

    /// The table as aligned plain text in the [`TextLayout::default`] layout (the
    /// notebooks' plain-text tables).
    pub fn text(&self) -> String {
        self.text_with(&TextLayout::default())
    }

    /// The table as aligned plain text laid out as `layout` says: the caption on its own
    /// line when there is one, then the header and the rows; a line break inside a cell
    /// reads as a space. No trailing spaces, no final newline.
    pub fn text_with(&self, layout: &TextLayout) -> String {
        let mut lines: Vec<Vec<String>> =
            vec![self.header().iter().map(|h| h.to_string()).collect()];
        lines.extend(
            self.rows()
                .into_iter()
                .map(|row| row.into_iter().map(|c| c.replace('\n', " ")).collect()),
        );
        let count = |s: &String| s.chars().count();
        let longest = |c: usize| lines.iter().map(|l| count(&l[c])).max().unwrap_or(0);
        // Per column: left-aligned or not, and the width.
        let pads: Vec<(bool, usize)> = (0..lines[0].len())
            .map(
                |c| match layout.pads.get(c).copied().unwrap_or(Pad::Right) {
                    Pad::Left => (true, longest(c)),
                    Pad::Right => (false, longest(c)),
                    Pad::LeftIn(w) => (true, w),
                    Pad::RightIn(w) => (false, w),
                },
            )
            .collect();
        let indent = " ".repeat(layout.indent);
        let gap = " ".repeat(layout.gap);
        let mut out = String::new();
        if !self.caption.is_empty() {
            let _ = writeln!(out, "{}", self.caption);
        }
        for line in &lines {
            let padded: Vec<String> = line
                .iter()
                .zip(&pads)
                .map(|(cell, &(left, w))| {
                    if left {
                        format!("{cell:<w$}")
                    } else {
                        format!("{cell:>w$}")
                    }
                })
                .collect();
            let line = format!("{indent}{}", padded.join(&gap));
            let _ = writeln!(out, "{}", line.trim_end());
        }
        out.trim_end().to_string()
    }
}

// Quoted by hand rather than with the `csv` crate: its writer leaves a field with a
// leading or trailing space bare, where the committed CSVs (first written by polars) quote
// it, and they must keep their bytes.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
