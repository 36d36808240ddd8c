//! The checksum manifest of the paper build: which outputs the build produced, their
//! bytes' SHA-256, and the SHA-256 of the inputs each one was made from.
//!
//! Two files under `checksums/` in the report root (the repository root), both written
//! atomically ([`crate::files::write_atomic`]) with deterministic bytes:
//!
//! - `checksums/SHA256SUMS`, in `sha256sum` format: one line `<sha256>  <path>` per output
//!   (64 lower-case hex digits, two spaces, the path relative to the root with `/`
//!   separators), sorted by path (byte order), `\n` after every line. Every figure, table,
//!   Typst source and the PDF is listed, so `sha256sum -c checksums/SHA256SUMS` run from
//!   the root checks them by hand.
//! - `checksums/inputs.json`: per output, the inputs that produced it and their combined
//!   key, keys sorted, two-space indent, final newline:
//!
//!   ```json
//!   {
//!     "schema": 1,
//!     "outputs": {
//!       "figures/smoke/cnn_s-raw.svg": {
//!         "key": "<sha256>",
//!         "inputs": {
//!           "results/smoke/cnn_s/seed-0/matrix.json": "<sha256>"
//!         }
//!       }
//!     }
//!   }
//!   ```
//!
//!   An input is named by a path relative to the root (`results/..`, `presets/..`, or a
//!   name the build chooses for something that is not a file, such as its own code) and
//!   identified by its SHA-256. The key is the SHA-256 of the inputs written in
//!   `sha256sum` format (`<sha256>  <path>\n` per input, sorted), so it can be recomputed
//!   by hand. Both files list exactly the same outputs.
//!
//! An output path is relative, uses `/`, has no empty, `.` or `..` component, no `\` or
//! control character, and is not under `checksums/`.
//!
//! The build compares what it built with the committed manifest ([`verify`]) and, for the
//! fast reviewer check, the files on disk with it ([`check`], [`strays`]); every
//! [`Difference`] displays as one line naming the path and the reason. An output whose
//! inputs and file on disk both still match the manifest need not be re-rendered
//! ([`Manifest::is_fresh`]). Same inputs but different bytes means the build is not
//! deterministic — so the build must list among an output's inputs everything that
//! decides its bytes, its own code included.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::checksum::{Sums, is_sha256, listing, mismatch, sha256_hex};
use crate::files::write_atomic;
use crate::{Error, Result};

/// The folder of the manifest, relative to the report root.
pub const DIR: &str = "checksums";
/// The output checksums, relative to the report root.
pub const SUMS: &str = "checksums/SHA256SUMS";
/// The inputs of every output, relative to the report root.
pub const INPUTS: &str = "checksums/inputs.json";
/// The `inputs.json` schema version this crate writes and reads.
pub const SCHEMA: u32 = 1;

/// Inputs of one output: path → SHA-256 (lower-case hex).
pub type Inputs = BTreeMap<String, String>;

/// One output in the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// SHA-256 of the output's bytes.
    pub sha256: String,
    /// The inputs that produced it.
    pub inputs: Inputs,
}

impl Entry {
    /// The combined input key: SHA-256 of the inputs in `sha256sum` format.
    pub fn input_key(&self) -> String {
        input_key(&self.inputs)
    }
}

/// The combined key of a set of inputs: SHA-256 of `<sha256>  <path>\n` per input, sorted.
pub fn input_key(inputs: &Inputs) -> String {
    sha256_hex(listing(inputs.iter().map(|(p, h)| (p.as_str(), h.as_str()))).as_bytes())
}

/// The manifest: every output of the build, sorted by path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    outputs: BTreeMap<String, Entry>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct InputsFile {
    schema: u32,
    outputs: BTreeMap<String, InputsRecord>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct InputsRecord {
    key: String,
    inputs: Inputs,
}

impl Manifest {
    /// An empty manifest.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an output from its bytes. Errors on an invalid or repeated path, or an input
    /// with an invalid path or hash.
    pub fn add(&mut self, path: &str, bytes: &[u8], inputs: Inputs) -> Result<()> {
        self.add_hashed(path, sha256_hex(bytes), inputs)
    }

    /// Adds an output from its SHA-256 (for an output not re-rendered because it is fresh).
    pub fn add_hashed(&mut self, path: &str, sha256: String, inputs: Inputs) -> Result<()> {
        let invalid =
            |message: String| Error::Invalid(format!("manifest output {path:?}: {message}"));
        check_path(path).map_err(invalid)?;
        if !is_sha256(&sha256) {
            return Err(invalid(format!(
                "sha256 {sha256:?} is not 64 lower-case hex digits"
            )));
        }
        check_inputs(&inputs).map_err(invalid)?;
        if self.outputs.contains_key(path) {
            return Err(invalid("added twice".into()));
        }
        self.outputs
            .insert(path.to_string(), Entry { sha256, inputs });
        Ok(())
    }

