//! Preset files: a full valid preset parses into the expected [`Preset`], and every kind of
//! mistake is reported as one line `<file>: <field path>: <problem>`.

use std::path::PathBuf;

use drift::Metric;
use drift::data::DataSpec;
use drift::preset::Preset;
use drift::slices::{Regime, Scheme, Stratify, Timestamp};
use drift::train::{Loss, Optimizer};

/// A preset that sets every section and most optional fields.
pub const VALID: &str = r#"# A small preset that uses every section.
schema = 1
name = "tiny-portraits"
description = "Three CNNs on synthetic portraits"
seeds = [0, 1, 2]
metric = "accuracy"

[data]
source = "synthetic-portraits"

[slicing]
scheme = "decade"
start = 1900
end = "2000-06"
min_rows = 10

[split]
train_fraction = 0.8
seed = 7
stratify = "never"
downsample = true

[regime]
kind = "window"
window = 2

[train]
optimizer = "adamw"
learning_rate = 0.001
weight_decay = 0.01
grad_clip = 1.0
batch_size = 64
epochs = 5
loss = "cross-entropy"

[[models]]
key = "cnn_s"

[[models]]
key = "cnn_m"
learning_rate = 0.0005
epochs = 8

[[models]]
key = "mlp_s"
family = "dense"
batch_size = 32
"#;

/// `text` with the single occurrence of `from` replaced by `to`.
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(
        text.matches(from).count(),
        1,
        "{from:?} must occur exactly once in {text}"
    );
    text.replacen(from, to, 1)
}

/// `VALID` with the single occurrence of `from` replaced by `to`.
fn with(from: &str, to: &str) -> String {
    replace_once(VALID, from, to)
}

/// Writes `text` to a temporary preset file and loads it.
fn load(
    text: &str,
) -> (
    tempfile::TempDir,
    PathBuf,
    drift::Result<drift::preset::LoadedPreset>,
) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("preset.toml");
    std::fs::write(&path, text).unwrap();
    let result = Preset::load(&path);
    (dir, path, result)
}

