//! How a build, or the files on disk, differ from the committed manifest: every
//! [`Difference`] with its reason, one line each when displayed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use super::format::{INPUTS, InputHashes, Manifest, SUMS};
use crate::checksum::{mismatch, sha256_hex};
use crate::{Error, Result};

impl Difference {
    /// The inputs whose change this difference reports (none for other kinds).
    pub fn changed_inputs(&self) -> impl Iterator<Item = &str> {
        let changes: &[InputChange] = match &self.kind {
            Kind::Changed(Reason::InputsChanged(c)) | Kind::StaleInputs(c) => c,
            _ => &[],
        };
        changes.iter().map(|c| c.path.as_str())
    }
}

/// One way the build or the files on disk differ from the committed manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The output path, relative to the root.
    pub path: String,
    /// How it differs.
    pub kind: Kind,
}

/// How an output differs from the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// ([`verify`]) Built with other bytes than the manifest records.
    Changed(Reason),
    /// ([`verify`]) Built with the recorded bytes, from other inputs than recorded: the
    /// manifest's record of its inputs is stale.
    StaleInputs(Vec<InputChange>),
    /// ([`verify`]) In the manifest, not built.
    NotBuilt,
    /// ([`verify`]) Built, not in the manifest.
    New,
    /// ([`check`]) In the manifest, not on disk.
    Missing,
    /// ([`check`]) On disk with other bytes than the manifest records.
    Modified {
        /// SHA-256 of the file on disk.
        actual: String,
        /// SHA-256 in the manifest.
        recorded: String,
    },
    /// ([`strays`]) A file in an output folder that the manifest does not list.
    Stray,
    /// ([`check_input_files`]) An input file (`path` is the input) whose bytes are not the
    /// ones `inputs.json` records, or (`actual` is `None`) that is gone.
    InputModified {
        /// SHA-256 of the file on disk, if there is one.
        actual: Option<String>,
        /// SHA-256 in `inputs.json`.
        recorded: String,
    },
}

/// Why a built output's bytes changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Its inputs differ from the recorded ones.
    InputsChanged(Vec<InputChange>),
    /// Same inputs, other bytes: the build is not deterministic.
    NonDeterministic,
}

/// One input that differs from the manifest's record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputChange {
    /// The input path.
    pub path: String,
    /// How it differs.
    pub change: Change,
}

/// How an input differs from the manifest's record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Recorded with another SHA-256.
    Changed,
    /// Not recorded.
    Added,
    /// Recorded, no longer used.
    Removed,
}

impl fmt::Display for InputChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let change = match self.change {
            Change::Changed => "changed",
            Change::Added => "added",
            Change::Removed => "removed",
        };
        write!(f, "{} {change}", self.path)
    }
}

fn list(changes: &[InputChange]) -> String {
    let items: Vec<String> = changes.iter().map(ToString::to_string).collect();
    items.join(", ")
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = &self.path;
        match &self.kind {
            Kind::Changed(Reason::InputsChanged(changes)) => write!(
                f,
                "{path}: differs from the manifest: its inputs changed ({})",
                list(changes)
            ),
            Kind::Changed(Reason::NonDeterministic) => write!(
                f,
                "{path}: differs from the manifest with the same inputs: the build is not deterministic"
            ),
            Kind::StaleInputs(changes) => write!(
                f,
                "{path}: same bytes as the manifest, but its inputs changed ({}): the recorded inputs are stale (run with --update)",
                list(changes)
            ),
            Kind::NotBuilt => write!(f, "{path}: in the manifest but not built"),
            Kind::New => write!(
                f,
                "{path}: built but not in the manifest (run with --update)"
            ),
            Kind::Missing => write!(f, "{path}: in the manifest but missing on disk"),
            Kind::Modified { actual, recorded } => {
                write!(f, "{path}: modified: {}", mismatch(actual, recorded, SUMS))
            }
            Kind::Stray => write!(
                f,
                "{path}: in an output folder but not in the manifest (every output must be listed in {SUMS})"
            ),
            Kind::InputModified {
                actual: Some(actual),
                recorded,
            } => write!(
                f,
                "{path}: input modified: {}",
                mismatch(actual, recorded, INPUTS)
            ),
            Kind::InputModified { actual: None, .. } => {
                write!(f, "{path}: an input recorded in {INPUTS}, missing on disk")
            }
        }
    }
}

/// How `built` inputs differ from `committed` ones, sorted by path.
fn input_changes(committed: &InputHashes, built: &InputHashes) -> Vec<InputChange> {
    let paths: BTreeSet<&String> = committed.keys().chain(built.keys()).collect();
    paths
        .into_iter()
        .filter_map(|path| {
            let change = match (committed.get(path), built.get(path)) {
                (Some(a), Some(b)) if a == b => return None,
                (Some(_), Some(_)) => Change::Changed,
                (None, _) => Change::Added,
                (_, None) => Change::Removed,
            };
            Some(InputChange {
                path: path.clone(),
                change,
            })
        })
        .collect()
}

