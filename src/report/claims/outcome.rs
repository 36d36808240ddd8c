//! Every claim's outcome: its test, Holm's correction over its family, the outcome the
//! adjusted p-value gives, the verdict against a seed paper, and the build's requirement
//! that each finding comes out as written.

use std::collections::BTreeSet;

use serde::Serialize;

use super::decide::{ClaimTest, all_of, test};
use super::file::{CLAIMS, Check, Claim, ClaimsFile, Form, Stat};
use super::values::{Value, data_sources, value};
use crate::analysis::t_test::holm;
use crate::report::study::LoadedStudy;
use crate::{Error, Result};

/// What the adjusted test says of a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Significant in the stated direction.
    Holds,
    /// Not significant (for `overlapping`: no significant difference, its finding).
    Inconclusive,
    /// Significant the other way (for `overlapping`: a significant difference).
    Contradicted,
}

/// A claim's verdict against the seed paper's claim it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Comparable data, and the outcome says what the seed paper says.
    Agrees,
    /// Comparable data, and the opposite of the seed paper's statement holds.
    Contradicts,
    /// Comparable data, and no significant result either way.
    Inconclusive,
    /// The two sides measured on data of different kinds.
    NotComparable,
}

/// The verdict and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeedVerdict {
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in words (the data of each side, or what the outcome shows).
    pub reason: String,
}

/// A claim with its values, test, outcome and verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClaimOutcome {
    /// The claim.
    pub claim: Claim,
    /// One per quantity, in order (under the definition the claim names).
    pub values: Vec<Value>,
    /// Its test before correction.
    pub test: ClaimTest,
    /// Its p-value after Holm's correction over its family.
    pub adjusted_p: f64,
    /// How many claims share its family.
    pub family_size: usize,
    /// The outcome at the file's level.
    pub outcome: Outcome,
    /// The outcome at the level before the correction: a claim significant only there is
    /// reported as such.
    pub uncorrected: Outcome,
    /// Whether the build accepts it: a finding must come out as written (`holds`; for
    /// `overlapping`, `inconclusive`); a question always passes.
    pub passes: bool,
    /// The verdict against the seed paper, when the claim names one.
    pub seed: Option<SeedVerdict>,
    /// The comparisons in words, with the numbers.
    pub detail: String,
}

impl Outcome {
    fn of(p: f64, level: f64, toward: bool) -> Outcome {
        match (p < level, toward) {
            (true, true) => Outcome::Holds,
            (true, false) => Outcome::Contradicted,
            (false, _) => Outcome::Inconclusive,
        }
    }

    /// The outcome in words for the claim's check.
    pub fn words(self, check: Check) -> &'static str {
        match (self, check) {
            (Outcome::Inconclusive, Check::Overlapping) => "no significant difference",
            (Outcome::Contradicted, Check::Overlapping) => "significant difference",
            (Outcome::Holds, _) => "holds",
            (Outcome::Inconclusive, _) => "inconclusive",
            (Outcome::Contradicted, _) => "contradicted",
        }
    }
}

impl Verdict {
    /// The verdict as the paper's table writes it.
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Agrees => "agrees",
            Verdict::Contradicts => "contradicts",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotComparable => "not comparable",
        }
    }
}

/// The outcome a finding with this check states.
pub fn stated(check: Check) -> Outcome {
    if check == Check::Overlapping {
        Outcome::Inconclusive
    } else {
        Outcome::Holds
    }
}

/// Evaluates every claim of `file` over `studies`. A claim naming a study, model, family,
/// statistic or data kind that is not there is an error (a mistake in the file, not a
/// finding).
pub fn evaluate(file: &ClaimsFile, studies: &[LoadedStudy]) -> Result<Vec<ClaimOutcome>> {
    let tested: Vec<(Vec<Value>, ClaimTest)> = file
        .claims
        .iter()
        .map(|c| {
            let in_claim = |e: String| Error::Invalid(format!("{CLAIMS}: claim {:?}: {e}", c.name));
            tested(c, studies).map_err(in_claim)
        })
        .collect::<Result<_>>()?;
    let decided = decide_family(
        &file
            .claims
            .iter()
            .zip(&tested)
            .map(|(c, (_, t))| (c.family(), t.p, t.toward))
            .collect::<Vec<_>>(),
        file.level,
    );
    file.claims
        .iter()
        .zip(tested)
        .enumerate()
        .map(|(i, (claim, (values, test)))| {
            let d = decided[i];
            let seed = seed_verdict(claim, d.outcome, file, studies)
                .map_err(|e| Error::Invalid(format!("{CLAIMS}: claim {:?}: {e}", claim.name)))?;
            Ok(ClaimOutcome {
                detail: detail(&test, d.adjusted_p),
                passes: claim.form == Form::Question || d.outcome == stated(claim.check),
                claim: claim.clone(),
                values,
                test,
                adjusted_p: d.adjusted_p,
                family_size: d.family_size,
                outcome: d.outcome,
                uncorrected: d.uncorrected,
                seed,
            })
        })
        .collect()
}

