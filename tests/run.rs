//! `drift run` end to end on the smoke presets: byte-identical artifacts across runs and
//! after an interrupted run resumes, a diverging loss writes no artifact, and the lock,
//! stale work and tampered checkpoints are refused with clear errors.
#![cfg(feature = "torch")]

use std::fs;
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use crate::support::{assert_same_tree, drift};

const SMOKE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/presets/smoke.toml");

fn run(preset: &str, out: &Path, extra: &[&str]) -> Output {
    drift()
        .args(["run", preset, "--threads", "1", "--device", "cpu", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn run_ok(preset: &str, out: &Path) {
    let output = run(preset, out, &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn stderr(output: &Output) -> String {
    assert!(!output.status.success(), "the run should have failed");
    String::from_utf8_lossy(&output.stderr).trim().to_string()
}

/// One uninterrupted smoke run, shared by the tests that compare against it.
fn reference() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        run_ok(SMOKE, dir.path());
        dir
    })
    .path()
}

/// A rerun of a preset keeps the baseline that is there when it would write the same
/// one (it would only change the commit its run.json names), and rewrites a changed one.
#[test]
fn a_rerun_keeps_an_identical_baseline_and_rewrites_a_changed_one() {
    let dir = tempfile::tempdir().unwrap();
    run_ok(SMOKE, dir.path());
    let run_json = dir.path().join("smoke/majority/seed-0/run.json");
    let before = fs::metadata(&run_json).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    run_ok(SMOKE, dir.path());
    assert_eq!(fs::metadata(&run_json).unwrap().modified().unwrap(), before);
    // A damaged baseline is not kept: the rerun writes it again.
    let matrix = dir.path().join("smoke/majority/seed-0/matrix.csv");
    fs::write(&matrix, "train_slice,eval_slice,metric,value\n").unwrap();
    run_ok(SMOKE, dir.path());
    drift::artifacts::load_run(&dir.path().join("smoke/majority/seed-0")).unwrap();
    assert_same_tree(reference(), dir.path());
}

#[test]
fn the_smoke_preset_gives_byte_identical_artifacts_twice() {
    let again = tempfile::tempdir().unwrap();
    run_ok(SMOKE, again.path());
    assert_same_tree(reference(), again.path());

    // The majority baseline and 3 models x 2 seeds, each a loadable artifact with 6
    // slices and a health record per cutoff; the models have 6 checkpoints.
    let runs = drift::artifacts::find_runs(again.path()).unwrap();
    assert_eq!(runs.len(), 7);
    let baseline = drift::artifacts::load_run(&again.path().join("smoke/majority/seed-0")).unwrap();
    let health = baseline.health.as_ref().unwrap();
    assert!(
        health
            .iter()
            .all(|h| h.majority_share == Some(1.0) && h.final_loss.is_none())
    );
    for dir in runs
        .iter()
        .filter(|d| !d.starts_with(again.path().join("smoke/majority")))
    {
        let run = drift::artifacts::load_run(dir).unwrap();
        assert_eq!(run.slices, ["2000", "2001", "2002", "2003", "2004", "2005"]);
        assert!(run.timing.is_some());
        let health = run.health.as_ref().unwrap();
        assert_eq!(health.len(), 6);
        assert!(
            health
                .iter()
                .all(|h| h.rows > 0 && h.final_loss.unwrap() > 0.0)
        );
        // Cumulative training scores every cell; the ID cells use the test parts.
        assert_eq!(run.grid.filled().count(), 36);
        let checkpoints = fs::read_dir(dir.join("checkpoints"))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension().unwrap() == "safetensors")
            .count();
        assert_eq!(checkpoints, 6);
    }
}

/// Runs `preset` into `out` and SIGKILLs it as soon as `marker` (under `out`) exists.
fn kill_when(preset: &str, out: &Path, marker: &str) {
    let mut child = drift()
        .args([
            "run",
            preset,
            "--threads",
            "1",
            "--device",
            "cpu",
            "-q",
            "--out",
        ])
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let marker = out.join(marker);
    while !marker.exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "{preset}: the run ended early"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_killed_run_resumes_to_the_same_bytes() {
    let out = tempfile::tempdir().unwrap();
    // Kill it once the third model's first checkpoint exists: two models are done, the
    // third is mid-way.
    kill_when(
        SMOKE,
        out.path(),
        "smoke/vit_s/seed-0/checkpoints/2000.safetensors",
    );
    assert!(!out.path().join("smoke/vit_s/seed-1/SHA256SUMS").exists());
    // Wall times are written once per scored cutoff, so unchanged ones were not redone.
    let finished = out
        .path()
        .join("smoke/cnn_s/seed-1/checkpoints/2005.timing.json");
    let before = fs::read(&finished).unwrap();

    run_ok(SMOKE, out.path());
    assert_same_tree(reference(), out.path());
    assert_eq!(
        fs::read(&finished).unwrap(),
        before,
        "a finished cutoff was redone"
    );
}

#[test]
fn a_run_killed_between_checkpoint_and_scores_resumes_from_the_checkpoint() {
    // The states a kill can leave: a checkpoint without its scores, a matrix without its
    // sums. Made from a finished run by removing what had not been written yet.
    let out = tempfile::tempdir().unwrap();
    run_ok(SMOKE, out.path());
    let dir = out.path().join("smoke/cnn_s/seed-1");
    fs::remove_file(dir.join("checkpoints/2003.json")).unwrap();
    fs::remove_file(dir.join("checkpoints/2004.json")).unwrap();
    fs::remove_file(dir.join("checkpoints/2004.safetensors")).unwrap();
    fs::remove_file(dir.join("checkpoints/2005.json")).unwrap();
    fs::remove_file(dir.join("checkpoints/2005.safetensors")).unwrap();
    fs::remove_file(dir.join("SHA256SUMS")).unwrap();
    fs::remove_file(dir.join("matrix.csv")).unwrap();
    run_ok(SMOKE, out.path());
    assert_same_tree(reference(), out.path());
}

#[test]
fn a_diverging_loss_stops_the_run_and_writes_no_artifact() {
    let dir = tempfile::tempdir().unwrap();
    let preset = dir.path().join("diverge.toml");
    let text = fs::read_to_string(SMOKE)
        .unwrap()
        .replace("name = \"smoke\"", "name = \"diverge\"")
        .replace("learning_rate = 1e-3", "learning_rate = 1e30");
    fs::write(&preset, text).unwrap();
    let out = dir.path().join("out");
    let message = stderr(&run(preset.to_str().unwrap(), &out, &["--models", "mlp_s"]));
    assert!(
        message.starts_with("error: diverge/mlp_s/seed-0: cutoff 2000: the loss became "),
        "{message}"
    );
    assert!(
        message.ends_with("; no artifact was written for this run"),
        "{message}"
    );
    // Only the counting baseline, written before any model trains.
    let runs = drift::artifacts::find_runs(&out).unwrap();
    assert_eq!(runs, [out.join("diverge/majority/seed-0")]);
}

#[test]
fn a_second_process_cannot_write_a_locked_run_folder() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("smoke/mlp_s/seed-0");
    fs::create_dir_all(&dir).unwrap();
    let lock = fs::File::create(dir.join(".lock")).unwrap();
    lock.lock().unwrap();
    let message = stderr(&run(SMOKE, out.path(), &["--models", "mlp_s"]));
    assert_eq!(
        message,
        format!(
            "error: smoke/mlp_s/seed-0: {}: another drift process is writing this run folder \
             (it holds {}); no artifact was written for this run",
            dir.display(),
            dir.join(".lock").display()
        )
    );
    drop(lock);
    run_ok(SMOKE, out.path());
}

#[test]
fn work_made_for_another_preset_or_a_modified_checkpoint_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    run(SMOKE, &out, &["--models", "mlp_s", "--seeds", "0"]);

    // Same name, other settings: the old checkpoints must not be reused.
    let preset = dir.path().join("smoke.toml");
    let text = fs::read_to_string(SMOKE)
        .unwrap()
        .replace("epochs = 3", "epochs = 2");
    fs::write(&preset, text).unwrap();
    let message = stderr(&run(preset.to_str().unwrap(), &out, &["--models", "mlp_s"]));
    let record = out.join("smoke/mlp_s/seed-0/checkpoints/2000.json");
    assert!(
        message.starts_with(&format!(
            "error: smoke/mlp_s/seed-0: {}: made for {{",
            record.display()
        )),
        "{message}"
    );
    assert!(message.contains("delete the run folder or use another --out"));

    // One flipped byte in a checkpoint.
    let checkpoint = out.join("smoke/mlp_s/seed-0/checkpoints/2002.safetensors");
    let mut bytes = fs::read(&checkpoint).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(&checkpoint, bytes).unwrap();
    let message = stderr(&run(SMOKE, &out, &["--models", "mlp_s", "--seeds", "0"]));
    assert!(
        message.contains(&format!("{}: its sha256 ", checkpoint.display())),
        "{message}"
    );
    assert!(message.contains("the checkpoint was modified"), "{message}");
}

