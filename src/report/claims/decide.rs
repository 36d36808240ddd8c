//! One claim's test before the family's correction: its comparisons, each a t-test on
//! per-seed values (or an Agarwal & Nenkova score's Wilcoxon test), combined into one
//! p-value and a direction.

use serde::Serialize;

use super::file::Check;
use super::values::Value;
use crate::analysis::t_test::{one_sample, spearman, welch};

/// One comparison of a claim: the first quantity against another (or a quantity against
/// the bound, or one score's own test).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// In words: `A vs B`, `A vs 0.015`, or the score's label.
    pub label: String,
    /// The estimate on the analysis scale: the difference of the seed means, or the score.
    pub difference: f64,
    /// The t statistic (`None` for a Wilcoxon test, or with fewer than two seeds).
    pub t: Option<f64>,
    /// Its degrees of freedom.
    pub df: Option<f64>,
    /// The two-sided p-value (1 when no test is possible).
    pub p: f64,
    /// Whether the estimate goes the way the claim states.
    pub toward: bool,
}

/// A claim's test: its comparisons and the one p-value Holm's correction adjusts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClaimTest {
    /// The comparisons, in quantity order.
    pub comparisons: Vec<Comparison>,
    /// The claim's p-value: the largest of its comparisons' when all go the stated way
    /// (every one must be significant, an intersection-union test, which needs no
    /// correction inside the claim); otherwise, Bonferroni's bound over the comparisons
    /// for the smallest that goes against it.
    pub p: f64,
    /// Whether the estimates go the stated way (for `overlapping`: never, as a
    /// significant difference is what would contradict it).
    pub toward: bool,
}

/// Tests one claim on its values; `bound` is the claim's `value` (for `above` / `below`),
/// `margin` the lead `largest` / `smallest` require (the difference tested is the lead
/// beyond it). `Err` names a quantity the check cannot test (a score without a p-value).
pub fn test(
    check: Check,
    bound: Option<f64>,
    margin: f64,
    values: &[Value],
) -> Result<ClaimTest, String> {
    let first = &values[0];
    let against_first = |v: &Value, sign: f64| {
        // Shifting the other side by the margin tests a lead of more than the margin.
        let shifted: Vec<f64> = v.seeds.iter().map(|x| x + sign * margin).collect();
        let t = welch(&first.seeds, &shifted);
        let difference = mean(&first.seeds).zip(mean(&shifted)).map(|(a, b)| a - b);
        let difference = difference.unwrap_or(first.value - v.value - sign * margin);
        Comparison {
            label: format!("{} vs {}", first.label, v.label),
            difference,
            t: t.map(|t| t.t),
            df: t.map(|t| t.df),
            p: t.map_or(1.0, |t| t.p),
            toward: sign * difference > 0.0 || sign == 0.0,
        }
    };
    let comparisons: Vec<Comparison> = match check {
        Check::Largest => values[1..].iter().map(|v| against_first(v, 1.0)).collect(),
        Check::Smallest => values[1..].iter().map(|v| against_first(v, -1.0)).collect(),
        Check::Separated | Check::Overlapping => {
            values[1..].iter().map(|v| against_first(v, 0.0)).collect()
        }
        Check::Above | Check::Below => {
            let bound = bound.expect("checked when read");
            let sign = if check == Check::Above { 1.0 } else { -1.0 };
            values
                .iter()
                .map(|v| {
                    if let Some(p) = v.p_value {
                        // A score: its Wilcoxon test of the differences, against 0.
                        return Comparison {
                            label: format!("{} vs 0 (Wilcoxon)", v.label),
                            difference: v.value,
                            t: None,
                            df: None,
                            p,
                            toward: sign * v.value > 0.0,
                        };
                    }
                    let t = one_sample(&v.seeds, bound);
                    let difference = mean(&v.seeds).unwrap_or(v.value) - bound;
                    Comparison {
                        label: format!("{} vs {bound}", v.label),
                        difference,
                        t: t.map(|t| t.t),
                        df: t.map(|t| t.df),
                        p: t.map_or(1.0, |t| t.p),
                        toward: sign * difference > 0.0,
                    }
                })
                .collect()
        }
        Check::Significant => values
            .iter()
            .map(|v| {
                let p = v
                    .p_value
                    .ok_or_else(|| format!("{}: not a score with a p-value", v.label))?;
                Ok(Comparison {
                    label: v.label.clone(),
                    difference: v.value,
                    t: None,
                    df: None,
                    p,
                    toward: true,
                })
            })
            .collect::<Result<_, String>>()?,
        Check::Correlated => vec![correlation(values)?],
    };
    Ok(combine(check, comparisons))
}