    /// The entry of one output.
    pub fn get(&self, path: &str) -> Option<&Entry> {
        self.outputs.get(path)
    }

    /// Every output, sorted by path.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.outputs.iter().map(|(p, e)| (p.as_str(), e))
    }

    /// The outputs whose paths `keep` accepts, with their inputs.
    pub fn filtered(&self, keep: impl Fn(&str) -> bool) -> Manifest {
        let outputs = self
            .outputs
            .iter()
            .filter(|(p, _)| keep(p))
            .map(|(p, e)| (p.clone(), e.clone()))
            .collect();
        Manifest { outputs }
    }

    /// Number of outputs.
    pub fn len(&self) -> usize {
        self.outputs.len()
    }

    /// Whether there is no output.
    pub fn is_empty(&self) -> bool {
        self.outputs.is_empty()
    }

    /// The bytes of `checksums/SHA256SUMS`.
    pub fn sums_text(&self) -> String {
        listing(
            self.outputs
                .iter()
                .map(|(p, e)| (p.as_str(), e.sha256.as_str())),
        )
    }

    /// The bytes of `checksums/inputs.json`.
    pub fn inputs_text(&self) -> String {
        let file = InputsFile {
            schema: SCHEMA,
            outputs: self
                .outputs
                .iter()
                .map(|(p, e)| {
                    let record = InputsRecord {
                        key: e.input_key(),
                        inputs: e.inputs.clone(),
                    };
                    (p.clone(), record)
                })
                .collect(),
        };
        serde_json::to_string_pretty(&file).expect("inputs.json serialises") + "\n"
    }

    /// Writes both files under `root/checksums/` atomically, `SHA256SUMS` last.
    pub fn write(&self, root: &Path) -> Result<()> {
        let dir = root.join(DIR);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        write_atomic(&root.join(INPUTS), self.inputs_text().as_bytes())?;
        write_atomic(&root.join(SUMS), self.sums_text().as_bytes())
    }

    /// Reads and checks the manifest under `root/checksums/`.
    pub fn read(root: &Path) -> Result<Self> {
        let read = |rel: &str| {
            let path = root.join(rel);
            match std::fs::read(&path) {
                Ok(bytes) => String::from_utf8(bytes).map_err(|_| Error::Artifact {
                    path,
                    message: "not UTF-8 text".into(),
                }),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::Artifact {
                    path,
                    message: "missing: write the manifest with build-report --update".into(),
                }),
                Err(e) => Err(Error::io(path, e)),
            }
        };
        Self::parse_in(root, &read(SUMS)?, &read(INPUTS)?)
    }

    /// Parses the two files' text; errors name `checksums/SHA256SUMS` or
    /// `checksums/inputs.json` and the line.
    pub fn parse(sums: &str, inputs: &str) -> Result<Self> {
        Self::parse_in(Path::new(""), sums, inputs)
    }

    fn parse_in(root: &Path, sums: &str, inputs: &str) -> Result<Self> {
        let sums_err = |message: String| Error::Artifact {
            path: root.join(SUMS),
            message,
        };
        let inputs_err = |message: String| Error::Artifact {
            path: root.join(INPUTS),
            message,
        };
        let mut hashes = Sums::parse_checked(sums, check_path)
            .map_err(sums_err)?
            .into_map();

        let file: InputsFile = serde_json::from_str(inputs).map_err(|e| {
            let message = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            let problem = message.strip_suffix(&suffix).unwrap_or(&message);
            inputs_err(format!(
                "line {} column {}: {problem}",
                e.line(),
                e.column()
            ))
        })?;
        if file.schema != SCHEMA {
            return Err(inputs_err(format!(
                "schema: expected {SCHEMA}, found {}",
                file.schema
            )));
        }
        let listed: BTreeSet<&String> = hashes.keys().collect();
        let recorded: BTreeSet<&String> = file.outputs.keys().collect();
        if let Some(path) = listed.difference(&recorded).next() {
            return Err(inputs_err(format!(
                "outputs: no record for {path}, which {SUMS} lists"
            )));
        }
        if let Some(path) = recorded.difference(&listed).next() {
            return Err(inputs_err(format!("outputs.{path}: not listed in {SUMS}")));
        }
        let mut manifest = Manifest::new();
        for (path, record) in file.outputs {
            check_inputs(&record.inputs)
                .map_err(|m| inputs_err(format!("outputs.{path}.inputs: {m}")))?;
            let key = input_key(&record.inputs);
            if record.key != key {
                return Err(inputs_err(format!(
                    "outputs.{path}.key: {} is not the key of its inputs, {key}",
                    record.key
                )));
            }
            let sha256 = hashes.remove(&path).expect("same outputs in both files");
            manifest.outputs.insert(
                path,
                Entry {
                    sha256,
                    inputs: record.inputs,
                },
            );
        }
        if manifest.inputs_text() != inputs {
            return Err(inputs_err(
                "not in the canonical layout this version writes (sorted keys, two-space indent, final newline)".into(),
            ));
        }
        Ok(manifest)
    }

    /// Whether `path` need not be re-rendered: the manifest lists it with exactly these
    /// inputs and the file under `root` still has the recorded bytes. `--force` skips this.
    pub fn is_fresh(&self, root: &Path, path: &str, inputs: &Inputs) -> Result<bool> {
        let Some(entry) = self.outputs.get(path) else {
            return Ok(false);
        };
        if entry.inputs != *inputs {
            return Ok(false);
        }
        let file = root.join(path);
        match std::fs::read(&file) {
            Ok(bytes) => Ok(sha256_hex(&bytes) == entry.sha256),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(Error::io(file, e)),
        }
    }
}

