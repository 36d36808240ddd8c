//! Loaders for the real data formats of the paper (protocol.md §7), chosen by
//! `path = "..."` in a preset.
//!
//! [`load`] picks the format from `data.options.format` (`"yearbook"`, `"amazon-reviews"`
//! or `"arxiv"`) or, when that option is absent (`"auto"`), from the path:
//!
//! - a folder with `F/` and `M/` subfolders: the Yearbook portrait folder ([`yearbook`]);
//! - a file ending in `.pkl`: Wild-Time's `yearbook.pkl` ([`yearbook`]);
//! - a file ending in `.jsonl`, `.json`, `.jsonl.gz` or `.json.gz` (JSON lines, gzip when
//!   the name ends in `.gz`): its first non-empty line decides; an object with `rating`
//!   and `timestamp` is Amazon Reviews 2023 ([`amazon`]), one with `categories` and
//!   `versions` the arXiv metadata snapshot ([`arxiv`]);
//! - anything else is an error naming the path and what was expected.
//!
//! With `format = "yearbook"` a folder is read as the portrait folder and a file as the
//! pickle; with `"amazon-reviews"` or `"arxiv"` the file is read as that format whatever
//! its name. Every error names the file and the line (JSON lines), file (portraits) or
//! entry (pickle) at fault. The JSON-lines sources record the SHA-256 of the file's bytes
//! as stored (compressed for `.gz`).

pub mod amazon;
pub mod arxiv;
pub mod yearbook;

use std::fmt::Display;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::{Dataset, Options};
use crate::checksum::HashingReader;
use crate::{Error, Result};

/// The formats `data.options.format` names.
pub const FORMATS: [&str; 3] = ["yearbook", "amazon-reviews", "arxiv"];

/// Loads the file or folder at `path` in the format its options name or its shape shows.
pub fn load(path: &Path, opts: &Options) -> Result<Dataset> {
    let format = opts.choice(
        "format",
        "auto",
        &["auto", "yearbook", "amazon-reviews", "arxiv"],
    )?;
    match format {
        "yearbook" if path.is_dir() => yearbook::load_folder(path, opts),
        "yearbook" => yearbook::load_pickle(path, opts),
        "amazon-reviews" => amazon::load(path, opts),
        "arxiv" => arxiv::load(path, opts),
        _ => {
            if path.is_dir() {
                if path.join("F").is_dir() && path.join("M").is_dir() {
                    return yearbook::load_folder(path, opts);
                }
                return Err(Error::Invalid(format!(
                    "{}: a folder of data must hold the Yearbook portraits in F/ and M/",
                    path.display()
                )));
            }
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            if name.ends_with(".pkl") {
                return yearbook::load_pickle(path, opts);
            }
            if [".jsonl", ".json", ".jsonl.gz", ".json.gz"]
                .iter()
                .any(|ext| name.ends_with(ext))
            {
                return match sniff(path)? {
                    Sniffed::Amazon => amazon::load(path, opts),
                    Sniffed::Arxiv => arxiv::load(path, opts),
                };
            }
            Err(Error::Invalid(format!(
                "{}: unknown data format (expected a folder with F/ and M/, a .pkl file, or \
                 JSON lines ending in .jsonl, .json or .gz; or set data.options.format to \
                 one of {})",
                path.display(),
                FORMATS.join(", ")
            )))
        }
    }
}

enum Sniffed {
    Amazon,
    Arxiv,
}

/// Tells the JSON-lines formats apart by the fields of the first non-blank line.
fn sniff(path: &Path) -> Result<Sniffed> {
    let mut first = None;
    non_blank_lines(BufReader::new(open(path)?), path, |line, text| {
        first = Some((line, object(path, line, text)?));
        Ok(false)
    })?;
    let Some((line, row)) = first else {
        return Err(Error::Invalid(format!("{}: no rows", path.display())));
    };
    let has = |key| row.get(key).is_some();
    if has("rating") && has("timestamp") {
        Ok(Sniffed::Amazon)
    } else if has("categories") && has("versions") {
        Ok(Sniffed::Arxiv)
    } else {
        Err(at(
            path,
            line,
            "expected Amazon Reviews 2023 (fields rating, timestamp) or the arXiv \
             metadata snapshot (fields categories, versions)",
        ))
    }
}

/// Calls `f(line number, text)` for the non-blank lines of `reader` (numbered from 1,
/// blank lines included, line ends trimmed) until it returns `false`; a line that is not
/// UTF-8 is an error.
fn non_blank_lines(
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
fn open(path: &Path) -> Result<Box<dyn Read>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    Ok(if is_gz(path) {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    })
}

/// An error at `line` (1-based) of `path`.
pub(crate) fn at(path: &Path, line: usize, message: impl Display) -> Error {
    Error::Invalid(format!("{}: line {line}: {message}", path.display()))
}

/// Calls `f(line number, text)` for every non-blank line of a JSON-lines file (gunzipped
/// when the name ends in `.gz`) and returns the SHA-256 of the file's stored bytes. Lines
/// are numbered from 1, blank lines included; a line that is not UTF-8 is an error.
pub(crate) fn each_line(
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
pub(crate) fn string<'v>(
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
pub(crate) fn object(path: &Path, line: usize, text: &str) -> Result<serde_json::Value> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| at(path, line, format!("not a JSON object: {e}")))?;
    if !value.is_object() {
        return Err(at(path, line, format!("not a JSON object: {value}")));
    }
    Ok(value)
}
