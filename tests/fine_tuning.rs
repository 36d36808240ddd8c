#![cfg(feature = "torch")]
//! Fine-tuning a pretrained encoder with its head (`[train.encoder]`,
//! src/models/fine_tuned.rs): the gradients of every architecture against `transformers`
//! (`gradients.safetensors` beside each small random model, by
//! `scripts/fine_tuning_fixtures.py`); before its first update the model computes what
//! the same head computes on the frozen encoder's output; every regime that trains runs
//! with it, moves the encoder's weights and gives the same bytes twice; and the smoke
//! preset fine-tunes the real MiniLM for two cutoffs. The encoder's learning rate follows
//! `transformers`' linear warm-up schedule (`tests/fixtures/warmup_schedule.json`).

use std::path::{Path, PathBuf};

use drift::encoders::text::{Pretrained, TextEncoder, TokenBatch, pool};
use drift::encoders::{EmbeddingPooling, Encoder, hub::Groups};
use safetensors::SafeTensors;
use tch::{Device, Kind, Tensor, nn};

use crate::text_encoders::{reviews, root, run};

const GROUPS: Groups = Groups {
    decay: 1,
    no_decay: 2,
};

/// Tensor `name` of the safetensors `file` as a float32 libtorch tensor (i64 widened).
fn read(file: &SafeTensors, name: &str) -> Tensor {
    let view = file
        .tensor(name)
        .unwrap_or_else(|_| panic!("{name}: missing"));
    let shape: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
    let kind = match view.dtype() {
        safetensors::Dtype::F32 => Kind::Float,
        safetensors::Dtype::I64 => Kind::Int64,
        other => panic!("{name}: {other:?}"),
    };
    Tensor::f_from_data_size(view.data(), &shape, kind).unwrap()
}

/// The reference texts' batch, padded with id 0 as drift pads.
fn reference_batch(architecture: &str) -> TokenBatch {
    let bytes = std::fs::read(root().join(architecture).join("reference.safetensors")).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    let lengths = read(&file, "lengths");
    let width = lengths.max().int64_value(&[]);
    let mask = Tensor::arange(width, (Kind::Int64, Device::Cpu))
        .unsqueeze(0)
        .lt_tensor(&lengths.unsqueeze(1));
    let ids = read(&file, "ids").narrow(1, 0, width) * mask.to_kind(Kind::Int64);
    TokenBatch { ids, mask }
}

#[test]
fn every_architecture_back_propagates_as_transformers_does() {
    for architecture in crate::text_encoders::architectures() {
        let bytes =
            std::fs::read(root().join(&architecture).join("gradients.safetensors")).unwrap();
        let reference = SafeTensors::deserialize(&bytes).unwrap();
        let pretrained = Pretrained::from_folder(&root().join(&architecture)).unwrap();
        let vs = nn::VarStore::new(Device::Cpu);
        let model = pretrained.declare(vs.root() / "backbone", GROUPS).unwrap();
        let batch = reference_batch(&architecture);
        let x = model.forward_t(&batch, false);
        let (_, mean) = pool(x, &batch.mask, EmbeddingPooling::Mean, false);
        let loss = (mean * read(&reference, "weights")).sum(Kind::Float);
        let expected = read(&reference, "loss").double_value(&[0]);
        let got = loss.double_value(&[]);
        assert!(
            (got - expected).abs() <= 1e-5 * expected.abs().max(1.0),
            "{architecture}: loss {got} against {expected}"
        );
        loss.backward();
        let mut names: Vec<String> = reference
            .names()
            .iter()
            .filter_map(|n| n.strip_prefix("grad.").map(str::to_string))
            .collect();
        names.sort();
        let variables = vs.variables();
        assert_eq!(
            variables.len(),
            names.len(),
            "{architecture}: drift declares {:?}, the loss reaches {names:?}",
            variables.keys().collect::<Vec<_>>()
        );
        for name in &names {
            let ours = variables
                .get(&format!("backbone.{name}"))
                .unwrap_or_else(|| panic!("{architecture}: {name} not declared"))
                .grad();
            let theirs = read(&reference, &format!("grad.{name}"));
            let scale = theirs.abs().max().double_value(&[]).max(1.0);
            let diff = (&ours - &theirs).abs().max().double_value(&[]);
            assert!(
                diff <= 1e-5 * scale,
                "{architecture}: {name}: gradients differ by {diff:e} (largest {scale:e})"
            );
        }
    }
}