/// Spearman's correlation over the points of a `correlated` claim's pairs: each pair's
/// seeds, x from its first quantity and y from its second, in seed order. Either sign goes
/// the stated way (the claim is that a relation exists); the estimate is rho.
fn correlation(values: &[Value]) -> Result<Comparison, String> {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for pair in values.chunks(2) {
        let [a, b] = pair else {
            return Err("\"correlated\" needs its quantities in pairs".into());
        };
        if a.seeds.len() != b.seeds.len() {
            return Err(format!(
                "{} has {} seed values but {} has {}: a point needs both",
                a.label,
                a.seeds.len(),
                b.label,
                b.seeds.len()
            ));
        }
        x.extend(&a.seeds);
        y.extend(&b.seeds);
    }
    let t = spearman(&x, &y);
    Ok(Comparison {
        label: format!(
            "Spearman's rho over {} points of ({}, {})",
            x.len(),
            values[0].label,
            values[1].label
        ),
        difference: t.map_or(0.0, |t| t.difference),
        t: t.map(|t| t.t),
        df: t.map(|t| t.df),
        p: t.map_or(1.0, |t| t.p),
        toward: true,
    })
}

/// The claim's one p-value and direction from its comparisons.
pub fn combine(check: Check, comparisons: Vec<Comparison>) -> ClaimTest {
    let m = comparisons.len() as f64;
    let smallest = |only_against: bool| {
        comparisons
            .iter()
            .filter(|c| !only_against || !c.toward)
            .map(|c| c.p)
            .fold(1.0_f64, f64::min)
    };
    let (p, toward) = if check == Check::Overlapping {
        ((m * smallest(false)).min(1.0), false)
    } else if comparisons.iter().all(|c| c.toward) {
        (
            comparisons.iter().map(|c| c.p).fold(0.0_f64, f64::max),
            true,
        )
    } else {
        ((m * smallest(true)).min(1.0), false)
    };
    ClaimTest {
        comparisons,
        p,
        toward,
    }
}

