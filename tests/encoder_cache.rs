//! Encoder caches: content-addressed keys, reproducible bytes, checked reads, atomic
//! builds, and the `text = "encoder"` data options that read them.
//!
//! Most tests use a small deterministic stand-in encoder (which also counts its calls and
//! can fail on purpose); the reproducibility and data-source tests use GloVe, which needs
//! `drift data fetch glove`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use drift::data::DataOptions;
use drift::data::DataSource;
use drift::data::{Dataset, Inputs, SourceOptions, States, Targets};
use drift::encoders::cache::{self, CHUNK_ROWS, Cache, CacheSpec, CachedInput};
use drift::encoders::{self, EmbeddingPooling, Encoded, Encoder, EncoderId, GLOVE, MINILM};
use drift::slices::Timestamp;
use drift::text::{self, EncoderText, Encoding, TextInput};
use serde_json::json;

use crate::support::glove;

/// A stand-in encoder: each word's state is a fixed function of the word, position and
/// dimension; counts its calls and fails from call `fail_from` on.
pub struct Fake {
    id: EncoderId,
    calls: AtomicUsize,
    fail_from: usize,
}

impl Fake {
    pub fn new() -> Self {
        Fake::failing_from(usize::MAX)
    }

    fn failing_from(call: usize) -> Self {
        Fake {
            id: fake_id(),
            calls: AtomicUsize::new(0),
            fail_from: call,
        }
    }
}

fn fake_id() -> EncoderId {
    EncoderId {
        name: "fake".into(),
        package: "none".into(),
        version: "1".into(),
        sha256: "ab".repeat(32),
        dim: 6,
    }
}

impl Encoder for Fake {
    fn id(&self) -> &EncoderId {
        &self.id
    }

    fn encode(
        &self,
        texts: &[String],
        max_len: usize,
        _: EmbeddingPooling,
    ) -> drift::Result<Encoded> {
        if self.calls.fetch_add(1, Ordering::SeqCst) >= self.fail_from {
            return Err(drift::Error::Invalid("fake: failing on purpose".into()));
        }
        let d = self.id.dim;
        let mut out = Encoded {
            tokens: max_len,
            dim: d,
            states: vec![0.0; texts.len() * max_len * d],
            lengths: Vec::new(),
            pooled: vec![0.0; texts.len() * d],
        };
        for (r, text) in texts.iter().enumerate() {
            let words: Vec<&str> = text.split_whitespace().take(max_len).collect();
            for (t, w) in words.iter().enumerate() {
                for k in 0..d {
                    let x = ((w.len() * 31 + w.as_bytes()[0] as usize * 7 + k * 13 + t) % 97)
                        as f32
                        / 48.5
                        - 1.0;
                    out.states[(r * max_len + t) * d + k] = x;
                    out.pooled[r * d + k] += x / words.len() as f32;
                }
            }
            out.lengths.push(words.len().max(1) as u32);
        }
        Ok(out)
    }
}

fn source() -> DataSource {
    DataSource::new("texts", "1", "cd".repeat(32))
}

