//! Run folders: written deterministically, loaded back exactly, and every kind of damage
//! (truncation, tampering, careless edits, missing files, moved folders) reported as one
//! line that names the file and the problem.

use std::fs;
use std::path::{Path, PathBuf};

use drift::artifacts::{
    RunArtifact, RunProvenance, WallTimes, find_runs, load_all, load_run, run_dir, write_run,
};
use drift::checksum::sha256_hex;
use drift::{Grid, Metric};

use crate::support::provenance;

/// Three slices; cell (2, 0) is empty. Values include ones without a short decimal form.
fn run(model: &str, seed: u64) -> RunArtifact {
    let s = seed as f64 / 100.0;
    RunArtifact {
        slices: vec!["1900s".into(), "1910s".into(), "1920s".into()],
        grid: Grid::from_rows(&[
            vec![Some(0.9 - s), Some(0.85), Some(0.1 + 0.2)],
            vec![Some(0.8), Some(0.875 + s), Some(1.0 / 3.0)],
            vec![None, Some(0.0), Some(1.0)],
        ])
        .unwrap(),
        seen_classes: None,
        provenance: provenance(model, seed),
        timing: Some(WallTimes {
            train: 12.5,
            eval: 0.25,
            host: None,
            detectors: None,
            epochs: None,
        }),
        health: None,
        detectors: None,
        history: None,
    }
}

/// The error message of loading `dir`, checked to be one line.
fn load_error(dir: &Path) -> String {
    let message = load_run(dir)
        .expect_err("the run should be rejected")
        .to_string();
    assert!(!message.contains('\n'), "not one line: {message:?}");
    message
}

/// Asserts `message` is `<dir>/<file>: ...` and returns the rest.
fn about<'a>(message: &'a str, dir: &Path, file: &str) -> &'a str {
    let prefix = format!("{}: ", dir.join(file).display());
    message
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{message:?} does not start with {prefix:?}"))
}

/// Rewrites SHA256SUMS to match the current files, as a careless edit would.
fn recompute_sums(dir: &Path) {
    let mut sums = String::new();
    for name in ["matrix.csv", "matrix.json", "run.json"] {
        let bytes = fs::read(dir.join(name)).unwrap();
        sums += &format!("{}  {name}\n", sha256_hex(&bytes));
    }
    fs::write(dir.join("SHA256SUMS"), sums).unwrap();
}

/// Replaces the single occurrence of `from` in `dir/file`.
fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches(from).count(), 1, "{from:?} in {text}");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

fn written() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let dir = write_run(root.path(), &run("cnn_s", 0)).unwrap();
    (root, dir)
}

#[test]
fn a_written_run_loads_back_equal() {
    let root = tempfile::tempdir().unwrap();
    let original = run("cnn_s", 0);
    let dir = write_run(root.path(), &original).unwrap();
    assert_eq!(dir, run_dir(root.path(), "tiny", "cnn_s", 0));
    assert_eq!(dir, root.path().join("tiny/cnn_s/seed-0"));
    assert_eq!(load_run(&dir).unwrap(), original);
    assert_eq!(find_runs(root.path()).unwrap(), vec![dir.clone()]);

    // No temporary files are left behind.
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "SHA256SUMS",
            "matrix.csv",
            "matrix.json",
            "run.json",
            "timing.json"
        ]
    );
}