/// The error of loading `text`, checked to be one line `<path>: ...`; returns the part
/// after the path.
fn error(text: &str) -> String {
    let (_dir, path, result) = load(text);
    let err = result.expect_err("the preset should be rejected");
    match &err {
        drift::Error::Preset { path: p, .. } => assert_eq!(p, &path),
        other => panic!("expected Error::Preset, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        !message.contains('\n'),
        "the message must be one line: {message:?}"
    );
    let prefix = format!("{}: ", path.display());
    message
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{message:?} does not start with {prefix:?}"))
        .to_string()
}

fn hash(text: &str) -> String {
    let (_dir, _path, result) = load(text);
    result.unwrap().sha256
}

#[test]
fn a_valid_preset_parses() {
    let (_dir, path, result) = load(VALID);
    let loaded = result.unwrap();
    assert_eq!(loaded.path, path);
    assert_eq!(loaded.sha256.len(), 64);
    assert!(
        loaded
            .sha256
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    );
    let p = loaded.preset;
    assert_eq!(p.schema, 1);
    assert_eq!(p.name, "tiny-portraits");
    assert_eq!(
        p.description.as_deref(),
        Some("Three CNNs on synthetic portraits")
    );
    assert_eq!(p.seeds, vec![0, 1, 2]);
    assert_eq!(p.metric, Metric::Accuracy);
    assert_eq!(p.data, DataSpec::Source("synthetic-portraits".into()));
    assert_eq!(p.slicing.scheme, Scheme::Decade);
    assert_eq!(p.slicing.start, Some(Timestamp::from_year(1900).unwrap()));
    assert_eq!(p.slicing.end, Some(Timestamp::parse("2000-06").unwrap()));
    assert_eq!(p.slicing.min_rows, 10);
    assert_eq!(p.split.train_fraction, 0.8);
    assert_eq!(p.split.seed, 7);
    assert_eq!(p.split.stratify, Stratify::Never);
    assert!(p.downsample);
    assert_eq!(p.regime, Regime::Window(2));

    let keys: Vec<&str> = p.models.iter().map(|m| m.key.as_str()).collect();
    assert_eq!(keys, ["cnn_s", "cnn_m", "mlp_s"]);
    let families: Vec<&str> = p.models.iter().map(|m| m.family.as_str()).collect();
    assert_eq!(families, ["cnn", "cnn", "dense"]);

    let base = &p.models[0].train;
    assert_eq!(base.optimizer, Optimizer::Adamw);
    assert_eq!(base.learning_rate, 0.001);
    assert_eq!(base.weight_decay, 0.01);
    assert_eq!(base.grad_clip, Some(1.0));
    assert_eq!(base.batch_size, 64);
    assert_eq!(base.epochs, 5);
    assert_eq!(base.loss, Loss::CrossEntropy);
    // Overrides apply to their model only.
    let m = &p.models[1].train;
    assert_eq!((m.learning_rate, m.epochs, m.batch_size), (0.0005, 8, 64));
    let m = &p.models[2].train;
    assert_eq!((m.learning_rate, m.epochs, m.batch_size), (0.001, 5, 32));
}

#[test]
fn defaults_and_other_forms_parse() {
    // No [split], a data path, explicit edges, cumulative regime, a regression metric.
    let text = r#"
schema = 1
name = "amazon-1"
seeds = [3]
metric = "balanced-mse"
data = { path = "data/amazon.jsonl" }
slicing = { scheme = "edges", edges = [2001, "2005-07", "2010-01-15"] }
regime = { kind = "cumulative" }
train = { optimizer = "adam", learning_rate = 1, batch_size = 8, epochs = 1, loss = "weighted-mse" }
models = [{ key = "linear" }]
"#;
    let (_dir, _path, result) = load(text);
    let p = result.unwrap().preset;
    assert_eq!(p.data, DataSpec::Path("data/amazon.jsonl".into()));
    assert_eq!(
        p.slicing.scheme,
        Scheme::Edges(vec![
            Timestamp::from_year(2001).unwrap(),
            Timestamp::parse("2005-07").unwrap(),
            Timestamp::parse("2010-01-15").unwrap(),
        ])
    );
    assert_eq!(
        (p.slicing.start, p.slicing.end, p.slicing.min_rows),
        (None, None, 1)
    );
    assert_eq!(p.split.train_fraction, 0.7);
    assert_eq!(p.split.seed, 0);
    assert_eq!(p.split.stratify, Stratify::Auto);
    assert!(!p.downsample);
    assert_eq!(p.regime, Regime::Cumulative);
    assert_eq!(p.metric, Metric::BalancedMse);
    assert_eq!(p.description, None);
    let t = &p.models[0].train;
    assert_eq!(
        (t.learning_rate, t.weight_decay, t.grad_clip),
        (1.0, 0.0, None)
    );
    assert_eq!(p.models[0].family, "linear-probe");
}

#[test]
fn wrong_types_for_positive_integers() {
    let third_model = "key = \"mlp_s\"\n";
    assert_eq!(
        error(&with(third_model, "key = \"mlp_s\"\nepochs = 0\n")),
        "models[2].epochs: expected a positive integer, got 0"
    );
    assert_eq!(
        error(&with(third_model, "key = \"mlp_s\"\nepochs = \"ten\"\n")),
        "models[2].epochs: expected a positive integer, got \"ten\""
    );
    assert_eq!(
        error(&with("batch_size = 64", "batch_size = 64.5")),
        "train.batch_size: expected a positive integer, got 64.5"
    );
    assert_eq!(
        error(&with("batch_size = 64", "batch_size = [64]")),
        "train.batch_size: expected a positive integer, got an array"
    );
    assert_eq!(
        error(&with("min_rows = 10", "min_rows = true")),
        "slicing.min_rows: expected a positive integer, got true"
    );
    assert_eq!(
        error(&with("window = 2", "window = { size = 2 }")),
        "regime.window: expected a positive integer, got a table"
    );
}

#[test]
fn negative_numbers() {
    assert_eq!(
        error(&with("seeds = [0, 1, 2]", "seeds = [0, -1, 2]")),
        "seeds[1]: expected a non-negative integer, got -1"
    );
    assert_eq!(
        error(&with("learning_rate = 0.001", "learning_rate = -0.001")),
        "train.learning_rate: expected a positive number, got -0.001"
    );
    assert_eq!(
        error(&with("weight_decay = 0.01", "weight_decay = -1")),
        "train.weight_decay: expected a non-negative number, got -1"
    );
    assert_eq!(
        error(&with("seed = 7", "seed = -7")),
        "split.seed: expected a non-negative integer, got -7"
    );
    assert_eq!(
        error(&with("learning_rate = 0.0005", "learning_rate = nan")),
        "models[1].learning_rate: expected a positive number, got nan"
    );
}

#[test]
fn unknown_fields_name_their_table() {
    assert_eq!(
        error(&with("epochs = 5\n", "epochs = 5\nmomentum = 0.9\n")),
        "train.momentum: unknown field `momentum`, expected one of `optimizer`, \
         `learning_rate`, `weight_decay`, `grad_clip`, `batch_size`, `epochs`, `loss`, `encoder`, \
         `channels_last`"
    );
    assert_eq!(
        error(&with("epochs = 8\n", "epochs = 8\nlr = 0.1\n")),
        "models[1].lr: unknown field `lr`, expected one of `key`, `family`, \
         `learning_rate`, `weight_decay`, `batch_size`, `epochs`, `positional_embedding`"
    );
    assert_eq!(
        error(&with(
            "metric = \"accuracy\"\n",
            "metric = \"accuracy\"\nmetrics = []\n"
        )),
        "metrics: unknown field `metrics`, expected one of `schema`, `name`, \
         `description`, `seeds`, `vary`, `metric`, `seen_classes`, `data`, `slicing`, \
         `split`, `regime`, `train`, `models`"
    );
}

#[test]
fn missing_fields() {
    assert_eq!(
        error(&with("epochs = 5\n", "")),
        "train.epochs: required, but missing"
    );
    assert_eq!(
        error(&with("metric = \"accuracy\"\n", "")),
        "metric: required, but missing"
    );
}

#[test]
fn unknown_names() {
    assert_eq!(
        error(&with("metric = \"accuracy\"", "metric = \"precision\"")),
        "metric: unknown variant `precision`, expected one of `accuracy`, \
         `balanced-accuracy`, `balanced-mse`, `mse`, `mae`, `macro-auc`, `f1`, `macro-f1`, \
         `micro-f1`"
    );
    assert_eq!(
        error(&with("scheme = \"decade\"", "scheme = \"monthly\"")),
        "slicing.scheme: unknown variant `monthly`, expected one of `yearly`, \
         `half-yearly`, `quarterly`, `decade`, `edges`"
    );
    assert_eq!(
        error(&with(
            "name = \"tiny-portraits\"",
            "name = \"Tiny Portraits\""
        )),
        "name: expected a name of at most 100 lower-case letters, digits, '_' and '-', got \"Tiny Portraits\""
    );
}

#[test]
fn edges_and_scheme_must_agree() {
    assert_eq!(
        error(&with(
            "scheme = \"decade\"",
            "scheme = \"decade\"\nedges = [1900, 1950]"
        )),
        "slicing.edges: only allowed when slicing.scheme = \"edges\""
    );
    assert_eq!(
        error(&with("scheme = \"decade\"", "scheme = \"edges\"")),
        "slicing.edges: required when slicing.scheme = \"edges\""
    );
    assert_eq!(
        error(&with(
            "scheme = \"decade\"",
            "scheme = \"edges\"\nedges = []"
        )),
        "slicing.edges: needs at least one edge"
    );
}

#[test]
fn edges_must_increase() {
    assert_eq!(
        error(&with(
            "scheme = \"decade\"",
            "scheme = \"edges\"\nedges = [1900, \"1950-06\", \"1950-03\"]"
        )),
        "slicing.edges[2]: 1950-03 is not after 1950-06: edges must increase"
    );
    assert_eq!(
        error(&with(
            "scheme = \"decade\"",
            "scheme = \"edges\"\nedges = [1900, \"1900-01-01\"]"
        )),
        "slicing.edges[1]: 1900 is not after 1900: edges must increase"
    );
    assert_eq!(
        error(&with(
            "scheme = \"decade\"",
            "scheme = \"edges\"\nedges = [1900, \"1950-13\"]"
        )),
        "slicing.edges[1]: expected a date: a year such as 1905 or a string \"YYYY\", \
         \"YYYY-MM\" or \"YYYY-MM-DD\", got \"1950-13\""
    );
    assert_eq!(
        error(&with("end = \"2000-06\"", "end = 1900")),
        "slicing.end: 1900 is not after slicing.start 1900"
    );
}

#[test]
fn window_and_regime_must_agree() {
    assert_eq!(
        error(&with("window = 2\n", "")),
        "regime.window: required when regime.kind = \"window\""
    );
    assert_eq!(
        error(&with("kind = \"window\"", "kind = \"single\"")),
        "regime.window: only allowed when regime.kind = \"window\""
    );
}

#[test]
fn duplicates() {
    assert_eq!(
        error(&with("seeds = [0, 1, 2]", "seeds = [0, 1, 0]")),
        "seeds[2]: seed 0 appears twice"
    );
    assert_eq!(
        error(&with("seeds = [0, 1, 2]", "seeds = []")),
        "seeds: needs at least one seed"
    );
    assert_eq!(
        error(&with("key = \"mlp_s\"", "key = \"cnn_s\"")),
        "models[2].key: model cnn_s appears twice"
    );
    assert_eq!(
        error(&with("key = \"mlp_s\"", "key = \"cnn_xl\"")),
        "models[2].key: unknown model \"cnn_xl\" (expected one of mlp_s, mlp_m, mlp_l, \
         cnn_s, cnn_m, cnn_l, resnet_s, resnet_m, resnet_l, vit_s, vit_m, vit_l, ffn_s, ffn_m, \
         ffn_l, textcnn_s, textcnn_m, textcnn_l, bigru_s, bilstm_m, bilstm_attn_l, tx_s, tx_m, \
         tx_l, linear)"
    );
}

#[test]
fn data_needs_exactly_one_of_source_and_path() {
    assert_eq!(
        error(&with(
            "source = \"synthetic-portraits\"",
            "source = \"synthetic-portraits\"\npath = \"data/x.csv\""
        )),
        "data: give exactly one of source and path"
    );
    assert_eq!(
        error(&with("source = \"synthetic-portraits\"", "")),
        "data: give exactly one of source and path"
    );
    assert_eq!(
        error(&with("source = \"synthetic-portraits\"", "path = \"\"")),
        "data.path: must not be empty"
    );
}

#[test]
fn metric_and_loss_must_fit() {
    assert_eq!(
        error(&with("metric = \"accuracy\"", "metric = \"mse\"")),
        "metric: mse cannot be computed from a model trained with train.loss = \"cross-entropy\""
    );
    assert_eq!(
        error(&with("loss = \"cross-entropy\"", "loss = \"weighted-bce\"")),
        "metric: accuracy cannot be computed from a model trained with train.loss = \"weighted-bce\""
    );
    // weighted-bce does yield macro-auc.
    let text = with("loss = \"cross-entropy\"", "loss = \"weighted-bce\"");
    let text = replace_once(&text, "metric = \"accuracy\"", "metric = \"macro-auc\"");
    let (_dir, _path, result) = load(&text);
    assert_eq!(result.unwrap().preset.metric, Metric::MacroAuc);
}

#[test]
fn other_schema_versions_are_refused() {
    assert_eq!(
        error(&with("schema = 1", "schema = 2")),
        "schema: this version of drift reads schema 1, not 2"
    );
}

#[test]
fn toml_syntax_errors_report_a_line() {
    // The 1-based line of `needle` in the valid preset.
    let line = |needle: &str| VALID.lines().position(|l| l == needle).unwrap() + 1;

    let message = error(&with("train_fraction = 0.8", "train_fraction = 0.8.1"));
    let expected = format!("line {}: ", line("train_fraction = 0.8"));
    assert!(message.starts_with(&expected), "{message}");

    let message = error(&with("[regime]", "[regime"));
    let expected = format!("line {}: ", line("[regime]"));
    assert!(message.starts_with(&expected), "{message}");

    let message = error(&with("epochs = 5\n", "epochs = 5\nepochs = 6\n"));
    let expected = format!("line {}: ", line("epochs = 5") + 1);
    assert!(message.starts_with(&expected), "{message}");
    assert!(message.contains("duplicate key"), "{message}");
}

#[test]
fn train_fraction_must_be_a_fraction() {
    assert_eq!(
        error(&with("train_fraction = 0.8", "train_fraction = 1.5")),
        "split.train_fraction: expected a number strictly between 0 and 1, got 1.5"
    );
    assert_eq!(
        error(&with("train_fraction = 0.8", "train_fraction = 1")),
        "split.train_fraction: expected a number strictly between 0 and 1, got 1"
    );
}

#[test]
fn unreadable_file_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.toml");
    let message = Preset::load(&path).unwrap_err().to_string();
    assert!(
        message.starts_with(&format!("{}: ", path.display())),
        "{message}"
    );
    assert!(!message.contains('\n'));
}