/// `n` short texts (some empty), enough for several chunks when `n > CHUNK_ROWS`.
pub fn texts(n: usize) -> Vec<String> {
    let words = [
        "the", "model", "drifts", "over", "time", "and", "its", "accuracy", "falls", "slowly",
    ];
    (0..n)
        .map(|i| {
            (0..i % 13)
                .map(|j| words[(i * 7 + j * 3) % words.len()])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

pub fn fake_spec(texts: &[String], max_len: usize) -> CacheSpec {
    CacheSpec::new(&source(), texts, fake_id(), max_len, EmbeddingPooling::Mean)
}

/// Every file under `dir`, relative, with its bytes, sorted.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = walk(dir)
        .into_iter()
        .map(|p| {
            (
                p.strip_prefix(dir).unwrap().to_path_buf(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn chunk_path(cache: &Cache, i: usize) -> PathBuf {
    cache.dir.join(format!("states-{i:05}.safetensors"))
}

#[test]
fn a_cache_built_twice_has_identical_bytes() {
    let texts = texts(CHUNK_ROWS + 300);
    let spec = CacheSpec::new(
        &source(),
        &texts,
        encoders::package_id(GLOVE).unwrap(),
        8,
        EmbeddingPooling::Mean,
    );
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = cache::build(a.path(), &spec, &texts, glove(), false).unwrap();
    let second = cache::build(b.path(), &spec, &texts, glove(), false).unwrap();
    assert_eq!(first.dir, a.path().join(spec.key()));
    let (fa, fb) = (files(a.path()), files(b.path()));
    let names: Vec<String> = fa.iter().map(|(p, _)| p.display().to_string()).collect();
    let key = spec.key();
    assert_eq!(
        names,
        [
            format!("{key}/SHA256SUMS"),
            format!("{key}/manifest.json"),
            format!("{key}/pooled.safetensors"),
            format!("{key}/states-00000.safetensors"),
            format!("{key}/states-00001.safetensors"),
        ]
    );
    assert!(fa == fb, "two builds differ");
    assert_eq!(second.manifest, first.manifest);
    let m = &first.manifest;
    assert_eq!((m.rows, m.dim, m.max_len), (CHUNK_ROWS + 300, 50, 8));
    assert_eq!(m.chunks[1].rows, 300);
    assert_eq!(m.encoder, encoders::package_id(GLOVE).unwrap());
    first.verify().unwrap();
}

#[test]
fn loading_gives_back_the_encoded_states_and_embeddings() {
    let texts = texts(CHUNK_ROWS + 10);
    let spec = fake_spec(&texts, 5);
    let root = tempfile::tempdir().unwrap();
    let fake = Fake::new();
    let cache = cache::build(root.path(), &spec, &texts, &fake, false).unwrap();
    let direct = fake.encode(&texts, 5, EmbeddingPooling::Mean).unwrap();
    let Inputs::Tokens {
        tokens,
        dim,
        states,
        lengths,
    } = cache.inputs(CachedInput::Tokens).unwrap()
    else {
        panic!("not token states")
    };
    assert_eq!((tokens, dim), (5, 6));
    assert_eq!(lengths, direct.lengths);
    // States are stored and loaded as F16: the encoder's values rounded to 16 bits.
    let rounded: Vec<half::f16> = direct
        .states
        .iter()
        .map(|&x| half::f16::from_f32(x))
        .collect();
    assert_eq!(states, States::F16(rounded));
    assert_eq!(
        cache.inputs(CachedInput::Pooled).unwrap(),
        Inputs::Embeddings {
            dim: 6,
            values: direct.pooled
        }
    );
}

#[test]
fn a_flipped_byte_is_detected_and_the_file_named() {
    let texts = texts(CHUNK_ROWS + 10);
    let spec = fake_spec(&texts, 4);
    let root = tempfile::tempdir().unwrap();
    let cache = cache::build(root.path(), &spec, &texts, &Fake::new(), false).unwrap();
    let path = chunk_path(&cache, 1);
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    let name = path.display().to_string();
    for error in [
        cache.verify().unwrap_err().to_string(),
        cache.inputs(CachedInput::Tokens).unwrap_err().to_string(),
    ] {
        assert!(error.starts_with(&format!("{name}: SHA-256 ")), "{error}");
        assert!(error.contains("damaged"), "{error}");
    }
    // Loading through the data path reports it too, and never rebuilds over it.
    let (reopened, built) = cache::open_or_build(
        root.path(),
        &spec,
        &texts,
        || panic!("the encoder is not opened"),
        false,
        false,
    )
    .unwrap();
    assert!(!built);
    assert!(reopened.inputs(CachedInput::Tokens).is_err());
    // The pooled file is intact and still reads.
    reopened.inputs(CachedInput::Pooled).unwrap();
}

/// Regression (found by tests/hardening/damage.rs in full): a byte of the manifest changed
/// where it still parses to a valid manifest (a space made a tab; where the cache was
/// computed, which the runs reading it record) went unseen; `SHA256SUMS` pins it now.
#[test]
fn a_manifest_changed_where_it_still_parses_is_detected() {
    let texts = texts(10);
    let spec = fake_spec(&texts, 4);
    let root = tempfile::tempdir().unwrap();
    let cache = cache::build(root.path(), &spec, &texts, &Fake::new(), false).unwrap();
    let manifest = cache.dir.join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let on = format!("\"{}\"", cache.manifest.computed_on);
    assert!(text.contains(&on) && text.contains("\n  \""));
    for changed in [
        text.replacen("\n  \"", "\n\t\"", 1),
        text.replace(&on, "\"cuda:7\""),
    ] {
        std::fs::write(&manifest, &changed).unwrap();
        let error = Cache::open(root.path(), &spec).unwrap_err().to_string();
        assert!(
            error.starts_with(&manifest.display().to_string()) && error.contains("SHA256SUMS"),
            "{error}"
        );
    }
    std::fs::write(&manifest, &text).unwrap();
    Cache::open(root.path(), &spec)
        .unwrap()
        .unwrap()
        .verify()
        .unwrap();
}

/// Regression (found by tests/hardening/damage.rs): a changed file hash in the manifest
/// was reported as a damaged chunk only; the message now names the manifest too.
#[test]
fn a_changed_hash_in_the_manifest_names_the_manifest_too() {
    let texts = texts(CHUNK_ROWS + 10);
    let spec = fake_spec(&texts, 4);
    let root = tempfile::tempdir().unwrap();
    let cache = cache::build(root.path(), &spec, &texts, &Fake::new(), false).unwrap();
    let manifest = cache.dir.join("manifest.json");
    let recorded = cache.manifest.pooled.sha256.clone();
    let first = if recorded.starts_with('0') { "1" } else { "0" };
    let changed = format!("{first}{}", &recorded[1..]);
    let text = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace(&recorded, &changed);
    std::fs::write(&manifest, &text).unwrap();
    // The manifest's own hash catches it on opening...
    let error = Cache::open(root.path(), &spec).unwrap_err().to_string();
    assert!(
        error.starts_with(&manifest.display().to_string()) && error.contains("SHA256SUMS"),
        "{error}"
    );
    // ...and with SHA256SUMS forged to match, the chunk's check names the manifest.
    let mut sums = drift::checksum::Sums::new();
    sums.add("manifest.json", text.as_bytes());
    sums.write(&cache.dir.join("SHA256SUMS")).unwrap();
    let reopened = Cache::open(root.path(), &spec).unwrap().unwrap();
    let error = reopened.verify().unwrap_err().to_string();
    assert!(error.contains(&manifest.display().to_string()), "{error}");
    assert!(error.contains("pooled.safetensors"), "{error}");
}

#[test]
fn a_missing_chunk_or_manifest_is_detected() {
    let texts = texts(CHUNK_ROWS + 10);
    let spec = fake_spec(&texts, 4);
    let root = tempfile::tempdir().unwrap();
    let cache = cache::build(root.path(), &spec, &texts, &Fake::new(), false).unwrap();
    let path = chunk_path(&cache, 0);
    std::fs::remove_file(&path).unwrap();
    let error = cache.inputs(CachedInput::Tokens).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!("{}: missing", path.display())),
        "{error}"
    );
    assert!(cache.verify().is_err());
    // A folder without its manifest is not taken for a missing cache either.
    let manifest = cache.dir.join("manifest.json");
    std::fs::remove_file(&manifest).unwrap();
    let error = Cache::open(root.path(), &spec).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!("{}: missing", manifest.display())),
        "{error}"
    );
}

#[test]
fn a_manifest_of_another_cache_is_refused() {
    let texts = texts(20);
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (fake_spec(&texts, 4), fake_spec(&texts, 5));
    let cache = cache::build(root.path(), &a, &texts, &Fake::new(), false).unwrap();
    std::fs::rename(&cache.dir, root.path().join(b.key())).unwrap();
    let error = Cache::open(root.path(), &b).unwrap_err().to_string();
    assert!(
        error.contains("manifest.json: it describes cache"),
        "{error}"
    );
}

#[test]
fn a_second_load_does_not_encode_again() {
    let texts = texts(300);
    let spec = fake_spec(&texts, 4);
    let root = tempfile::tempdir().unwrap();
    let calls = std::sync::Arc::new(AtomicUsize::new(0));
    let open = |calls: &std::sync::Arc<AtomicUsize>| {
        let calls = calls.clone();
        move || -> drift::Result<Box<dyn Encoder>> {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok(Box::new(Fake::new()))
        }
    };
    let (first, built) =
        cache::open_or_build(root.path(), &spec, &texts, open(&calls), false, false).unwrap();
    assert!(built);
    let stamps = |dir: &Path| -> Vec<_> {
        let mut s: Vec<_> = walk(dir)
            .into_iter()
            .map(|p| {
                (
                    p.clone(),
                    std::fs::metadata(&p).unwrap().modified().unwrap(),
                )
            })
            .collect();
        s.sort();
        s
    };
    let before = stamps(&first.dir);
    for _ in 0..2 {
        let (again, built) =
            cache::open_or_build(root.path(), &spec, &texts, open(&calls), false, false).unwrap();
        assert!(!built);
        assert_eq!(again, first);
        again.inputs(CachedInput::Tokens).unwrap();
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the encoder was opened again"
    );
    assert_eq!(stamps(&first.dir), before);
    // --force rebuilds, to the same bytes.
    let bytes = files(&first.dir);
    let (_, built) =
        cache::open_or_build(root.path(), &spec, &texts, open(&calls), true, false).unwrap();
    assert!(built);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(files(&first.dir) == bytes);
}

#[test]
fn an_interrupted_build_leaves_nothing_that_looks_finished() {
    let texts = texts(CHUNK_ROWS + 2 * cache::ENCODE_BATCH + 10);
    let spec = fake_spec(&texts, 4);
    let root = tempfile::tempdir().unwrap();
    // Fails after the first chunk is written, in the second call for the next one.
    let calls_per_chunk = CHUNK_ROWS.div_ceil(cache::ENCODE_BATCH);
    let error = cache::build(
        root.path(),
        &spec,
        &texts,
        &Fake::failing_from(calls_per_chunk + 1),
        false,
    )
    .unwrap_err();
    assert!(error.to_string().contains("failing on purpose"), "{error}");
    assert_eq!(Cache::open(root.path(), &spec).unwrap(), None);
    assert!(walk(root.path()).is_empty(), "{:?}", walk(root.path()));
    // A build folder left by a killed process is not a cache, and is cleared away.
    let stale = root
        .path()
        .join(format!(".building-{}-999999999", spec.key()));
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("manifest.json"), "{}").unwrap();
    assert_eq!(Cache::open(root.path(), &spec).unwrap(), None);
    cache::build(root.path(), &spec, &texts, &Fake::new(), false).unwrap();
    assert!(!stale.exists());
}

#[test]
fn the_key_changes_with_every_setting_and_the_texts() {
    let texts = texts(50);
    let base = fake_spec(&texts, 8);
    let mut other_encoder = fake_id();
    other_encoder.version = "2".into();
    let mut fewer = texts.clone();
    fewer.pop();
    let mut edited = texts.clone();
    edited[3].push('!');
    let mut other_source = source();
    other_source.sha256 = "ef".repeat(32);
    let variants = [
        fake_spec(&texts, 9),
        CacheSpec::new(&source(), &texts, fake_id(), 8, EmbeddingPooling::Cls),
        CacheSpec::new(&source(), &texts, other_encoder, 8, EmbeddingPooling::Mean),
        CacheSpec::new(
            &source(),
            &texts,
            encoders::package_id(GLOVE).unwrap(),
            8,
            EmbeddingPooling::Mean,
        ),
        CacheSpec::new(
            &source(),
            &texts,
            encoders::package_id(MINILM).unwrap(),
            8,
            EmbeddingPooling::Mean,
        ),
        fake_spec(&fewer, 8),
        fake_spec(&edited, 8),
        CacheSpec::new(&other_source, &texts, fake_id(), 8, EmbeddingPooling::Mean),
    ];
    let mut keys: Vec<String> = variants.iter().map(CacheSpec::key).collect();
    keys.push(base.key());
    assert_eq!(base.key(), fake_spec(&texts, 8).key(), "the key is stable");
    assert!(keys.iter().all(|k| k.len() == 64));
    let n = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), n, "two settings share a key");
    // Joining texts differently is a different list of texts.
    assert_ne!(
        cache::texts_sha256(&["ab".into(), "c".into()]),
        cache::texts_sha256(&["a".into(), "bc".into()])
    );
}