#[test]
fn the_files_have_the_documented_layout() {
    let (_root, dir) = written();
    let json = fs::read_to_string(dir.join("matrix.json")).unwrap();
    assert_eq!(
        json,
        r#"{
  "schema": 1,
  "preset": "tiny",
  "model": "cnn_s",
  "seed": 0,
  "metric": "accuracy",
  "direction": "higher-is-better",
  "slices": ["1900s","1910s","1920s"],
  "cells": [
    [0.9,0.85,0.30000000000000004],
    [0.8,0.875,0.3333333333333333],
    [null,0.0,1.0]
  ]
}
"#
    );
    let csv = fs::read_to_string(dir.join("matrix.csv")).unwrap();
    assert_eq!(
        csv,
        "train_slice,eval_slice,metric,value\n\
         1900s,1900s,accuracy,0.9\n\
         1900s,1910s,accuracy,0.85\n\
         1900s,1920s,accuracy,0.30000000000000004\n\
         1910s,1900s,accuracy,0.8\n\
         1910s,1910s,accuracy,0.875\n\
         1910s,1920s,accuracy,0.3333333333333333\n\
         1920s,1900s,accuracy,\n\
         1920s,1910s,accuracy,0\n\
         1920s,1920s,accuracy,1\n"
    );
    let sums = fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    let expected: String = ["matrix.csv", "matrix.json", "run.json"]
        .iter()
        .map(|name| {
            let bytes = fs::read(dir.join(name)).unwrap();
            format!("{}  {name}\n", sha256_hex(&bytes))
        })
        .collect();
    assert_eq!(sums, expected);
    let provenance: RunProvenance =
        serde_json::from_str(&fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(provenance, run("cnn_s", 0).provenance);
}

#[test]
fn writing_twice_gives_identical_bytes() {
    let files = ["matrix.json", "matrix.csv", "SHA256SUMS", "run.json"];
    let read = |dir: &Path| -> Vec<Vec<u8>> {
        files
            .iter()
            .map(|f| fs::read(dir.join(f)).unwrap())
            .collect()
    };
    let (root, dir) = written();
    let first = read(&dir);
    // Again into the same folder, and into another root.
    write_run(root.path(), &run("cnn_s", 0)).unwrap();
    assert_eq!(read(&dir), first);
    let other = tempfile::tempdir().unwrap();
    let other_dir = write_run(other.path(), &run("cnn_s", 0)).unwrap();
    assert_eq!(read(&other_dir), first);
    assert_eq!(load_run(&dir).unwrap(), load_run(&other_dir).unwrap());
}

#[test]
fn values_round_trip_exactly() {
    // Awkward doubles: many digits, tiny and huge exponents, subnormals.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let root = tempfile::tempdir().unwrap();
    for seed in 0..20 {
        let mut original = run("mlp", seed);
        let mut grid = Grid::empty(3);
        for i in 0..3 {
            for j in 0..3 {
                let v = match (seed + i as u64 * 3 + j as u64) % 4 {
                    0 => (next() >> 11) as f64 / (1u64 << 53) as f64,
                    1 => f64::from_bits(next() % 0x7fef_ffff_ffff_ffff),
                    2 => -f64::from_bits(next() % 0x0010_0000_0000_0000),
                    _ => (next() % 1_000_000) as f64 / 1e6,
                };
                grid.set(i, j, Some(v));
            }
        }
        original.grid = grid;
        let dir = write_run(root.path(), &original).unwrap();
        let loaded = load_run(&dir).unwrap();
        for (a, b) in loaded.grid.filled().zip(original.grid.filled()) {
            assert_eq!(
                a.2.to_bits(),
                b.2.to_bits(),
                "seed {seed} cell ({}, {})",
                a.0,
                a.1
            );
        }
        assert_eq!(loaded, original);
    }
}

