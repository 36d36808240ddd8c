//! Two corpora of the R package dslabs (Rafael A. Irizarry and Amy Gill, Artistic-2.0),
//! read out of Debian's `r-cran-dslabs` 0.7.4-1: the `.deb` is an `ar` archive whose
//! `data.tar.xz` holds the package's lazy-load database
//! (`usr/lib/R/site-library/dslabs/data/Rdata.rdx` and `.rdb`, read by [`super::rdata`]).
//!
//! **trump-tweets** ([`TRUMP_TWEETS`]): the data frame `trump_tweets`, 20,761 tweets of
//! Donald Trump's account, 2009-05 to 2018-01 (upstream: the Trump Twitter Archive).
//! - rows: every tweet posted from one of [`DEVICES`] (19,332), in the frame's order; the
//!   1,429 from other clients (TweetDeck, Instagram, ...) are left out;
//! - text: `text` as is; timestamp: `created_at` (seconds since the epoch, UTC);
//! - label: `source`, the posting device (3 classes, sorted case-insensitively). The mix
//!   shifts from the web client (2009-2013) to Android (2013-2017) to the iPhone: real
//!   label and covariate shift.
//!
//! **movielens** ([`MOVIELENS`]): the data frame `movielens`, 100,004 ratings of 9,066
//! films (upstream: MovieLens, GroupLens Research), read as one row per film:
//! - rows: the first rating row of each `movieId`, in the frame's order, with a title and
//!   a year (7 films lack both) and at least one of [`GENRES`] (8,189 films, 1902-2016);
//! - text: `title` (without the year, which the frame keeps apart);
//! - timestamp: 1 January of `year`, the release year;
//! - labels: multi-label flags over [`GENRES`], the seven commonest of the frame's 19
//!   genres, in that order (as the seed's arXiv task keeps its seven commonest
//!   categories); scored by macro ROC AUC like that task.
//!
//! `tests/corpora.rs` compares both with the rows the `rdata` Python package reads from
//! the same `.deb` (`scripts/dslabs_fixtures.py`).

use std::collections::HashSet;
use std::io::Read;
use std::path::Path;

use super::rdata::{self, RObject, RValue};
use super::{MOVIELENS, TRUMP_TWEETS, class_ids, malformed, source};
use crate::Result;
use crate::data::dataset::{Dataset, Inputs, Targets};
use crate::data::options::SourceOptions;
use crate::slices::Timestamp;

const DATA: &str = "usr/lib/R/site-library/dslabs/data/";
/// The posting devices kept, as `source` names them.
pub const DEVICES: [&str; 3] = [
    "Twitter Web Client",
    "Twitter for Android",
    "Twitter for iPhone",
];
/// The genres labelled, in label order: the seven commonest among the films.
pub const GENRES: [&str; 7] = [
    "Drama",
    "Comedy",
    "Thriller",
    "Action",
    "Romance",
    "Adventure",
    "Crime",
];

/// Loads trump-tweets from `cache` (it has no options).
pub fn load_trump_tweets(cache: &Path, _opts: &SourceOptions) -> Result<Dataset> {
    let package = super::corpus(TRUMP_TWEETS).expect("trump-tweets is a corpus");
    let (path, bytes) = package.read(cache)?;
    parse_trump_tweets(&path, &bytes)
}

/// Loads movielens from `cache` (it has no options).
pub fn load_movielens(cache: &Path, _opts: &SourceOptions) -> Result<Dataset> {
    let package = super::corpus(MOVIELENS).expect("movielens is a corpus");
    let (path, bytes) = package.read(cache)?;
    parse_movielens(&path, &bytes)
}

