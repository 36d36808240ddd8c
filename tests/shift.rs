//! The shift tests and label-free estimates (src/shift/) against scipy, scikit-learn and
//! numpy computations of their definitions (`tests/fixtures/shift.json`, by
//! `scripts/shift_fixtures.py`), and `drift shift` end to end.

use drift::shift::{self, Sample};
use serde_json::Value;

fn floats(rows: &Value) -> (Vec<f32>, usize) {
    let rows = rows.as_array().unwrap();
    let dims = rows[0].as_array().unwrap().len();
    let values = rows
        .iter()
        .flat_map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() as f32)
        })
        .collect();
    (values, dims)
}

#[test]
fn mmd_matches_numpy_and_its_p_value_is_within_sampling_error() {
    let fixture = crate::support::fixture("shift.json");
    for case in fixture["mmd"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let (a, dims) = floats(&case["a"]);
        let (b, _) = floats(&case["b"]);
        let n = case["permutations"].as_u64().unwrap() as usize;
        let a = Sample { values: &a, dims };
        let b = Sample { values: &b, dims };
        let mmd = shift::mmd(a, b, n, 0).unwrap();
        let ours = mmd.test;
        let statistic = case["statistic"].as_f64().unwrap();
        assert!(
            (ours.statistic - statistic).abs() <= 1e-9 * statistic.abs().max(1e-3),
            "{name}: statistic {} vs numpy's {statistic}",
            ours.statistic
        );
        let bandwidth = case["bandwidth"].as_f64().unwrap();
        assert!(
            (mmd.bandwidth - bandwidth).abs() <= 1e-12 * bandwidth,
            "{name}"
        );
        // Two estimates of one permutation p-value from independent shuffles: within four
        // standard errors of their difference (and a count of one).
        let p = case["p_value"].as_f64().unwrap();
        let mid = (ours.p_value + p) / 2.0;
        let band = 4.0 * (2.0 * mid * (1.0 - mid) / n as f64).sqrt() + 1.0 / n as f64;
        assert!(
            (ours.p_value - p).abs() <= band,
            "{name}: p {} vs numpy's {p} (band {band})",
            ours.p_value
        );
        // Seeded: the same seed gives the same p-value.
        assert_eq!(shift::mmd(a, b, n, 0).unwrap(), mmd, "{name}");
    }
}

#[test]
fn mmd_refuses_what_it_cannot_test() {
    let one = [0f32, 1.0];
    let two = [0f32, 1.0, 2.0, 3.0];
    let error = |a: &[f32], da, b: &[f32], db| {
        shift::mmd(
            Sample {
                values: a,
                dims: da,
            },
            Sample {
                values: b,
                dims: db,
            },
            10,
            0,
        )
        .unwrap_err()
        .to_string()
    };
    assert!(error(&two, 2, &two, 1).contains("2 and 1 dimensions"));
    assert!(
        error(&one, 2, &two, 2).contains("MMD needs at least 2 rows in each sample, got 1 and 2")
    );
    assert!(
        error(&[0.0; 4], 1, &[0.0; 4], 1).contains("the median distance between the points is 0")
    );
    assert!(error(&[f32::NAN, 1.0], 1, &two, 1).contains("not finite"));
}