#[test]
fn load_all_groups_seeds_per_model() {
    let root = tempfile::tempdir().unwrap();
    for seed in [1, 0] {
        write_run(root.path(), &run("cnn_s", seed)).unwrap();
    }
    write_run(root.path(), &run("mlp", 4)).unwrap();
    let all = load_all(root.path()).unwrap();
    assert_eq!(all.len(), 2);

    let cnn = &all[0];
    assert_eq!((cnn.preset.as_str(), cnn.model.as_str()), ("tiny", "cnn_s"));
    assert_eq!(cnn.matrix.seeds(), &[0, 1]);
    assert_eq!(cnn.matrix.slices(), &["1900s", "1910s", "1920s"]);
    assert_eq!(cnn.matrix.metric(), Metric::Accuracy);
    assert_eq!(
        cnn.matrix.grids(),
        &[run("cnn_s", 0).grid, run("cnn_s", 1).grid]
    );
    let seeds: Vec<u64> = cnn.provenance.iter().map(|p| p.seed).collect();
    assert_eq!(seeds, [0, 1]);
    // The mean over seeds of cell (0, 0): (0.9 + 0.89) / 2.
    assert!((cnn.matrix.mean().get(0, 0).unwrap() - 0.895).abs() < 1e-15);
    assert_eq!(cnn.matrix.mean().get(2, 0), None);

    let mlp = &all[1];
    assert_eq!(mlp.model, "mlp");
    assert_eq!(mlp.matrix.seeds(), &[4]);
}

#[test]
fn load_all_refuses_seeds_that_disagree() {
    let root = tempfile::tempdir().unwrap();
    write_run(root.path(), &run("cnn_s", 0)).unwrap();
    let mut other = run("cnn_s", 1);
    other.slices[2] = "1930s".into();
    let dir = write_run(root.path(), &other).unwrap();
    let message = load_all(root.path()).unwrap_err().to_string();
    assert_eq!(
        about(&message, &dir, "matrix.json"),
        "slices or metric differ from the other seeds of tiny/cnn_s"
    );
}

#[test]
fn a_truncated_matrix_json_is_reported() {
    let (_root, dir) = written();
    let path = dir.join("matrix.json");
    let bytes = fs::read(&path).unwrap();
    fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let message = load_error(&dir);
    let rest = about(&message, &dir, "matrix.json");
    assert!(
        rest.starts_with(&format!(
            "truncated ({} bytes): its sha256 ",
            bytes.len() / 2
        )),
        "{message}"
    );
    assert!(rest.ends_with(" recorded in SHA256SUMS"), "{message}");
}

#[test]
fn every_truncation_is_called_truncated() {
    for file in ["matrix.json", "run.json", "matrix.csv"] {
        let (_root, dir) = written();
        let path = dir.join(file);
        let bytes = fs::read(&path).unwrap();
        for len in 0..bytes.len() {
            // A CSV cut between lines is indistinguishable from one with lines removed.
            if file == "matrix.csv" && len > 0 && bytes[len - 1] == b'\n' {
                continue;
            }
            fs::write(&path, &bytes[..len]).unwrap();
            let message = load_error(&dir);
            let rest = about(&message, &dir, file);
            assert!(
                rest.starts_with(&format!("truncated ({len} bytes)")),
                "{file} cut to {len} bytes: {message}"
            );
        }
    }
}

#[test]
fn a_tampered_matrix_csv_is_reported() {
    let (_root, dir) = written();
    edit(&dir, "matrix.csv", "accuracy,0.875", "accuracy,0.975");
    let message = load_error(&dir);
    let rest = about(&message, &dir, "matrix.csv");
    assert!(
        rest.starts_with("modified after it was written: its sha256 "),
        "{message}"
    );
    let actual = sha256_hex(&fs::read(dir.join("matrix.csv")).unwrap());
    assert!(rest.contains(&actual), "{message} names the actual hash");
}

