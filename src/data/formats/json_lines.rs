//! Reading JSON lines, the shape of the Amazon Reviews and arXiv files: line by line
//! (gunzipped when the name ends in `.gz`), every error naming the file and the line, and
//! the SHA-256 of the bytes as stored, which the loaders record as the data's identity.

use std::fmt::Display;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::checksum::HashingReader;
use crate::{Error, Result};

/// Calls `f(line number, text)` for the non-blank lines of `reader` (numbered from 1,
/// blank lines included, line ends trimmed) until it returns `false`; a line that is not
/// UTF-8 is an error.
pub(super) fn non_blank_lines(
    mut reader: impl BufRead,
    path: &Path,
    mut f: impl FnMut(usize, &str) -> Result<bool>,
) -> Result<()> {
    let mut buf = Vec::new();
    for line in 1.. {
        buf.clear();
        if reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| at(path, line, e))?
            == 0
        {
            break;
        }
        let text = std::str::from_utf8(&buf).map_err(|_| at(path, line, "not UTF-8"))?;
        let text = text.trim_end_matches(['\n', '\r']);
        if !text.trim().is_empty() && !f(line, text)? {
            break;
        }
    }
    Ok(())
}

fn is_gz(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "gz")
}

/// The file's bytes, gunzipped when its name ends in `.gz`.
pub(super) fn open(path: &Path) -> Result<Box<dyn Read>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    Ok(if is_gz(path) {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    })
}

/// An error at `line` (1-based) of `path`.
pub(super) fn at(path: &Path, line: usize, message: impl Display) -> Error {
    Error::Invalid(format!("{}: line {line}: {message}", path.display()))
}

/// Calls `f(line number, text)` for every non-blank line of a JSON-lines file (gunzipped
/// when the name ends in `.gz`) and returns the SHA-256 of the file's stored bytes. Lines
/// are numbered from 1, blank lines included; a line that is not UTF-8 is an error.
pub(super) fn each_line(
    path: &Path,
    mut f: impl FnMut(usize, &str) -> Result<()>,
) -> Result<String> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hashing = HashingReader::new(file);
    {
        let reader: Box<dyn Read + '_> = if is_gz(path) {
            Box::new(flate2::read::MultiGzDecoder::new(&mut hashing))
        } else {
            Box::new(&mut hashing)
        };
        let reader = BufReader::with_capacity(1 << 16, reader);
        non_blank_lines(reader, path, |line, text| f(line, text).map(|()| true))?;
    }
    // Hash whatever a decoder left unread (e.g. gzip padding) so the digest covers the file.
    hashing.finish().map_err(|e| Error::io(path, e))
}

/// A JSON field that must be a string.
pub(super) fn string<'v>(
    path: &Path,
    line: usize,
    row: &'v serde_json::Value,
    key: &str,
) -> Result<&'v str> {
    match row.get(key) {
        None => Err(at(path, line, format!("{key}: missing"))),
        Some(v) => v
            .as_str()
            .ok_or_else(|| at(path, line, format!("{key}: expected a string, got {v}"))),
    }
}

/// A line parsed as a JSON object.
pub(super) fn object(path: &Path, line: usize, text: &str) -> Result<serde_json::Value> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| at(path, line, format!("not a JSON object: {e}")))?;
    if !value.is_object() {
        return Err(at(path, line, format!("not a JSON object: {value}")));
    }
    Ok(value)
}
