//! Every parser of a file a user hands drift, fuzzed with proptest: no input makes one
//! panic, and every error names the file. The generators know the formats: most cases
//! are a valid document (a committed run folder, a preset of the test suite, a Wild-Time
//! pickle...) with a few edits (a byte replaced, a span deleted or repeated, a line
//! dropped, a token swapped for a hostile one: NaN, 1e309, 2^64, `../`, NUL, a long
//! name), the rest arbitrary bytes.
//!
//! Cases per parser: `PROPTEST_CASES` (64 when unset: the bounded form the test command
//! runs); `scripts/harden` runs 100,000. The seed is fixed (`PROPTEST_RNG_SEED`
//! overrides it), so a failure reproduces.

use std::fmt::Debug;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};

/// Tokens that break parsers: numbers out of range or not finite, paths out of the tree,
/// control characters, quotes and separators, a long name.
const HOSTILE: &[&str] = &[
    "",
    "-1",
    "0",
    "-0",
    "1e309",
    "NaN",
    "inf",
    "-inf",
    "18446744073709551616",
    "9223372036854775807",
    "0.0000000000000000000000000001",
    "../../etc/passwd",
    "/etc/passwd",
    "..",
    "\0",
    "\u{feff}",
    "\u{202e}",
    "\"",
    "'",
    ",",
    "\n",
    "\r\n",
    "[[",
    "{",
    "}",
    "]",
    "=",
    "é",
    "\u{7f}",
];

/// One edit of a valid document; positions are taken modulo its length.
#[derive(Clone, Debug)]
enum Edit {
    Byte(usize, u8),
    Delete(usize, usize),
    Repeat(usize, usize),
    DropLine(usize),
    Token(usize, usize),
    Long(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Edit::Byte(at, b)),
        (any::<usize>(), 1..64usize).prop_map(|(at, n)| Edit::Delete(at, n)),
        (any::<usize>(), 1..64usize).prop_map(|(at, n)| Edit::Repeat(at, n)),
        any::<usize>().prop_map(Edit::DropLine),
        (any::<usize>(), 0..HOSTILE.len()).prop_map(|(at, t)| Edit::Token(at, t)),
        any::<usize>().prop_map(Edit::Long),
    ]
}

/// The spans of `doc` that are tokens: runs of letters, digits and `.-+_`.
fn tokens(doc: &[u8]) -> Vec<(usize, usize)> {
    let is_token = |b: u8| b.is_ascii_alphanumeric() || b".-+_".contains(&b);
    let mut spans = Vec::new();
    let mut start = None;
    for (i, &b) in doc.iter().chain(std::iter::once(&b' ')).enumerate() {
        match (is_token(b), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    spans
}

fn apply(mut doc: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let n = doc.len().max(1);
        match *e {
            Edit::Byte(at, b) if !doc.is_empty() => doc[at % n] = b,
            Edit::Delete(at, len) => {
                let at = at % n;
                let end = (at + len).min(doc.len());
                doc.drain(at.min(end)..end);
            }
            Edit::Repeat(at, len) => {
                let at = at % n;
                let end = (at + len).min(doc.len());
                let span = doc[at.min(end)..end].to_vec();
                doc.splice(at.min(end)..at.min(end), span);
            }
            Edit::DropLine(k) => {
                let lines: Vec<&[u8]> = doc.split(|&b| b == b'\n').collect();
                let k = k % lines.len();
                doc = lines
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != k)
                    .map(|(_, l)| l.to_vec())
                    .collect::<Vec<_>>()
                    .join(&b'\n');
            }
            Edit::Token(k, _) | Edit::Long(k) if !tokens(&doc).is_empty() => {
                let spans = tokens(&doc);
                let (s, end) = spans[k % spans.len()];
                let with = match *e {
                    Edit::Token(_, t) => HOSTILE[t].as_bytes().to_vec(),
                    _ => vec![b'a'; 5000],
                };
                doc.splice(s..end, with);
            }
            _ => {}
        }
    }
    doc
}

