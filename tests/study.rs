//! `drift study` end to end on the smoke study (`tests/fixtures/smoke-study.toml`): the
//! plan and its states, a local run killed and restarted to the same bytes, stale results
//! refused until `--rerun stale`, the Slurm scripts, and a real one-node Slurm
//! (`scripts/slurm-env`) giving the local bytes, reporting a failed task, not running its
//! `afterok` dependents and resubmitting only what is missing.
#![cfg(feature = "torch")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::support::{assert_same_tree, stderr, stdout};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A folder holding `presets/` (the smoke presets, and any written by the test) and
/// `studies.toml`, the working folder of every `drift study` of a test.
pub(crate) fn study_folder(presets: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("presets")).unwrap();
    for name in ["smoke-single", "smoke-finetune"] {
        fs::copy(
            format!("{ROOT}/presets/{name}.toml"),
            dir.path().join(format!("presets/{name}.toml")),
        )
        .unwrap();
    }
    let studies = fs::read_to_string(format!("{ROOT}/tests/fixtures/smoke-study.toml")).unwrap();
    let studies = studies.replace(
        r#"presets = ["smoke-single", "smoke-finetune"]"#,
        &format!("presets = {presets:?}"),
    );
    fs::write(dir.path().join("studies.toml"), studies).unwrap();
    dir
}

fn drift_in(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_drift"));
    command.current_dir(dir).env("OMP_WAIT_POLICY", "passive");
    command
}

fn study(dir: &Path, args: &[&str]) -> Output {
    drift_in(dir)
        .arg("study")
        .arg("studies.toml")
        .args(args)
        .output()
        .unwrap()
}

fn study_ok(dir: &Path, args: &[&str]) -> String {
    let output = study(dir, args);
    assert!(
        output.status.success(),
        "drift study {args:?}: {}{}",
        stdout(&output),
        stderr(&output)
    );
    stdout(&output)
}

/// The smoke study run locally, one item at a time, uninterrupted: what every other run
/// of it must equal byte for byte.
pub(crate) fn reference() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = study_folder(&["smoke-single", "smoke-finetune"]);
        let printed = study_ok(dir.path(), &["--jobs", "1", "--out", "results", "-q"]);
        assert!(printed.contains("8 done, 0 failed, 0 not run"), "{printed}");
        dir
    })
    .path()
}

/// The `--plan` line of `item`: its state and detail.
fn plan_line<'a>(plan: &'a str, item: &str) -> &'a str {
    plan.lines()
        .find(|l| l.split_whitespace().any(|w| w == item))
        .unwrap_or_else(|| panic!("no item {item} in:\n{plan}"))
}