fn options(values: serde_json::Value) -> DataOptions {
    serde_json::from_value(values).unwrap()
}

fn read(values: serde_json::Value) -> drift::Result<TextInput> {
    let values = options(values);
    let opts = SourceOptions::new("texts", &values);
    let input = TextInput::from_options(&opts, Path::new("."))?;
    opts.finish()?;
    Ok(input)
}

fn error(values: serde_json::Value) -> String {
    read(values).unwrap_err().to_string()
}

#[test]
fn encoder_options_have_defaults_and_errors_name_the_field() {
    let TextInput::Encoder(settings) =
        read(json!({"text": "encoder", "encoder": "glove"})).unwrap()
    else {
        panic!("not an encoder input")
    };
    assert_eq!(
        settings,
        EncoderText {
            encoder: "glove".into(),
            path: None,
            max_tokens: 128,
            pooling: EmbeddingPooling::Mean,
            input: CachedInput::Tokens,
        }
    );
    let TextInput::Encoder(settings) = read(json!({
        "text": "encoder", "encoder": "minilm", "max_tokens": 32, "pooling": "cls",
        "input": "pooled"
    }))
    .unwrap() else {
        panic!("not an encoder input")
    };
    assert_eq!(
        (settings.max_tokens, settings.pooling, settings.input),
        (32, EmbeddingPooling::Cls, CachedInput::Pooled)
    );
    assert_eq!(
        error(json!({"text": "encoder"})),
        "data.options.encoder: text = \"encoder\" needs an encoder (minilm, mpnet, glove, local)"
    );
    assert_eq!(
        error(json!({"text": "encoder", "encoder": "bert"})),
        "data.options.encoder: expected one of minilm, mpnet, glove, local for texts, got \"bert\""
    );
    assert!(
        error(json!({"text": "encoder", "encoder": "local"}))
            .starts_with("data.options.encoder_path: encoder = \"local\" needs the folder")
    );
    assert_eq!(
        error(json!({"text": "encoder", "encoder": "glove", "encoder_path": "m"})),
        "data.options.encoder_path: only with encoder = \"local\""
    );
    assert!(
        error(json!({"text": "encoder", "encoder": "glove", "pooling": "cls"}))
            .starts_with("data.options.pooling: \"cls\" needs a [CLS] token")
    );
    assert_eq!(
        error(json!({"text": "encoder", "encoder": "glove", "input": "pool"})),
        "data.options.input: expected one of tokens, pooled for texts, got \"pool\""
    );
    assert_eq!(
        error(json!({"text": "encoder", "encoder": "glove", "pooling": "max"})),
        "data.options.pooling: expected one of mean, cls for texts, got \"max\""
    );
    assert_eq!(
        error(json!({"text": "encoder", "encoder": "glove", "max_tokens": 0})),
        "data.options.max_tokens: expected an integer in [1, 65536] for texts, got 0"
    );
    assert!(
        error(json!({"text": "encoder", "encoder": "glove", "text_dim": 8}))
            .starts_with("data.options.text_dim: not used with text = \"encoder\"")
    );
    assert!(
        error(json!({"text": "encoder", "encoder": "glove", "encoders": 1}))
            .starts_with("data.options.encoders: texts has no such option")
    );
    // The encoder options belong to text = "encoder" only.
    assert!(
        error(json!({"pooling": "mean"})).starts_with("data.options.pooling: texts has no such")
    );
}

