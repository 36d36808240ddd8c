#![cfg(feature = "torch")]
//! Every text architecture drift reads (src/encoders/text/) against `transformers`: the
//! small random models under tests/fixtures/text-encoders/ (one hub folder per
//! architecture, with the reference's outputs in `reference.safetensors`, written by
//! `scripts/text_encoder_fixtures.py`) are loaded as a user's folder and must give the
//! same token ids and, within [`TOL`] (absolute), the same token states and mean / first
//! token pooled embeddings, for texts that include the empty one, non-ASCII ones and ones
//! truncated at `max_len`, padded in batches as drift pads them. Then what a comparison
//! cannot show: the errors for an unsupported architecture, a tokenizer of the wrong
//! kind and a missing or mis-shaped tensor, and a task model's prefixed checkpoint.

use std::path::{Path, PathBuf};

use drift::encoders::text::{ARCHITECTURES, TextEncoder};
use drift::encoders::{EmbeddingPooling, Encoder};
use safetensors::SafeTensors;
use serde_json::Value;

const TOL: f32 = 1e-5;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/text-encoders")
}

fn reference() -> Value {
    crate::support::fixture("text-encoders/reference.json")
}

fn texts() -> Vec<String> {
    reference()["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect()
}

/// The reference's tensor `name` of `architecture`, as floats (i64 tensors converted).
fn tensor(architecture: &str, name: &str) -> (Vec<usize>, Vec<f64>) {
    let bytes = std::fs::read(root().join(architecture).join("reference.safetensors")).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    let view = file.tensor(name).unwrap();
    let values = match view.dtype() {
        safetensors::Dtype::F32 => view
            .data()
            .chunks_exact(4)
            .map(|c| f64::from(f32::from_le_bytes(c.try_into().unwrap())))
            .collect(),
        safetensors::Dtype::I64 => view
            .data()
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect(),
        other => panic!("{name}: {other:?}"),
    };
    (view.shape().to_vec(), values)
}

fn largest_difference(a: &[f32], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (f64::from(*x) - y).abs())
        .fold(0.0, f64::max)
}

/// One architecture's folder against its reference.
fn check(architecture: &str) {
    let encoder = TextEncoder::from_folder(&root().join(architecture))
        .unwrap_or_else(|e| panic!("{architecture}: {e}"));
    let texts = texts();
    let max_len = reference()["max_len"].as_u64().unwrap() as usize;
    let (_, lengths) = tensor(architecture, "lengths");
    let (_, ids) = tensor(architecture, "ids");
    let ours = encoder.profile().tokenize(&texts, max_len).unwrap();
    for (i, row) in ours.iter().enumerate() {
        let want: Vec<u32> = ids[i * max_len..][..lengths[i] as usize]
            .iter()
            .map(|&v| v as u32)
            .collect();
        assert_eq!(
            row, &want,
            "{architecture}: token ids of text {i} {:?}",
            texts[i]
        );
    }
    let mean = encoder
        .encode(&texts, max_len, EmbeddingPooling::Mean)
        .unwrap();
    let cls = encoder
        .encode(&texts, max_len, EmbeddingPooling::Cls)
        .unwrap();
    let (shape, states) = tensor(architecture, "states");
    assert_eq!(shape, [texts.len(), max_len, encoder.id().dim]);
    let worst = [
        ("states", largest_difference(&mean.states, &states)),
        (
            "mean",
            largest_difference(&mean.pooled, &tensor(architecture, "mean").1),
        ),
        (
            "cls",
            largest_difference(&cls.pooled, &tensor(architecture, "cls").1),
        ),
    ];
    println!("{architecture}: largest differences {worst:?}");
    for (what, diff) in worst {
        assert!(
            diff <= f64::from(TOL),
            "{architecture}: {what} differ from transformers by {diff:e} (tolerance {TOL:e})"
        );
    }
    assert_eq!(
        mean.states, cls.states,
        "{architecture}: pooling changed the states"
    );
}

/// The architectures with a fixture folder, as `reference.json` lists them.
pub fn architectures() -> Vec<String> {
    reference()["architectures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_architecture_matches_transformers() {
    let listed = architectures();
    // Every row of the table has its fixture.
    for row in ARCHITECTURES {
        assert!(
            listed.iter().any(|a| a == row.model_types[0]),
            "{} has no fixture",
            row.model_types[0]
        );
    }
    for architecture in &listed {
        check(architecture);
    }
}

#[test]
fn a_batch_of_one_gives_the_batch_s_rows() {
    // Padding changes nothing of a row: each text alone against the whole batch.
    let texts = texts();
    for architecture in ["roberta", "deberta-v2", "modernbert"] {
        let encoder = TextEncoder::from_folder(&root().join(architecture)).unwrap();
        let all = encoder.encode(&texts, 48, EmbeddingPooling::Mean).unwrap();
        let dim = all.dim;
        for i in [0, 2, 11, 28] {
            let one = encoder
                .encode(&texts[i..=i], 48, EmbeddingPooling::Mean)
                .unwrap();
            let diff = one
                .pooled
                .iter()
                .zip(&all.pooled[i * dim..(i + 1) * dim])
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f32::max);
            assert!(
                diff <= TOL,
                "{architecture}: text {i} alone differs by {diff:e}"
            );
        }
    }
}