/// `values` (`rows x dims`) as a float32 `.npy` file.
fn npy(path: &std::path::Path, rows: usize, dims: usize, values: &[f32]) {
    let mut header =
        format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {dims}), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    bytes.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn drift_shift_prints_the_mmd_test_of_two_npy_files() {
    let fixture = crate::support::fixture("shift.json");
    let case = &fixture["mmd"][0];
    let (a, dims) = floats(&case["a"]);
    let (b, _) = floats(&case["b"]);
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
    npy(&pa, a.len() / dims, dims, &a);
    npy(&pb, b.len() / dims, dims, &b);
    let output = crate::support::drift()
        .arg("shift")
        .args([&pa, &pb])
        .args(["--permutations", "200", "--seed", "3", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        crate::support::stderr(&output)
    );
    let json: Value = serde_json::from_str(&crate::support::stdout(&output)).unwrap();
    let expected = shift::mmd(
        Sample { values: &a, dims },
        Sample { values: &b, dims },
        200,
        3,
    )
    .unwrap()
    .test;
    assert_eq!(json["statistic"].as_f64().unwrap(), expected.statistic);
    assert_eq!(json["p_value"].as_f64().unwrap(), expected.p_value);
    assert_eq!(
        (json["rows_a"].as_u64(), json["dims"].as_u64()),
        (Some(30), Some(5))
    );
    // Samples of different widths are refused, naming both files.
    npy(&pb, 4, 2, &[0.0; 8]);
    let output = crate::support::drift()
        .arg("shift")
        .args([&pa, &pb])
        .output()
        .unwrap();
    let stderr = crate::support::stderr(&output);
    assert!(!output.status.success());
    assert!(
        stderr.contains(&format!(
            "{} has 5 dimensions and {} has 2",
            pa.display(),
            pb.display()
        )),
        "{stderr}"
    );
}

/// `|ours - theirs| <= tolerance * max(|theirs|, floor)`.
fn close(ours: f64, theirs: f64, tolerance: f64, floor: f64) -> bool {
    (ours - theirs).abs() <= tolerance * theirs.abs().max(floor)
}

fn classes(values: &Value) -> Vec<u32> {
    values
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect()
}

#[test]
fn ks_matches_scipy_per_dimension_and_corrected() {
    let fixture = crate::support::fixture("shift.json");
    for case in fixture["ks"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let (a, dims) = floats(&case["a"]);
        let (b, _) = floats(&case["b"]);
        let (sa, sb) = (Sample { values: &a, dims }, Sample { values: &b, dims });
        for d in 0..dims {
            let column = |s: &[f32]| -> Vec<f64> {
                s.iter()
                    .skip(d)
                    .step_by(dims)
                    .map(|&v| f64::from(v))
                    .collect()
            };
            let ours = shift::ks_2samp(&column(&a), &column(&b)).unwrap();
            let statistic = case["statistics"][d].as_f64().unwrap();
            let p = case["p_values"][d].as_f64().unwrap();
            assert!(
                close(ours.statistic, statistic, 1e-12, 1e-12),
                "{name} dim {d}"
            );
            assert!(
                close(ours.p_value, p, 1e-9, 1e-300),
                "{name} dim {d}: p {} vs scipy's {p}",
                ours.p_value
            );
        }
        let ours = shift::ks(sa, sb).unwrap();
        assert!(close(
            ours.test.statistic,
            case["statistic"].as_f64().unwrap(),
            1e-12,
            1e-12
        ));
        assert!(
            close(
                ours.test.p_value,
                case["p_value"].as_f64().unwrap(),
                1e-9,
                1e-300
            ),
            "{name}"
        );
        assert!(ours.exact);
    }
    for case in fixture["ks_pairs"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let ours = shift::ks_2samp(
            &crate::support::floats(&case["a"]),
            &crate::support::floats(&case["b"]),
        )
        .unwrap();
        let p = case["p_value"].as_f64().unwrap();
        assert!(
            close(
                ours.statistic,
                case["statistic"].as_f64().unwrap(),
                1e-12,
                1e-12
            ),
            "{name}"
        );
        assert!(
            close(ours.p_value, p, 1e-9, 1e-300),
            "{name}: p {} vs scipy's {p}",
            ours.p_value
        );
    }
}

#[test]
fn ks_beyond_the_exact_limit_is_asymptotic_and_says_so() {
    // 10,001 rows: scipy switches to the asymptotic distribution; drift uses Kolmogorov's
    // limit, which is close to it at this size.
    let a: Vec<f32> = (0..10_001).map(|i| (i as f32 * 0.618).fract()).collect();
    let b: Vec<f32> = (0..500).map(|i| (i as f32 * 0.414).fract() * 0.9).collect();
    let ks = shift::ks(
        Sample {
            values: &a,
            dims: 1,
        },
        Sample {
            values: &b,
            dims: 1,
        },
    )
    .unwrap();
    assert!(!ks.exact);
    assert!(
        ks.test.statistic > 0.09 && ks.test.statistic < 0.11,
        "{ks:?}"
    );
    assert!(ks.test.p_value > 0.0 && ks.test.p_value < 1e-3, "{ks:?}");
}

#[test]
fn c2st_matches_scikit_learn() {
    let fixture = crate::support::fixture("shift.json");
    for case in fixture["c2st"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let (a, dims) = floats(&case["a"]);
        let (b, _) = floats(&case["b"]);
        let ours = shift::c2st(Sample { values: &a, dims }, Sample { values: &b, dims }).unwrap();
        let auc = case["statistic"].as_f64().unwrap();
        let p = case["p_value"].as_f64().unwrap();
        assert!(
            close(ours.statistic, auc, 1e-9, 1.0),
            "{name}: AUC {} vs {auc}",
            ours.statistic
        );
        assert!(
            close(ours.p_value, p, 1e-9, 1e-300),
            "{name}: p {} vs {p}",
            ours.p_value
        );
    }
}

#[test]
fn chi_square_matches_scipy() {
    let fixture = crate::support::fixture("shift.json");
    for case in fixture["chi_square"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let k = case["classes"].as_u64().unwrap() as usize;
        let ours = shift::chi_square(&classes(&case["a"]), &classes(&case["b"]), k).unwrap();
        let (statistic, p) = (
            case["statistic"].as_f64().unwrap(),
            case["p_value"].as_f64().unwrap(),
        );
        assert!(close(ours.statistic, statistic, 1e-12, 1e-12), "{name}");
        assert!(
            close(ours.p_value, p, 1e-9, 1e-300),
            "{name}: p {} vs {p}",
            ours.p_value
        );
    }
    let error = shift::chi_square(&[0, 3], &[1], 3).unwrap_err().to_string();
    assert!(
        error.contains("class 3 is not below the 3 classes"),
        "{error}"
    );
}

#[test]
fn bbse_matches_numpy() {
    let fixture = crate::support::fixture("shift.json");
    for case in fixture["bbse"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let k = case["classes"].as_u64().unwrap() as usize;
        let ours = shift::bbse(
            &classes(&case["labels"]),
            &classes(&case["predicted"]),
            &classes(&case["target"]),
            k,
        )
        .unwrap();
        let Some(theirs) = case["estimate"].as_object() else {
            assert!(ours.is_none(), "{name}: numpy found C singular");
            continue;
        };
        let ours = ours.unwrap_or_else(|| panic!("{name}: an estimate"));
        for (key, values) in [
            ("weights", &ours.weights),
            ("source", &ours.source),
            ("target", &ours.target),
        ] {
            for (o, t) in values.iter().zip(crate::support::floats(&theirs[key])) {
                assert!(close(*o, t, 1e-9, 1.0), "{name} {key}: {o} vs {t}");
            }
        }
        assert!(
            close(
                ours.distance,
                theirs["distance"].as_f64().unwrap(),
                1e-9,
                1.0
            ),
            "{name}"
        );
    }
}

#[test]
fn confidence_estimates_match_numpy() {
    let fixture = crate::support::fixture("shift.json");
    for case in fixture["confidence"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let source = crate::support::floats(&case["source"]);
        let correct: Vec<bool> = case["correct"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_bool().unwrap())
            .collect();
        let target = crate::support::floats(&case["target"]);
        let average = shift::average_confidence(&target).unwrap();
        assert!(
            close(average, case["average"].as_f64().unwrap(), 1e-12, 1.0),
            "{name}"
        );
        let atc = shift::Atc::fit(&source, &correct).unwrap();
        assert_eq!(atc.threshold, case["threshold"].as_f64(), "{name}");
        assert_eq!(atc.estimate(&target), case["atc"].as_f64(), "{name}");
    }
}

#[test]
fn drift_shift_runs_ks_and_c2st() {
    let fixture = crate::support::fixture("shift.json");
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
    for (test, case) in [("ks", &fixture["ks"][0]), ("c2st", &fixture["c2st"][0])] {
        let (a, dims) = floats(&case["a"]);
        let (b, _) = floats(&case["b"]);
        npy(&pa, a.len() / dims, dims, &a);
        npy(&pb, b.len() / dims, dims, &b);
        let output = crate::support::drift()
            .arg("shift")
            .args([&pa, &pb])
            .args(["--test", test, "--format", "json"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            crate::support::stderr(&output)
        );
        let json: Value = serde_json::from_str(&crate::support::stdout(&output)).unwrap();
        assert_eq!(json["test"], test);
        for key in ["statistic", "p_value"] {
            let theirs = case[key].as_f64().unwrap();
            assert!(
                close(json[key].as_f64().unwrap(), theirs, 1e-9, 1e-300),
                "{test} {key}"
            );
        }
    }
}
