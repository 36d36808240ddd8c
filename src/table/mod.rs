//! The one table type of drift: the paper's tables, the notebooks' tables and the CLI's
//! tables are each a [`Table`], so a value is written the same way in all of them and a
//! missing one is always [`crate::format::MISSING`].
//!
//! A table is a name (the output file stem), a caption and typed columns ([`Column`]:
//! text, integers or floats, each value possibly missing), with one [`Format`] per column
//! saying how its values read. [`Table::from_columns`] checks that every format fits its
//! column, so rendering cannot fail. It renders as
//! - a Typst `#table(..)` block ([`Table::typst`]) and CSV of the raw values
//!   ([`Table::csv`]), the paper's files;
//! - HTML: a bare `<table>` on one line ([`Table::html`], the notebooks) or one with its
//!   name as id and a class per cell for the page's stylesheet ([`Table::html_styled`],
//!   the gallery);
//! - aligned plain text for the terminal ([`Table::text`], [`Table::text_with`]).
//!
//! Here are the types and their checks; how a cell reads and each rendering are in
//! `table/render.rs`. Nothing here needs a cargo feature: the notebooks and the CLI use it
//! without the paper's dependencies.

mod render;

use crate::{Error, Result};

/// How one column's values are written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// A text column, as is.
    Text,
    /// An integer column in plain digits.
    Integer,
    /// An integer column grouped by thousands with commas (`1,234,567`).
    Grouped,
    /// A float column with this many decimals.
    Fixed(usize),
    /// A float column with this many decimals and the significance marks of the p-value
    /// in the named column of the same row: `**` p < 0.01, `*` p < 0.05.
    Marked {
        /// Decimals.
        decimals: usize,
        /// The p-value column.
        p_value: String,
    },
    /// A p-value: 3 decimals, `<0.001` when it would round to `0.000`.
    PValue,
    /// A mean with this many decimals, then `± sd` and, on a second line, the range
    /// `[min, max]`, read from the named float columns of the same row (a missing sd, as with
    /// one seed, is left out).
    Spread {
        /// Decimals.
        decimals: usize,
        /// The sample standard deviation column.
        sd: String,
        /// The minimum column.
        min: String,
        /// The maximum column.
        max: String,
    },
    /// In the CSV only: the other renderings leave the column out (e.g. the sd, min and
    /// max a [`Format::Spread`] column shows).
    Hidden,
}

/// The values of one column, all of one kind; `None` is a missing value.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// Text.
    Text(Vec<String>),
    /// Integers.
    Int(Vec<Option<i64>>),
    /// Floats (a non-finite one reads as missing).
    Float(Vec<Option<f64>>),
}

impl Values {
    /// How many values.
    pub fn len(&self) -> usize {
        match self {
            Values::Text(v) => v.len(),
            Values::Int(v) => v.len(),
            Values::Float(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values in the order `order` gives (indices into these values).
    fn permuted(&self, order: &[usize]) -> Values {
        match self {
            Values::Text(v) => Values::Text(order.iter().map(|&i| v[i].clone()).collect()),
            Values::Int(v) => Values::Int(order.iter().map(|&i| v[i]).collect()),
            Values::Float(v) => Values::Float(order.iter().map(|&i| v[i]).collect()),
        }
    }
}

/// One named column; the name is its header.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// The header.
    pub name: String,
    /// The values, one per row.
    pub values: Values,
}

impl Column {
    /// A text column.
    pub fn text(name: &str, values: Vec<String>) -> Column {
        Column {
            name: name.into(),
            values: Values::Text(values),
        }
    }

    /// An integer column.
    pub fn ints(name: &str, values: Vec<Option<i64>>) -> Column {
        Column {
            name: name.into(),
            values: Values::Int(values),
        }
    }

    /// A float column.
    pub fn floats(name: &str, values: Vec<Option<f64>>) -> Column {
        Column {
            name: name.into(),
            values: Values::Float(values),
        }
    }
}

/// One table: a name (the output file stem; empty for a table only shown), a caption and
/// columns of equal length, each with its [`Format`].
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// File stem, e.g. `robustness`, `cutoff-1` (never derived from data).
    pub name: String,
    /// Caption (plain text; may contain slice labels and the metric name: escape it with
    /// [`crate::format::typst_string`] when it goes into Typst).
    pub caption: String,
    columns: Vec<Column>,
    formats: Vec<Format>,
    /// The shown columns' widths in Typst (`auto`, `1.5fr`, ...); equal shares when unset.
    typst_widths: Option<Vec<String>>,
    /// Typst prints the names of the columns after the first `n` turned upright, so that
    /// many narrow numeric columns with long names fit the page.
    typst_upright_after: Option<usize>,
}

impl Table {
    /// A table of text cells, each shown as is: a caption (may be empty), a header and rows
    /// as long as the header. Its name is empty.
    pub fn new(caption: &str, header: &[&str], rows: Vec<Vec<String>>) -> Result<Table> {
        if let Some((i, row)) = rows
            .iter()
            .enumerate()
            .find(|(_, r)| r.len() != header.len())
        {
            return Err(Error::Invalid(format!(
                "table {caption:?}: row {i} has {} cells, the header {}",
                row.len(),
                header.len()
            )));
        }
        let columns = header
            .iter()
            .enumerate()
            .map(|(c, h)| Column::text(h, rows.iter().map(|r| r[c].clone()).collect()))
            .collect();
        Table::from_columns("", caption, columns, vec![Format::Text; header.len()])
    }

