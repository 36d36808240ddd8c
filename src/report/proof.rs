//! The proof a paper carries, and its check (`drift verify-paper`).
//!
//! `build-report` writes three files under `report/build/proof/` and the paper attaches
//! them to its PDF:
//!
//! - `SHA256SUMS`: the lines of `checksums/SHA256SUMS` for every *proved output*;
//! - `inputs.json`: the same outputs' records of `checksums/inputs.json`, in its layout;
//! - `provenance.json` ([`Provenance`]): that manifest's SHA-256, the hash of the code that
//!   built the paper, `Cargo.lock`'s hash, the commits the runs were made at, and per
//!   study its presets (hash, data identity) and runs (the SHA-256 of each run folder's
//!   `SHA256SUMS`, which lists its matrix, health and `run.json`).
//!
//! The proved outputs are every output but the paper's own files (`report/build/paper.*`)
//! and the proof files: a file cannot list its own hash, and the paper's source prints the
//! manifest's hash, so neither can be in it. For the same reason the paper cannot name
//! the commit that commits it: it names the commits its runs were made at and the code
//! hash ([`super::build::code_hash`]), which a checkout reproduces. The manifest's
//! SHA-256 is printed on the last page after [`PRINTED`].
//!
//! [`verify`] checks a PDF: alone, that its attachments agree with each other and with its
//! last page; with a checkout, that the checkout's manifest is the attached one, that its
//! outputs on disk match it, that its code hashes to the attached code hash, and that the
//! PDF's bytes are the listed ones, or differ from them in metadata only ([`canonical`]:
//! a publisher's re-stamp).

use std::collections::BTreeMap;
use std::path::Path;

use lopdf::{Document, Object};
use serde::{Deserialize, Serialize};

use super::build::{OUTPUT_DIRS, PAPER_PDF, code_hash};
use super::manifest::{self, Inputs, Manifest};
use super::study::Study;
use crate::artifacts::run_dir;
use crate::checksum::sha256_hex;
use crate::{Error, Result};

/// The folder of the proof files, relative to the report root.
pub const DIR: &str = "report/build/proof";
/// The attached manifest of the proved outputs.
pub const SUMS: &str = "report/build/proof/SHA256SUMS";
/// The attached inputs of the proved outputs.
pub const INPUTS: &str = "report/build/proof/inputs.json";
/// The attached provenance.
pub const PROVENANCE: &str = "report/build/proof/provenance.json";
/// The proof files, in the order the build writes them (the provenance, which holds the
/// manifest's hash, last).
pub const FILES: [&str; 3] = [SUMS, INPUTS, PROVENANCE];
/// What the last page prints right before the manifest's SHA-256 (whitespace aside).
pub const PRINTED: &str = "Manifest SHA-256:";
/// The `provenance.json` schema version this crate writes and reads.
pub const SCHEMA: u32 = 1;

/// Whether an output is proved: listed in the attached manifest.
pub fn is_proved(path: &str) -> bool {
    !(path.starts_with("report/build/paper.") || path.starts_with("report/build/proof/"))
}

/// `provenance.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// Schema version ([`SCHEMA`]).
    pub schema: u32,
    /// SHA-256 of the attached `SHA256SUMS`.
    pub manifest_sha256: String,
    /// Number of proved outputs.
    pub outputs: usize,
    /// The code that built the paper ([`code_hash`]).
    pub code_sha256: String,
    /// SHA-256 of the build's `Cargo.lock` (null in a report root without one).
    pub cargo_lock_sha256: Option<String>,
    /// The commits the runs were made at, sorted.
    pub commits: Vec<Commit>,
    /// Every study, in the paper's order.
    pub studies: Vec<StudyRecord>,
}

/// A commit some runs were made at.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Commit {
    /// The commit id, or `unknown` when the runs were not made in a git checkout.
    pub commit: String,
    /// Whether the tree had uncommitted changes (unknown counts as dirty).
    pub dirty: bool,
}

/// One study's presets and runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyRecord {
    /// Study name.
    pub name: String,
    /// Its presets, as configured.
    pub presets: Vec<PresetRecord>,
    /// Its run folders, in run order.
    pub runs: Vec<RunRecord>,
}

