//! drift's metrics and Wilcoxon test against scikit-learn 1.9.1 and scipy 1.17.1: the
//! committed fixtures under tests/fixtures/ were made by `scripts/make-fixtures`.

use drift::Metric;
use drift::analysis::wilcoxon;
use drift::metrics::{Predictions, Reads, per_class_auc};
use serde_json::Value;

use crate::support::floats;

fn load(name: &str) -> Vec<Value> {
    let json = crate::support::fixture(name);
    json["cases"].as_array().unwrap().clone()
}

fn classes(v: &Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

/// Equal within `tol`, relative to the reference once it exceeds 1 in magnitude (MSE of
/// large targets differs in the last bits with numpy's pairwise summation).
fn close(got: Option<f64>, want: &Value, tol: f64) -> bool {
    match (got, want.as_f64()) {
        (None, None) => want.is_null(),
        (Some(g), Some(w)) => (g - w).abs() <= tol * w.abs().max(1.0),
        _ => false,
    }
}

#[test]
fn every_metric_matches_scikit_learn() {
    let cases = load("metrics.json");
    let mut counts = std::collections::BTreeMap::new();
    for (n, case) in cases.iter().enumerate() {
        let metric: Metric = case["metric"].as_str().unwrap().parse().unwrap();
        let (label, score) = (&case["label"], &case["score"]);
        let got = match metric.reads() {
            Reads::Values => {
                let (t, p) = (floats(label), floats(score));
                metric.compute(&Predictions::Values {
                    targets: &t,
                    predicted: &p,
                })
            }
            Reads::Scores if case["form"] == "multilabel" => {
                let rows = label.as_array().unwrap();
                let c = rows.first().map_or(1, |r| r.as_array().unwrap().len());
                let labels: Vec<bool> = rows.iter().flat_map(classes).map(|x| x == 1).collect();
                let scores: Vec<f64> = score.as_array().unwrap().iter().flat_map(floats).collect();
                if !rows.is_empty() {
                    let per_class = per_class_auc(c, &labels, &scores).unwrap();
                    let want = case["per_class"].as_array().unwrap();
                    assert_eq!(per_class.len(), want.len(), "case {n}");
                    for (k, (g, w)) in per_class.iter().zip(want).enumerate() {
                        assert!(close(*g, w, 1e-12), "case {n} class {k}: {g:?} vs {w}");
                    }
                }
                metric.compute(&Predictions::MultiLabel {
                    classes: c,
                    labels: &labels,
                    scores: &scores,
                })
            }
            Reads::Scores => {
                let labels: Vec<bool> = classes(label).into_iter().map(|x| x == 1).collect();
                let scores = floats(score);
                metric.compute(&Predictions::Scores {
                    labels: &labels,
                    scores: &scores,
                })
            }
            Reads::Classes => {
                let (l, p) = (classes(label), classes(score));
                if metric == Metric::MacroF1 {
                    let per_class = drift::metrics::f1_per_class(&l, &p).unwrap();
                    let want = &case["per_class"];
                    assert_eq!(
                        per_class.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
                        classes(&want["labels"]),
                        "case {n}"
                    );
                    for ((_, g), w) in per_class.iter().zip(floats(&want["values"])) {
                        assert!((g - w).abs() <= 1e-12, "case {n}: {g} vs {w}");
                    }
                }
                metric.compute(&Predictions::Classes {
                    labels: &l,
                    predicted: &p,
                })
            }
        }
        .unwrap_or_else(|e| panic!("case {n} ({metric}): {e}"));
        assert!(
            close(got, &case["value"], 1e-12),
            "case {n} ({metric}): drift {got:?}, reference {}",
            case["value"]
        );
        *counts.entry(metric.name()).or_insert(0) += 1;
    }
    for metric in Metric::ALL {
        let n = counts.get(metric.name()).copied().unwrap_or(0);
        assert!(n >= 200, "only {n} reference cases for {metric}");
    }
}

#[test]
fn wilcoxon_matches_scipy() {
    let cases = load("wilcoxon.json");
    assert!(cases.len() >= 200);
    let (mut ties, mut zeros) = (0, 0);
    for (n, case) in cases.iter().enumerate() {
        let d = floats(&case["d"]);
        let got = wilcoxon(&d);
        assert!(
            close(got.and_then(|w| w.p_value), &case["p_value"], 1e-9),
            "case {n} {d:?}: p {got:?}, scipy {}",
            case["p_value"]
        );
        assert!(
            close(got.map(|w| w.statistic), &case["statistic"], 1e-9),
            "case {n} {d:?}: statistic {got:?}, scipy {}",
            case["statistic"]
        );
        let mut abs: Vec<f64> = d.iter().filter(|x| **x != 0.0).map(|x| x.abs()).collect();
        abs.sort_by(f64::total_cmp);
        ties += usize::from(abs.windows(2).any(|w| w[0] == w[1]));
        zeros += usize::from(d.contains(&0.0));
    }
    assert!(
        ties >= 50 && zeros >= 50,
        "fixtures cover {ties} cases with ties, {zeros} with zeros"
    );
}