#[test]
fn the_hash_ignores_comments_layout_and_defaults() {
    let reference = hash(VALID);
    // Comments, blank lines, spacing, key order and inline tables do not matter.
    let relaid = VALID
        .replace("# A small preset that uses every section.\n", "")
        .replace(" = ", "   =   ")
        .replace("\n\n", "\n\n# a comment\n\n");
    let relaid = replace_once(
        &relaid,
        "[data]\nsource   =   \"synthetic-portraits\"\n",
        "data = { source = \"synthetic-portraits\" }  # inline\n",
    );
    let relaid = replace_once(
        &relaid,
        "seeds   =   [0, 1, 2]\nmetric   =   \"accuracy\"",
        "metric = \"accuracy\"\nseeds = [\n  0,\n  1,\n  2,\n]",
    );
    assert_ne!(relaid, VALID);
    assert_eq!(hash(&relaid), reference);
    // An explicit default equals an omitted one: the hash is of the checked preset.
    let text = with("key = \"cnn_s\"", "key = \"cnn_s\"\nfamily = \"cnn\"");
    let text = replace_once(&text, "[regime]", "[regime]\nwindow = 2\nkind = \"window\"");
    let text = replace_once(&text, "kind = \"window\"\nwindow = 2\n", "");
    assert_eq!(hash(&text), reference);
    // Integer and float spellings of the same number are the same value.
    assert_eq!(hash(&with("grad_clip = 1.0", "grad_clip = 1")), reference);
}