/// A copy of `architecture`'s folder in a temporary directory.
fn copy(architecture: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for file in ["config.json", "model.safetensors", "tokenizer.json"] {
        std::fs::copy(root().join(architecture).join(file), dir.path().join(file)).unwrap();
    }
    dir
}

fn error(dir: &Path) -> String {
    TextEncoder::from_folder(dir).err().unwrap().to_string()
}

#[test]
fn an_unsupported_model_type_is_named_with_the_supported_ones() {
    let dir = copy("bert");
    let path = dir.path().join("config.json");
    let mut config: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    config["model_type"] = "gpt2".into();
    std::fs::write(&path, serde_json::to_vec(&config).unwrap()).unwrap();
    let err = error(dir.path());
    assert!(
        err.contains("config.json") && err.contains("\"gpt2\""),
        "{err}"
    );
    for row in ARCHITECTURES {
        assert!(err.contains(row.model_types[0]), "{err}");
    }
}

#[test]
fn a_tokenizer_of_another_kind_is_refused_naming_both() {
    let dir = copy("bert");
    std::fs::copy(
        root().join("roberta/tokenizer.json"),
        dir.path().join("tokenizer.json"),
    )
    .unwrap();
    let err = error(dir.path());
    assert!(
        err.contains("tokenizer.json") && err.contains("BPE") && err.contains("WordPiece"),
        "{err}"
    );
    assert!(err.contains("BERT") && err.contains("config.json"), "{err}");
}

/// `architecture`'s weights rewritten by `edit` (name, shape, little-endian bytes).
fn rewrite(dir: &Path, edit: impl Fn(&mut Vec<(String, Vec<usize>, Vec<u8>)>)) {
    let path = dir.join("model.safetensors");
    let bytes = std::fs::read(&path).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    let mut tensors: Vec<(String, Vec<usize>, Vec<u8>)> = file
        .tensors()
        .into_iter()
        .map(|(name, view)| (name, view.shape().to_vec(), view.data().to_vec()))
        .collect();
    edit(&mut tensors);
    let views: Vec<(String, safetensors::tensor::TensorView)> = tensors
        .iter()
        .map(|(name, shape, data)| {
            let view =
                safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), data)
                    .unwrap();
            (name.clone(), view)
        })
        .collect();
    safetensors::serialize_to_file(views, None, &path).unwrap();
}

#[test]
fn a_missing_or_mis_shaped_tensor_is_named_with_both_shapes() {
    let dir = copy("mpnet");
    rewrite(dir.path(), |t| {
        t.retain(|(name, _, _)| name != "encoder.relative_attention_bias.weight")
    });
    let err = error(dir.path());
    assert!(
        err.contains("model.safetensors")
            && err.contains("encoder.relative_attention_bias.weight")
            && err.contains("missing")
            && err.contains("[32, 4]"),
        "{err}"
    );

    let dir = copy("deberta-v2");
    rewrite(dir.path(), |t| {
        let rel = t
            .iter_mut()
            .find(|(name, _, _)| name == "encoder.rel_embeddings.weight")
            .unwrap();
        // Half the rows.
        rel.1[0] /= 2;
        rel.2.truncate(rel.2.len() / 2);
    });
    let err = error(dir.path());
    assert!(
        err.contains("encoder.rel_embeddings.weight") && err.contains("[8, 32]"),
        "{err}"
    );
    assert!(err.contains("[16, 32]"), "{err}");
}

#[test]
fn a_task_model_s_checkpoint_loads_through_its_prefix() {
    let texts = texts();
    for (architecture, prefix) in [("roberta", "roberta."), ("modernbert", "model.")] {
        let plain = TextEncoder::from_folder(&root().join(architecture)).unwrap();
        let dir = copy(architecture);
        rewrite(dir.path(), |t| {
            for (name, _, _) in t.iter_mut() {
                *name = format!("{prefix}{name}");
            }
        });
        let prefixed = TextEncoder::from_folder(dir.path()).unwrap();
        let a = plain
            .encode(&texts[..4], 16, EmbeddingPooling::Mean)
            .unwrap();
        let b = prefixed
            .encode(&texts[..4], 16, EmbeddingPooling::Mean)
            .unwrap();
        assert_eq!(a, b, "{architecture}");
        assert_eq!(prefixed.id().version, format!("local {architecture}"));
    }
}

