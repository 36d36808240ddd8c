//! `drift audit` on a copy of the smoke study (`tests/study.rs`'s reference): an untouched
//! draw passes with the certificate's figures; a row changed, with every checksum
//! recomputed to match, is caught when drawn.
#![cfg(feature = "torch")]

use std::fs;
use std::path::Path;
use std::process::Output;

use crate::support::{stderr, stdout};

/// A copy of the reference smoke study: studies file, presets and results.
fn copy_of_reference() -> tempfile::TempDir {
    let reference = crate::study::reference();
    let dir = tempfile::tempdir().unwrap();
    crate::support::copy_tree(reference, dir.path());
    dir
}

fn audit(dir: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_drift"))
        .current_dir(dir)
        .env("OMP_WAIT_POLICY", "passive")
        .args(["audit", "studies.toml", "--quiet"])
        .args(args)
        .output()
        .unwrap()
}

fn certificate(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(dir.join("audit.json")).unwrap()).unwrap()
}

#[test]
fn an_audit_passes_untouched_rows_and_catches_a_changed_one_with_consistent_checksums() {
    let dir = copy_of_reference();
    let d = dir.path();

    // A seeded draw of three rows (of two presets' runs: one model, two seeds, a row per
    // cutoff): identical at the recorded thread count.
    let plan = audit(d, &["--sample", "3", "--seed", "1", "--plan"]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    let planned: Vec<String> = stdout(&plan)
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(planned.len(), 3, "{}", stdout(&plan));
    assert!(!d.join("audit.json").exists(), "a plan retrains nothing");
    let output = audit(d, &["--sample", "3", "--seed", "1"]);
    assert!(
        output.status.success(),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    let cert = certificate(d);
    let retrained: Vec<String> = cert["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["item"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        planned, retrained,
        "the plan names the rows the audit retrains"
    );
    assert_eq!(cert["passed"], true, "{cert}");
    assert_eq!(cert["drawn"]["how"], "stratified");
    assert_eq!(cert["drawn"]["seed"], 1);
    assert_eq!(cert["drawn"]["seed_from"], "--seed");
    assert_eq!(cert["drawn"]["sample"], 3);
    let population = cert["drawn"]["population"].as_u64().unwrap();
    let drawn: Vec<u64> = cert["drawn"]["studies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["drawn"].as_u64().unwrap())
        .collect();
    assert_eq!(drawn.iter().sum::<u64>(), 3);
    let items = cert["items"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    assert!(items.iter().all(|i| i["result"] == "identical"), "{cert}");
    let caught = cert["fraction_caught"].as_f64().unwrap();
    assert!(
        (caught - (1.0 - 0.05f64.powf(1.0 / 3.0))).abs() < 1e-12,
        "{caught}"
    );
    assert!(stdout(&output).contains(&format!("of the {population} rows")));
    // The same seed draws the same rows.
    let again = audit(
        d,
        &[
            "--sample",
            "3",
            "--seed",
            "1",
            "--certificate",
            "again.json",
        ],
    );
    assert!(again.status.success(), "{}", stderr(&again));
    let again: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(d.join("again.json")).unwrap()).unwrap();
    let ids = |c: &serde_json::Value| -> Vec<String> {
        c["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["item"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&cert), ids(&again));

    // Change one cell of a fine-tuned run's last row and rewrite the folder, so that its
    // matrix files and SHA256SUMS agree: the artifact still loads, the audit catches it.
    let run_dir = d.join("results/smoke-finetune/mlp_s/seed-1");
    let mut run = drift::artifacts::load_run(&run_dir).unwrap();
    let k = run.slices.len();
    let cell = run.grid.get(k - 1, k - 1).unwrap();
    run.grid.set(k - 1, k - 1, Some(cell - 0.01));
    drift::artifacts::write_run(&d.join("results"), &run).unwrap();
    drift::artifacts::load_run(&run_dir).expect("a consistent, changed folder");
    let changed = format!("smoke-finetune/mlp_s/seed-1/{}", run.slices[k - 1]);
    let untouched = format!("smoke-single/mlp_s/seed-0/{}", run.slices[1]);
    let output = audit(d, &["--items", &format!("{untouched},{changed}")]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let message = stderr(&output);
    assert!(
        message.contains(&changed) && message.contains("differs"),
        "{message}"
    );
    assert!(!message.contains(&untouched), "{message}");
    let cert = certificate(d);
    assert_eq!(cert["passed"], false);
    assert_eq!(cert["drawn"]["how"], "fixed");
    let results: Vec<(&str, &str)> = cert["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["item"].as_str().unwrap(), i["result"].as_str().unwrap()))
        .collect();
    // In population order: the studies file names smoke-single first.
    assert_eq!(
        results,
        [
            (untouched.as_str(), "identical"),
            (changed.as_str(), "differs")
        ]
    );
    let rows = cert["items"][1]["rows"]
        .as_array()
        .expect("both rows of what differs");
    assert_ne!(rows[0], rows[1]);
    assert!(cert["items"][0].get("rows").is_none(), "{cert}");
    let largest = cert["items"][1]["largest_difference"].as_f64().unwrap();
    assert!((largest - 0.01).abs() < 1e-9, "{largest}");

    // An unknown item and an over-budget draw are refused before any training.
    let output = audit(d, &["--items", "smoke-single/mlp_s/seed-9/2003"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("no item"), "{}", stderr(&output));
    assert!(stdout(&output).is_empty(), "{}", stdout(&output));
    let output = audit(d, &["--sample", "10", "--seed", "1", "--budget", "0"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("--budget"), "{}", stderr(&output));
    assert!(stdout(&output).is_empty(), "{}", stdout(&output));
}