#[test]
fn before_an_update_the_fine_tuned_model_is_the_head_on_the_frozen_encoder() {
    use drift::encoders::cache::CachedInput;
    use drift::models::{self, Backbone, Input, InputShape, ModelConfig};
    let folder = root().join("bert");
    let texts: Vec<String> = ["a good day", "terrible, do not buy", ""]
        .map(String::from)
        .to_vec();
    let frozen = TextEncoder::from_folder(&folder).unwrap();
    let encoded = frozen.encode(&texts, 16, EmbeddingPooling::Cls).unwrap();
    let backbone = Backbone::new(
        Pretrained::from_folder(&folder).unwrap(),
        EmbeddingPooling::Cls,
        CachedInput::Pooled,
    );
    let data = ModelConfig {
        input: InputShape::EncoderIds { max_tokens: 16 },
        outputs: 3,
        dropout: 0.1,
        positional_embedding: false,
        channels_last: false,
    };
    let config = backbone.head_config(&data).unwrap();
    assert_eq!(
        config.input,
        InputShape::Embedding {
            dim: encoded.dim as i64
        }
    );
    tch::manual_seed(7);
    let tuned_vs = nn::VarStore::new(Device::Cpu);
    let tuned = models::build_fine_tuned("linear", &tuned_vs.root(), &config, &backbone).unwrap();
    tch::manual_seed(7);
    let head_vs = nn::VarStore::new(Device::Cpu);
    let head = models::build("linear", &head_vs.root(), &config).unwrap();

    let ids = backbone
        .pretrained()
        .profile()
        .tokenize(&texts, 16)
        .unwrap();
    let width = ids.iter().map(Vec::len).max().unwrap();
    let mut flat = vec![0i64; texts.len() * width];
    let mut mask = vec![false; texts.len() * width];
    for (r, row) in ids.iter().enumerate() {
        for (t, &id) in row.iter().enumerate() {
            flat[r * width + t] = i64::from(id);
            mask[r * width + t] = true;
        }
    }
    let shape = [texts.len() as i64, width as i64];
    let input = Input::EncoderIds {
        ids: Tensor::from_slice(&flat).reshape(shape),
        mask: Tensor::from_slice(&mask).reshape(shape),
    };
    let pooled = Tensor::from_slice(&encoded.pooled).reshape([texts.len() as i64, -1]);
    let a = tch::no_grad(|| tuned.forward_t(&input, false));
    let b = tch::no_grad(|| head.forward_t(&Input::Embeddings(pooled), false));
    let diff = (a - b).abs().max().double_value(&[]);
    assert!(diff <= 1e-6, "differs by {diff:e}");
}

/// A preset fine-tuning the small random BERT with `models` under `regime` (a TOML
/// table body) over the reviews, yearly, one seed, two epochs.
fn preset(dir: &Path, name: &str, regime: &str, input: &str, models: &[&str]) -> PathBuf {
    reviews(dir);
    let folder = serde_json::to_string(&root().join("bert").display().to_string()).unwrap();
    let models: String = models
        .iter()
        .map(|m| format!("\n[[models]]\nkey = \"{m}\"\n"))
        .collect();
    let text = format!(
        r#"schema = 1
name = "{name}"
seeds = [0]
vary = ["init"]
metric = "balanced-mse"

[data]
path = "reviews.jsonl"

[data.options]
text = "encoder"
encoder = "local"
encoder_path = {folder}
max_tokens = 24
pooling = "cls"
input = "{input}"

[slicing]
scheme = "yearly"

[split]
train_fraction = 0.7
seed = 0
stratify = "never"

[regime]
{regime}

[train]
optimizer = "adamw"
learning_rate = 1e-3
weight_decay = 0.01
grad_clip = 1.0
batch_size = 16
epochs = 2
loss = "weighted-mse"

[train.encoder]
learning_rate = 1e-3
warmup = 0.2
{models}"#
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Tensor `name` of a checkpoint.
fn checkpoint_tensor(path: &Path, name: &str) -> Tensor {
    let bytes = std::fs::read(path).unwrap();
    read(&SafeTensors::deserialize(&bytes).unwrap(), name)
}

/// The pretrained value of the encoder's tensor `name` (a hub name).
fn pretrained_tensor(pretrained: &Pretrained, name: &str) -> Tensor {
    let vs = nn::VarStore::new(Device::Cpu);
    pretrained.declare(vs.root() / "backbone", GROUPS).unwrap();
    vs.variables()[&format!("backbone.{name}")].detach()
}

/// Every cell of `model`'s run under `out` is scored (`cells` of them), and every
/// checkpoint's encoder moved away from the pretrained weights.
fn trained(out: &Path, preset: &str, model: &str, cells: usize, pretrained: &Pretrained) {
    let runs = drift::artifacts::load_all(out).unwrap();
    let run = runs.iter().find(|r| r.model == model).unwrap();
    assert_eq!(run.matrix.grids()[0].filled().count(), cells, "{model}");
    let dir = drift::artifacts::run_dir(out, preset, model, 0).join("checkpoints");
    let name = "encoder.layer.0.attention.self.query.weight";
    let before = pretrained_tensor(pretrained, name);
    let mut checkpoints = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "safetensors") {
            let after = checkpoint_tensor(&path, &format!("backbone.{name}"));
            let moved = (after - &before).abs().max().double_value(&[]);
            assert!(
                moved > 1e-4,
                "{}: the encoder did not train",
                path.display()
            );
            checkpoints += 1;
        }
    }
    assert!(checkpoints > 0, "{}", dir.display());
}

