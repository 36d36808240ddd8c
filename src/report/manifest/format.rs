//! The manifest and its two files: `checksums/SHA256SUMS` and `checksums/inputs.json`,
//! their checked paths and hashes, how they are read and written, and whether an output on
//! disk is still fresh.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::checksum::{Sums, is_sha256, listing, sha256_hex};
use crate::files::write_atomic;
use crate::{Error, Result};

/// The folder of the manifest, relative to the report root.
pub const DIR: &str = "checksums";
/// The output checksums, relative to the report root.
pub const SUMS: &str = "checksums/SHA256SUMS";
/// The inputs of every output, relative to the report root.
pub const INPUTS: &str = "checksums/inputs.json";
/// The `inputs.json` schema version this crate writes and reads. Schema 2 writes each
/// distinct set of inputs once, keyed by its combined key, and each output's key: the
/// outputs of one study share one set, so schema 1's copy of the set under every output
/// made the file (and every diff of it) a hundred times larger.
pub const SCHEMA: u32 = 2;

/// The inputs of one output: path → SHA-256 (lower-case hex).
pub type InputHashes = BTreeMap<String, String>;

/// One output in the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// SHA-256 of the output's bytes.
    pub sha256: String,
    /// The inputs that produced it.
    pub inputs: InputHashes,
}

impl Entry {
    /// The combined input key: SHA-256 of the inputs in `sha256sum` format.
    pub fn input_key(&self) -> String {
        input_key(&self.inputs)
    }
}

/// The combined key of a set of inputs: SHA-256 of `<sha256>  <path>\n` per input, sorted.
pub fn input_key(inputs: &InputHashes) -> String {
    sha256_hex(listing(inputs.iter().map(|(p, h)| (p.as_str(), h.as_str()))).as_bytes())
}

/// The manifest: every output of the build, sorted by path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    pub(super) outputs: BTreeMap<String, Entry>,
}

/// `inputs.json`: every distinct input set once, under its key ([`input_key`]), and each
/// output's key.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct InputsFile {
    schema: u32,
    sets: BTreeMap<String, InputHashes>,
    outputs: BTreeMap<String, String>,
}

/// Only the schema, read first so that an older file is named as such rather than as a
/// file with unknown fields.
#[derive(Deserialize)]
struct SchemaOnly {
    schema: u32,
}

impl Manifest {
    /// An empty manifest.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an output from its bytes. Errors on an invalid or repeated path, or an input
    /// with an invalid path or hash.
    pub fn add(&mut self, path: &str, bytes: &[u8], inputs: InputHashes) -> Result<()> {
        self.add_hashed(path, sha256_hex(bytes), inputs)
    }

    /// Adds an output from its SHA-256 (for an output not re-rendered because it is fresh).
    pub fn add_hashed(&mut self, path: &str, sha256: String, inputs: InputHashes) -> Result<()> {
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
        let mut sets = BTreeMap::new();
        let mut outputs = BTreeMap::new();
        for (path, entry) in &self.outputs {
            let key = entry.input_key();
            outputs.insert(path.clone(), key.clone());
            sets.entry(key).or_insert_with(|| entry.inputs.clone());
        }
        let file = InputsFile {
            schema: SCHEMA,
            sets,
            outputs,
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

        let json_error = |e: serde_json::Error| {
            let message = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            let problem = message.strip_suffix(&suffix).unwrap_or(&message);
            inputs_err(format!(
                "line {} column {}: {problem}",
                e.line(),
                e.column()
            ))
        };
        // The schema first: an older file is told to be rewritten, not parsed as this one.
        let schema: SchemaOnly = serde_json::from_str(inputs).map_err(json_error)?;
        if schema.schema != SCHEMA {
            return Err(inputs_err(format!(
                "schema: expected {SCHEMA}, found {} (rewrite it with build-report --update)",
                schema.schema
            )));
        }
        let file: InputsFile = serde_json::from_str(inputs).map_err(json_error)?;
        for (key, set) in &file.sets {
            check_inputs(set).map_err(|m| inputs_err(format!("sets.{key}: {m}")))?;
            let own = input_key(set);
            if *key != own {
                return Err(inputs_err(format!(
                    "sets.{key}: not the key of its inputs, {own}"
                )));
            }
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
        for (path, key) in &file.outputs {
            let inputs = file
                .sets
                .get(key)
                .ok_or_else(|| inputs_err(format!("outputs.{path}: no set {key} in sets")))?;
            let sha256 = hashes.remove(path).expect("same outputs in both files");
            manifest.outputs.insert(
                path.clone(),
                Entry {
                    sha256,
                    inputs: inputs.clone(),
                },
            );
        }
        let used: BTreeSet<&String> = file.outputs.values().collect();
        if let Some(unused) = file.sets.keys().find(|k| !used.contains(k)) {
            return Err(inputs_err(format!(
                "sets.{unused}: no output has these inputs"
            )));
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
    pub fn is_fresh(&self, root: &Path, path: &str, inputs: &InputHashes) -> Result<bool> {
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

/// The SHA-256 of input files under `root`, named by their paths relative to it.
pub fn hash_files<S: AsRef<str>>(root: &Path, paths: &[S]) -> Result<InputHashes> {
    let mut inputs = InputHashes::new();
    for path in paths {
        let path = path.as_ref();
        check_path(path).map_err(|m| Error::Invalid(format!("input {path:?}: {m}")))?;
        let file = root.join(path);
        let bytes = std::fs::read(&file).map_err(|e| Error::io(&file, e))?;
        inputs.insert(path.to_string(), sha256_hex(&bytes));
    }
    Ok(inputs)
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

fn check_inputs(inputs: &InputHashes) -> Result<(), String> {
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