fn dataset(texts: Vec<String>) -> Dataset {
    let n = texts.len();
    Dataset {
        source: source(),
        timestamps: vec![Timestamp(0); n],
        inputs: Inputs::Text(texts),
        targets: Targets::Values(vec![1.0; n]),
        class_names: Vec::new(),
    }
}

#[test]
fn encoded_data_names_the_encoder_and_settings_in_its_source() {
    let texts = texts(200);
    let root = tempfile::tempdir().unwrap();
    // Build the two caches with the shared encoder, so that `encode` only reads them.
    for max_len in [4, 8] {
        let spec = CacheSpec::new(
            &source(),
            &texts,
            encoders::package_id(GLOVE).unwrap(),
            max_len,
            EmbeddingPooling::Mean,
        );
        cache::build(root.path(), &spec, &texts, glove(), false).unwrap();
    }
    let how = Encoding {
        root: root.path().to_path_buf(),
        packages: PathBuf::from("/nonexistent"),
        force: false,
        progress: false,
        device: "cpu".into(),
    };
    let settings = |max_tokens, input| EncoderText {
        encoder: GLOVE.into(),
        path: None,
        max_tokens,
        pooling: EmbeddingPooling::Mean,
        input,
    };
    let mut sources = Vec::new();
    for (max_tokens, input) in [
        (8, CachedInput::Tokens),
        (8, CachedInput::Pooled),
        (4, CachedInput::Tokens),
    ] {
        let (data, _, built) =
            text::encode(dataset(texts.clone()), &settings(max_tokens, input), &how).unwrap();
        assert!(!built, "the cache was there");
        data.check().unwrap();
        match (&data.inputs, input) {
            (Inputs::Tokens { tokens, dim, .. }, CachedInput::Tokens) => {
                assert_eq!((*tokens, *dim), (max_tokens, 50));
            }
            (Inputs::Embeddings { dim, .. }, CachedInput::Pooled) => assert_eq!(*dim, 50),
            (other, _) => panic!("{other:?}"),
        }
        assert_eq!(data.source.name, "texts");
        assert!(
            data.source.version.starts_with(&format!(
                "1 + glove 1.0.0 ({max_tokens} tokens, mean pooling"
            )),
            "{}",
            data.source.version
        );
        sources.push(data.source.sha256);
    }
    assert_ne!(sources[0], sources[1]);
    assert_ne!(sources[0], sources[2]);
    assert_ne!(sources[1], sources[2]);
    assert!(
        sources
            .iter()
            .all(|s| s.len() == 64 && *s != source().sha256)
    );
}

