//! A [`Table`] written as a Typst `#table(..)` block or as CSV, column by column as its
//! [`Format`]s say.

use polars::prelude::DataType;

use super::{Format, Table, polars_error};
use crate::format::{MISSING, fixed_typeset, p_value};
use crate::{Error, Result};

/// A cell read back from a frame.
enum Cell {
    Null,
    Text(String),
    Int(i64),
    Float(f64),
}

fn cells(table: &Table) -> Result<Vec<Vec<Cell>>> {
    let err = polars_error(&table.name);
    let mut out = Vec::new();
    for column in table.frame.columns() {
        let values: Vec<Cell> = match column.dtype() {
            DataType::String => column
                .str()
                .map_err(&err)?
                .iter()
                .map(|v| v.map_or(Cell::Null, |s| Cell::Text(s.to_string())))
                .collect(),
            DataType::Int64 => column
                .i64()
                .map_err(&err)?
                .iter()
                .map(|v| v.map_or(Cell::Null, Cell::Int))
                .collect(),
            DataType::Float64 => column
                .f64()
                .map_err(&err)?
                .iter()
                .map(|v| v.map_or(Cell::Null, Cell::Float))
                .collect(),
            other => {
                return Err(Error::Invalid(format!(
                    "table {}: column {:?} has unsupported type {other}",
                    table.name,
                    column.name().as_str()
                )));
            }
        };
        out.push(values);
    }
    Ok(out)
}

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

fn render(table: &Table, columns: &[Vec<Cell>], col: usize, row: usize) -> Result<String> {
    let cell = &columns[col][row];
    let format = &table.formats[col];
    let bad = || {
        Error::Invalid(format!(
            "table {}: column {:?} does not fit its format {format:?}",
            table.name,
            table.frame.columns()[col].name().as_str()
        ))
    };
    Ok(match (format, cell) {
        (_, Cell::Null) => MISSING.into(),
        (Format::Text, Cell::Text(s)) => s.clone(),
        (Format::Integer, Cell::Int(v)) if *v < 0 => format!("−{}", v.unsigned_abs()),
        (Format::Integer, Cell::Int(v)) => v.to_string(),
        (Format::Grouped, Cell::Int(v)) => grouped(*v),
        (Format::Fixed(d), Cell::Float(v)) => fixed_typeset(*v, *d),
        (Format::PValue, Cell::Float(v)) => p_value(*v),
        (
            Format::Spread {
                decimals,
                sd,
                min,
                max,
            },
            Cell::Float(v),
        ) => {
            let [sd, min, max] =
                [sd, min, max].map(|name| float_in(table, columns, name, row).ok_or_else(bad));
            let (sd, min, max) = (sd?, min?, max?);
            let mean = fixed_typeset(*v, *decimals);
            let sd = sd.map_or(String::new(), |sd| {
                format!(" ± {}", fixed_typeset(sd, *decimals))
            });
            match (min, max) {
                (Some(lo), Some(hi)) => format!(
                    "{mean}{sd}\n[{}, {}]",
                    fixed_typeset(lo, *decimals),
                    fixed_typeset(hi, *decimals)
                ),
                _ => format!("{mean}{sd}"),
            }
        }
        (Format::Marked { decimals, p_value }, Cell::Float(v)) => {
            let p = float_in(table, columns, p_value, row).ok_or_else(bad)?;
            let s = fixed_typeset(*v, *decimals);
            if s == MISSING {
                s
            } else {
                format!("{s}{}", marks(p))
            }
        }
        _ => return Err(bad()),
    })
}

/// The float (or null) of the column named `name` in `row`; `None` when there is no such
/// float column.
fn float_in(table: &Table, columns: &[Vec<Cell>], name: &str, row: usize) -> Option<Option<f64>> {
    let col = table
        .frame
        .columns()
        .iter()
        .position(|c| c.name().as_str() == name)?;
    match columns[col][row] {
        Cell::Float(v) => Some(Some(v)),
        Cell::Null => Some(None),
        _ => None,
    }
}

