//! Damaged files are detected, never used: seeded single-byte changes, truncations and
//! appended bytes, spread over every kind of file drift keeps (a run's matrices,
//! `run.json`, health and timing, its `SHA256SUMS`; saliency maps; encoder cache chunks
//! and manifests; the paper's figures, tables, gallery, proof files and PDF; `checksums/`),
//! each must make the loader of its kind (or `build-report --check`, which also re-hashes the
//! input files the manifest records) fail with a message
//! naming the file. With the `torch` feature, checkpoints and their cutoff records (local
//! training state, not committed) too: a damaged one must make `drift run` refuse to
//! resume or reassemble the run, naming it. (A cutoff's `<cutoff>.timing.json` holds wall
//! times only, never checked; the run's `timing.json` made from them is pinned by the
//! manifest.)
//!
//! The bounded form (the test command) damages each kind 12 times; `DRIFT_HARDEN=full`
//! (`scripts/harden`) does 1000 byte changes, 100 truncations and 100 appends in all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use drift::encoders::cache::{self, Cache, CacheSpec};
use drift::report::manifest::{self, Manifest};

use super::Stream;

/// What is done to one file.
#[derive(Clone, Debug)]
enum Damage {
    /// Byte `at` xor `mask` (never 0).
    Flip { at: usize, mask: u8 },
    /// Cut to `len` bytes (shorter than the file).
    Truncate { len: usize },
    /// Bytes added at the end.
    Append { bytes: Vec<u8> },
}

impl Damage {
    fn apply(&self, original: &[u8]) -> Vec<u8> {
        let mut bytes = original.to_vec();
        match self {
            Damage::Flip { at, mask } => bytes[*at] ^= mask,
            Damage::Truncate { len } => bytes.truncate(*len),
            Damage::Append { bytes: more } => bytes.extend(more),
        }
        bytes
    }
}

/// The check of a kind: given the scratch root and a damaged file, the message of the
/// failure it causes, or `None` when the damage went unnoticed.
type Detect = Box<dyn Fn(&Path, &str) -> Option<String>>;

/// A kind of file: its files (relative to the scratch root) and the check that must fail
/// on a damaged one, returning its message.
struct Kind {
    name: &'static str,
    files: Vec<String>,
    detect: Detect,
}