#[test]
fn a_killed_local_study_resumes_to_the_bytes_of_an_uninterrupted_one() {
    let reference = reference();
    let plan = study_ok(reference, &["--plan"]);
    assert!(plan.contains("8 items (8 done); 0 to run"), "{plan}");
    for item in [
        "baseline/smoke-single",
        "run/smoke-finetune/mlp_s/seed-1",
        "models",
        "saliency/smoke-single/mlp_s/seed-0/2001-on-2005",
    ] {
        assert!(plan_line(&plan, item).contains(" done "), "{plan}");
    }
    assert!(
        study_ok(reference, &[]).contains("all 8 items done"),
        "a finished study runs nothing"
    );

    // Two at a time, killed (SIGKILL) once a run has scored its second cutoff.
    let dir = study_folder(&["smoke-single", "smoke-finetune"]);
    let mut child = drift_in(dir.path())
        .args(["study", "studies.toml", "--jobs", "2", "-q"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let marker = dir
        .path()
        .join("results/smoke-single/mlp_s/seed-0/checkpoints/2001.json");
    while !marker.exists() {
        assert!(child.try_wait().unwrap().is_none(), "the study ended early");
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let plan = study_ok(dir.path(), &["--plan"]);
    assert!(
        plan_line(&plan, "saliency/smoke-single/mlp_s/seed-0/2001-on-2005").contains("missing"),
        "{plan}"
    );
    // Its children died with it: a survivor would hold a run's lock and fail this.
    let printed = study_ok(dir.path(), &["--jobs", "2", "-q"]);
    assert!(printed.contains("0 failed"), "{printed}");
    assert_same_tree(&reference.join("results"), &dir.path().join("results"));

    // A changed preset makes its results stale: listed with the reason, refused, redone
    // only when asked, and only those.
    let preset = dir.path().join("presets/smoke-finetune.toml");
    let text = fs::read_to_string(&preset).unwrap();
    fs::write(&preset, text.replace("epochs = 3", "epochs = 2")).unwrap();
    let plan = study_ok(dir.path(), &["--plan"]);
    for item in ["baseline/smoke-finetune", "run/smoke-finetune/mlp_s/seed-0"] {
        let line = plan_line(&plan, item);
        assert!(
            line.contains("stale") && line.contains("made for preset hash"),
            "{plan}"
        );
    }
    assert!(plan_line(&plan, "run/smoke-single/mlp_s/seed-0").contains(" done "));
    let refused = study(dir.path(), &[]);
    assert!(!refused.status.success());
    let message = stderr(&refused);
    assert!(
        message.contains("3 item(s)") && message.contains("--rerun stale"),
        "{message}"
    );
    assert!(
        message.contains("run/smoke-finetune/mlp_s/seed-1"),
        "{message}"
    );
    let single = dir
        .path()
        .join("results/smoke-single/mlp_s/seed-0/run.json");
    let before = fs::metadata(&single).unwrap().modified().unwrap();
    let printed = study_ok(dir.path(), &["--rerun", "stale", "-q"]);
    assert!(printed.contains("3 done, 0 failed"), "{printed}");
    assert_eq!(fs::metadata(&single).unwrap().modified().unwrap(), before);
    let plan = study_ok(dir.path(), &["--plan"]);
    assert!(plan.contains("8 items (8 done)"), "{plan}");
}

#[test]
fn the_slurm_scripts_map_array_tasks_to_plan_lines() {
    let dir = study_folder(&["smoke-single", "smoke-finetune"]);
    let printed = study_ok(
        dir.path(),
        &[
            "--executor",
            "slurm",
            "--dry-run",
            "--max-parallel",
            "3",
            "--cpus",
            "2",
            "--time",
            "1:00:00",
            "--partition",
            "debug",
        ],
    );
    for line in [
        "#SBATCH --array=0-6%3",
        "#SBATCH --cpus-per-task=2",
        "#SBATCH --time=1:00:00",
        "#SBATCH --partition=debug",
        "#SBATCH --array=0-0%3",
        "task=\"$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\"",
        "run presets/smoke-single.toml --models mlp_s --seeds 1 --out results --device cpu \
         --threads \"$SLURM_CPUS_PER_TASK\" --quiet",
        "saliency results/smoke-single/mlp_s/seed-0 --cutoff 2001 --slice 2005 --count 8",
    ] {
        assert!(printed.contains(line), "no {line:?} in:\n{printed}");
    }
    assert!(
        !dir.path().join("results").exists(),
        "a dry run writes nothing"
    );
}

#[test]
fn the_slurm_dry_run_prints_the_submission_commands_in_dependency_order() {
    let dir = study_folder(&["smoke-single", "smoke-finetune"]);
    let printed = study_ok(dir.path(), &["--executor", "slurm", "--dry-run"]);
    // The runs first, then the saliency maps after them: each stage's job id kept in a
    // variable the later stages' `afterok` names.
    let submit = "results/.study/slurm/submit-1";
    let lines = [
        format!("JOB_1=$(sbatch --parsable {submit}/1-runs.sbatch)"),
        format!(
            "JOB_2=$(sbatch --parsable --dependency=afterok:$JOB_1 --kill-on-invalid-dep=yes \
             {submit}/2-saliency.sbatch)"
        ),
    ];
    let at: Vec<usize> = lines
        .iter()
        .map(|line| {
            printed
                .lines()
                .position(|l| l == line)
                .unwrap_or_else(|| panic!("no line {line:?} in:\n{printed}"))
        })
        .collect();
    assert!(at[0] < at[1], "out of order:\n{printed}");
    // After the scripts they submit, and nothing else submits.
    let last_script = printed.rfind("#!/bin/bash").unwrap();
    assert!(printed.find(&lines[0]).unwrap() > last_script, "{printed}");
    assert_eq!(printed.matches("sbatch --parsable").count(), 2, "{printed}");
    assert!(
        !dir.path().join("results").exists(),
        "a dry run writes nothing"
    );
}

#[test]
fn a_local_dry_run_lists_the_items_and_runs_nothing() {
    // It ran every item (without the study lock) until `--dry-run` meant Slurm only.
    let dir = study_folder(&["smoke-single"]);
    let printed = study_ok(dir.path(), &["--dry-run"]);
    let plan = study_ok(dir.path(), &["--plan"]);
    assert_eq!(printed, plan);
    assert!(
        printed.contains("run/smoke-single/mlp_s/seed-0"),
        "{printed}"
    );
    assert!(
        !dir.path().join("results").exists(),
        "a dry run writes nothing"
    );
}

/// Starts the one-node Slurm; `None` (with the reason printed) where it cannot run.
fn slurm() -> Option<()> {
    static UP: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    let up = UP.get_or_init(|| {
        let out = Command::new(format!("{ROOT}/scripts/slurm-env"))
            .arg("start")
            .output()
            .unwrap();
        match out.status.code() {
            Some(0) => Ok(()),
            Some(3) => Err(stdout(&out)),
            _ => panic!("scripts/slurm-env start: {}{}", stdout(&out), stderr(&out)),
        }
    });
    match up {
        Ok(()) => Some(()),
        Err(why) => {
            eprintln!("skipped: {}", why.trim());
            None
        }
    }
}

/// `drift study --status` once no task is queued or running.
fn settled_status(dir: &Path) -> String {
    // A guard against a hung cluster, not a speed check.
    let deadline = Instant::now() + Duration::from_secs(900);
    loop {
        let status = study_ok(dir, &["--status"]);
        let busy = status
            .lines()
            .any(|l| l.contains(" queued ") || l.contains(" running "));
        if !busy {
            return status;
        }
        assert!(Instant::now() < deadline, "Slurm did not finish:\n{status}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn submitted_items(dir: &Path) -> Vec<Vec<String>> {
    let jobs: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.join("results/.study/slurm/jobs.json")).unwrap())
            .unwrap();
    jobs["submissions"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|job| {
            job["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn a_slurm_study_gives_the_local_bytes_and_resubmits_only_what_did_not_finish() {
    let Some(()) = slurm() else { return };
    let reference = reference();
    let dir = study_folder(&["smoke-single", "smoke-finetune"]);
    let printed = study_ok(dir.path(), &["--executor", "slurm", "--max-parallel", "2"]);
    assert!(printed.contains("submitted runs job"), "{printed}");
    assert!(printed.contains("submitted saliency job"), "{printed}");
    let status = settled_status(dir.path());
    assert!(status.ends_with("8 items: 8 done\n"), "{status}");
    assert_same_tree(&reference.join("results"), &dir.path().join("results"));
    let again = study_ok(dir.path(), &["--executor", "slurm"]);
    assert!(again.contains("nothing to submit"), "{again}");

    // A preset whose loss diverges: its task fails, the saliency array waiting on the
    // runs (afterok) never runs.
    let dir = study_folder(&["smoke-single", "smoke-diverge"]);
    let single = fs::read_to_string(dir.path().join("presets/smoke-single.toml")).unwrap();
    let diverge = single
        .replace(r#"name = "smoke-single""#, r#"name = "smoke-diverge""#)
        .replace("seeds = [0, 1]", "seeds = [0]");
    let preset = dir.path().join("presets/smoke-diverge.toml");
    fs::write(
        &preset,
        diverge.replace("learning_rate = 1e-3", "learning_rate = 1e30"),
    )
    .unwrap();
    study_ok(dir.path(), &["--executor", "slurm"]);
    let status = settled_status(dir.path());
    let failed = plan_line(&status, "run/smoke-diverge/mlp_s/seed-0");
    assert!(
        failed.contains(" failed ") && failed.contains("FAILED"),
        "{status}"
    );
    let saliency = plan_line(&status, "saliency/smoke-single/mlp_s/seed-0/2001-on-2005");
    assert!(
        saliency.contains("missing") && saliency.contains("not run: a job it needs failed"),
        "{status}"
    );
    assert!(plan_line(&status, "run/smoke-single/mlp_s/seed-1").contains(" done "));
    assert!(
        !dir.path()
            .join("results/smoke-single/mlp_s/seed-0/saliency")
            .exists()
    );

    // Fixed, resubmitted: the failed run and the map that waited on it go again, with the
    // diverging preset's baseline, which records the preset's hash and so is stale now;
    // nothing of smoke-single is rerun.
    fs::write(&preset, &diverge).unwrap();
    let plan = study_ok(dir.path(), &["--plan"]);
    assert!(
        plan_line(&plan, "baseline/smoke-diverge").contains("stale"),
        "{plan}"
    );
    let single_run = dir
        .path()
        .join("results/smoke-single/mlp_s/seed-0/run.json");
    let before = fs::metadata(&single_run).unwrap().modified().unwrap();
    study_ok(dir.path(), &["--executor", "slurm", "--rerun", "stale"]);
    assert_eq!(
        submitted_items(dir.path()),
        vec![
            vec![
                "baseline/smoke-diverge".to_string(),
                "run/smoke-diverge/mlp_s/seed-0".to_string()
            ],
            vec!["saliency/smoke-single/mlp_s/seed-0/2001-on-2005".to_string()],
        ]
    );
    let status = settled_status(dir.path());
    assert!(status.ends_with("7 items: 7 done\n"), "{status}");
    assert_eq!(
        fs::metadata(&single_run).unwrap().modified().unwrap(),
        before
    );
    let map: PathBuf = dir
        .path()
        .join("results/smoke-single/mlp_s/seed-0/saliency/2001-on-2005.json");
    assert!(map.exists());
}

/// The smallest runs of the paper's default study, rerun from the committed preset in a
/// fresh folder, give the committed bytes: the counting baseline and `mlp_s` seed 0 of
/// `types-covariate`. Every checked file is compared; `run.json` only differs in the
/// `code` block (the commit a run was made at) and in `varied`, which the committed runs
/// predate, so it is compared without them. On a CPU of
/// another kind than the one the runs were made on, libtorch's float32 kernels may round
/// the training loss differently in its last bit (measured: the committed runs against a
/// rerun on an AMD EPYC, final losses within 1e-8 while every prediction, and so every
/// matrix byte, was the same), so `health.json` is compared field by field with the
/// final loss to a relative 1e-6; on the machine that made them the bytes are equal.
#[test]
fn a_rerun_of_the_smallest_committed_runs_gives_their_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let preset = "presets/paper/types-covariate.toml";
    fs::create_dir_all(dir.path().join("presets/paper")).unwrap();
    fs::copy(format!("{ROOT}/{preset}"), dir.path().join(preset)).unwrap();
    let output = drift_in(dir.path())
        .args([
            "run", preset, "--models", "mlp_s", "--seeds", "0", "--out", "results",
        ])
        .args(["--threads", "1", "--quiet"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    for run in [
        "types-covariate/majority/seed-0",
        "types-covariate/mlp_s/seed-0",
    ] {
        let committed = Path::new(ROOT).join("results").join(run);
        let rerun = dir.path().join("results").join(run);
        for file in ["matrix.json", "matrix.csv"] {
            assert!(
                fs::read(committed.join(file)).unwrap() == fs::read(rerun.join(file)).unwrap(),
                "{run}/{file} differs from the committed one"
            );
        }
        let health = |dir: &Path| -> serde_json::Value {
            serde_json::from_str(&fs::read_to_string(dir.join("health.json")).unwrap()).unwrap()
        };
        let (mut want, mut got) = (health(&committed), health(&rerun));
        let cutoffs = |v: &mut serde_json::Value| -> Vec<serde_json::Value> {
            std::mem::take(v["cutoffs"].as_array_mut().unwrap())
        };
        let (want_cutoffs, got_cutoffs) = (cutoffs(&mut want), cutoffs(&mut got));
        assert_eq!(want, got, "{run}/health.json");
        assert_eq!(want_cutoffs.len(), got_cutoffs.len(), "{run}/health.json");
        for (mut w, mut g) in want_cutoffs.into_iter().zip(got_cutoffs) {
            let loss = |v: &mut serde_json::Value| v["final_loss"].take().as_f64();
            match (loss(&mut w), loss(&mut g)) {
                (Some(a), Some(b)) => assert!(
                    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()),
                    "{run}/health.json: final loss {a} against {b}"
                ),
                (a, b) => assert_eq!(a, b, "{run}/health.json"),
            }
            assert_eq!(w, g, "{run}/health.json");
        }
        let provenance = |dir: &Path| {
            let text = fs::read_to_string(dir.join("run.json")).unwrap();
            let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
            json.as_object_mut().unwrap().remove("code");
            let varied = json.as_object_mut().unwrap().remove("varied");
            (json, varied)
        };
        // The committed runs predate `varied`, whose absence means what the rerun writes.
        let ((want, old), (got, varied)) = (provenance(&committed), provenance(&rerun));
        assert_eq!(want, got, "{run}/run.json");
        assert_eq!(old, None, "{run}/run.json");
        assert_eq!(varied, Some(serde_json::json!(["init"])), "{run}/run.json");
    }
}

#[test]
fn presets_that_read_one_encoder_cache_share_one_cache_item() {
    // Token states and pooled embeddings of one encoder come from one cache: the plan
    // builds it once, not once per preset (two builds at once would do the work twice).
    let dir = study_folder(&["glove-tokens", "glove-pooled"]);
    for (name, input, model) in [
        ("glove-tokens", "tokens", "ffn_s"),
        ("glove-pooled", "pooled", "linear"),
    ] {
        let preset = format!(
            "schema = 1\nname = \"{name}\"\nseeds = [0]\nmetric = \"accuracy\"\n\
             [data]\nsource = \"sotu\"\n\
             [data.options]\ntext = \"encoder\"\nencoder = \"glove\"\nmax_tokens = 16\ninput = \"{input}\"\n\
             [slicing]\nscheme = \"decade\"\n[split]\ntrain_fraction = 0.7\n\
             [regime]\nkind = \"cumulative\"\n\
             [train]\noptimizer = \"adam\"\nlearning_rate = 1e-3\nbatch_size = 64\nepochs = 1\n\
             loss = \"cross-entropy\"\n[[models]]\nkey = \"{model}\"\n"
        );
        fs::write(dir.path().join(format!("presets/{name}.toml")), preset).unwrap();
    }
    fs::write(
        dir.path().join("studies.toml"),
        "[[studies]]\nname = \"g\"\ntitle = \"G\"\npresets = [\"glove-tokens\", \"glove-pooled\"]\n",
    )
    .unwrap();
    let plan = study_ok(dir.path(), &["--plan"]);
    let caches: Vec<&str> = plan.lines().filter(|l| l.contains(" cache/")).collect();
    assert_eq!(caches.len(), 1, "{plan}");
    assert!(caches[0].contains("cache/glove-tokens"), "{plan}");
}

#[test]
fn a_checkout_without_encoder_caches_checks_the_committed_runs_without_encoding() {
    // The data folder of a fresh machine: the fetched packages, no encoder cache. The
    // committed runs of the encoder presets are checked against the cache key their preset
    // gives, and no cache is planned, since no run needs one.
    let data = tempfile::tempdir().unwrap();
    let fetched = drift::packages::cache_dir();
    for entry in fs::read_dir(&fetched).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != "encoded" {
            std::os::unix::fs::symlink(entry.path(), data.path().join(entry.file_name())).unwrap();
        }
    }
    let output = drift_in(Path::new(ROOT))
        .env("DRIFT_DATA", data.path())
        .args(["study", "--plan"])
        .output()
        .unwrap();
    let plan = stdout(&output);
    assert!(output.status.success(), "{plan}{}", stderr(&output));
    assert!(!plan.contains("cache/"), "{plan}");
    assert!(plan.contains("run/ht-tokens/tx_s/seed-0"), "{plan}");
    let last = plan.lines().last().unwrap();
    assert!(
        last.ends_with("0 to run (*), estimated 0s of work"),
        "{plan}"
    );
}

/// A preset whose seeds vary data and split: the study plans one baseline item with a run
/// per seed, checks each seed's run against its own draw of the data, and plans a removed
/// seed's baseline as missing again.
#[test]
fn a_study_of_a_varied_preset_checks_each_seed_against_its_own_data() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("presets")).unwrap();
    let preset = r#"schema = 1
name = "replicas"
seeds = [0, 1]
metric = "accuracy"
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
"#;
    fs::write(dir.path().join("presets/replicas.toml"), preset).unwrap();
    fs::write(
        dir.path().join("studies.toml"),
        "[[studies]]\nname = \"replicas\"\ntitle = \"Replicas\"\npresets = [\"replicas\"]\n",
    )
    .unwrap();
    let printed = study_ok(dir.path(), &["--jobs", "1", "--out", "results", "-q"]);
    assert!(printed.contains("4 done, 0 failed, 0 not run"), "{printed}");
    let results = dir.path().join("results/replicas");
    for seed in [0, 1] {
        assert!(
            results
                .join(format!("majority/seed-{seed}/SHA256SUMS"))
                .is_file()
        );
    }
    let plan = study_ok(dir.path(), &["--plan", "--out", "results"]);
    assert!(plan.contains("4 items (4 done); 0 to run"), "{plan}");
    fs::remove_dir_all(results.join("majority/seed-1")).unwrap();
    let plan = study_ok(dir.path(), &["--plan", "--out", "results"]);
    assert!(
        plan_line(&plan, "baseline/replicas").contains("missing"),
        "{plan}"
    );
    assert!(
        plan_line(&plan, "run/replicas/mlp_s/seed-1").contains(" done "),
        "{plan}"
    );
}

#[test]
fn a_study_that_asks_for_detectors_adds_them_to_its_finished_runs_unchanged() {
    let reference = reference();
    let dir = study_folder(&["smoke-single"]);
    crate::support::copy_tree(&reference.join("results"), &dir.path().join("results"));
    let studies = dir.path().join("studies.toml");
    let text = fs::read_to_string(&studies).unwrap();
    let asked = text.replace(
        "title = \"Smoke study\"",
        "title = \"Smoke study\"\ndetectors = true",
    );
    assert_ne!(text, asked);
    fs::write(&studies, asked).unwrap();

    let plan = study_ok(dir.path(), &["--plan"]);
    for seed in [0, 1] {
        let line = plan_line(&plan, &format!("run/smoke-single/mlp_s/seed-{seed}"));
        assert!(
            line.contains("missing") && line.contains("drift detect"),
            "{plan}"
        );
    }
    assert!(
        plan_line(&plan, "baseline/smoke-single").contains(" done "),
        "{plan}"
    );
    let printed = study_ok(dir.path(), &["--jobs", "2", "-q"]);
    assert!(printed.contains("0 failed"), "{printed}");
    for seed in [0, 1] {
        let run = format!("results/smoke-single/mlp_s/seed-{seed}");
        let (old, new) = (reference.join(&run), dir.path().join(&run));
        assert!(new.join("detectors.json").is_file(), "{run}");
        for file in ["matrix.json", "matrix.csv", "health.json"] {
            assert!(
                fs::read(old.join(file)).unwrap() == fs::read(new.join(file)).unwrap(),
                "{run}/{file} changed"
            );
        }
    }
    let plan = study_ok(dir.path(), &["--plan"]);
    assert!(plan.contains("0 to run"), "{plan}");
}