/// A preset and the data its runs read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PresetRecord {
    /// Preset name.
    pub name: String,
    /// Its file, relative to the root.
    pub path: String,
    /// Its content hash, as its runs recorded it.
    pub sha256: String,
    /// The data identity its runs recorded.
    pub data: DataRecord,
}

/// A data set's identity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataRecord {
    /// Source name.
    pub name: String,
    /// Source version.
    pub version: String,
    /// SHA-256 of the data (for a generator, of its options and version).
    pub sha256: String,
}

/// One run folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRecord {
    /// The folder, relative to the root.
    pub path: String,
    /// SHA-256 of its `SHA256SUMS`, which lists its matrix, health and `run.json`.
    pub sha256sums: String,
    /// The commit it was made at (`unknown` outside git).
    pub commit: String,
    /// Whether that tree had uncommitted changes.
    pub dirty: bool,
    /// Its device (`cpu`, `cuda`, `cuda:N`).
    pub device: String,
    /// Its libtorch thread count.
    pub threads: u32,
}

/// The three proof files' bytes, in [`FILES`] order.
#[derive(Clone, Debug)]
pub struct ProofFiles {
    /// The provenance they describe.
    pub provenance: Provenance,
    /// `(path, bytes)` per file.
    pub files: Vec<(&'static str, Vec<u8>)>,
}

/// The proof of a build: `outputs` is the manifest of what the build rendered so far
/// (at least every proved output), `studies` what it was rendered from, `results` the
/// folder of the run artifacts under `root`, `inputs` the hashes of every input (each
/// run's `SHA256SUMS` and `src`, the code hash, among them).
pub fn build(
    root: &Path,
    results: &str,
    studies: &[Study],
    outputs: &Manifest,
    inputs: &Inputs,
) -> Result<ProofFiles> {
    let proved = outputs.filtered(is_proved);
    let sums = proved.sums_text();
    let inputs_text = proved.inputs_text();
    let lock = root.join("Cargo.lock");
    let cargo_lock_sha256 = match std::fs::read(&lock) {
        Ok(bytes) => Some(sha256_hex(&bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(lock, e)),
    };
    let mut commits = Vec::new();
    let mut records = Vec::new();
    for study in studies {
        let mut presets = Vec::new();
        let mut runs = Vec::new();
        for model in &study.runs {
            for p in &model.provenance {
                let commit = Commit {
                    commit: p
                        .code
                        .git_commit
                        .clone()
                        .unwrap_or_else(|| "unknown".into()),
                    dirty: p.code.git_dirty.unwrap_or(true),
                };
                let rel = run_dir(Path::new(results), &model.preset, &p.model, p.seed);
                let rel = rel.to_string_lossy().replace('\\', "/");
                let sums_path = format!("{rel}/SHA256SUMS");
                let sha256sums = inputs.get(&sums_path).cloned().ok_or_else(|| {
                    Error::Invalid(format!("{sums_path}: not among the build's inputs"))
                })?;
                runs.push(RunRecord {
                    path: rel,
                    sha256sums,
                    commit: commit.commit.clone(),
                    dirty: commit.dirty,
                    device: p.device.clone(),
                    threads: p.threads,
                });
                if !commits.contains(&commit) {
                    commits.push(commit);
                }
                if !presets
                    .iter()
                    .any(|r: &PresetRecord| r.name == p.preset.name)
                {
                    presets.push(PresetRecord {
                        name: p.preset.name.clone(),
                        path: p.preset.path.clone(),
                        sha256: p.preset.sha256.clone(),
                        data: DataRecord {
                            name: p.data.name.clone(),
                            version: p.data.version.clone(),
                            sha256: p.data.sha256.clone(),
                        },
                    });
                }
            }
        }
        records.push(StudyRecord {
            name: study.spec.name.clone(),
            presets,
            runs,
        });
    }
    commits.sort();
    let provenance = Provenance {
        schema: SCHEMA,
        manifest_sha256: sha256_hex(sums.as_bytes()),
        outputs: proved.len(),
        code_sha256: inputs
            .get("src")
            .cloned()
            .ok_or_else(|| Error::Invalid("the build's inputs lack the code hash".into()))?,
        cargo_lock_sha256,
        commits,
        studies: records,
    };
    let json = serde_json::to_string_pretty(&provenance).expect("provenance serialises") + "\n";
    Ok(ProofFiles {
        files: vec![
            (SUMS, sums.into_bytes()),
            (INPUTS, inputs_text.into_bytes()),
            (PROVENANCE, json.into_bytes()),
        ],
        provenance,
    })
}

/// One finding of [`verify`]: what was checked, and whether it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Whether it holds.
    pub holds: bool,
    /// What holds, or what does not and why, in one line.
    pub says: String,
}

impl Finding {
    fn new(holds: bool, says: impl Into<String>) -> Self {
        Finding {
            holds,
            says: says.into(),
        }
    }
}

/// What a PDF carries: its attachments by file name, and its last page's text.
#[derive(Clone, Debug)]
pub struct Carried {
    /// Attached files by their last path component.
    pub attachments: BTreeMap<String, Vec<u8>>,
    /// The text of the last page.
    pub last_page: String,
}

fn pdf_error(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::Artifact {
        path: path.to_path_buf(),
        message: format!("not a readable PDF: {message}"),
    }
}

/// Reads a PDF's attachments and last page; errors name `path`.
pub fn read_pdf(path: &Path, bytes: &[u8]) -> Result<Carried> {
    let doc = Document::load_mem(bytes).map_err(|e| pdf_error(path, e))?;
    let pages = doc.get_pages();
    let last = *pages
        .keys()
        .next_back()
        .ok_or_else(|| pdf_error(path, "it has no pages"))?;
    let last_page = doc
        .extract_text(&[last])
        .map_err(|e| pdf_error(path, format!("page {last}: {e}")))?;
    let mut attachments = BTreeMap::new();
    if let Some(tree) = embedded_files(&doc) {
        collect_names(&doc, tree, 0, &mut attachments).map_err(|e| pdf_error(path, e))?;
    }
    Ok(Carried {
        attachments,
        last_page,
    })
}

/// The catalog's `/Names /EmbeddedFiles` name tree, if any.
fn embedded_files(doc: &Document) -> Option<&lopdf::Dictionary> {
    let names = doc.catalog().ok()?.get_deref(b"Names", doc).ok()?;
    let tree = names
        .as_dict()
        .ok()?
        .get_deref(b"EmbeddedFiles", doc)
        .ok()?;
    tree.as_dict().ok()
}

/// Walks a name tree node: `/Names [name filespec ...]` and `/Kids [node ...]`. The depth
/// bound keeps a crafted, cyclic tree from recursing forever.
fn collect_names(
    doc: &Document,
    node: &lopdf::Dictionary,
    depth: usize,
    out: &mut BTreeMap<String, Vec<u8>>,
) -> std::result::Result<(), String> {
    if depth > 32 {
        return Err("the attachments' name tree is deeper than 32 levels".into());
    }
    if let Ok(names) = node.get_deref(b"Names", doc).and_then(Object::as_array) {
        for pair in names.chunks(2) {
            let [name, spec] = pair else {
                return Err("an attachment name without its file".into());
            };
            let name = String::from_utf8_lossy(name.as_str().map_err(|e| e.to_string())?);
            let (_, spec) = doc.dereference(spec).map_err(|e| e.to_string())?;
            let stream = spec
                .as_dict()
                .and_then(|d| d.get_deref(b"EF", doc))
                .and_then(Object::as_dict)
                .and_then(|ef| ef.get_deref(b"F", doc))
                .and_then(Object::as_stream)
                .map_err(|e| format!("attachment {name}: {e}"))?;
            let bytes = if stream.dict.get(b"Filter").is_ok() {
                stream
                    .decompressed_content()
                    .map_err(|e| format!("attachment {name}: {e}"))?
            } else {
                stream.content.clone()
            };
            let file = name.rsplit('/').next().unwrap_or(&name).to_string();
            out.insert(file, bytes);
        }
    }
    if let Ok(kids) = node.get_deref(b"Kids", doc).and_then(Object::as_array) {
        for kid in kids {
            let (_, kid) = doc.dereference(kid).map_err(|e| e.to_string())?;
            let kid = kid.as_dict().map_err(|e| e.to_string())?;
            collect_names(doc, kid, depth + 1, out)?;
        }
    }
    Ok(())
}

/// The SHA-256 printed after [`PRINTED`] in `text`, whitespace ignored (text extraction
/// may break a line anywhere).
///
/// ```
/// use drift::report::proof::printed_hash;
/// let h = "0123456789abcdef".repeat(4);
/// assert_eq!(printed_hash(&format!("Manifest SHA-256:\n{h}\nCode SHA-256: ...")), Some(h));
/// assert_eq!(printed_hash("Manifest SHA-256: 0123"), None);
/// ```
pub fn printed_hash(text: &str) -> Option<String> {
    let squeezed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let marker: String = PRINTED.chars().filter(|c| !c.is_whitespace()).collect();
    let at = squeezed.find(&marker)? + marker.len();
    // Exactly 64 digits: with the whitespace gone, the next line's first letters may be
    // hex digits too ("Code ...").
    let hex: String = squeezed[at..].chars().take(64).collect();
    (hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| hex.to_ascii_lowercase())
}

/// A PDF's object graph in a canonical form without its metadata: the objects reachable
/// from the catalog, numbered in the order a breadth-first walk meets them, dictionary
/// keys sorted, streams decompressed; the document information dictionary, the file
/// identifier and the catalog's XMP `/Metadata` left out. Two PDFs with equal forms
/// differ in metadata and layout of the file only.
pub fn canonical(path: &Path, bytes: &[u8]) -> Result<Vec<u8>> {
    let doc = Document::load_mem(bytes).map_err(|e| pdf_error(path, e))?;
    let root = doc
        .trailer
        .get(b"Root")
        .and_then(Object::as_reference)
        .map_err(|e| pdf_error(path, format!("trailer /Root: {e}")))?;
    let mut numbers: BTreeMap<lopdf::ObjectId, usize> = BTreeMap::from([(root, 0)]);
    let mut queue = std::collections::VecDeque::from([root]);
    let mut out = Vec::new();
    while let Some(id) = queue.pop_front() {
        let object = doc
            .get_object(id)
            .map_err(|e| pdf_error(path, format!("object {} {}: {e}", id.0, id.1)))?;
        out.extend_from_slice(format!("{} = ", numbers[&id]).as_bytes());
        let is_catalog = id == root;
        write_canonical(object, is_catalog, &mut numbers, &mut queue, &mut out)
            .map_err(|e| pdf_error(path, e))?;
        out.push(b'\n');
    }
    Ok(out)
}

fn write_canonical(
    object: &Object,
    is_catalog: bool,
    numbers: &mut BTreeMap<lopdf::ObjectId, usize>,
    queue: &mut std::collections::VecDeque<lopdf::ObjectId>,
    out: &mut Vec<u8>,
) -> std::result::Result<(), String> {
    // An explicit stack, not recursion: a crafted file cannot overflow it.
    enum Item<'a> {
        Object(&'a Object, bool),
        Raw(Vec<u8>),
    }
    let mut stack = vec![Item::Object(object, is_catalog)];
    while let Some(item) = stack.pop() {
        let object = match item {
            Item::Raw(bytes) => {
                out.extend_from_slice(&bytes);
                continue;
            }
            Item::Object(object, catalog) => match object {
                Object::Dictionary(dict) => {
                    push_dict(dict, catalog, &[], &mut stack);
                    continue;
                }
                Object::Stream(stream) => {
                    let content = if stream.dict.get(b"Filter").is_ok() {
                        stream.decompressed_content().map_err(|e| e.to_string())?
                    } else {
                        stream.content.clone()
                    };
                    let mut raw = format!("stream {} ", content.len()).into_bytes();
                    raw.extend_from_slice(&content);
                    stack.push(Item::Raw(raw));
                    let skip: &[&[u8]] = &[b"Length", b"Filter", b"DecodeParms"];
                    push_dict(&stream.dict, false, skip, &mut stack);
                    continue;
                }
                Object::Array(items) => {
                    stack.push(Item::Raw(b"]".to_vec()));
                    for item in items.iter().rev() {
                        stack.push(Item::Object(item, false));
                        stack.push(Item::Raw(b" ".to_vec()));
                    }
                    stack.push(Item::Raw(b"[".to_vec()));
                    continue;
                }
                other => other,
            },
        };
        match object {
            Object::Reference(id) => {
                let next = numbers.len();
                let n = *numbers.entry(*id).or_insert_with(|| {
                    queue.push_back(*id);
                    next
                });
                out.extend_from_slice(format!("@{n}").as_bytes());
            }
            Object::Null => out.extend_from_slice(b"null"),
            Object::Boolean(b) => out.extend_from_slice(format!("{b}").as_bytes()),
            Object::Integer(i) => out.extend_from_slice(format!("{i}").as_bytes()),
            Object::Real(r) => out.extend_from_slice(format!("{r:?}").as_bytes()),
            Object::Name(n) => {
                out.push(b'/');
                out.extend_from_slice(n);
            }
            Object::String(s, _) => {
                out.extend_from_slice(format!("({}:", s.len()).as_bytes());
                out.extend_from_slice(s);
                out.push(b')');
            }
            Object::Dictionary(_) | Object::Stream(_) | Object::Array(_) => {
                unreachable!("containers are expanded above")
            }
        }
    }
    return Ok(());

    fn push_dict<'a>(
        dict: &'a lopdf::Dictionary,
        catalog: bool,
        skip: &[&[u8]],
        stack: &mut Vec<Item<'a>>,
    ) {
        let mut entries: Vec<(&Vec<u8>, &Object)> = dict
            .iter()
            .filter(|(k, _)| !skip.contains(&k.as_slice()))
            .filter(|(k, _)| !(catalog && k.as_slice() == b"Metadata"))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        stack.push(Item::Raw(b">>".to_vec()));
        for (key, value) in entries.into_iter().rev() {
            stack.push(Item::Object(value, false));
            let mut raw = b" /".to_vec();
            raw.extend_from_slice(key);
            raw.push(b' ');
            stack.push(Item::Raw(raw));
        }
        stack.push(Item::Raw(b"<<".to_vec()));
    }
}