impl Manifest {
    /// How `path` relates to the build, for `build-report --why`: backward, if it is an
    /// output, the inputs it was made from (and, for an input that is itself an output,
    /// that output's inputs, and so on); forward, if it is an input, every output made
    /// from it (and every output made from those). One line per step, indented by depth;
    /// `None` when the manifest neither lists it nor records it as an input.
    pub fn why(&self, path: &str) -> Option<String> {
        let mut out = String::new();
        if self.outputs.contains_key(path) {
            out.push_str(&format!("{path} is made from:\n"));
            let mut seen = BTreeSet::from([path.to_string()]);
            self.backward(path, 1, &mut seen, &mut out);
        }
        let users = self.users(path);
        if !users.is_empty() {
            out.push_str(&format!("{path} feeds:\n"));
            let mut seen = BTreeSet::from([path.to_string()]);
            self.forward(path, 1, &mut seen, &mut out);
        }
        (!out.is_empty()).then_some(out)
    }

    /// Every output made from `input`, directly or through other outputs, sorted.
    pub fn feeds(&self, input: &str) -> Vec<&str> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![input];
        while let Some(next) = todo.pop() {
            for user in self.users(next) {
                if seen.insert(user) {
                    todo.push(user);
                }
            }
        }
        seen.into_iter().collect()
    }

    /// The outputs that list `input` among their inputs, sorted.
    fn users(&self, input: &str) -> Vec<&str> {
        self.outputs
            .iter()
            .filter(|(_, e)| e.inputs.contains_key(input))
            .map(|(p, _)| p.as_str())
            .collect()
    }

    fn backward(&self, path: &str, depth: usize, seen: &mut BTreeSet<String>, out: &mut String) {
        let Some(entry) = self.outputs.get(path) else {
            return;
        };
        for (input, sha256) in &entry.inputs {
            let note = if self.outputs.contains_key(input) {
                " (an output)"
            } else {
                ""
            };
            out.push_str(&format!("{}{input}  {sha256}{note}\n", "  ".repeat(depth)));
            if seen.insert(input.clone()) {
                self.backward(input, depth + 1, seen, out);
            }
        }
    }

    fn forward(&self, input: &str, depth: usize, seen: &mut BTreeSet<String>, out: &mut String) {
        for user in self.users(input) {
            out.push_str(&format!("{}{user}\n", "  ".repeat(depth)));
            if seen.insert(user.to_string()) {
                self.forward(user, depth + 1, seen, out);
            }
        }
    }
}

/// The SHA-256 of input files under `root`, named by their paths relative to it.
pub fn hash_files<S: AsRef<str>>(root: &Path, paths: &[S]) -> Result<Inputs> {
    let mut inputs = Inputs::new();
    for path in paths {
        let path = path.as_ref();
        check_path(path).map_err(|m| Error::Invalid(format!("input {path:?}: {m}")))?;
        let file = root.join(path);
        let bytes = std::fs::read(&file).map_err(|e| Error::io(&file, e))?;
        inputs.insert(path.to_string(), sha256_hex(&bytes));
    }
    Ok(inputs)
}

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
fn input_changes(committed: &Inputs, built: &Inputs) -> Vec<InputChange> {
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

/// Why `path` is not a valid manifest path, if it is not.
fn check_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("empty path".into());
    }
    if path.contains(|c: char| c == '\\' || c.is_control()) {
        return Err(format!(
            "{path:?}: a path may not hold a backslash or a control character"
        ));
    }
    if path.starts_with('/') {
        return Err(format!("{path}: not a path relative to the root"));
    }
    if path
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err(format!(
            "{path}: a path may not have an empty, . or .. component"
        ));
    }
    if path.split('/').next() == Some(DIR) {
        return Err(format!(
            "{path}: the manifest folder {DIR}/ holds no output"
        ));
    }
    Ok(())
}

fn check_inputs(inputs: &Inputs) -> Result<(), String> {
    for (path, hash) in inputs {
        check_path(path)?;
        if !is_sha256(hash) {
            return Err(format!(
                "{path}: sha256 {hash:?} is not 64 lower-case hex digits"
            ));
        }
    }
    Ok(())
}
