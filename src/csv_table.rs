//! Hand-made CSV inputs (drift-matrix and prediction files) read whole, each row with its
//! line, so that every error names the file and the line.

use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// A CSV file: its header and its rows, each with its 1-based line (the header is line 1).
pub(crate) struct CsvTable {
    path: PathBuf,
    pub(crate) header: Vec<String>,
    pub(crate) rows: Vec<(u64, Vec<String>)>,
}

impl CsvTable {
    /// Reads every row (fields trimmed); a row of the wrong length is an error.
    pub(crate) fn read(reader: impl std::io::Read, path: &Path) -> Result<Self> {
        let mut table = CsvTable {
            path: path.to_path_buf(),
            header: Vec::new(),
            rows: Vec::new(),
        };
        let mut csv = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .from_reader(reader);
        let header = csv.headers().map_err(|e| table.error(1, e.to_string()))?;
        table.header = header.iter().map(String::from).collect();
        for record in csv.records() {
            let record = record.map_err(|e| {
                let line = e.position().map_or(0, |p| p.line());
                table.error(line, message(&e))
            })?;
            let line = record.position().map_or(0, |p| p.line());
            table
                .rows
                .push((line, record.iter().map(String::from).collect()));
        }
        Ok(table)
    }

    /// Opens and reads `path`.
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        Self::read(file, path)
    }

    /// An error at `line` of this file.
    pub(crate) fn error(&self, line: u64, message: String) -> Error {
        Error::Csv {
            path: self.path.clone(),
            line,
            message,
        }
    }

    /// The index of the column named `name`.
    pub(crate) fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// Column `c` parsed by `parse`; an error names the line, column and what was expected.
    pub(crate) fn parse<T>(
        &self,
        c: usize,
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Vec<T>> {
        self.rows
            .iter()
            .map(|(line, r)| {
                parse(&r[c]).ok_or_else(|| {
                    self.error(
                        *line,
                        format!("{}: expected {expected}, got {:?}", self.header[c], r[c]),
                    )
                })
            })
            .collect()
    }
}

/// A CSV reader error in words; a row of the wrong length is compared with the header.
fn message(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("{len} fields, but the header has {expected_len}"),
        _ => e.to_string(),
    }
}