#[test]
fn every_training_regime_fine_tunes_the_encoder() {
    let pretrained = Pretrained::from_folder(&root().join("bert")).unwrap();
    // Three yearly slices: cumulative and single score all 9 cells, fine-tune too, and
    // self-labelling (anchor 0) the same.
    let regimes = [
        ("cumulative", "kind = \"cumulative\""),
        ("single", "kind = \"single\""),
        ("finetune", "kind = \"finetune\""),
        ("self-label", "kind = \"self-label\""),
    ];
    for (name, regime) in regimes {
        let dir = tempfile::tempdir().unwrap();
        let name = format!("tuned-{name}");
        let path = preset(dir.path(), &name, regime, "tokens", &["ffn_s"]);
        let out = dir.path().join("results");
        run(&path, &out);
        trained(&out, &name, "ffn_s", 9, &pretrained);
    }
}

#[test]
fn fine_tuning_gives_the_same_bytes_twice_and_a_linear_head_reads_the_pooled_output() {
    let pretrained = Pretrained::from_folder(&root().join("bert")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = preset(
        dir.path(),
        "tuned",
        "kind = \"cumulative\"",
        "pooled",
        &["linear"],
    );
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    run(&path, &a);
    run(&path, &b);
    trained(&a, "tuned", "linear", 9, &pretrained);
    crate::support::assert_same_tree(&a, &b);
}

#[test]
fn the_smoke_preset_fine_tunes_minilm_for_two_cutoffs() {
    let preset = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/smoke-minilm-finetune.toml");
    let dir = tempfile::tempdir().unwrap();
    run(&preset, dir.path());
    let pretrained = Pretrained::from_package("minilm", &drift::packages::cache_dir()).unwrap();
    trained(
        dir.path(),
        "smoke-minilm-finetune",
        "linear",
        4,
        &pretrained,
    );
}

#[test]
fn drift_cache_refuses_a_preset_that_fine_tunes() {
    let dir = tempfile::tempdir().unwrap();
    let path = preset(
        dir.path(),
        "tuned",
        "kind = \"cumulative\"",
        "pooled",
        &["linear"],
    );
    let output = crate::support::drift()
        .arg("cache")
        .arg(&path)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = crate::support::stderr(&output);
    assert!(
        stderr.contains("fine-tunes local (train.encoder)"),
        "{stderr}"
    );
}

#[test]
fn the_encoder_s_learning_rate_follows_transformers_linear_warm_up_schedule() {
    let fixture = crate::support::fixture("warmup_schedule.json");
    let cases = fixture["cases"].as_array().unwrap();
    for case in cases {
        let steps = case["steps"].as_u64().unwrap();
        let schedule = drift::train::EncoderTraining {
            learning_rate: case["peak"].as_f64().unwrap(),
            weight_decay: 0.01,
            warmup: case["warmup"].as_f64().unwrap(),
        };
        let expected = crate::support::floats(&case["rates"]);
        for (step, want) in expected.iter().enumerate() {
            let got = schedule.learning_rate_at(step as u64, steps);
            assert!(
                (got - want).abs() <= 1e-12 * want.abs().max(1e-20),
                "{steps} steps, warm-up {}: step {step}: {got:e}, expected {want:e}",
                schedule.warmup
            );
        }
    }
    assert_eq!(cases.len(), 25);
}