/// Without libtorch, a missing MiniLM cache is an error that says how to build it.
#[cfg(not(feature = "torch"))]
#[test]
fn a_missing_minilm_cache_says_to_run_drift_cache() {
    let root = tempfile::tempdir().unwrap();
    let how = Encoding {
        root: root.path().to_path_buf(),
        packages: drift::packages::cache_dir(),
        force: false,
        progress: false,
        device: "cpu".into(),
    };
    let settings = EncoderText {
        encoder: MINILM.into(),
        path: None,
        max_tokens: 16,
        pooling: EmbeddingPooling::Mean,
        input: CachedInput::Pooled,
    };
    let error = text::encode(dataset(texts(5)), &settings, &how)
        .unwrap_err()
        .to_string();
    assert!(error.contains("run `drift cache PRESET`"), "{error}");
    assert!(walk(root.path()).is_empty());
}

/// With libtorch, a missing MiniLM cache is built on the spot (the packaged encoder reports
/// the identity the key was computed with), and read back as 384-d states.
#[cfg(feature = "torch")]
#[test]
fn a_missing_minilm_cache_is_built_with_libtorch() {
    let root = tempfile::tempdir().unwrap();
    let how = Encoding {
        root: root.path().to_path_buf(),
        packages: drift::packages::cache_dir(),
        force: false,
        progress: false,
        device: "cpu".into(),
    };
    let settings = EncoderText {
        encoder: MINILM.into(),
        path: None,
        max_tokens: 12,
        pooling: EmbeddingPooling::Mean,
        input: CachedInput::Tokens,
    };
    let texts = texts(40);
    let (data, cache, built) = text::encode(dataset(texts.clone()), &settings, &how).unwrap();
    assert!(built);
    data.check().unwrap();
    assert_eq!(
        cache.manifest.encoder,
        encoders::package_id(MINILM).unwrap()
    );
    let Inputs::Tokens {
        tokens,
        dim,
        lengths,
        ..
    } = &data.inputs
    else {
        panic!("not token states")
    };
    assert_eq!((*tokens, *dim), (12, 384));
    // An empty text still has [CLS] and [SEP].
    assert_eq!(lengths[0], 2);
    let (_, _, built) = text::encode(dataset(texts), &settings, &how).unwrap();
    assert!(!built);
}

