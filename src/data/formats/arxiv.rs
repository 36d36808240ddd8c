//! The arXiv metadata snapshot (Kaggle's `arxiv-metadata-oai-snapshot.json`): one JSON
//! object per line with `id`, `title`, `abstract`, `categories` (space-separated) and
//! `versions` (a list of `{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}`);
//! every other field is ignored.
//!
//! Rules:
//! - A paper is kept only if it has at least one category and ALL its categories are
//!   among the seven leaf categories of the reference; the others are dropped.
//! - Labels: multi-label flags over [`CATEGORIES`] in that fixed order (the paper's:
//!   cs.LG, hep-ph, cs.CV, cs.AI, hep-th, quant-ph, gr-qc), which are also the class
//!   names.
//! - Text: `title` and `abstract` each whitespace-collapsed (split on Unicode white
//!   space, joined by single spaces, so also trimmed), then joined by `"\n\n"`.
//! - Timestamp: `versions[0].created`, an RFC 2822 date `Www, D Mon YYYY HH:MM:SS GMT`,
//!   to the second (UTC).
//!
//! Every kept-or-not line must have these fields with these types (`id`, `title`,
//! `abstract`, `categories` strings; `versions` a non-empty list whose first entry has a
//! `created` date); otherwise the error names the file and line, e.g.
//! `arxiv.jsonl: line 3: versions[0].created: expected a date like "Mon, 2 Apr 2007
//! 19:18:42 GMT", got "yesterday"`. Blank lines are skipped.
//!
//! Source: `arxiv`, version `jsonl`, SHA-256 of the file's stored bytes.

use std::path::Path;

use super::json_lines::{at, each_line, object, string};
use crate::Result;
use crate::data::dataset::{DataSource, Dataset, Inputs, Targets};
use crate::data::options::SourceOptions;
use crate::slices::Timestamp;

/// Source name recorded in provenance.
pub const NAME: &str = "arxiv";

/// The label space, in label order.
pub const CATEGORIES: [&str; 7] = [
    "cs.LG", "hep-ph", "cs.CV", "cs.AI", "hep-th", "quant-ph", "gr-qc",
];

/// Loads a metadata snapshot, keeping the papers of the seven categories.
pub fn load(path: &Path, _opts: &SourceOptions) -> Result<Dataset> {
    let mut timestamps = Vec::new();
    let mut texts = Vec::new();
    let mut labels = Vec::new();
    let sha256 = each_line(path, |line, text| {
        let row = object(path, line, text)?;
        string(path, line, &row, "id")?;
        let title = string(path, line, &row, "title")?;
        let abstract_ = string(path, line, &row, "abstract")?;
        let categories = string(path, line, &row, "categories")?;
        let created = match row.get("versions") {
            None => return Err(at(path, line, "versions: missing")),
            Some(v) => match v.as_array().and_then(|list| list.first()) {
                None => {
                    return Err(at(
                        path,
                        line,
                        format!("versions: expected a non-empty list, got {v}"),
                    ));
                }
                Some(first) => match first.get("created") {
                    Some(serde_json::Value::String(s)) => s.as_str(),
                    other => {
                        let got = other.map_or("nothing".to_string(), |v| v.to_string());
                        return Err(at(
                            path,
                            line,
                            format!("versions[0].created: expected a string, got {got}"),
                        ));
                    }
                },
            },
        };
        let t = parse_created(created).ok_or_else(|| {
            at(
                path,
                line,
                format!(
                    "versions[0].created: expected a date like \"Mon, 2 Apr 2007 19:18:42 \
                     GMT\", got {created:?}"
                ),
            )
        })?;
        let mut flags = [false; CATEGORIES.len()];
        let mut any = false;
        for category in categories.split_whitespace() {
            match CATEGORIES.iter().position(|c| *c == category) {
                Some(i) => {
                    flags[i] = true;
                    any = true;
                }
                None => return Ok(()),
            }
        }
        if any {
            timestamps.push(t);
            texts.push(format!("{}\n\n{}", collapse(title), collapse(abstract_)));
            labels.extend_from_slice(&flags);
        }
        Ok(())
    })?;
    Ok(Dataset {
        source: DataSource::new(NAME, "jsonl", sha256),
        timestamps,
        inputs: Inputs::Text(texts),
        targets: Targets::MultiLabel {
            classes: CATEGORIES.len(),
            labels,
        },
        class_names: CATEGORIES.iter().map(|c| c.to_string()).collect(),
    })
}

/// Runs of white space to single spaces, trimmed.
pub fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `Www, D Mon YYYY HH:MM:SS GMT` (the day of the week is not checked against the date).
fn parse_created(text: &str) -> Option<Timestamp> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [weekday, day, month, year, clock, zone] = parts[..] else {
        return None;
    };
    if !weekday.ends_with(',') || !(zone == "GMT" || zone == "UTC") {
        return None;
    }
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| *m == month)? as u8 + 1;
    let date = Timestamp::from_date(year.parse().ok()?, month, day.parse().ok()?).ok()?;
    let hms: Vec<i64> = clock
        .split(':')
        .map(|p| p.parse().ok().filter(|_| p.len() == 2))
        .collect::<Option<_>>()?;
    let [h, m, s] = hms[..] else { return None };
    if h > 23 || m > 59 || s > 60 {
        return None;
    }
    Some(Timestamp(date.0 + h * 3600 + m * 60 + s))
}