#[test]
fn the_text_smoke_preset_runs_and_scores_every_cell() {
    let out = tempfile::tempdir().unwrap();
    let preset = concat!(env!("CARGO_MANIFEST_DIR"), "/presets/smoke-text.toml");
    run_ok(preset, out.path());
    let runs = drift::artifacts::load_all(out.path()).unwrap();
    assert_eq!(
        runs.iter().map(|r| r.model.as_str()).collect::<Vec<_>>(),
        ["bigru_s", "ffn_s", "label-prior", "tx_s"]
    );
    for r in &runs {
        assert_eq!(r.matrix.metric(), drift::Metric::MacroAuc);
        let grid = &r.matrix.grids()[0];
        assert_eq!(grid.filled().count(), 36);
        assert!(grid.filled().all(|(_, _, v)| (0.0..=1.0).contains(&v)));
        if r.model == "label-prior" {
            // A constant score ranks nothing: AUC 0.5 in every cell, by construction.
            assert!(grid.filled().all(|(_, _, v)| v == 0.5));
        }
    }
}

#[test]
fn unknown_models_and_devices_are_refused_before_any_work() {
    let out = tempfile::tempdir().unwrap();
    assert_eq!(
        stderr(&run(SMOKE, out.path(), &["--models", "resnet_s"])),
        "error: model \"resnet_s\" is not in preset smoke (it has mlp_s, cnn_s, vit_s)"
    );
    let tpu = drift()
        .args(["run", SMOKE, "--device", "tpu", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(
        stderr(&tpu),
        "error: unknown device \"tpu\" (expected auto, cpu, cuda or cuda:N)"
    );
    assert!(fs::read_dir(out.path()).unwrap().next().is_none());
}

#[test]
fn drift_models_params_prints_one_model_per_line_ending_in_its_count() {
    let output = drift().args(["models", "--params"]).output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let counts: Vec<(&str, &str)> = text
        .lines()
        .map(|l| {
            (
                l.split_whitespace().next().unwrap(),
                l.rsplit(' ').next().unwrap(),
            )
        })
        .collect();
    assert_eq!(counts.len(), 25);
    assert_eq!(counts[0], ("mlp_s", "98402"));
    assert_eq!(counts[20], ("bilstm_attn_l", "2190056"));
    // Other shapes by flag: one output for the text models (Amazon ratings).
    let output = drift()
        .args(["models", "--params", "--text-outputs", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let ffn_s = text.lines().find(|l| l.starts_with("ffn_s ")).unwrap();
    assert!(ffn_s.ends_with(" 98561"), "{ffn_s}");
}

/// The fine-tuning and self-labelling smoke presets run end to end, and a run killed in
/// the middle of its chain (cutoff 2002's checkpoint written: 2003 must start from it, or
/// be labelled by the anchor loaded back from its file) resumes to the same bytes.
#[test]
fn finetune_and_self_label_runs_resume_after_a_kill_to_the_same_bytes() {
    for regime in ["finetune", "self-label"] {
        let preset = format!("{}/presets/smoke-{regime}.toml", env!("CARGO_MANIFEST_DIR"));
        let reference = tempfile::tempdir().unwrap();
        run_ok(&preset, reference.path());
        let out = tempfile::tempdir().unwrap();
        let marker = format!("smoke-{regime}/mlp_s/seed-0/checkpoints/2002.safetensors");
        kill_when(&preset, out.path(), &marker);
        assert!(
            !out.path()
                .join(format!("smoke-{regime}/mlp_s/seed-0/SHA256SUMS"))
                .exists()
        );
        // The anchor is loaded back from its file when its record is already there.
        run_ok(&preset, out.path());
        assert_same_tree(reference.path(), out.path());
    }
}

/// Where the regimes must agree with single-slice training and where they must not: row 0
/// is the same model under all three (trained from scratch on the gold slice 0), so its
/// cells are equal; fine-tuning's later models start elsewhere and self-labelling's train
/// on other data, so their checkpoints and rows differ from single's.
#[test]
fn finetune_and_self_label_matrices_differ_from_single_where_they_should() {
    let out = tempfile::tempdir().unwrap();
    for regime in ["single", "finetune", "self-label"] {
        run_ok(
            &format!("{}/presets/smoke-{regime}.toml", env!("CARGO_MANIFEST_DIR")),
            out.path(),
        );
    }
    let load = |regime: &str| {
        drift::artifacts::load_run(&out.path().join(format!("smoke-{regime}/mlp_s/seed-0")))
            .unwrap()
    };
    let record = |regime: &str, cutoff: &str| -> serde_json::Value {
        let path = out.path().join(format!(
            "smoke-{regime}/mlp_s/seed-0/checkpoints/{cutoff}.json"
        ));
        serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
    };
    let (single, finetune, self_label) = (load("single"), load("finetune"), load("self-label"));
    let row = |r: &drift::artifacts::RunArtifact, i: usize| -> Vec<Option<f64>> {
        (0..6).map(|j| r.grid.get(i, j)).collect()
    };
    assert_eq!(row(&finetune, 0), row(&single, 0));
    assert_eq!(row(&self_label, 0), row(&single, 0));
    for cutoff in ["2001", "2003", "2005"] {
        let sha = |regime| record(regime, cutoff)["checkpoint_sha256"].clone();
        assert_ne!(sha("finetune"), sha("single"), "{cutoff}");
        assert_ne!(sha("self-label"), sha("single"), "{cutoff}");
    }
    assert!((1..6).any(|i| row(&finetune, i) != row(&single, i)));
    // Fine-tuned models have seen every slice up to theirs: their past cells are scored on
    // test parts, as single's are not. Self-labelled row 3 has seen the anchor and 2003 only.
    let regime = |name: &str| {
        drift::preset::Preset::load(std::path::Path::new(&format!(
            "{}/presets/smoke-{name}.toml",
            env!("CARGO_MANIFEST_DIR")
        )))
        .unwrap()
        .preset
        .regime
    };
    use drift::slices::EvalPart;
    assert_eq!(regime("finetune").eval_part(3, 1), EvalPart::Test);
    assert_eq!(regime("single").eval_part(3, 1), EvalPart::Whole);
    assert_eq!(regime("self-label").eval_part(3, 2), EvalPart::Whole);
    assert_eq!(regime("self-label").eval_part(3, 0), EvalPart::Test);
    // Every row after the anchor has a model and a health record.
    assert_eq!(self_label.health.as_ref().unwrap().len(), 6);
    assert!(self_label.grid.filled().count() == 36);

    // Table 9 from the two runs' folders: the library's score of the two matrices, both
    // without the rows of their collapsed checkpoints (the default).
    let folder = |regime: &str| out.path().join(format!("smoke-{regime}/mlp_s"));
    let output = drift()
        .arg("summarize")
        .arg(folder("self-label"))
        .arg("--gold")
        .arg(folder("single"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let runs = |regime: &str| {
        let r = drift::artifacts::load_all(&folder(regime))
            .unwrap()
            .remove(0);
        r.matrix.without_rows(|seed, i| r.collapsed(seed, i))
    };
    let expected =
        drift::analysis::self_labelling(&runs("self-label"), &runs("single"), 0).unwrap();
    assert_eq!(
        json["self_labelling"],
        serde_json::to_value(expected).unwrap()
    );
    assert_eq!(json["self_labelling"]["anchor"], 0);
    // Asked of a run that is not self-labelled, --gold says why not.
    let output = drift()
        .arg("summarize")
        .arg(folder("finetune"))
        .arg("--gold")
        .arg(folder("single"))
        .output()
        .unwrap();
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(
        message.contains("train finetune, not self-label"),
        "{message}"
    );
}

/// A two-seed preset on the synthetic portraits with `vary` as `vary` gives it, two models.
fn replicas(dir: &Path, vary: &str) -> String {
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
end = 2002
rows_per_year = 24

[slicing]
scheme = "yearly"

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

[[models]]
key = "cnn_s"
"#
    );
    let path = dir.join("replicas.toml");
    fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// By default each seed draws its own data and split, shared by both models at that seed
/// and by its own baseline, and `run.json` records what varied; with `vary = ["init"]`
/// every seed trains on the preset's own draw (the data identity loading the preset's
/// options gives) with one baseline, as before `vary` existed. A run made with one `vary`
/// does not resume under another.
#[test]
fn seeds_vary_data_and_split_unless_the_preset_fixes_them() {
    use drift::slices::Varied;
    let dir = tempfile::tempdir().unwrap();
    let load = |out: &Path, model: &str, seed: u64| {
        drift::artifacts::load_run(&out.join(format!("replicas/{model}/seed-{seed}")))
            .unwrap()
            .provenance
    };

    let varied = dir.path().join("varied");
    let preset = replicas(dir.path(), "");
    run_ok(&preset, &varied);
    for seed in [0, 1] {
        let p = load(&varied, "mlp_s", seed);
        assert_eq!(p.varied, [Varied::Init, Varied::Split, Varied::Data]);
        assert_eq!(load(&varied, "cnn_s", seed).data, p.data);
        let baseline = load(&varied, "majority", seed);
        assert_eq!((baseline.data, baseline.varied), (p.data, p.varied));
    }
    assert_ne!(
        load(&varied, "mlp_s", 0).data,
        load(&varied, "mlp_s", 1).data
    );
    // `artifacts verify` and `summarize` say what varied.
    let verify = drift()
        .args(["artifacts", "verify"])
        .arg(&varied)
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&verify.stdout).into_owned();
    assert!(verify.status.success(), "{listing}");
    assert_eq!(
        listing.matches("  varied init split data\n").count(),
        6,
        "{listing}"
    );
    let summary = |out: &Path| -> serde_json::Value {
        let output = drift()
            .arg("summarize")
            .arg(out.join("replicas/mlp_s"))
            .output()
            .unwrap();
        serde_json::from_slice(&output.stdout).unwrap()
    };
    assert_eq!(
        summary(&varied)["varied"],
        serde_json::json!(["init", "split", "data"])
    );

    let fixed = dir.path().join("fixed");
    let fixed_preset = replicas(dir.path(), r#"vary = ["init"]"#);
    run_ok(&fixed_preset, &fixed);
    let loaded = drift::preset::Preset::load(Path::new(&fixed_preset)).unwrap();
    let own = drift::text::load(
        &loaded.preset.data,
        &loaded.preset.data_options,
        Path::new("."),
    )
    .unwrap();
    for seed in [0, 1] {
        let p = load(&fixed, "mlp_s", seed);
        assert_eq!((p.varied, p.data), (vec![Varied::Init], own.source.clone()));
    }
    assert!(fixed.join("replicas/majority/seed-0").is_dir());
    assert!(!fixed.join("replicas/majority/seed-1").exists());
    assert_eq!(summary(&fixed)["varied"], serde_json::json!(["init"]));

    // The varied runs' work, resumed under `vary = ["init"]`: refused, naming the run.
    for model in ["mlp_s", "cnn_s"] {
        for seed in [0, 1] {
            let run = varied.join(format!("replicas/{model}/seed-{seed}"));
            for file in [
                "run.json",
                "matrix.json",
                "matrix.csv",
                "health.json",
                "SHA256SUMS",
            ] {
                let _ = fs::remove_file(run.join(file));
            }
        }
    }
    let message = stderr(&run(&fixed_preset, &varied, &[]));
    assert!(
        message.starts_with("error: replicas/mlp_s/seed-0: ") && message.contains("made for {"),
        "{message}"
    );
}

/// Every epoch of every cutoff is in the run's `history.json`, the same bytes on every
/// run, and the committed fixture's (made by `drift run presets/smoke-single.toml --models
/// mlp_s --seeds 0 --out tests/fixtures/history-run --threads 1`, checkpoints left out):
/// byte for byte on the CPU kind it was made on (its `timing.json` names the host), within
/// float rounding (1e-5 relative) on another, whose kernels round differently (the
/// gradient norms sum float32 norms, which an AVX2 and an AVX-512 core round ~1e-6 apart); its last
/// epoch's loss is the health record's final loss; each epoch's wall time is in
/// `timing.json`.
#[test]
fn a_run_records_every_epoch_in_its_history_the_same_bytes_every_time() {
    let preset = concat!(env!("CARGO_MANIFEST_DIR"), "/presets/smoke-single.toml");
    let outs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    for out in &outs {
        let output = run(preset, out.path(), &["--models", "mlp_s", "--seeds", "0"]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let dir = outs[0].path().join("smoke-single/mlp_s/seed-0");
    let written = fs::read(dir.join("history.json")).unwrap();
    assert!(
        written
            == fs::read(
                outs[1]
                    .path()
                    .join("smoke-single/mlp_s/seed-0/history.json")
            )
            .unwrap(),
        "two runs wrote different history.json"
    );
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/history-run/smoke-single/mlp_s/seed-0");
    let host = |dir: &Path| {
        let timing: serde_json::Value =
            serde_json::from_slice(&fs::read(dir.join("timing.json")).unwrap()).unwrap();
        timing["host"].clone()
    };
    let committed = fs::read(fixture.join("history.json")).unwrap();
    if host(&dir) == host(&fixture) {
        assert!(
            written == committed,
            "history.json differs from the committed fixture, made on this CPU kind"
        );
    } else {
        let parse = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).unwrap();
        assert_close(&parse(&written), &parse(&committed), "history.json");
    }
    let epochs = drift::preset::Preset::load(Path::new(preset))
        .unwrap()
        .preset
        .models[0]
        .train
        .epochs as usize;
    let run = drift::artifacts::load_run(&dir).unwrap();
    let history = run.history.as_ref().expect("a history");
    let health = run.health.as_ref().unwrap();
    assert_eq!(history.len(), run.slices.len());
    for (cutoff, record) in history.iter().zip(health) {
        assert_eq!(cutoff.epochs.len(), epochs, "{}", cutoff.cutoff);
        assert_eq!(
            cutoff.epochs.last().unwrap().loss,
            record.final_loss.unwrap()
        );
        assert!(
            cutoff
                .epochs
                .iter()
                .all(|e| e.grad_norm > 0.0 && e.learning_rate > 0.0)
        );
    }
    let seconds = run
        .timing
        .as_ref()
        .unwrap()
        .epochs
        .as_ref()
        .expect("epoch times");
    assert!(seconds.iter().all(|c| c.len() == epochs));
}

/// `a` equals `b` in every key, string and integer, and in every float within 1e-5 relative.
fn assert_close(a: &serde_json::Value, b: &serde_json::Value, at: &str) {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(
                x.keys().collect::<Vec<_>>(),
                y.keys().collect::<Vec<_>>(),
                "{at}"
            );
            for (k, v) in x {
                assert_close(v, &y[k], &format!("{at}.{k}"));
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}");
            for (n, (u, v)) in x.iter().zip(y).enumerate() {
                assert_close(u, v, &format!("{at}[{n}]"));
            }
        }
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (u, v) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                (u - v).abs() <= 1e-5 * u.abs().max(v.abs()),
                "{at}: {u} against {v}"
            );
        }
        _ => assert_eq!(a, b, "{at}"),
    }
}