/// Reads trump-tweets out of the `.deb`'s bytes; errors name `path`.
pub fn parse_trump_tweets(path: &Path, deb: &[u8]) -> Result<Dataset> {
    let frame = Frame::read(path, deb, "trump_tweets")?;
    let sources = frame.strings("source")?;
    let texts = frame.strings("text")?;
    let times = frame.doubles("created_at")?;
    let (mut kept_texts, mut timestamps, mut devices) = (Vec::new(), Vec::new(), Vec::new());
    for row in 0..frame.rows {
        let Some(device) = sources[row].as_deref().filter(|s| DEVICES.contains(s)) else {
            continue;
        };
        let time = times[row];
        if !time.is_finite() {
            return Err(frame.error(format!("row {}: created_at is {time}", row + 1)));
        }
        kept_texts.push(texts[row].clone().unwrap_or_default());
        timestamps.push(Timestamp::from_millis((time * 1000.0).round() as i64));
        devices.push(device.to_string());
    }
    if kept_texts.is_empty() {
        return Err(frame.error("no tweets from the three devices".into()));
    }
    let (class_names, labels) = class_ids(&devices, str::to_lowercase);
    Ok(Dataset::classified(
        source(super::corpus(TRUMP_TWEETS).expect("a corpus")),
        timestamps,
        Inputs::Text(kept_texts),
        labels,
        class_names,
    ))
}

/// Reads movielens out of the `.deb`'s bytes; errors name `path`.
pub fn parse_movielens(path: &Path, deb: &[u8]) -> Result<Dataset> {
    let frame = Frame::read(path, deb, "movielens")?;
    let movies = frame.integers("movieId")?;
    let titles = frame.strings("title")?;
    let years = frame.integers("year")?;
    let genres = frame.strings("genres")?;
    let mut seen = HashSet::new();
    let (mut texts, mut timestamps, mut labels) = (Vec::new(), Vec::new(), Vec::new());
    for row in 0..frame.rows {
        let Some(movie) = movies[row] else {
            return Err(frame.error(format!("row {}: movieId is NA", row + 1)));
        };
        if !seen.insert(movie) {
            continue;
        }
        let (Some(title), Some(year)) = (&titles[row], years[row]) else {
            continue;
        };
        let listed: Vec<&str> = genres[row].as_deref().unwrap_or("").split('|').collect();
        let flags = GENRES.map(|g| listed.contains(&g));
        if !flags.contains(&true) {
            continue;
        }
        let time = Timestamp::from_year(year)
            .map_err(|e| frame.error(format!("row {}: year {year}: {e}", row + 1)))?;
        texts.push(title.clone());
        timestamps.push(time);
        labels.extend(flags);
    }
    if texts.is_empty() {
        return Err(frame.error("no films with a title, a year and a genre".into()));
    }
    Ok(Dataset {
        source: source(super::corpus(MOVIELENS).expect("a corpus")),
        timestamps,
        inputs: Inputs::Text(texts),
        targets: Targets::MultiLabel {
            classes: GENRES.len(),
            labels,
        },
        class_names: GENRES.iter().map(|g| g.to_string()).collect(),
    })
}

/// The bytes of the two `members` of the `.deb`'s `data.tar.xz`, in that order.
fn deb_members(path: &Path, deb: &[u8], members: [&str; 2]) -> Result<[Vec<u8>; 2]> {
    let mut ar = ar::Archive::new(deb);
    let mut compressed = None;
    while let Some(entry) = ar.next_entry() {
        let mut entry =
            entry.map_err(|e| malformed(path, format!("not a readable .deb (ar): {e}")))?;
        if entry.header().identifier() == b"data.tar.xz" {
            let mut bytes = Vec::new();
            entry
                .read_to_end(&mut bytes)
                .map_err(|e| malformed(path, format!("data.tar.xz: {e}")))?;
            compressed = Some(bytes);
            break;
        }
    }
    let compressed =
        compressed.ok_or_else(|| malformed(path, "no data.tar.xz in the .deb (ar)"))?;
    let mut tar_bytes = Vec::new();
    lzma_rs::xz_decompress(&mut compressed.as_slice(), &mut tar_bytes)
        .map_err(|e| malformed(path, format!("data.tar.xz: not xz: {e:?}")))?;
    let mut found: [Option<Vec<u8>>; 2] = [None, None];
    let mut tar = tar::Archive::new(tar_bytes.as_slice());
    let entries = tar
        .entries()
        .map_err(|e| malformed(path, format!("data.tar.xz: {e}")))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| malformed(path, format!("data.tar.xz: {e}")))?;
        let name = entry
            .path()
            .map_err(|e| malformed(path, format!("data.tar.xz: {e}")))?
            .to_string_lossy()
            .trim_start_matches("./")
            .to_string();
        if let Some(i) = members.iter().position(|m| *m == name) {
            let mut bytes = Vec::new();
            entry
                .read_to_end(&mut bytes)
                .map_err(|e| malformed(path, format!("data.tar.xz: {name}: {e}")))?;
            found[i] = Some(bytes);
        }
    }
    let [Some(a), Some(b)] = found else {
        return Err(malformed(
            path,
            format!("data.tar.xz lacks {} or {}", members[0], members[1]),
        ));
    };
    Ok([a, b])
}