/// Every output of `built` that differs from `committed`, or is missing from either,
/// sorted by path.
pub fn verify(committed: &Manifest, built: &Manifest) -> Vec<Difference> {
    let paths: BTreeSet<&String> = committed
        .outputs
        .keys()
        .chain(built.outputs.keys())
        .collect();
    paths
        .into_iter()
        .filter_map(|path| {
            let kind = match (committed.get(path), built.get(path)) {
                (Some(old), Some(new)) => {
                    let changes = input_changes(&old.inputs, &new.inputs);
                    match (old.sha256 == new.sha256, changes.is_empty()) {
                        (true, true) => return None,
                        (true, false) => Kind::StaleInputs(changes),
                        (false, true) => Kind::Changed(Reason::NonDeterministic),
                        (false, false) => Kind::Changed(Reason::InputsChanged(changes)),
                    }
                }
                (Some(_), None) => Kind::NotBuilt,
                (None, _) => Kind::New,
            };
            Some(Difference {
                path: path.clone(),
                kind,
            })
        })
        .collect()
}

/// The fast reviewer check, without rebuilding: re-hashes every output of `committed`
/// under `root` (reporting missing and modified files) and lists the files in the output
/// folders `dirs` (relative to `root`) that it does not list. Sorted by path.
pub fn check(root: &Path, committed: &Manifest, dirs: &[&str]) -> Result<Vec<Difference>> {
    let mut out = Vec::new();
    for (path, entry) in committed.entries() {
        let file = root.join(path);
        let kind = match std::fs::read(&file) {
            Ok(bytes) => {
                let actual = sha256_hex(&bytes);
                if actual == entry.sha256 {
                    continue;
                }
                Kind::Modified {
                    actual,
                    recorded: entry.sha256.clone(),
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Kind::Missing,
            Err(e) => return Err(Error::io(file, e)),
        };
        out.push(Difference {
            path: path.to_string(),
            kind,
        });
    }
    out.extend(strays(root, dirs, committed)?);
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// The input files the manifest records (every one but `src`, the code, which only a
/// build compares) whose bytes on disk are not the recorded ones, sorted: [`check`] reads
/// only outputs, so without this a damaged result file (`timing.json` is not in its run's
/// `SHA256SUMS`) would pass `build-report --check`.
pub fn check_input_files(root: &Path, committed: &Manifest) -> Result<Vec<Difference>> {
    let mut recorded: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for entry in committed.outputs.values() {
        for (path, sha) in &entry.inputs {
            if path != "src" {
                recorded.entry(path).or_default().insert(sha);
            }
        }
    }
    let mut out = Vec::new();
    for (path, hashes) in recorded {
        let file = root.join(path);
        let actual = match std::fs::read(&file) {
            Ok(bytes) => Some(sha256_hex(&bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(file, e)),
        };
        if let Some(recorded) = hashes.iter().find(|h| actual.as_deref() != Some(**h)) {
            out.push(Difference {
                path: path.to_string(),
                kind: Kind::InputModified {
                    actual,
                    recorded: recorded.to_string(),
                },
            });
        }
    }
    Ok(out)
}

/// The files (anything but a folder) under the output folders `dirs` of `root` that
/// `manifest` does not list, sorted: nothing may be written to them outside the manifest.
/// A folder that does not exist holds nothing.
pub fn strays(root: &Path, dirs: &[&str], manifest: &Manifest) -> Result<Vec<Difference>> {
    let mut out = Vec::new();
    for path in files_under(root, dirs)? {
        if manifest.get(&path).is_none() {
            out.push(Difference {
                path,
                kind: Kind::Stray,
            });
        }
    }
    Ok(out)
}

/// Every file (anything but a folder) under the folders `dirs` of `root`, as sorted
/// paths relative to `root` with `/` separators.
pub fn files_under(root: &Path, dirs: &[&str]) -> Result<Vec<String>> {
    let mut files = BTreeSet::new();
    for dir in dirs {
        let top = root.join(dir);
        if !top.exists() {
            continue;
        }
        for entry in walkdir::WalkDir::new(&top) {
            let entry = entry.map_err(|e| {
                let path = e.path().map_or_else(|| top.clone(), Path::to_path_buf);
                Error::io(path, e.into())
            })?;
            if entry.file_type().is_dir() {
                continue;
            }
            files.insert(relative(root, entry.path()));
        }
    }
    Ok(files.into_iter().collect())
}

fn relative(root: &Path, path: &Path) -> String {
    let rel: PathBuf = path.strip_prefix(root).unwrap_or(path).to_path_buf();
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}