#[test]
fn the_hash_changes_with_any_value() {
    let reference = hash(VALID);
    for (from, to) in [
        ("epochs = 5", "epochs = 6"),
        ("seeds = [0, 1, 2]", "seeds = [0, 2, 1]"),
        ("learning_rate = 0.001", "learning_rate = 0.002"),
        ("downsample = true", "downsample = false"),
        ("window = 2", "window = 3"),
        ("family = \"dense\"", "family = \"mlp\""),
        (
            "description = \"Three CNNs on synthetic portraits\"",
            "description = \"Three CNNs\"",
        ),
    ] {
        assert_ne!(hash(&with(from, to)), reference, "{from} -> {to}");
    }
}

#[test]
fn the_hash_is_stable_across_loads() {
    let a = hash(VALID);
    let b = hash(VALID);
    assert_eq!(a, b);
    assert_eq!(a, Preset::parse(VALID).unwrap().content_hash());
}

#[test]
fn a_position_embedding_is_an_option_of_the_text_transformers_only() {
    let (_dir, _path, result) = load(&with(
        "key = \"mlp_s\"",
        "key = \"tx_s\"\npositional_embedding = true",
    ));
    let p = result.unwrap().preset;
    assert!(p.models[2].positional_embedding);
    assert!(!p.models[0].positional_embedding);
    // Off is the default and leaves the content hash as it was.
    assert_eq!(
        hash(&with(
            "key = \"mlp_s\"",
            "key = \"tx_s\"\npositional_embedding = false"
        )),
        hash(&with("key = \"mlp_s\"", "key = \"tx_s\""))
    );
    assert_eq!(
        error(&with(
            "key = \"mlp_s\"",
            "key = \"mlp_s\"\npositional_embedding = true"
        )),
        "models[2].positional_embedding: only the text Transformers (tx_*) have one, not mlp_s"
    );
}