#[test]
fn an_edit_with_recomputed_sums_is_caught_by_the_consistency_checks() {
    // The seed in run.json only: matrix.json disagrees.
    let (_root, dir) = written();
    edit(&dir, "run.json", "\"seed\": 0,", "\"seed\": 5,");
    recompute_sums(&dir);
    let message = load_error(&dir);
    assert_eq!(
        about(&message, &dir, "matrix.json"),
        "seed: disagrees with run.json"
    );

    // The seed in both files: the folder no longer matches.
    edit(&dir, "matrix.json", "\"seed\": 0,", "\"seed\": 5,");
    recompute_sums(&dir);
    let message = load_error(&dir);
    assert_eq!(
        about(&message, &dir, "run.json"),
        format!(
            "says preset tiny, model cnn_s, seed 5, but the folder is not {}",
            Path::new("tiny/cnn_s/seed-5").display()
        )
    );

    // A value in matrix.json only: matrix.csv disagrees.
    let (_root, dir) = written();
    edit(&dir, "matrix.json", "[0.8,0.875,", "[0.8,0.975,");
    recompute_sums(&dir);
    let message = load_error(&dir);
    assert_eq!(
        about(&message, &dir, "matrix.csv"),
        "its cells disagree with matrix.json"
    );

    // A value in both matrix files: consistent, and loads with the new value.
    edit(&dir, "matrix.csv", "accuracy,0.875", "accuracy,0.975");
    recompute_sums(&dir);
    assert_eq!(load_run(&dir).unwrap().grid.get(1, 1), Some(0.975));

    // The metric in run.json: matrix.json disagrees.
    let (_root, dir) = written();
    edit(
        &dir,
        "run.json",
        "\"metric\": \"accuracy\"",
        "\"metric\": \"f1\"",
    );
    recompute_sums(&dir);
    let message = load_error(&dir);
    assert_eq!(
        about(&message, &dir, "matrix.json"),
        "metric: disagrees with run.json"
    );

    // An invalid field in run.json.
    let (_root, dir) = written();
    edit(
        &dir,
        "run.json",
        "\"device\": \"cpu\"",
        "\"device\": \"gpu\"",
    );
    recompute_sums(&dir);
    let message = load_error(&dir);
    assert_eq!(
        about(&message, &dir, "run.json"),
        "device: expected cpu, cuda or cuda:N, found \"gpu\""
    );

    // An unknown field in run.json.
    let (_root, dir) = written();
    edit(
        &dir,
        "run.json",
        "\"device\": \"cpu\",",
        "\"device\": \"cpu\",\n  \"note\": \"x\",",
    );
    recompute_sums(&dir);
    let message = load_error(&dir);
    let text = fs::read_to_string(dir.join("run.json")).unwrap();
    let line = text.lines().position(|l| l.contains("\"note\"")).unwrap() + 1;
    assert_eq!(
        about(&message, &dir, "run.json"),
        format!(
            "line {line} column 8: unknown field `note`, expected one of `schema`, `preset`, \
             `model`, `seed`, `varied`, `metric`, `code`, `data`, `device`, `threads`"
        )
    );

    // What varied must start with the initialisation, no part twice.
    let (_root, dir) = written();
    edit(&dir, "run.json", "\"init\"\n  ]", "\"split\"\n  ]");
    recompute_sums(&dir);
    let message = load_error(&dir);
    assert_eq!(
        about(&message, &dir, "run.json"),
        "varied: expected \"init\" first and no part twice, found [\"split\"]"
    );

    // A run.json made before `varied` was recorded loads, as varying the initialisation.
    let (_root, dir) = written();
    edit(
        &dir,
        "run.json",
        "  \"varied\": [\n    \"init\"\n  ],\n",
        "",
    );
    recompute_sums(&dir);
    let old = load_run(&dir).unwrap();
    assert_eq!(old.provenance.varied, [drift::slices::Varied::Init]);

    // A reformatted matrix.json with the same values.
    let (_root, dir) = written();
    edit(&dir, "matrix.json", "[null,0.0,1.0]", "[null, 0.0, 1.0]");
    recompute_sums(&dir);
    let message = load_error(&dir);
    assert_eq!(
        about(&message, &dir, "matrix.json"),
        "not in the canonical layout this version writes"
    );
}

#[test]
fn a_missing_sums_file_marks_an_unfinished_run() {
    let (_root, dir) = written();
    fs::remove_file(dir.join("SHA256SUMS")).unwrap();
    let message = load_error(&dir);
    assert_eq!(
        message,
        format!(
            "{}: no SHA256SUMS: the run is unfinished or this is not a run folder",
            dir.display()
        )
    );
}