/// A data frame read out of the package's database: its columns by name.
struct Frame<'p> {
    path: &'p Path,
    place: String,
    object: RObject,
    rows: usize,
}

impl<'p> Frame<'p> {
    fn read(path: &'p Path, deb: &[u8], name: &str) -> Result<Frame<'p>> {
        let rdx_name = format!("{DATA}Rdata.rdx");
        let rdb_name = format!("{DATA}Rdata.rdb");
        let [rdx, rdb] = deb_members(path, deb, [&rdx_name, &rdb_name])?;
        let index = rdata::index(&rdx).map_err(|e| malformed(path, format!("{rdx_name}: {e}")))?;
        let entry = index
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| malformed(path, format!("{rdx_name}: no object {name}")))?;
        let place = format!("{rdb_name}: {name}");
        let object =
            rdata::object(&rdb, entry).map_err(|e| malformed(path, format!("{rdb_name}: {e}")))?;
        let RValue::List(columns) = &object.value else {
            return Err(malformed(path, format!("{place}: not a data frame")));
        };
        if !object.inherits("data.frame") {
            return Err(malformed(path, format!("{place}: not a data frame")));
        }
        let rows = columns.first().map_or(0, length);
        if columns.iter().any(|c| length(c) != rows) {
            return Err(malformed(
                path,
                format!("{place}: columns of unequal length"),
            ));
        }
        Ok(Frame {
            path,
            place,
            object,
            rows,
        })
    }

    fn error(&self, what: String) -> crate::Error {
        malformed(self.path, format!("{}: {what}", self.place))
    }

    fn column(&self, name: &str) -> Result<&RObject> {
        self.object
            .element(name)
            .ok_or_else(|| self.error(format!("no column {name}")))
    }

    /// A character column, or a factor's values as their levels.
    fn strings(&self, name: &str) -> Result<Vec<Option<String>>> {
        let column = self.column(name)?;
        match &column.value {
            RValue::Strings(v) => Ok(v.clone()),
            RValue::Integer(codes) if column.inherits("factor") => {
                let levels = column.strings("levels");
                codes
                    .iter()
                    .map(|code| match code {
                        None => Ok(None),
                        Some(c) => usize::try_from(*c - 1)
                            .ok()
                            .and_then(|i| levels.get(i))
                            .map(|l| Some(l.clone()))
                            .ok_or_else(|| {
                                self.error(format!("{name}: factor code {c} has no level"))
                            }),
                    })
                    .collect()
            }
            _ => Err(self.error(format!("{name} is not a character column or a factor"))),
        }
    }

    fn integers(&self, name: &str) -> Result<&[Option<i32>]> {
        match &self.column(name)?.value {
            RValue::Integer(v) => Ok(v),
            _ => Err(self.error(format!("{name} is not an integer column"))),
        }
    }

    fn doubles(&self, name: &str) -> Result<&[f64]> {
        match &self.column(name)?.value {
            RValue::Double(v) => Ok(v),
            _ => Err(self.error(format!("{name} is not a double column"))),
        }
    }
}

/// A vector's length (0 for anything else).
fn length(object: &RObject) -> usize {
    match &object.value {
        RValue::Logical(v) => v.len(),
        RValue::Integer(v) => v.len(),
        RValue::Double(v) => v.len(),
        RValue::Strings(v) => v.len(),
        RValue::List(v) => v.len(),
        _ => 0,
    }
}