#[test]
fn channels_last_is_a_training_option_in_the_content_hash_when_on() {
    let on = with("epochs = 5", "epochs = 5\nchannels_last = true");
    let (_dir, _path, result) = load(&on);
    let p = result.unwrap().preset;
    assert!(p.models.iter().all(|m| m.train.channels_last));
    assert_ne!(hash(&on), hash(VALID));
    // Off is the default and leaves the content hash as it was.
    assert_eq!(
        hash(&with("epochs = 5", "epochs = 5\nchannels_last = false")),
        hash(VALID)
    );
}

// ---- what a replication varies (`vary`) ------------------------------------------------

use drift::data::Targets;
use drift::slices::{Varied, derived_seed, split_slice};

/// A small synthetic-portraits preset (four years of 30 rows), `vary` as `vary` gives it.
fn portraits(vary: &str) -> Preset {
    let text = format!(
        r#"
schema = 1
name = "replicas"
seeds = [0, 1]
metric = "accuracy"
{vary}

[data]
source = "synthetic-portraits"

[data.options]
start = 2000
end = 2003
rows_per_year = 30

[slicing]
scheme = "yearly"

[split]
seed = 5

[regime]
kind = "cumulative"

[train]
optimizer = "adam"
learning_rate = 1e-3
batch_size = 16
epochs = 1
loss = "cross-entropy"

[[models]]
key = "mlp_s"
"#
    );
    Preset::parse(&text).unwrap()
}