#[test]
fn a_missing_or_malformed_file_is_named() {
    let (_root, dir) = written();
    fs::remove_file(dir.join("matrix.csv")).unwrap();
    let message = load_error(&dir);
    about(&message, &dir, "matrix.csv");

    let (_root, dir) = written();
    let sums = fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    let without_csv: String = sums.lines().skip(1).map(|l| format!("{l}\n")).collect();
    fs::write(dir.join("SHA256SUMS"), without_csv).unwrap();
    let message = load_error(&dir);
    assert_eq!(
        about(&message, &dir, "SHA256SUMS"),
        "lists [\"matrix.json\", \"run.json\"], expected exactly \
         [\"matrix.csv\", \"matrix.json\", \"run.json\"]"
    );

    fs::write(dir.join("SHA256SUMS"), "not a sums file\n").unwrap();
    let message = load_error(&dir);
    assert_eq!(
        about(&message, &dir, "SHA256SUMS"),
        "line 1: expected \"<sha256>  <path>\" (64 lower-case hex digits, two spaces, a path)"
    );
}

#[test]
fn a_run_in_the_wrong_folder_is_refused() {
    let (root, dir) = written();
    let moved = root.path().join("tiny/cnn_s/seed-3");
    fs::rename(&dir, &moved).unwrap();
    let message = load_error(&moved);
    assert_eq!(
        about(&message, &moved, "run.json"),
        format!(
            "says preset tiny, model cnn_s, seed 0, but the folder is not {}",
            Path::new("tiny/cnn_s/seed-0").display()
        )
    );

    let other_model = root.path().join("tiny/mlp/seed-0");
    fs::create_dir_all(other_model.parent().unwrap()).unwrap();
    fs::rename(&moved, &other_model).unwrap();
    let message = load_error(&other_model);
    assert!(
        about(&message, &other_model, "run.json")
            .ends_with("but the folder is not tiny/cnn_s/seed-0"),
        "{message}"
    );
    // load_all stops at the misplaced run.
    assert_eq!(load_all(root.path()).unwrap_err().to_string(), message);
}

#[test]
fn write_run_refuses_an_invalid_run() {
    let root = tempfile::tempdir().unwrap();
    type Break = fn(&mut RunArtifact);
    let cases: Vec<(Break, &str)> = vec![
        (
            |r| r.provenance.device = "gpu".into(),
            "device: expected cpu, cuda or cuda:N, found \"gpu\"",
        ),
        (
            |r| r.provenance.device = "cuda:".into(),
            "device: expected cpu, cuda or cuda:N, found \"cuda:\"",
        ),
        (|r| r.provenance.threads = 0, "threads: must be at least 1"),
        (
            |r| r.provenance.preset.sha256 = "ABC".into(),
            "preset.sha256: expected 64 lower-case hex digits, found \"ABC\"",
        ),
        (
            |r| r.provenance.data.sha256 = "A".repeat(64),
            "data.sha256: expected 64 lower-case hex digits, found \
             \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"",
        ),
        (
            |r| r.provenance.code.git_dirty = None,
            "code.git_dirty: must be null exactly when code.git_commit is",
        ),
        (
            |r| r.provenance.model = "../escape".into(),
            "model: \"../escape\" is not a valid folder name",
        ),
        (
            |r| r.timing.as_mut().unwrap().train = f64::NAN,
            "timing.json: train: expected a non-negative number of seconds, found NaN",
        ),
        (
            |r| r.slices[2] = "1900s".into(),
            "slices[2]: \"1900s\" is empty or repeated",
        ),
        (
            |r| r.grid.set(0, 1, Some(f64::INFINITY)),
            "cells[0][1]: inf is not a finite number",
        ),
        (
            |r| r.slices.push("1930s".into()),
            "cells: 3x3 cells for 4 slices",
        ),
        (
            |r| r.seen_classes = Some(Grid::empty(2)),
            "seen_classes: 2x2 cells for 3 slices",
        ),
        (
            |r| {
                let mut g = Grid::empty(3);
                g.set(2, 0, Some(0.5));
                r.seen_classes = Some(g);
            },
            "seen_classes[2][0]: filled where cells[2][0] is empty",
        ),
    ];
    for (break_it, expected) in cases {
        let mut bad = run("cnn_s", 0);
        break_it(&mut bad);
        let message = write_run(root.path(), &bad).unwrap_err().to_string();
        assert_eq!(message, format!("refusing to write a run: {expected}"));
    }
    // Nothing was written.
    assert_eq!(fs::read_dir(root.path()).unwrap().count(), 0);

    // No git checkout: both git fields null is fine.
    let mut ok = run("cnn_s", 0);
    ok.provenance.code.git_commit = None;
    ok.provenance.code.git_dirty = None;
    ok.provenance.device = "cuda:1".into();
    let dir = write_run(root.path(), &ok).unwrap();
    assert_eq!(load_run(&dir).unwrap(), ok);
}