/// Checks the PDF at `pdf` alone and, with `repo`, against a checkout: one finding per
/// check, in order. Errors only when the PDF cannot be read at all.
pub fn verify(pdf: &Path, repo: Option<&Path>) -> Result<Vec<Finding>> {
    let bytes = std::fs::read(pdf).map_err(|e| Error::io(pdf, e))?;
    let carried = read_pdf(pdf, &bytes)?;
    let mut findings = Vec::new();
    let attached = |name: &str| carried.attachments.get(name).map(Vec::as_slice);
    let (Some(sums), Some(inputs), Some(provenance)) = (
        attached("SHA256SUMS"),
        attached("inputs.json"),
        attached("provenance.json"),
    ) else {
        let names: Vec<&str> = carried.attachments.keys().map(String::as_str).collect();
        findings.push(Finding::new(
            false,
            format!(
                "the PDF does not attach SHA256SUMS, inputs.json and provenance.json (it attaches: {})",
                if names.is_empty() { "nothing".to_string() } else { names.join(", ") }
            ),
        ));
        return Ok(findings);
    };
    let manifest_sha256 = sha256_hex(sums);
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let attached_manifest = match Manifest::parse(&text(sums), &text(inputs)) {
        Ok(m) => {
            findings.push(Finding::new(
                true,
                format!(
                    "the attached SHA256SUMS and inputs.json list the same {} outputs, each with the key of its inputs",
                    m.len()
                ),
            ));
            Some(m)
        }
        Err(e) => {
            findings.push(Finding::new(
                false,
                format!("the attached manifest is inconsistent: {e}"),
            ));
            None
        }
    };
    let provenance: Option<Provenance> = match serde_json::from_slice(provenance) {
        Ok(p) => Some(p),
        Err(e) => {
            findings.push(Finding::new(
                false,
                format!("the attached provenance.json does not parse: {e}"),
            ));
            None
        }
    };
    if let Some(p) = &provenance {
        let outputs = attached_manifest.as_ref().map(Manifest::len);
        findings.push(if p.manifest_sha256 != manifest_sha256 {
            Finding::new(
                false,
                format!(
                    "provenance.json records manifest SHA-256 {}, but the attached SHA256SUMS hashes to {manifest_sha256}",
                    p.manifest_sha256
                ),
            )
        } else if outputs.is_some_and(|n| n != p.outputs) {
            Finding::new(
                false,
                format!(
                    "provenance.json counts {} outputs, the attached manifest lists {}",
                    p.outputs,
                    outputs.unwrap_or(0)
                ),
            )
        } else {
            Finding::new(
                true,
                "provenance.json records the attached manifest's SHA-256 and output count",
            )
        });
    }
    findings.push(match printed_hash(&carried.last_page) {
        Some(h) if h == manifest_sha256 => Finding::new(
            true,
            format!("the last page prints the attached manifest's SHA-256, {h}"),
        ),
        Some(h) => Finding::new(
            false,
            format!(
                "the last page prints manifest SHA-256 {h}, but the attached SHA256SUMS hashes to {manifest_sha256}"
            ),
        ),
        None => Finding::new(
            false,
            format!("the last page prints no \"{PRINTED} <64 hex digits>\""),
        ),
    });
    let Some(repo) = repo else {
        return Ok(findings);
    };
    let committed = match Manifest::read(repo) {
        Ok(m) => m,
        Err(e) => {
            findings.push(Finding::new(false, format!("the checkout's manifest: {e}")));
            return Ok(findings);
        }
    };
    let proved = committed.filtered(is_proved);
    findings.push(match &attached_manifest {
        Some(a) if *a == proved => Finding::new(
            true,
            format!(
                "the checkout's checksums/ lists the attached manifest's {} outputs with the same bytes and inputs",
                a.len()
            ),
        ),
        Some(a) => {
            let differences = manifest::verify(a, &proved);
            let shown: Vec<String> = differences.iter().take(3).map(ToString::to_string).collect();
            Finding::new(
                false,
                format!(
                    "the checkout's checksums/ differs from the attached manifest in {} outputs, e.g. {}",
                    differences.len(),
                    shown.join("; ")
                ),
            )
        }
        None => Finding::new(
            false,
            "the checkout's manifest cannot be compared with an inconsistent attached one",
        ),
    });
    if let Some(p) = &provenance {
        let code = code_hash(repo)?;
        findings.push(if code == p.code_sha256 {
            Finding::new(true, "the checkout's code is the code that built the paper")
        } else {
            Finding::new(
                false,
                format!(
                    "the checkout's code hashes to {code}, the paper was built by code {} (another commit?)",
                    p.code_sha256
                ),
            )
        });
    }
    let on_disk = manifest::check(repo, &committed, &OUTPUT_DIRS)?;
    findings.push(if on_disk.is_empty() {
        Finding::new(
            true,
            format!(
                "all {} outputs on disk match the checkout's checksums/",
                committed.len()
            ),
        )
    } else {
        let shown: Vec<String> = on_disk.iter().take(3).map(ToString::to_string).collect();
        Finding::new(
            false,
            format!(
                "{} outputs on disk differ from the checkout's checksums/, e.g. {}",
                on_disk.len(),
                shown.join("; ")
            ),
        )
    });
    let listed = committed.get(PAPER_PDF).map(|e| e.sha256.clone());
    let own = sha256_hex(&bytes);
    findings.push(match listed {
        None => Finding::new(false, format!("the checkout's checksums/ lists no {PAPER_PDF}")),
        Some(listed) if listed == own => Finding::new(
            true,
            format!("the PDF's bytes are the ones the checkout's checksums/ lists for {PAPER_PDF}"),
        ),
        Some(listed) => {
            let built = repo.join(PAPER_PDF);
            match std::fs::read(&built) {
                Ok(reference) if sha256_hex(&reference) == listed => {
                    if canonical(&built, &reference)? == canonical(pdf, &bytes)? {
                        Finding::new(
                            true,
                            format!(
                                "the PDF differs from {PAPER_PDF} in metadata only (re-stamped): its pages and attachments are the listed ones"
                            ),
                        )
                    } else {
                        Finding::new(
                            false,
                            format!(
                                "the PDF's content differs from {PAPER_PDF}, not only its metadata"
                            ),
                        )
                    }
                }
                _ => Finding::new(
                    false,
                    format!(
                        "the PDF hashes to {own}, not to the listed {listed}, and the checkout has no {PAPER_PDF} with the listed bytes to compare it with"
                    ),
                ),
            }
        }
    });
    Ok(findings)
}