/// Amazon Reviews 2023 lines over 2014-2016, 40 a year: the rating follows the words
/// (praise or complaint), so a model can learn it.
pub fn reviews(dir: &Path) -> PathBuf {
    let praise = [
        "great value, works well",
        "love it, would buy again",
        "excellent and sturdy",
    ];
    let complaint = [
        "broke after a week",
        "terrible, do not buy",
        "cheap and flimsy",
    ];
    let mut lines = Vec::new();
    for year in 2014..=2016 {
        for i in 0..40usize {
            let good = !(i * 7 + year as usize).is_multiple_of(3);
            let words = if good {
                praise[i % 3]
            } else {
                complaint[i % 3]
            };
            let rating = if good { "5.0" } else { "1.0" };
            let text = serde_json::to_string(&format!("{words} (review {i} of {year})")).unwrap();
            let month = (i % 12) as u8 + 1;
            lines.push(crate::formats::amazon_line(
                rating,
                &text,
                crate::formats::ms(year, month, 2),
            ));
        }
    }
    let path = dir.join("reviews.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// A preset of `ffn_s` and `bigru_s` on the token states of the encoder `options` name,
/// over [`reviews`], yearly, one seed, two epochs.
fn encoder_preset(dir: &Path, name: &str, options: &str) -> PathBuf {
    reviews(dir);
    let preset = format!(
        r#"schema = 1
name = "{name}"
seeds = [0]
vary = ["init"]
metric = "balanced-mse"

[data]
path = "reviews.jsonl"

[data.options]
text = "encoder"
{options}
max_tokens = 24
input = "tokens"

[slicing]
scheme = "yearly"

[split]
train_fraction = 0.7
seed = 0
stratify = "never"

[regime]
kind = "cumulative"

[train]
optimizer = "adamw"
learning_rate = 1e-3
weight_decay = 0.01
grad_clip = 1.0
batch_size = 16
epochs = 2
loss = "weighted-mse"

[[models]]
key = "ffn_s"

[[models]]
key = "bigru_s"
"#
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, preset).unwrap();
    path
}

/// `drift run --quiet` of `preset` into `out`, which must succeed.
pub fn run(preset: &Path, out: &Path) {
    let output = crate::support::drift()
        .args(["run", "--quiet", "--out"])
        .arg(out)
        .arg(preset)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `drift run` of `preset` into `out`: every cell of every model's 3 x 3 matrix is scored.
fn runs_and_scores(preset: &Path, out: &Path) {
    run(preset, out);
    let runs = drift::artifacts::load_all(out).unwrap();
    let models: Vec<&str> = runs.iter().map(|r| r.model.as_str()).collect();
    assert!(
        models.contains(&"ffn_s") && models.contains(&"bigru_s"),
        "{models:?}"
    );
    for r in runs.iter().filter(|r| r.model != "mean-target") {
        assert_eq!(r.matrix.grids()[0].filled().count(), 9, "{}", r.model);
    }
}

#[test]
fn a_preset_trains_text_models_on_mpnet_token_states() {
    let dir = tempfile::tempdir().unwrap();
    let preset = encoder_preset(dir.path(), "reviews-mpnet", r#"encoder = "mpnet""#);
    runs_and_scores(&preset, &dir.path().join("results"));
}

#[test]
fn a_preset_trains_text_models_on_a_local_roberta_s_token_states() {
    // The seed paper's text setting (its families on RoBERTa token states) is one preset
    // away: here a small random RoBERTa folder stands in for roberta-base.
    let dir = tempfile::tempdir().unwrap();
    let folder = root().join("roberta");
    let options = format!(
        "encoder = \"local\"\nencoder_path = {}",
        serde_json::to_string(&folder.display().to_string()).unwrap()
    );
    let preset = encoder_preset(dir.path(), "reviews-roberta", &options);
    runs_and_scores(&preset, &dir.path().join("results"));
}

#[test]
fn drift_embed_writes_what_transformers_computes() {
    let dir = tempfile::tempdir().unwrap();
    // One text a line: the texts without a line break of their own.
    let texts = texts();
    let kept: Vec<usize> = (0..texts.len())
        .filter(|&i| !texts[i].contains('\n'))
        .collect();
    let lines: Vec<&str> = kept.iter().map(|&i| texts[i].as_str()).collect();
    let input = dir.path().join("texts.txt");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let out = dir.path().join("roberta.npy");
    let output = crate::support::drift()
        .args(["embed", "--quiet", "--max-tokens", "48", "--encoder-path"])
        .arg(root().join("roberta"))
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let bytes = std::fs::read(&out).unwrap();
    // numpy's format 1.0: magic, version, header length, a header padded to 64 bytes.
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    assert_eq!((10 + header_len) % 64, 0);
    assert!(
        header.starts_with(&format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, 32), }}",
            lines.len()
        )),
        "{header}"
    );
    let values: Vec<f32> = bytes[10 + header_len..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let (_, mean) = tensor("roberta", "mean");
    for (row, &i) in kept.iter().enumerate() {
        let diff = largest_difference(
            &values[row * 32..(row + 1) * 32],
            &mean[i * 32..(i + 1) * 32],
        );
        assert!(
            diff <= f64::from(TOL),
            "line {row} (text {i}) differs by {diff:e}"
        );
    }
    // A folder and a package at once is refused by the argument parser.
    let both = crate::support::drift()
        .args([
            "embed",
            "--encoder",
            "minilm",
            "--encoder-path",
            "x",
            "t.txt",
            "--out",
            "o.npy",
        ])
        .output()
        .unwrap();
    assert!(!both.status.success());
}