/// The scratch tree: a copy of the committed results and outputs, and an encoder cache
/// built here with the stand-in encoder of the cache tests.
struct Scratch {
    dir: tempfile::TempDir,
    spec: CacheSpec,
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir(from) {
        let rel = entry.strip_prefix(from).unwrap();
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &dest).unwrap();
    }
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walkdir(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

fn scratch() -> Scratch {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    for sub in ["results", "checksums", "figures", "report/build"] {
        copy_tree(&repo.join(sub), &dir.path().join(sub));
    }
    let texts = crate::encoder_cache::texts(cache::CHUNK_ROWS + 10);
    let spec = crate::encoder_cache::fake_spec(&texts, 4);
    cache::build(
        &dir.path().join("cache"),
        &spec,
        &texts,
        &crate::encoder_cache::Fake::new(),
        false,
    )
    .unwrap();
    // A local run with its checkpoints (the committed runs have none).
    #[cfg(feature = "torch")]
    {
        let o = local_run(dir.path()).output().unwrap();
        assert!(o.status.success(), "{}", crate::support::stderr(&o));
    }
    Scratch { dir, spec }
}

/// `drift run` of the smoke preset into `<root>/local`: trains it the first time, then
/// checks every checkpoint and record and reassembles the run.
#[cfg(feature = "torch")]
fn local_run(root: &Path) -> std::process::Command {
    super::smoke_run(Path::new(env!("CARGO_MANIFEST_DIR")), &root.join("local"))
}

fn relative(root: &Path, files: Vec<PathBuf>) -> Vec<String> {
    files
        .into_iter()
        .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
        .collect()
}

/// The message of `result`'s error, if it names `file` (by its path relative to the
/// scratch root, or its folder and name); `None` when it loads or names something else.
fn named<T>(result: drift::Result<T>, file: &str) -> Option<String> {
    let message = result.err()?.to_string();
    let path = Path::new(file);
    let short = format!(
        "{}/{}",
        path.parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy(),
        path.file_name().unwrap().to_string_lossy()
    );
    let dir = path.parent().unwrap().to_string_lossy().into_owned();
    (message.contains(file) || message.contains(&short) || message.contains(&dir))
        .then_some(message)
}

fn kinds(s: &Scratch) -> Vec<Kind> {
    let root = s.dir.path().to_path_buf();
    let all = relative(&root, walkdir(&root));
    let pick = |f: &dyn Fn(&str) -> bool| -> Vec<String> {
        all.iter().filter(|p| f(p)).cloned().collect()
    };
    let run_file = |name: &'static str| {
        move |p: &str| p.starts_with("results/") && !p.contains("/saliency/") && p.ends_with(name)
    };
    // The loader, then `build-report --check`'s input check: `timing.json` is not in its
    // run's `SHA256SUMS` (identical runs differ in it), so only the manifest pins it.
    let committed = Manifest::read(&root).unwrap();
    let load_run = move |root: &Path, file: &str| {
        let dir = root.join(Path::new(file).parent().unwrap());
        named(drift::artifacts::load_run(&dir), file).or_else(|| {
            let d = manifest::check_input_files(root, &committed).unwrap();
            let message: Vec<String> = d.iter().map(ToString::to_string).collect();
            let message = message.join("; ");
            message.contains(file).then_some(message)
        })
    };
    // `build-report --check`, one file at a time: the scratch tree is intact but for the
    // damaged file, so checking the outputs whose records could differ (the damaged
    // output, or every output a damaged manifest records differently) is the whole check.
    let committed = Manifest::read(&root).unwrap();
    let check_outputs = std::rc::Rc::new(move |root: &Path, file: &str| {
        let manifest = if file.starts_with("checksums/") {
            match Manifest::read(root) {
                Err(e) => {
                    let message = e.to_string();
                    return message.contains("checksums/").then_some(message);
                }
                Ok(m) => m,
            }
        } else {
            committed.clone()
        };
        let suspect = manifest.filtered(|p| p == file || manifest.get(p) != committed.get(p));
        let mut differences = manifest::check(root, &suspect, &[]).unwrap();
        if suspect.len() < manifest.len() || manifest.len() != committed.len() {
            // Outputs the damaged manifest no longer lists are strays.
            differences.extend(
                committed
                    .filtered(|p| manifest.get(p).is_none())
                    .entries()
                    .map(|(p, _)| manifest::Difference {
                        path: p.to_string(),
                        kind: manifest::Kind::Stray,
                    }),
            );
        }
        let shown: Vec<String> = differences.iter().map(ToString::to_string).collect();
        let message = shown.join("; ");
        (!differences.is_empty() && (message.contains(file) || file.starts_with("checksums/")))
            .then_some(message)
    });
    let spec = s.spec.clone();
    let cache_check = move |root: &Path, file: &str| {
        let opened = Cache::open(&root.join("cache"), &spec);
        let message = match opened {
            Err(e) => e.to_string(),
            Ok(None) => format!("{file}: not a finished cache (it would be built again)"),
            Ok(Some(c)) => c.verify().err()?.to_string(),
        };
        let name = Path::new(file).file_name().unwrap().to_string_lossy();
        message.contains(&*name).then_some(message)
    };
    let mut kinds = Vec::new();
    for name in [
        "matrix.csv",
        "matrix.json",
        "run.json",
        "health.json",
        "timing.json",
    ] {
        kinds.push(Kind {
            name,
            files: pick(&run_file(name)),
            detect: Box::new(load_run.clone()),
        });
    }
    kinds.push(Kind {
        name: "run SHA256SUMS",
        files: pick(&run_file("/SHA256SUMS")),
        detect: Box::new(load_run),
    });
    kinds.push(Kind {
        name: "saliency maps and their SHA256SUMS",
        files: pick(&|p| p.contains("/saliency/")),
        detect: Box::new(|root, file| {
            let dir = root.join(Path::new(file).parent().unwrap());
            let maps = walkdir(&dir)
                .into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == "json"));
            for map in maps {
                if let Err(e) = drift::saliency::load(&map) {
                    return Some(e.to_string());
                }
            }
            None
        }),
    });
    kinds.push(Kind {
        name: "encoder cache chunks, manifest and SHA256SUMS",
        files: pick(&|p| p.starts_with("cache/")),
        detect: Box::new(cache_check),
    });
    #[cfg(feature = "torch")]
    kinds.push(Kind {
        name: "checkpoints and their records",
        files: pick(&|p| {
            p.starts_with("local/") && p.contains("/checkpoints/") && !p.ends_with(".timing.json")
        }),
        detect: Box::new(|root, file| {
            let o = local_run(root).output().unwrap();
            let message = crate::support::stderr(&o);
            let name = Path::new(file).file_name().unwrap().to_string_lossy();
            (!o.status.success() && message.contains(&*name)).then_some(message)
        }),
    });
    for (name, prefix) in [
        ("figures", "figures/"),
        ("tables", "report/build/tables/"),
        ("gallery", "report/build/site/"),
        ("proof files", "report/build/proof/"),
        ("the PDF", "report/build/paper.pdf"),
        ("checksums/", "checksums/"),
    ] {
        kinds.push(Kind {
            name,
            files: pick(&|p| p.starts_with(prefix)),
            detect: Box::new({
                let check = std::rc::Rc::clone(&check_outputs);
                move |root, file| check(root, file)
            }),
        });
    }
    kinds
}