/// Combines the tests of one claim under several definitions (a `robust` claim): it goes
/// the stated way only if it does under each, with the largest p; otherwise Bonferroni's
/// bound over the definitions for the smallest p that goes against it.
pub fn all_of(tests: Vec<ClaimTest>) -> ClaimTest {
    let m = tests.len() as f64;
    let toward = tests.iter().all(|t| t.toward);
    let p = if toward {
        tests.iter().map(|t| t.p).fold(0.0_f64, f64::max)
    } else {
        let least = tests
            .iter()
            .filter(|t| !t.toward)
            .map(|t| t.p)
            .fold(1.0_f64, f64::min);
        (m * least).min(1.0)
    };
    ClaimTest {
        comparisons: tests.into_iter().flat_map(|t| t.comparisons).collect(),
        p,
        toward,
    }
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(label: &str, seeds: &[f64]) -> Value {
        Value {
            label: label.into(),
            value: seeds.iter().sum::<f64>() / seeds.len() as f64,
            shown: 0.0,
            scale: 1.0,
            seeds: seeds.to_vec(),
            seed_range: None,
            p_value: None,
        }
    }

    fn comparison(p: f64, toward: bool) -> Comparison {
        Comparison {
            label: String::new(),
            difference: 0.0,
            t: None,
            df: None,
            p,
            toward,
        }
    }

    #[test]
    fn a_claim_of_several_comparisons_needs_each_and_is_contradicted_by_any() {
        // All go the stated way: the largest p decides (intersection-union).
        let t = combine(
            Check::Largest,
            vec![comparison(0.01, true), comparison(0.03, true)],
        );
        assert_eq!((t.p, t.toward), (0.03, true));
        // One goes against it: Bonferroni over the two for that one.
        let t = combine(
            Check::Largest,
            vec![comparison(0.001, true), comparison(0.02, false)],
        );
        assert_eq!((t.p, t.toward), (0.04, false));
        // "No significant difference" is contradicted by the smallest p, Bonferroni'd.
        let t = combine(
            Check::Overlapping,
            vec![comparison(0.4, true), comparison(0.01, true)],
        );
        assert_eq!((t.p, t.toward), (0.02, false));
    }

    #[test]
    fn a_margin_is_a_lead_the_test_must_see_beyond() {
        let a = value("a", &[0.50, 0.51, 0.52]);
        let b = value("b", &[0.40, 0.41, 0.42]);
        let plain = test(Check::Largest, None, 0.0, &[a.clone(), b.clone()]).unwrap();
        assert!(plain.toward && plain.p < 1e-3, "{plain:?}");
        // A lead of 0.1 exactly: the difference beyond the margin is 0.
        let at = test(Check::Largest, None, 0.1, &[a.clone(), b.clone()]).unwrap();
        assert!(
            at.comparisons[0].difference.abs() < 1e-12 && at.p > 0.99,
            "{at:?}"
        );
        let smaller = test(Check::Smallest, None, 0.0, &[b, a]).unwrap();
        assert!(smaller.toward && smaller.p < 1e-3, "{smaller:?}");
    }

    #[test]
    fn a_bound_is_tested_by_the_one_sample_test_and_a_score_by_its_own() {
        let below = test(
            Check::Below,
            Some(0.6),
            0.0,
            &[value("a", &[0.50, 0.51, 0.52])],
        );
        // t = -15.6 on 2 degrees of freedom.
        let below = below.unwrap();
        assert!(below.toward && (below.p - 0.0041).abs() < 1e-4, "{below:?}");
        let mut score = value("score", &[]);
        score.value = -0.02;
        score.p_value = Some(0.004);
        let t = test(Check::Below, Some(0.0), 0.0, &[score]).unwrap();
        assert_eq!((t.p, t.toward), (0.004, true));
        // One seed: no test is possible, p = 1.
        let one = test(Check::Above, Some(0.0), 0.0, &[value("a", &[0.5])]).unwrap();
        assert_eq!(one.p, 1.0);
    }

    #[test]
    fn a_correlation_pools_every_pair_seed_by_seed() {
        // Two pairs of three seeds: y falls as x rises at every point, so rho = -1.
        let values = [
            value("a id", &[0.90, 0.91, 0.92]),
            value("a decay", &[0.06, 0.05, 0.04]),
            value("b id", &[0.80, 0.81, 0.82]),
            value("b decay", &[0.09, 0.08, 0.07]),
        ];
        let t = test(Check::Correlated, None, 0.0, &values).unwrap();
        let c = &t.comparisons[0];
        assert!(
            (c.difference + 1.0).abs() < 1e-12 && t.p == 0.0 && t.toward,
            "{t:?}"
        );
        assert_eq!(c.df, Some(4.0));
        // A pair whose seeds do not line up is no set of points.
        let short = [value("a id", &[0.9, 0.91]), value("a decay", &[0.1])];
        assert!(test(Check::Correlated, None, 0.0, &short).is_err());
    }

    #[test]
    fn robust_needs_every_definition() {
        let holds = |p| ClaimTest {
            comparisons: Vec::new(),
            p,
            toward: true,
        };
        let against = |p| ClaimTest {
            comparisons: Vec::new(),
            p,
            toward: false,
        };
        let t = all_of(vec![holds(0.001), holds(0.01), holds(0.002)]);
        assert_eq!((t.p, t.toward), (0.01, true));
        let t = all_of(vec![holds(0.001), against(0.01), holds(0.002)]);
        assert_eq!((t.p, t.toward), (0.03, false));
    }
}
