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
mod json_lines;
pub mod yearbook;

use std::io::BufReader;
use std::path::Path;

use json_lines::{at, non_blank_lines, object, open};

use crate::data::dataset::Dataset;
use crate::data::options::SourceOptions;
use crate::{Error, Result};

/// The formats `data.options.format` names.
pub const FORMATS: [&str; 3] = ["yearbook", "amazon-reviews", "arxiv"];

/// Loads the file or folder at `path` in the format its options name or its shape shows.
pub fn load(path: &Path, opts: &SourceOptions) -> Result<Dataset> {
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