/// One claim's p-value after the family's correction and the outcomes it gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decided {
    /// Holm-adjusted p over the claim's family.
    pub adjusted_p: f64,
    /// How many claims share the family.
    pub family_size: usize,
    /// The outcome at `level` after the correction.
    pub outcome: Outcome,
    /// The outcome at `level` before it.
    pub uncorrected: Outcome,
}

/// Holm's correction within each family of `claims` (family, p, whether the estimates go
/// the stated way), and each claim's outcome at `level` after and before it.
pub fn decide_family(claims: &[(&str, f64, bool)], level: f64) -> Vec<Decided> {
    let mut adjusted = vec![1.0; claims.len()];
    let mut family_size = vec![0; claims.len()];
    let families: BTreeSet<&str> = claims.iter().map(|c| c.0).collect();
    for family in families {
        let members: Vec<usize> = (0..claims.len())
            .filter(|&i| claims[i].0 == family)
            .collect();
        let p: Vec<f64> = members.iter().map(|&i| claims[i].1).collect();
        for (&i, a) in members.iter().zip(holm(&p)) {
            adjusted[i] = a;
            family_size[i] = members.len();
        }
    }
    claims
        .iter()
        .enumerate()
        .map(|(i, &(_, p, toward))| Decided {
            adjusted_p: adjusted[i],
            family_size: family_size[i],
            outcome: Outcome::of(adjusted[i], level, toward),
            uncorrected: Outcome::of(p, level, toward),
        })
        .collect()
}

/// The claim's values and test; a `robust` claim is tested under every definition of
/// decay (retention turns `largest` into `smallest`: more retained is less decay).
fn tested(
    c: &Claim,
    studies: &[LoadedStudy],
) -> std::result::Result<(Vec<Value>, ClaimTest), String> {
    let values_as = |stat: Option<Stat>| {
        c.quantities
            .iter()
            .map(|q| {
                let mut q = q.clone();
                if let Some(stat) = stat {
                    q.stat = stat;
                }
                value(&q, studies)
            })
            .collect::<std::result::Result<Vec<Value>, String>>()
    };
    let values = values_as(None)?;
    if !c.robust {
        let t = test(c.check, c.value, c.margin, &values)?;
        return Ok((values, t));
    }
    let mut tests = Vec::new();
    for stat in [Stat::Decay, Stat::DecayMatched, Stat::Retention] {
        let flips = (stat == Stat::Retention) != (c.quantities[0].stat == Stat::Retention);
        let check = match (c.check, flips) {
            (Check::Largest, true) => Check::Smallest,
            (Check::Smallest, true) => Check::Largest,
            (check, _) => check,
        };
        tests.push(test(check, c.value, c.margin, &values_as(Some(stat))?)?);
    }
    Ok((values, all_of(tests)))
}