#[test]
fn vary_is_checked_when_the_preset_loads() {
    let with = |line: &str| {
        VALID.replace(
            "metric = \"accuracy\"",
            &format!("metric = \"accuracy\"\n{line}"),
        )
    };
    for (line, error) in [
        (
            r#"vary = ["init", "noise"]"#,
            r#"vary[1]: unknown part "noise" (known: init, split, data)"#,
        ),
        (
            r#"vary = ["init", "split", "init"]"#,
            r#"vary[2]: "init" appears twice"#,
        ),
        (
            r#"vary = ["split", "data"]"#,
            "vary: must include \"init\" (every seed varies the initialisation and batch order)",
        ),
        (
            r#"vary = []"#,
            "vary: must include \"init\" (every seed varies the initialisation and batch order)",
        ),
    ] {
        assert_eq!(self::error(&with(line)), error, "{line}");
    }
}

/// `vary = ["init"]` is left out of the canonical JSON, so a preset that fixes its data
/// and split hashes as before `vary` existed; the default (every part) is a new hash,
/// written out or not, in any order.
#[test]
fn vary_init_keeps_the_old_hash_and_the_default_is_a_new_one() {
    let with = |line: &str| {
        VALID.replace(
            "metric = \"accuracy\"",
            &format!("metric = \"accuracy\"\n{line}"),
        )
    };
    let all = hash(VALID);
    assert_eq!(hash(&with(r#"vary = ["init", "split", "data"]"#)), all);
    assert_eq!(hash(&with(r#"vary = ["data", "init", "split"]"#)), all);
    let only_init = hash(&with(r#"vary = ["init"]"#));
    assert_ne!(only_init, all);
    assert_ne!(hash(&with(r#"vary = ["init", "split"]"#)), all);
    let fixed = Preset::parse(&with(r#"vary = ["init"]"#)).unwrap();
    let json = serde_json::to_value(fixed).unwrap();
    assert!(json.get("vary").is_none(), "{json}");
}

/// Every paper preset still has the content hash and `vary` its committed runs recorded; `types-covariate`'s is pinned, as printed by `drift presets
/// check` before `vary` existed. An old `run.json`, without `varied`, loads as `[init]`.
#[test]
fn the_paper_presets_keep_the_hashes_their_committed_runs_recorded() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let covariate = Preset::load(&root.join("presets/paper/types-covariate.toml")).unwrap();
    assert_eq!(
        covariate.sha256,
        "4a9b405a8e036a9b6e886d993c4dc34a677164b49ebf1ed2614040e4ae01739f"
    );
    for file in drift::preset::preset_files(&root.join("presets/paper")).unwrap() {
        let loaded = Preset::load(&file).unwrap();
        let results = root.join("results").join(&loaded.preset.name);
        let Ok(models) = std::fs::read_dir(&results) else {
            continue;
        };
        for model in models.flatten().filter(|m| m.path().is_dir()) {
            let run = drift::artifacts::load_run(&model.path().join("seed-0")).unwrap();
            assert_eq!(
                run.provenance.preset.sha256,
                loaded.sha256,
                "{}",
                model.path().display()
            );
            assert_eq!(run.provenance.varied, loaded.preset.varied());
        }
    }
}

/// The documented derivation: the first 8 bytes, little-endian, of
/// SHA-256("drift-replication-v1:{part}:{base}:{seed}"), the data seed without its top bit.
#[test]
fn derived_seeds_follow_the_documented_formula() {
    let expected = |text: &str| {
        let hex = drift::checksum::sha256_hex(text.as_bytes());
        let bytes: Vec<u8> = (0..8)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        u64::from_le_bytes(bytes.try_into().unwrap())
    };
    assert_eq!(
        derived_seed(Varied::Split, 5, 1),
        expected("drift-replication-v1:split:5:1")
    );
    assert_eq!(
        derived_seed(Varied::Data, 0, 2),
        expected("drift-replication-v1:data:0:2") & (u64::MAX >> 1)
    );
}

/// By default two seeds draw different data and split it differently; with
/// `vary = ["init"]` both train on the data and split of the preset's own seeds, as
/// before `vary` existed (the split of `split.seed`, the generator's `seed` option).
#[test]
fn seeds_vary_data_and_split_by_default_and_share_them_with_vary_init() {
    let base = std::path::Path::new(".");
    let varied = portraits("");
    assert_eq!(varied.varied(), [Varied::Init, Varied::Split, Varied::Data]);
    let d0 = varied.load_data(base, 0).unwrap();
    let d1 = varied.load_data(base, 1).unwrap();
    assert_ne!(d0.source, d1.source);
    assert_ne!(d0.inputs, d1.inputs);
    assert_eq!(varied.load_data(base, 1).unwrap().source, d1.source);
    let (p0, p1) = (varied.plan(&d0, 0).unwrap(), varied.plan(&d1, 1).unwrap());
    assert_ne!(p0.splits, p1.splits);
    // The split alone varies too, on the same data.
    assert_ne!(p0.splits, varied.plan(&d0, 1).unwrap().splits);

    let fixed = portraits(r#"vary = ["init"]"#);
    assert_eq!(fixed.varied(), [Varied::Init]);
    assert_eq!(fixed.data_options_for(1), fixed.data_options);
    let before = drift::text::load(&fixed.data, &fixed.data_options, base).unwrap();
    let data = fixed.load_data(base, 1).unwrap();
    assert_eq!(data.source, before.source);
    let plan = fixed.plan(&data, 1).unwrap();
    assert_eq!(plan.splits, fixed.plan(&data, 0).unwrap().splits);
    let Targets::Classes { labels, .. } = &data.targets else {
        panic!("portraits have classes");
    };
    for (slice, split) in plan.timeline.slices.iter().zip(&plan.splits) {
        let strata: Vec<u32> = slice.rows.iter().map(|&r| labels[r]).collect();
        let old = split_slice(&slice.rows, Some(&strata), &fixed.split, &slice.label);
        assert_eq!(*split, old, "slice {}", slice.label);
    }
}

/// Data that no seed draws (the toy generators, corpora, files) has nothing to vary: the
/// recorded parts leave `data` out.
#[test]
fn unseeded_data_does_not_vary() {
    let toy = Preset::parse(&VALID.replace("synthetic-portraits", "toy-images")).unwrap();
    assert_eq!(toy.vary, Varied::ALL);
    assert_eq!(toy.varied(), [Varied::Init, Varied::Split]);
    assert_eq!(toy.data_options_for(3), toy.data_options);
}

#[test]
fn train_encoder_fine_tunes_a_transformer_encoder_under_adamw() {
    let encoder = with(
        "[data]\nsource = \"synthetic-portraits\"\n",
        "[data]\nsource = \"healthtweets\"\n\n[data.options]\ntext = \"encoder\"\n\
         encoder = \"minilm\"\ninput = \"pooled\"\n",
    );
    let frozen = replace_once(
        &encoder,
        "[[models]]\nkey = \"cnn_s\"",
        "[[models]]\nkey = \"linear\"",
    );
    let tuned = replace_once(
        &frozen,
        "loss = \"cross-entropy\"\n",
        "loss = \"cross-entropy\"\n\n[train.encoder]\n",
    );
    let (_dir, _path, result) = load(&tuned);
    let loaded = result.unwrap();
    assert!(loaded.preset.fine_tunes());
    let training = loaded.preset.models[0].train.encoder.unwrap();
    assert_eq!(
        (
            training.learning_rate,
            training.weight_decay,
            training.warmup
        ),
        (2e-5, 0.01, 0.1)
    );
    let (_dir, _path, result) = load(&frozen);
    assert!(!result.unwrap().preset.fine_tunes());
    assert_ne!(hash(&tuned), hash(&frozen));

    let with_table = |table: &str| replace_once(&tuned, "[train.encoder]\n", table);
    assert_eq!(
        error(&replace_once(
            &tuned,
            "optimizer = \"adamw\"",
            "optimizer = \"adam\""
        )),
        "train.encoder: fine-tuning an encoder trains it with AdamW; set train.optimizer = \"adamw\""
    );
    assert_eq!(
        error(&replace_once(&tuned, "text = \"encoder\"\n", "")),
        "train.encoder: fine-tunes the encoder that data.options.text = \"encoder\" names, and \
         this preset reads none"
    );
    assert_eq!(
        error(&replace_once(
            &tuned,
            "encoder = \"minilm\"",
            "encoder = \"glove\""
        )),
        "train.encoder: glove is a table of static word vectors, with nothing to fine-tune; \
         only a text transformer is"
    );
    assert_eq!(
        error(&with_table("[train.encoder]\nwarmup = 1\n")),
        "train.encoder.warmup: a fraction of the steps in [0, 1), got 1"
    );
    assert_eq!(
        error(&with_table("[train.encoder]\nlearning_rate = 0\n")),
        "train.encoder.learning_rate: expected a positive number, got 0"
    );
    assert_eq!(
        error(&with_table("[train.encoder]\nlr = 1e-5\n")),
        "train.encoder.lr: unknown field `lr`, expected one of `learning_rate`, \
         `weight_decay`, `warmup`"
    );
}