    /// A table of `columns` with one format each, checked: the columns are as long as each
    /// other, and every format fits its column (text for
    /// [`Format::Text`], integers for [`Format::Integer`] and [`Format::Grouped`], floats
    /// for the others, and the columns a [`Format::Marked`] or [`Format::Spread`] reads are
    /// float columns of this table).
    pub fn from_columns(
        name: &str,
        caption: &str,
        columns: Vec<Column>,
        formats: Vec<Format>,
    ) -> Result<Table> {
        let table = Table {
            name: name.into(),
            caption: caption.into(),
            columns,
            formats,
            typst_widths: None,
            typst_upright_after: None,
        };
        table.check()?;
        Ok(table)
    }

    /// Prints the names of the shown columns after the first `n` rotated a quarter turn
    /// (Typst only; the CSV and HTML headers stay as they are).
    pub fn with_typst_upright_names_after(mut self, n: usize) -> Table {
        self.typst_upright_after = Some(n);
        self
    }

    /// The same table with the shown columns' Typst widths (one per shown column, e.g.
    /// `auto` or `2fr`), for a table whose columns hold text of very different lengths.
    pub fn with_typst_widths(mut self, widths: &[&str]) -> Result<Table> {
        let shown = self
            .formats
            .iter()
            .filter(|f| **f != Format::Hidden)
            .count();
        if widths.len() != shown {
            return Err(Error::Invalid(format!(
                "table {}: {} widths for {shown} shown columns",
                self.name,
                widths.len()
            )));
        }
        self.typst_widths = Some(widths.iter().map(|w| w.to_string()).collect());
        Ok(self)
    }

    fn check(&self) -> Result<()> {
        let invalid = |what: String| Error::Invalid(format!("table {}: {what}", self.name));
        if self.formats.len() != self.columns.len() {
            return Err(invalid(format!(
                "{} formats for {} columns",
                self.formats.len(),
                self.columns.len()
            )));
        }
        let height = self.height();
        for column in &self.columns {
            if column.values.len() != height {
                return Err(invalid(format!(
                    "column {:?} has {} values, the first {height}",
                    column.name,
                    column.values.len()
                )));
            }
        }
        for (column, format) in self.columns.iter().zip(&self.formats) {
            if !self.fits(column, format) {
                return Err(invalid(format!(
                    "column {:?} does not fit its format {format:?}",
                    column.name
                )));
            }
        }
        Ok(())
    }

    /// Whether `format` can write `column`.
    fn fits(&self, column: &Column, format: &Format) -> bool {
        // A column a format reads by name must be the only one of that name; other names
        // may repeat (a ranking shows "model" twice: by future score, by decay).
        let float = |name: &str| {
            let mut named = self.columns.iter().filter(|c| c.name == name);
            matches!((named.next(), named.next()), (Some(c), None) if matches!(c.values, Values::Float(_)))
        };
        match (format, &column.values) {
            (Format::Hidden, _) | (Format::Text, Values::Text(_)) => true,
            (Format::Integer | Format::Grouped, Values::Int(_)) => true,
            (Format::Fixed(_) | Format::PValue, Values::Float(_)) => true,
            (Format::Marked { p_value, .. }, Values::Float(_)) => float(p_value),
            (Format::Spread { sd, min, max, .. }, Values::Float(_)) => {
                float(sd) && float(min) && float(max)
            }
            _ => false,
        }
    }

    /// The columns, in order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The formats, one per column.
    pub fn formats(&self) -> &[Format] {
        &self.formats
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The number of rows.
    pub fn height(&self) -> usize {
        self.columns.first().map_or(0, |c| c.values.len())
    }

    /// The rows reordered: by the integer column `rank` (missing last), then the text
    /// column `model`; rows that tie keep their order.
    pub fn sorted_by_rank(mut self) -> Result<Table> {
        let (Some(Values::Int(rank)), Some(Values::Text(model))) = (
            self.column("rank").map(|c| &c.values),
            self.column("model").map(|c| &c.values),
        ) else {
            return Err(Error::Invalid(format!(
                "table {}: no integer column rank and text column model to sort by",
                self.name
            )));
        };
        let mut order: Vec<usize> = (0..self.height()).collect();
        order.sort_by(|&a, &b| {
            let rank = match (rank[a], rank[b]) {
                (Some(x), Some(y)) => x.cmp(&y),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            };
            rank.then_with(|| model[a].cmp(&model[b]))
        });
        for column in &mut self.columns {
            column.values = column.values.permuted(&order);
        }
        Ok(self)
    }
}

/// How one column is padded in plain text ([`Table::text_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pad {
    /// Left-aligned, as wide as the column's longest cell.
    Left,
    /// Right-aligned, as wide as the column's longest cell.
    Right,
    /// Left-aligned in this many characters (a longer cell pushes the rest of its line).
    LeftIn(usize),
    /// Right-aligned in this many characters (a longer cell pushes the rest of its line).
    RightIn(usize),
}

/// How a table is laid out as plain text: the caption on its own line (when there is
/// one), then the header and the rows, each cell padded as its column's [`Pad`] says;
/// lines carry no trailing spaces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextLayout {
    /// Spaces before the header and each row.
    pub indent: usize,
    /// Spaces between two columns.
    pub gap: usize,
    /// One per shown column; a column past the end is [`Pad::Right`].
    pub pads: Vec<Pad>,
}

impl Default for TextLayout {
    /// No indent, two spaces between columns, every column right-aligned (the notebooks'
    /// plain-text tables).
    fn default() -> Self {
        TextLayout {
            indent: 0,
            gap: 2,
            pads: Vec::new(),
        }
    }
}