/// Mostly `valid` with up to six edits; now and then arbitrary bytes.
fn document(valid: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        9 => prop::collection::vec(edit(), 1..6).prop_map(move |edits| apply(valid.clone(), &edits)),
        1 => prop::collection::vec(any::<u8>(), 0..600),
    ]
}

/// The runner: `PROPTEST_CASES` cases (64 when unset), seed 20 unless
/// `PROPTEST_RNG_SEED` says otherwise, no failure files.
fn fuzz<T: Debug>(
    parser: &str,
    strategy: impl Strategy<Value = T>,
    test: impl Fn(T) -> Result<(), TestCaseError>,
) {
    let mut config = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 64;
    }
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = RngSeed::Fixed(20);
    }
    config.failure_persistence = None;
    let cases = config.cases;
    let mut runner = TestRunner::new(config);
    if let Err(e) = runner.run(&strategy, test) {
        panic!("{parser}: {e}");
    }
    eprintln!("fuzz {parser}: {cases} cases, no panic, every error named the input");
}

/// An error, if any, names `path` (its file name: errors may print it relative or whole).
fn names<T>(result: drift::Result<T>, path: &Path) -> Result<(), TestCaseError> {
    if let Err(e) = result {
        let name = path.file_name().unwrap().to_string_lossy();
        let message = e.to_string();
        prop_assert!(
            message.contains(&*name),
            "the error does not name {name}: {message}"
        );
    }
    Ok(())
}