/// The verdict against the seed paper: `not comparable` unless every data source the
/// claim was measured on is of a kind the seed paper's data have.
fn seed_verdict(
    c: &Claim,
    outcome: Outcome,
    file: &ClaimsFile,
    studies: &[LoadedStudy],
) -> std::result::Result<Option<SeedVerdict>, String> {
    let (Some(_), Some(agrees)) = (&c.seed_paper, c.agrees) else {
        return Ok(None);
    };
    let mut ours: Vec<String> = Vec::new();
    for q in &c.quantities {
        for source in data_sources(q, studies)? {
            if !ours.contains(&source) {
                ours.push(source);
            }
        }
    }
    let kind_of = |name: &str| {
        file.kinds
            .get(name)
            .cloned()
            .ok_or_else(|| format!("data source {name:?} has no kind in [kinds] of {CLAIMS}"))
    };
    let our_kinds: Vec<String> = ours
        .iter()
        .map(|s| kind_of(s))
        .collect::<std::result::Result<_, _>>()?;
    let seed_kinds: Vec<String> = c
        .seed_data
        .iter()
        .map(|s| kind_of(s))
        .collect::<std::result::Result<_, _>>()?;
    let distinct = |kinds: &[String]| {
        let mut kinds = kinds.to_vec();
        kinds.sort();
        kinds.dedup();
        kinds.join("; ")
    };
    let sides = format!(
        "ours: {}; the seed paper's: {}",
        distinct(&our_kinds),
        distinct(&seed_kinds)
    );
    if !our_kinds.iter().all(|k| seed_kinds.contains(k)) {
        return Ok(Some(SeedVerdict {
            verdict: Verdict::NotComparable,
            reason: format!("data of different kinds ({sides})"),
        }));
    }
    let (verdict, why) = match (outcome, agrees) {
        (Outcome::Holds, true) => (
            Verdict::Agrees,
            "the claim holds and states the seed's claim",
        ),
        (Outcome::Holds, false) => (
            Verdict::Contradicts,
            "the claim holds and states the opposite of the seed's claim",
        ),
        (Outcome::Contradicted, true) if c.check != Check::Overlapping => (
            Verdict::Contradicts,
            "the opposite of the claim, which states the seed's claim, holds",
        ),
        (Outcome::Contradicted, _) => (
            Verdict::Inconclusive,
            "the claim is contradicted, which does not state the seed's claim either",
        ),
        (Outcome::Inconclusive, _) => (
            Verdict::Inconclusive,
            "no significant result: absence of evidence, not a contradiction",
        ),
    };
    Ok(Some(SeedVerdict {
        verdict,
        reason: format!("{why} ({sides})"),
    }))
}

/// The comparisons in words.
fn detail(test: &ClaimTest, adjusted: f64) -> String {
    let each: Vec<String> = test
        .comparisons
        .iter()
        .map(|c| {
            let statistic = match (c.t, c.df) {
                (Some(t), Some(df)) => format!("t = {t:.3}, df = {df:.2}, "),
                _ => String::new(),
            };
            format!(
                "{}: difference {:.4}, {statistic}p = {}",
                c.label,
                c.difference,
                p_value(c.p)
            )
        })
        .collect();
    format!(
        "{}; claim p = {}, Holm-adjusted p = {}",
        each.join("; "),
        p_value(test.p),
        p_value(adjusted)
    )
}

/// A p-value in words: four decimals, scientific under 0.001, and 0 as 0 (a difference
/// between constant seeds).
pub fn p_value(p: f64) -> String {
    if p == 0.0 {
        "0".into()
    } else if p < 1e-3 {
        format!("{p:.3e}")
    } else {
        format!("{p:.4}")
    }
}

/// The findings that do not come out as written, as one error naming each with its
/// values, test statistics and adjusted p; `Ok` when every finding does.
pub fn require(outcomes: &[ClaimOutcome]) -> Result<()> {
    let failed: Vec<String> = outcomes
        .iter()
        .filter(|o| !o.passes)
        .map(|o| {
            let values: Vec<String> = o
                .values
                .iter()
                .map(|v| {
                    let seeds: Vec<String> = v.seeds.iter().map(|s| format!("{s:.4}")).collect();
                    format!("{} = {:.4} (seeds {})", v.label, v.value, seeds.join(", "))
                })
                .collect();
            format!(
                "claim {:?} ({}) is written as a finding ({}) but comes out {}: {}; {}",
                o.claim.name,
                o.claim.says,
                stated(o.claim.check).words(o.claim.check),
                o.outcome.words(o.claim.check),
                values.join(", "),
                o.detail
            )
        })
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "{CLAIMS}: {} of {} claims fail:\n{}",
            failed.len(),
            outcomes.len(),
            failed.join("\n")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_claims_significant_alone_are_not_after_holm() {
        // p 0.03 and 0.04 of two claims: Holm makes them 0.06 and 0.06 (0.03 x 2, then the
        // running maximum over 0.04 x 1).
        let d = decide_family(&[("paper", 0.03, true), ("paper", 0.04, true)], 0.05);
        for x in &d {
            assert!((x.adjusted_p - 0.06).abs() < 1e-15, "{d:?}");
            assert_eq!(
                (x.outcome, x.uncorrected),
                (Outcome::Inconclusive, Outcome::Holds)
            );
            assert_eq!(x.family_size, 2);
        }
        // In families of their own, each keeps its p and holds.
        let d = decide_family(&[("a", 0.03, true), ("b", 0.04, false)], 0.05);
        assert_eq!(d[0].outcome, Outcome::Holds);
        assert_eq!(d[1].outcome, Outcome::Contradicted);
    }
}