/// A preset's `seen_classes` cells ride in `matrix.json` after `cells`, one row a line,
/// and load back exactly.
#[test]
fn seen_classes_cells_round_trip_in_matrix_json() {
    let root = tempfile::tempdir().unwrap();
    let mut original = run("cnn_s", 0);
    original.seen_classes = Some(original.grid.map(|i, j, v| (i != j).then_some(v / 2.0)));
    let dir = write_run(root.path(), &original).unwrap();
    let text = fs::read_to_string(dir.join("matrix.json")).unwrap();
    assert!(
        text.contains("  ],\n  \"seen_classes\": [\n    [null,0.425,0.15"),
        "{text}"
    );
    assert_eq!(load_run(&dir).unwrap(), original);
}

/// Schema 2 adds `health.json`: written one cutoff a line, listed first in the sums,
/// loaded back exactly; a schema-2 run without health, or health for other slices, is
/// refused naming the file.
#[test]
fn health_round_trips_in_schema_2() {
    use drift::eval::Health;
    let root = tempfile::tempdir().unwrap();
    let mut r = run("cnn_s", 0);
    r.provenance.schema = 2;
    let h = |cutoff: &str, share: f64| Health {
        cutoff: cutoff.into(),
        rows: 12,
        majority_class: Some(0),
        majority_share: Some(share),
        prediction_variance: None,
        target_variance: None,
        final_loss: Some(0.5),
        collapsed: share >= 0.99,
    };
    r.health = Some(vec![h("1900s", 1.0), h("1910s", 0.5), h("1920s", 0.75)]);
    let dir = write_run(root.path(), &r).unwrap();
    let loaded = load_run(&dir).unwrap();
    assert_eq!(loaded, r);
    assert_eq!(loaded.collapsed(), ["1900s"]);
    let sums = fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    let listed: Vec<&str> = sums
        .lines()
        .map(|l| l.split("  ").nth(1).unwrap())
        .collect();
    assert_eq!(
        listed,
        ["health.json", "matrix.csv", "matrix.json", "run.json"]
    );
    let text = fs::read_to_string(dir.join("health.json")).unwrap();
    assert!(
        text.starts_with("{\n  \"schema\": 2,\n  \"collapsed_when\": "),
        "{text}"
    );
    assert_eq!(text.lines().filter(|l| l.contains("\"cutoff\"")).count(), 3);

    let mut missing = r.clone();
    missing.health = None;
    let e = write_run(root.path(), &missing).unwrap_err().to_string();
    assert!(e.contains("health.json: schema 2 folders need one"), "{e}");
    let mut short = r.clone();
    short.health.as_mut().unwrap().pop();
    let e = write_run(root.path(), &short).unwrap_err().to_string();
    assert!(
        e.contains("health.json: cutoffs: 2 entries for 3 slices"),
        "{e}"
    );
}
