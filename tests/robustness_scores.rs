//! drift-happens' robustness family (S, R_abs, R_rel, DRS_alpha, LDRS, CVaR_tau, J_lambda,
//! H) against an independent numpy implementation of its definitions
//! (tests/fixtures/robustness_scores.json, `scripts/make-fixtures`), per seed and over
//! seeds, in the library and through `drift summarize`, to 1e-9. Random matrices with
//! empty cells, higher- and lower-is-better metrics, four parameter sets.

use drift::analysis::{ScoreParameters, over_seeds, scores_per_seed};
use drift::{DriftMatrix, Grid, Metric};
use serde_json::Value;

const TOLERANCE: f64 = 1e-9;

fn parameters(c: &Value) -> ScoreParameters {
    let p = &c["parameters"];
    ScoreParameters {
        alpha: p["alpha"].as_f64().unwrap(),
        cvar_tau: p["cvar_tau"].as_f64().unwrap(),
        lambda: p["lambda"].as_f64().unwrap(),
        beta: p["beta"].as_f64().unwrap(),
    }
}

fn metric(c: &Value) -> Metric {
    match c["metric"].as_str().unwrap() {
        "mse" => Metric::Mse,
        _ => Metric::Accuracy,
    }
}

fn matrix(c: &Value) -> DriftMatrix {
    let grids = c["grids"].as_array().unwrap();
    let k = grids[0].as_array().unwrap().len();
    let slices = (0..k).map(|i| (2000 + i).to_string()).collect();
    let mut m = DriftMatrix::new(slices, metric(c));
    for (seed, g) in grids.iter().enumerate() {
        let rows: Vec<Vec<Option<f64>>> = g
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_array().unwrap().iter().map(Value::as_f64).collect())
            .collect();
        m.add_seed(seed as u64, Grid::from_rows(&rows).unwrap())
            .unwrap();
    }
    m
}

fn same(got: Option<f64>, want: &Value, what: &str) {
    match (got, want.as_f64()) {
        (None, None) => {}
        (Some(g), Some(w)) => assert!(
            (g - w).abs() <= TOLERANCE * w.abs().max(1.0),
            "{what}: {g} against {w}"
        ),
        _ => panic!("{what}: {got:?} against {want}"),
    }
}

#[test]
fn every_score_matches_the_reference_per_seed_and_over_seeds() {
    let fixture = crate::support::fixture("robustness_scores.json");
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() >= 100);
    for (n, c) in cases.iter().enumerate() {
        let per_seed = scores_per_seed(&matrix(c), &parameters(c));
        for (s, want) in per_seed.iter().zip(c["per_seed"].as_array().unwrap()) {
            for (name, pick) in drift::analysis::SCORE_NAMES {
                same(
                    pick(&s.1),
                    &want[name],
                    &format!("case {n} seed {} {name}", s.0),
                );
            }
        }
        let only: Vec<_> = per_seed.iter().map(|s| s.1).collect();
        for (name, m) in over_seeds(&only) {
            let want = &c["over_seeds"][name];
            same(
                m.map(|m| m.mean),
                &want["mean"],
                &format!("case {n} {name} mean"),
            );
            same(
                m.and_then(|m| m.sd),
                &want["sd"],
                &format!("case {n} {name} sd"),
            );
        }
    }
}

/// `drift summarize M.csv --metric accuracy --format json --beta 0.2` prints
/// `robustness_scores`: one number per score for one seed, mean and sd (and a `seed`
/// column) for several.
#[test]
fn summarize_prints_the_robustness_scores() {
    let fixture = crate::support::fixture("robustness_scores.json");
    let cases = fixture["cases"].as_array().unwrap();
    let beta = |c: &&Value| c["parameters"]["beta"].as_f64() == Some(0.2);
    let pick = |seeds: usize| {
        cases
            .iter()
            .filter(beta)
            .find(|c| {
                c["metric"] == "accuracy"
                    && c["grids"].as_array().unwrap().len() == seeds
                    && c["grids"][0].as_array().unwrap().len() >= 3
            })
            .unwrap_or_else(|| panic!("a fixture case of {seeds} seeds at beta 0.2"))
    };
    let dir = tempfile::tempdir().unwrap();
    for seeds in [1, 3] {
        let c = pick(seeds);
        let mut csv = String::from("seed,train_slice,eval_slice,value\n");
        for (seed, g) in c["grids"].as_array().unwrap().iter().enumerate() {
            for (i, row) in g.as_array().unwrap().iter().enumerate() {
                for (j, v) in row.as_array().unwrap().iter().enumerate() {
                    if let Some(v) = v.as_f64() {
                        csv += &format!("{seed},{},{},{v:?}\n", 2000 + i, 2000 + j);
                    }
                }
            }
        }
        let path = dir.path().join(format!("m{seeds}.csv"));
        std::fs::write(&path, csv).unwrap();
        let output = crate::support::drift()
            .args(["summarize", path.to_str().unwrap(), "--metric", "accuracy"])
            .args(["--format", "json", "--beta", "0.2"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            crate::support::stderr(&output)
        );
        let json: Value = serde_json::from_str(&crate::support::stdout(&output)).unwrap();
        let scores = &json["robustness_scores"];
        assert_eq!(json["robustness_parameters"]["beta"], 0.2);
        for (name, _) in drift::analysis::SCORE_NAMES {
            if seeds == 1 {
                same(scores[name].as_f64(), &c["per_seed"][0][name], name);
            } else {
                let want = &c["over_seeds"][name];
                same(scores[name]["mean"].as_f64(), &want["mean"], name);
                same(scores[name]["sd"].as_f64(), &want["sd"], name);
                assert_eq!(scores["seed"].as_array().unwrap().len(), 3);
            }
        }
    }
    // Out-of-range parameters are refused, naming the flag.
    let output = crate::support::drift()
        .args(["summarize", dir.path().join("m1.csv").to_str().unwrap()])
        .args(["--metric", "accuracy", "--cvar-tau", "1.5"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(crate::support::stderr(&output).contains("--cvar-tau 1.5"));
}