fn check_formats(table: &Table) -> Result<()> {
    if table.formats.len() != table.frame.width() {
        return Err(Error::Invalid(format!(
            "table {}: {} formats for {} columns",
            table.name,
            table.formats.len(),
            table.frame.width()
        )));
    }
    Ok(())
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

/// The table as a Typst `#table(..)` block: `columns`, `align` (text left, numbers
/// right), a `table.header` of `strong` column names, then one line of cells per row;
/// every cell a quoted string literal. Ends with a newline.
pub fn to_typst(table: &Table) -> Result<String> {
    check_formats(table)?;
    let columns = cells(table)?;
    let shown = shown(table);
    let align: Vec<&str> = shown
        .iter()
        .map(|&c| if is_text(table, c) { "left" } else { "right" })
        .collect();
    let header: Vec<String> = shown
        .iter()
        .map(|&c| {
            let name = table.frame.columns()[c].name().as_str();
            format!("strong({})", typst_string(name))
        })
        .collect();
    let mut out = String::new();
    out.push_str("#table(\n");
    out.push_str(&format!("  columns: {},\n", shown.len()));
    out.push_str(&format!("  align: ({}),\n", align.join(", ")));
    out.push_str(&format!("  table.header({}),\n", header.join(", ")));
    for row in 0..table.frame.height() {
        let line: Vec<String> = shown
            .iter()
            .map(|&col| render(table, &columns, col, row).map(|s| typst_string(&s)))
            .collect::<Result<_>>()?;
        out.push_str(&format!("  {},\n", line.join(", ")));
    }
    out.push_str(")\n");
    Ok(out)
}

/// The columns a rendering shows: all but the hidden ones, in order.
fn shown(table: &Table) -> Vec<usize> {
    (0..table.formats.len())
        .filter(|&c| table.formats[c] != Format::Hidden)
        .collect()
}

/// Whether column `c` holds text (set left) rather than numbers (set right).
fn is_text(table: &Table, c: usize) -> bool {
    table.formats[c] == Format::Text
}

/// The table as an HTML `<table>` for the gallery: its caption, a header row of column
/// names, then one row per record, cells rendered as in [`to_typst`] (text left, numbers
/// right, line breaks kept), every string escaped. Ends with a newline.
pub fn to_html(table: &Table) -> Result<String> {
    use crate::format::html_escape;
    check_formats(table)?;
    let columns = cells(table)?;
    let shown = shown(table);
    let class = |c: usize| if is_text(table, c) { "t" } else { "n" };
    let mut out = format!(
        "<table id=\"{}\">\n<caption>{}</caption>\n<thead><tr>",
        html_escape(&table.name),
        html_escape(&table.caption)
    );
    for &c in &shown {
        let name = table.frame.columns()[c].name().as_str();
        out.push_str(&format!(
            "<th class=\"{}\">{}</th>",
            class(c),
            html_escape(name)
        ));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in 0..table.frame.height() {
        out.push_str("<tr>");
        for &c in &shown {
            let text = render(table, &columns, c, row)?;
            let text = html_escape(&text).replace('\n', "<br>");
            out.push_str(&format!("<td class=\"{}\">{text}</td>", class(c)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    Ok(out)
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The frame as CSV: a header of column names, then the raw values (floats in Rust's
/// shortest round-trip form, integers in digits, null as an empty field), fields quoted
/// when they hold `,`, `"`, a line break or edge spaces; lines end with `\n`.
pub fn to_csv(table: &Table) -> Result<String> {
    let columns = cells(table)?;
    let mut out = String::new();
    let header: Vec<String> = table
        .frame
        .columns()
        .iter()
        .map(|c| csv_field(c.name().as_str()))
        .collect();
    out.push_str(&header.join(","));
    out.push('\n');
    for row in 0..table.frame.height() {
        let line: Vec<String> = columns
            .iter()
            .map(|col| match &col[row] {
                Cell::Null => String::new(),
                Cell::Text(s) => csv_field(s),
                Cell::Int(v) => v.to_string(),
                Cell::Float(v) if v.is_finite() => v.to_string(),
                Cell::Float(_) => String::new(),
            })
            .collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    Ok(out)
}