#[test]
fn every_damaged_file_is_detected_and_named() {
    let full = super::full();
    let s = scratch();
    let root = s.dir.path();
    let kinds = kinds(&s);
    let per_kind = |total: usize| {
        if full {
            total.div_ceil(kinds.len())
        } else {
            12
        }
    };
    let mut plan = Vec::new();
    let mut stream = Stream(20);
    for (k, kind) in kinds.iter().enumerate() {
        assert!(!kind.files.is_empty(), "no file of kind {}", kind.name);
        for (how, total) in [(0, 1000), (1, 100), (2, 100)] {
            let n = if full {
                per_kind(total)
            } else if how == 0 {
                8
            } else {
                2
            };
            for _ in 0..n {
                let file = kind.files[stream.below(kind.files.len())].clone();
                let len = std::fs::metadata(root.join(&file)).unwrap().len() as usize;
                let damage = match how {
                    0 => Damage::Flip {
                        at: stream.below(len),
                        mask: 1 + stream.below(255) as u8,
                    },
                    1 => Damage::Truncate {
                        len: stream.below(len),
                    },
                    _ => Damage::Append {
                        bytes: (0..1 + stream.below(16))
                            .map(|_| stream.next() as u8)
                            .collect(),
                    },
                };
                plan.push((k, file, damage));
            }
        }
    }
    let mut tried: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut missed = Vec::new();
    for (k, file, damage) in plan {
        let kind = &kinds[k];
        let path = root.join(&file);
        let original = std::fs::read(&path).unwrap();
        std::fs::write(&path, damage.apply(&original)).unwrap();
        let found = (kind.detect)(root, &file);
        std::fs::write(&path, &original).unwrap();
        let t = tried.entry(kind.name).or_default();
        t.1 += 1;
        match found {
            Some(_) => t.0 += 1,
            None => missed.push(format!("{}: {file}: {damage:?}", kind.name)),
        }
    }
    for (name, (detected, n)) in &tried {
        eprintln!("damage {name}: {detected} of {n} detected and named");
    }
    assert!(
        missed.is_empty(),
        "{} damaged files not detected:\n{}",
        missed.len(),
        missed.join("\n")
    );
}