/// A user's model folder is identified by its architecture, its weights' SHA-256 and its
/// width, read without opening the model, so its cache is found in any build.
#[test]
fn a_local_encoder_is_identified_by_its_weights() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    std::fs::create_dir(&model).unwrap();
    std::fs::write(
        model.join("config.json"),
        r#"{"model_type": "bert", "hidden_size": 8}"#,
    )
    .unwrap();
    std::fs::write(model.join("model.safetensors"), b"weights").unwrap();
    let values = options(json!({"text": "encoder", "encoder": "local", "encoder_path": "model"}));
    let opts = SourceOptions::new("texts", &values);
    let TextInput::Encoder(settings) = TextInput::from_options(&opts, dir.path()).unwrap() else {
        panic!("not an encoder input")
    };
    opts.finish().unwrap();
    assert_eq!(settings.path.as_deref(), Some(model.as_path()));
    let spec = settings.spec(&source(), &texts(3)).unwrap();
    assert_eq!(
        spec.encoder,
        EncoderId {
            name: "local".into(),
            package: model.display().to_string(),
            version: "local".into(),
            sha256: drift::checksum::sha256_hex(b"weights"),
            dim: 8,
        }
    );
    std::fs::write(model.join("model.safetensors"), b"other weights").unwrap();
    assert_ne!(
        settings.spec(&source(), &texts(3)).unwrap().key(),
        spec.key()
    );
    // Another architecture is another encoder, even with the same weights.
    let config = |text: &str| std::fs::write(model.join("config.json"), text).unwrap();
    config(r#"{"model_type": "roberta", "hidden_size": 8}"#);
    let roberta = settings.spec(&source(), &texts(3)).unwrap();
    assert_eq!(roberta.encoder.version, "local roberta");
    assert_ne!(roberta.key(), spec.key());
    config(r#"{"model_type": "distilbert", "dim": 8}"#);
    assert_eq!(settings.spec(&source(), &texts(3)).unwrap().encoder.dim, 8);
    config(r#"{"model_type": "bert"}"#);
    let error = settings.spec(&source(), &texts(3)).unwrap_err().to_string();
    assert!(
        error.ends_with("config.json: no integer hidden_size"),
        "{error}"
    );
    config("{}");
    let error = settings.spec(&source(), &texts(3)).unwrap_err().to_string();
    assert!(
        error.ends_with("config.json: no model_type (it names the architecture)"),
        "{error}"
    );
}
