//! The tests that decide the paper's claims against their peers: Welch's and the
//! one-sample t-test and Spearman's correlation against scipy 1.17.1, Holm's adjustment
//! against statsmodels 0.15.0 (tests/fixtures/t_test.json, made by
//! `scripts/make-fixtures`), all to 1e-12.

use drift::analysis::t_test::{holm, one_sample, spearman, welch};

use crate::support::floats;

/// Equal to 1e-12, relative above 1 (t statistics reach the hundreds). drift sums in
/// numpy's order (`drift::analysis::t_test::pairwise_sum`): with a running sum instead,
/// t differed by 1e-11 where two means are close and their difference cancels digits.
fn close(got: f64, want: f64, tol: f64, what: &str) {
    let tol = tol * want.abs().max(1.0);
    assert!((got - want).abs() <= tol, "{what}: {got} against {want}");
}

#[test]
fn welch_matches_scipy() {
    let fixture = crate::support::fixture("t_test.json");
    let cases = fixture["welch"].as_array().unwrap();
    assert!(cases.len() > 100);
    for (n, c) in cases.iter().enumerate() {
        let (a, b) = (floats(&c["a"]), floats(&c["b"]));
        let t = welch(&a, &b).unwrap();
        let what = format!("welch case {n}");
        close(t.t, c["t"].as_f64().unwrap(), 1e-12, &format!("{what} t"));
        close(
            t.df,
            c["df"].as_f64().unwrap(),
            1e-12,
            &format!("{what} df"),
        );
        close(t.p, c["p"].as_f64().unwrap(), 1e-12, &format!("{what} p"));
    }
}

#[test]
fn the_one_sample_t_test_matches_scipy() {
    let fixture = crate::support::fixture("t_test.json");
    for (n, c) in fixture["one_sample"].as_array().unwrap().iter().enumerate() {
        let t = one_sample(&floats(&c["a"]), c["mu"].as_f64().unwrap()).unwrap();
        close(t.t, c["t"].as_f64().unwrap(), 1e-12, &format!("case {n} t"));
        close(
            t.df,
            c["df"].as_f64().unwrap(),
            1e-12,
            &format!("case {n} df"),
        );
        close(t.p, c["p"].as_f64().unwrap(), 1e-12, &format!("case {n} p"));
    }
}

#[test]
fn holm_matches_statsmodels() {
    let fixture = crate::support::fixture("t_test.json");
    for (n, c) in fixture["holm"].as_array().unwrap().iter().enumerate() {
        let got = holm(&floats(&c["p"]));
        for (i, (g, w)) in got.iter().zip(floats(&c["adjusted"])).enumerate() {
            close(*g, w, 1e-12, &format!("holm case {n} p[{i}]"));
        }
    }
}

#[test]
fn spearman_matches_scipy() {
    let fixture = crate::support::fixture("t_test.json");
    let cases = fixture["spearman"].as_array().unwrap();
    assert!(cases.len() > 30);
    // The cases hold ties (values rounded to two decimals), which take average ranks.
    let tied = cases.iter().any(|c| {
        let a = floats(&c["a"]);
        (1..a.len()).any(|i| a[..i].contains(&a[i]))
    });
    assert!(tied, "the fixture exercises ties");
    for (n, c) in cases.iter().enumerate() {
        let t = spearman(&floats(&c["a"]), &floats(&c["b"])).unwrap();
        close(
            t.difference,
            c["rho"].as_f64().unwrap(),
            1e-12,
            &format!("case {n} rho"),
        );
        close(t.p, c["p"].as_f64().unwrap(), 1e-12, &format!("case {n} p"));
    }
    assert!(spearman(&[0.1, 0.2], &[0.3, 0.4]).is_none(), "two points");
    assert!(
        spearman(&[0.1, 0.1, 0.1], &[0.3, 0.4, 0.5]).is_none(),
        "a constant side"
    );
}