/// Writes `bytes` to `dir/name` and returns the path.
fn put(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn repo(path: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

#[test]
fn presets() {
    let dir = tempfile::tempdir().unwrap();
    let valid = [
        crate::presets::VALID.as_bytes().to_vec(),
        repo("presets/paper/ht-tokens.toml"),
    ];
    let strategy = prop_oneof![document(valid[0].clone()), document(valid[1].clone())];
    fuzz("presets", strategy, |doc| {
        let path = put(dir.path(), "fuzzed-preset.toml", &doc);
        names(drift::preset::Preset::load(&path), &path)
    });
}

#[test]
fn studies_and_claims() {
    let dir = tempfile::tempdir().unwrap();
    let strategy = prop_oneof![
        document(repo("report/studies.toml")).prop_map(|d| (true, d)),
        document(repo("report/claims.toml")).prop_map(|d| (false, d)),
    ];
    fuzz(
        "studies.toml and claims.toml",
        strategy,
        |(studies, doc)| {
            if studies {
                let path = put(dir.path(), "fuzzed-studies.toml", &doc);
                names(drift::report::study::read_specs(&path), &path)
            } else {
                let path = put(dir.path(), "fuzzed-claims.toml", &doc);
                names(drift::report::claims::read(&path), &path)
            }
        },
    );
}

#[test]
fn matrix_csv() {
    let dir = tempfile::tempdir().unwrap();
    let valid = repo("results/emoji/cnn_s/seed-0/matrix.csv");
    fuzz("matrix CSV", document(valid), |doc| {
        let path = put(dir.path(), "fuzzed-matrix.csv", &doc);
        names(
            drift::matrix::read_long_csv(&path, drift::Metric::BalancedAccuracy),
            &path,
        )
    });
}

/// A committed run folder with one of its files fuzzed and `SHA256SUMS` rewritten to
/// match, so that the file's parser (not only the checksum) meets the bytes; or
/// `SHA256SUMS` itself fuzzed.
#[test]
fn run_folders() {
    fuzz_run_folder(
        "run folders",
        "results/emoji/cnn_s/seed-0",
        &[
            "run.json",
            "matrix.json",
            "matrix.csv",
            "health.json",
            "timing.json",
        ],
    );
}

/// The same with a run that computed detectors, fuzzing its `detectors.json` among the rest.
#[test]
fn run_folders_with_detectors() {
    fuzz_run_folder(
        "run folders with detectors.json",
        "results/ht-minilm/linear/seed-0",
        &["detectors.json", "run.json", "timing.json"],
    );
}

#[test]
fn run_folders_with_history() {
    fuzz_run_folder(
        "run folders with history.json",
        "tests/fixtures/history-run/smoke-single/mlp_s/seed-0",
        &["history.json", "run.json", "timing.json"],
    );
}

/// Fuzzes one of `files` of the committed run folder `run` (or its `SHA256SUMS`), the
/// other files as committed, and loads the folder.
fn fuzz_run_folder(parser: &str, run: &'static str, files: &[&'static str]) {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join(run);
    let mut names: Vec<&'static str> = std::fs::read_dir(&committed)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "SHA256SUMS" && !n.starts_with('.') && committed.join(n).is_file())
        .map(|n| &*Box::leak(n.into_boxed_str()))
        .collect();
    names.sort_unstable();
    let fuzzed: Vec<&'static str> = files.iter().copied().chain(["SHA256SUMS"]).collect();
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join(run);
    std::fs::create_dir_all(&folder).unwrap();
    let originals: Vec<Vec<u8>> = fuzzed.iter().map(|f| repo(&format!("{run}/{f}"))).collect();
    let strategy = (0..fuzzed.len())
        .prop_flat_map(move |k| document(originals[k].clone()).prop_map(move |doc| (k, doc)));
    let leaf = Path::new(run)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    fuzz(parser, strategy, |(k, doc)| {
        for name in names.iter().chain(["SHA256SUMS"].iter()) {
            let bytes = if *name == fuzzed[k] {
                doc.clone()
            } else {
                repo(&format!("{run}/{name}"))
            };
            put(&folder, name, &bytes);
        }
        if fuzzed[k] != "SHA256SUMS" {
            // The checked files as the committed listing names them, with the fuzzed bytes.
            let mut sums = drift::checksum::Sums::new();
            let listed = String::from_utf8(repo(&format!("{run}/SHA256SUMS"))).unwrap();
            for line in listed.lines() {
                let name = &line[66..];
                sums.add(name.to_string(), &std::fs::read(folder.join(name)).unwrap());
            }
            put(&folder, "SHA256SUMS", sums.to_text().as_bytes());
        }
        let result = drift::artifacts::load_run(&folder);
        if let Err(e) = &result {
            let message = e.to_string();
            prop_assert!(
                message.contains(&leaf),
                "the error does not name the run folder or a file in it: {message}"
            );
        }
        Ok(())
    });
}

/// A cutoff's detector file (`checkpoints/<label>.detectors.json`, what a resumed
/// `drift run --detectors` reads back): no bytes make it panic, errors name it.
#[test]
fn cutoff_detector_files() {
    let dir = tempfile::tempdir().unwrap();
    let valid = dir.path().join("valid.detectors.json");
    drift::detectors::write_cutoff(&valid, "ab", &drift::detectors::CutoffDetectors::default())
        .unwrap();
    let valid = std::fs::read(&valid).unwrap();
    fuzz("cutoff detector files", document(valid), |doc| {
        let path = put(dir.path(), "1990s.detectors.json", &doc);
        names(drift::detectors::read_cutoff(&path, "ab"), &path)
    });
}

/// R's serialisation and lazy-load database (the dslabs corpora's `.deb`): no bytes make
/// the reader panic or allocate past the bytes it is given, and the loaders' errors name
/// the `.deb`. Documents are small data frames written by `tests/rdata.rs`.
#[test]
fn r_databases() {
    use crate::rdata::{database, deb, movies, serialize, tweets};
    use drift::data::corpora::{dslabs, rdata};
    let streams = [serialize(&tweets()), serialize(&movies())];
    let strategy = prop_oneof![document(streams[0].clone()), document(streams[1].clone())];
    fuzz("R serialisation", strategy, |doc| {
        if let Err(e) = rdata::unserialize(&doc) {
            prop_assert!(!e.is_empty());
        }
        Ok(())
    });
    let (rdx, rdb) = database(&[("movielens", movies())]);
    fuzz("R database index", document(rdx), |doc| {
        if let Ok(index) = rdata::index(&doc) {
            for entry in &index {
                let _ = rdata::object(&rdb, entry);
            }
        }
        Ok(())
    });
    // Damaged objects inside a well-formed .deb reach the loader's own errors.
    let path = Path::new("/cache/r-cran-dslabs_0.7.4-1_all.deb");
    let strategy = prop_oneof![document(streams[0].clone()), document(streams[1].clone())];
    fuzz("dslabs .deb", strategy, |doc| {
        let object = rdata::unserialize(&doc).unwrap_or_else(|_| movies());
        let built = deb(&[("trump_tweets", object.clone()), ("movielens", object)]);
        names(dslabs::parse_trump_tweets(path, &built), path)?;
        names(dslabs::parse_movielens(path, &built), path)
    });
}

/// A cached row of representation detectors (`<out>/<preset>/.detectors/<key>/<i>.json`):
/// no bytes make reading it panic, and only the exact file for its key is used.
#[test]
fn cached_representation_rows() {
    let dir = tempfile::tempdir().unwrap();
    let valid = br#"{"key":"k","row":{"ks":[null,0.25],"mmd":[null,null]}}"#.to_vec();
    let path = put(dir.path(), "0.json", &valid);
    assert!(drift::detectors::cached_row(&path, "k").is_some());
    assert!(drift::detectors::cached_row(&path, "other").is_none());
    fuzz(
        "cached representation rows",
        document(valid.clone()),
        |doc| {
            let path = put(dir.path(), "0.json", &doc);
            let read = drift::detectors::cached_row(&path, "k");
            if doc != valid {
                // Another document may still be a valid row for the key; it is then that row.
                if let Some(row) = read {
                    let text = String::from_utf8_lossy(&doc).to_string();
                    prop_assert!(text.contains("\"k\""), "{row:?} from {text}");
                }
            }
            Ok(())
        },
    );
}

/// A checkpoint's history file (`checkpoints/<label>.history.json`, what a resumed
/// `drift run` reads back): no bytes make it panic, errors name it.
#[cfg(feature = "torch")]
#[test]
fn checkpoint_history_files() {
    let dir = tempfile::tempdir().unwrap();
    let valid = dir.path().join("valid.history.json");
    let epoch = drift::train::Epoch {
        epoch: 1,
        loss: 0.5,
        grad_norm: 1.25,
        learning_rate: 1e-3,
        encoder_learning_rate: None,
    };
    drift::run::write_history(&valid, "ab", &[epoch]).unwrap();
    let valid = std::fs::read(&valid).unwrap();
    fuzz("checkpoint history files", document(valid), |doc| {
        let path = put(dir.path(), "1990s.history.json", &doc);
        names(drift::run::read_history(&path, "ab"), &path)
    });
}

#[test]
fn checksums_manifest() {
    let dir = tempfile::tempdir().unwrap();
    // The committed manifest cut to its first outputs, so that a case stays small.
    let full =
        drift::report::manifest::Manifest::read(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
    let keep: Vec<String> = full
        .sums_text()
        .lines()
        .take(6)
        .map(|l| l[66..].to_string())
        .collect();
    let small = full.filtered(|p| keep.iter().any(|k| k == p));
    let strategy = prop_oneof![
        document(small.sums_text().into_bytes()).prop_map(|d| (true, d)),
        document(small.inputs_text().into_bytes()).prop_map(|d| (false, d)),
    ];
    std::fs::create_dir_all(dir.path().join("checksums")).unwrap();
    fuzz(
        "checksums/ (SHA256SUMS, inputs.json)",
        strategy,
        |(sums, doc)| {
            let (fuzzed, other) = if sums {
                ("SHA256SUMS", small.inputs_text().into_bytes())
            } else {
                ("inputs.json", small.sums_text().into_bytes())
            };
            let other_name = if sums { "inputs.json" } else { "SHA256SUMS" };
            let path = put(&dir.path().join("checksums"), fuzzed, &doc);
            put(&dir.path().join("checksums"), other_name, &other);
            let result = drift::report::manifest::Manifest::read(dir.path());
            if let Err(e) = &result {
                let message = e.to_string();
                prop_assert!(
                    message.contains(fuzzed) || message.contains(other_name),
                    "the error names neither file of {}: {message}",
                    path.display()
                );
            }
            Ok(())
        },
    );
}

#[test]
fn prediction_csvs() {
    let dir = tempfile::tempdir().unwrap();
    let strategy = prop_oneof![
        document(b"label,score\n0,0\n1,1\n1,0\n2,2\n".to_vec()).prop_map(|d| (0, d)),
        document(b"label,score\n0.5,0.25\n1.5,2\n-3,1e3\n".to_vec()).prop_map(|d| (1, d)),
        document(b"label,score\n0,0.1\n1,0.9\n1,0.4\n0,0.35\n".to_vec()).prop_map(|d| (2, d)),
        document(
            b"label_0,score_0,label_1,score_1\n0,0.2,1,0.7\n1,0.9,0,0.1\n1,0.6,1,0.8\n".to_vec()
        )
        .prop_map(|d| (2, d)),
    ];
    let metrics = [
        drift::Metric::BalancedAccuracy,
        drift::Metric::Mse,
        drift::Metric::MacroAuc,
    ];
    fuzz("prediction CSVs", strategy, |(m, doc)| {
        let path = put(dir.path(), "fuzzed-predictions.csv", &doc);
        names(drift::cli::score_file(&path, metrics[m]), &path)
    });
}

/// The real formats of `drift::data::formats`, read as `data::load` reads a path.
fn load_format(path: &Path, format: Option<&str>) -> drift::Result<drift::data::Dataset> {
    let mut options = drift::data::DataOptions::new();
    if let Some(f) = format {
        options.insert("format".into(), f.into());
    }
    drift::data::load(
        &drift::data::DataSpec::Path(path.to_path_buf()),
        &options,
        Path::new("/"),
    )
}

#[test]
fn yearbook_pickles() {
    let dir = tempfile::tempdir().unwrap();
    let valid = crate::formats::unhex(crate::formats::WILD_TIME_PICKLE);
    fuzz("Yearbook pickle", document(valid), |doc| {
        let path = put(dir.path(), "fuzzed-yearbook.pkl", &doc);
        names(load_format(&path, None), &path)
    });
}

#[test]
fn amazon_and_arxiv_json_lines() {
    use crate::formats::{amazon_line, arxiv_line, ms};
    let dir = tempfile::tempdir().unwrap();
    let amazon = [
        amazon_line("5.0", r#""Great""#, ms(2014, 1, 1) + 999),
        amazon_line("2.5", r#""half star""#, ms(2015, 3, 1)),
        amazon_line("1", r#""Bad\nreally""#, ms(2023, 12, 31)),
    ]
    .join("\n");
    let arxiv = [
        arxiv_line("1", "cs.CV", "Mon, 2 Apr 2007 19:18:42 GMT", "T", "A"),
        arxiv_line(
            "2",
            "cs.LG stat.ML",
            "Tue, 3 Apr 2012 10:00:00 GMT",
            "U",
            "B",
        ),
    ]
    .join("\n");
    let strategy = prop_oneof![
        document(amazon.into_bytes()).prop_map(|d| (true, d)),
        document(arxiv.into_bytes()).prop_map(|d| (false, d)),
    ];
    fuzz(
        "Amazon and arXiv JSON lines",
        strategy,
        |(is_amazon, doc)| {
            let (name, format) = if is_amazon {
                ("fuzzed-amazon.jsonl", "amazon-reviews")
            } else {
                ("fuzzed-arxiv.jsonl", "arxiv")
            };
            let path = put(dir.path(), name, &doc);
            names(load_format(&path, Some(format)), &path)
        },
    );
}

/// A WordPiece `tokenizer.json` in the Hugging Face format (the MiniLM package's kind),
/// small enough to parse 100,000 times.
const TOKENIZER: &str = r###"{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],"normalizer":{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true},"pre_tokenizer":{"type":"BertPreTokenizer"},"post_processor":null,"decoder":null,"model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,"vocab":{"[PAD]":0,"[UNK]":1,"the":2,"drift":3,"##s":4,"model":5}}}"###;

/// `tokenizer.json` files, fuzzed, and the `data.options.tokenizer` paths that name them
/// (the file, hostile tokens, paths out of the preset's folder, a long name): every error
/// names the option or the file it resolved to.
#[test]
fn tokenizer_json_and_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let long = "a".repeat(5000);
    let mut paths: Vec<&str> = vec![
        "tokenizer.json",
        "./tokenizer.json",
        "../tokenizer.json",
        "missing.json",
        &long,
    ];
    paths.extend(HOSTILE);
    let n = paths.len();
    let strategy = (document(TOKENIZER.as_bytes().to_vec()), 0..n);
    fuzz("tokenizer.json and its path", strategy, |(doc, p)| {
        put(dir.path(), "tokenizer.json", &doc);
        let mut values = drift::data::DataOptions::new();
        values.insert("text".into(), "tokenizer".into());
        values.insert("tokenizer".into(), paths[p].into());
        let opts = drift::data::SourceOptions::new("texts", &values);
        if let Err(e) = drift::text::TextInput::from_options(&opts, dir.path()) {
            let message = e.to_string();
            let resolved = dir.path().join(paths[p]);
            prop_assert!(
                message.contains("data.options.tokenizer")
                    || message.contains(&*resolved.to_string_lossy()),
                "the error names neither the option nor the file: {message}"
            );
        }
        Ok(())
    });
}

/// Checkpoints (safetensors: a JSON header with drift's metadata, then the tensors): a
/// valid one of a small model, fuzzed, loaded as `drift run` and `drift score` load one.
#[cfg(feature = "torch")]
#[test]
fn checkpoints() {
    use drift::train::checkpoint::{self, CheckpointId};
    let dir = tempfile::tempdir().unwrap();
    let vs = tch::nn::VarStore::new(tch::Device::Cpu);
    let _layer = tch::nn::linear(vs.root() / "fc", 3, 2, Default::default());
    let id = CheckpointId::new(
        &"a".repeat(64),
        &"b".repeat(64),
        "linear",
        0,
        "2001",
        "cpu",
        1,
    );
    let valid = dir.path().join("valid.safetensors");
    checkpoint::save(&vs, &id, 0.25, &valid).unwrap();
    let valid = std::fs::read(&valid).unwrap();
    fuzz("checkpoints (safetensors)", document(valid), |doc| {
        let path = put(dir.path(), "fuzzed-2001.safetensors", &doc);
        names(checkpoint::load(&vs, &id, &path), &path)
    });
}

/// Hub model folders (`config.json`, `model.safetensors`, `tokenizer.json`), as
/// `encoder = "local"` and `drift embed --encoder-path` read them: the small random models
/// of the parity tests, one file fuzzed at a time. No panic (a configuration declaring
/// enormous tables is refused before anything is allocated), and every error names a file
/// of the folder.
#[cfg(feature = "torch")]
#[test]
fn hub_model_folders() {
    let files = ["config.json", "tokenizer.json", "model.safetensors"];
    fuzz_folders(
        "hub model folders",
        "text-encoders",
        &["bert", "deberta-v2", "modernbert"],
        &files,
        |dir| {
            let encoder = drift::encoders::text::TextEncoder::from_folder(dir)?;
            // What opens, encodes.
            use drift::encoders::Encoder;
            let texts = vec!["a fuzzed folder".to_string(), String::new()];
            // Encoding may refuse (a tokenizer that adds no token), never panic.
            let max = encoder.profile().max_positions().clamp(2, 16);
            let _ = encoder.encode(&texts, max, drift::encoders::EmbeddingPooling::Mean);
            Ok(())
        },
    );
}

/// timm image folders (`config.json`, `model.safetensors`), as `encoder = "local"` reads
/// them for images: the small random models of the parity tests, one file fuzzed at a
/// time. No panic (depths and widths are read off the weights, so a damaged file must not
/// make the model ask for more than it holds), and every error names a file of the folder.
#[cfg(feature = "torch")]
#[test]
fn timm_image_folders() {
    let families = [
        "vit-dinov2-reg",
        "eva02",
        "resnet",
        "efficientnet-lite",
        "convnext",
    ];
    let files = ["config.json", "model.safetensors"];
    fuzz_folders(
        "timm image folders",
        "image-encoders",
        &families,
        &files,
        open_image_folder,
    );
}

/// transformers image folders (`config.json`, `model.safetensors`,
/// `preprocessor_config.json`), as for timm's.
#[cfg(feature = "torch")]
#[test]
fn transformers_image_folders() {
    let families = ["clip", "siglip", "dinov2", "dinov3"];
    let files = [
        "config.json",
        "model.safetensors",
        "preprocessor_config.json",
    ];
    fuzz_folders(
        "transformers image folders",
        "image-encoders",
        &families,
        &files,
        open_image_folder,
    );
}

#[cfg(feature = "torch")]
fn open_image_folder(dir: &Path) -> drift::Result<()> {
    let encoder = drift::encoders::image::ImageEncoder::from_folder(dir)?;
    // What opens, encodes (at a size this test can afford: a fuzzed input size may ask for
    // 4096 px).
    if encoder.preprocessing().size <= 128 {
        let images = [tch::Tensor::ones([3, 8, 8], tch::kind::FLOAT_CPU)];
        let _ = encoder.encode(&images);
    }
    Ok(())
}

/// Fuzzes model folders: the fixture folders `models` under `tests/fixtures/<fixtures>`,
/// one of their `files` fuzzed at a time, written to a scratch folder that `open_and_use`
/// opens (using what opens) without a panic; the error of what does not open names a file
/// of the folder.
#[cfg(feature = "torch")]
fn fuzz_folders(
    what: &str,
    fixtures: &str,
    models: &[&str],
    files: &[&str],
    open_and_use: impl Fn(&Path) -> drift::Result<()>,
) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(fixtures);
    let dir = tempfile::tempdir().unwrap();
    let read = |model: &str, file: &str| std::fs::read(root.join(model).join(file)).unwrap();
    let valid: Vec<Vec<Vec<u8>>> = models
        .iter()
        .map(|m| files.iter().map(|f| read(m, f)).collect())
        .collect();
    let strategy = (0..models.len(), 0..files.len())
        .prop_flat_map(move |(m, f)| (Just(m), Just(f), document(valid[m][f].clone())));
    fuzz(what, strategy, |(m, f, doc)| {
        for (i, file) in files.iter().enumerate() {
            let bytes = if i == f {
                doc.clone()
            } else {
                read(models[m], file)
            };
            put(dir.path(), file, &bytes);
        }
        if let Err(e) = open_and_use(dir.path()) {
            let message = e.to_string();
            prop_assert!(
                message.contains(&*dir.path().to_string_lossy()),
                "the error names no file of the folder: {message}"
            );
        }
        Ok(())
    });
}
