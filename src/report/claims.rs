//! The findings' claims (`report/claims.toml`): every qualitative sentence of the paper's
//! findings ("concept drift costs most", "the CNN decays fastest", "the two are tied") is
//! a named check over the studies' analyses, evaluated by `build-report` after the
//! studies load. A claim that no longer holds stops the build with an error naming the
//! claim and the numbers it compared; the paper's text quotes the values of the claims it
//! makes, and an appendix table lists every claim, its values and its verdict.
//!
//! # The file
//!
//! ```toml
//! [[claims]]
//! name = "concept-costs-most"          # lower-case letters, digits and '-'; unique
//! says = "Concept drift costs the cohort more than covariate or label drift."
//! check = "largest"
//! quantities = [
//!   { study = "drift-concept", stat = "decay" },
//!   { study = "drift-covariate", stat = "decay" },
//!   { study = "drift-label", stat = "decay" },
//! ]
//! ```
//!
//! A quantity is one number of one study: `stat` of the cohort mean (no `model` or
//! `family`), of one model's seed-mean matrix (`model`), or the mean of it over a family's
//! trained models (`family`). Stats: `id`, `future`, `decay` ([`crate::analysis::Robustness`]),
//! `margin-id`, `margin-future`, `margin-decay` (a model's lead over the study's counting
//! baseline, positive = better than the baseline), and the four Agarwal & Nenkova scores
//! `deterioration-consecutive`, `deterioration-anchor`, `adaptation-consecutive`,
//! `adaptation-anchor` (models only).
//!
//! Checks:
//! - `largest` / `smallest`: the first quantity is larger (smaller) than every other one,
//!   by more than `margin` (default 0);
//! - `above` / `below`: every quantity is above (below) `value`;
//! - `separated`: the first model quantity's range over the seeds overlaps none of the
//!   others' (the seeds order it against each); `overlapping`: it overlaps every other's
//!   (a tie the text must not order); for `id`, `future` and `decay`;
//! - `significant`: every quantity is an Agarwal & Nenkova score whose Wilcoxon p-value is
//!   below 0.05.
//!
//! Values are compared as the analyses hold them (metrics in `[0, 1]`, not ×100).
//!
//! A claim that tests one of the reproduced paper's claims names it (`seed_paper`, in
//! words) and says whether, holding, it agrees with it (`agrees`); the paper tabulates
//! those.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::analysis::{ModelAnalysis, Robustness, Spread, StudyAnalysis, TemporalScore};
use crate::report::study::LoadedStudy;
use crate::{Error, Result};

/// The claims file, relative to the repository root.
pub const CLAIMS: &str = "report/claims.toml";

/// The p-value under which `significant` holds.
pub const SIGNIFICANCE: f64 = 0.05;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClaimsFile {
    claims: Vec<Claim>,
}

/// One claim as written in the file.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// Its name, which the paper and errors use.
    pub name: String,
    /// The sentence it backs.
    pub says: String,
    /// The check.
    pub check: Check,
    /// What it compares.
    pub quantities: Vec<Quantity>,
    /// `largest` / `smallest`: the lead the first quantity needs (default 0).
    #[serde(default)]
    pub margin: f64,
    /// `above` / `below`: the bound.
    pub value: Option<f64>,
    /// The claim of the reproduced paper this one tests, in words, for the paper's table
    /// "claim of the seed paper | our finding | agrees?".
    pub seed_paper: Option<String>,
    /// Whether this claim, holding, agrees with `seed_paper` (required with it).
    pub agrees: Option<bool>,
}

/// How a claim's quantities are compared (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// The first quantity exceeds every other.
    Largest,
    /// The first quantity is under every other.
    Smallest,
    /// Every quantity exceeds `value`.
    Above,
    /// Every quantity is under `value`.
    Below,
    /// The first model's seed range overlaps no other's.
    Separated,
    /// The first model's seed range overlaps every other's.
    Overlapping,
    /// Every Agarwal & Nenkova score has p < 0.05.
    Significant,
}

/// One number of one study.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Quantity {
    /// The study (its `name` in `report/studies.toml`).
    pub study: String,
    /// A model of the study (its name in the analyses).
    pub model: Option<String>,
    /// A family of the study.
    pub family: Option<String>,
    /// The statistic.
    pub stat: Stat,
}

/// The statistics a quantity can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stat {
    /// Mean of the diagonal.
    Id,
    /// Mean above the diagonal.
    Future,
    /// ID minus future, oriented so positive is worse on the future.
    Decay,
    /// ID lead over the baseline.
    MarginId,
    /// Future lead over the baseline.
    MarginFuture,
    /// Decay lead over the baseline (the baseline's decay minus this one's).
    MarginDecay,
    /// `M_i^j - M_i^{j-1}`.
    DeteriorationConsecutive,
    /// `M_i^j - M_i^{i+1}`.
    DeteriorationAnchor,
    /// `M_i^j - M_{i-1}^j`.
    AdaptationConsecutive,
    /// `M_i^j - M_s^j`.
    AdaptationAnchor,
}

impl Check {
    /// The check's name as the file writes it.
    pub fn name(self) -> &'static str {
        match self {
            Check::Largest => "largest",
            Check::Smallest => "smallest",
            Check::Above => "above",
            Check::Below => "below",
            Check::Separated => "separated",
            Check::Overlapping => "overlapping",
            Check::Significant => "significant",
        }
    }
}

impl Stat {
    fn score_like(self) -> bool {
        matches!(
            self,
            Stat::DeteriorationConsecutive
                | Stat::DeteriorationAnchor
                | Stat::AdaptationConsecutive
                | Stat::AdaptationAnchor
        )
    }

    fn margin_like(self) -> bool {
        matches!(
            self,
            Stat::MarginId | Stat::MarginFuture | Stat::MarginDecay
        )
    }

    fn name(self) -> &'static str {
        match self {
            Stat::Id => "ID",
            Stat::Future => "future",
            Stat::Decay => "decay",
            Stat::MarginId => "ID margin over the baseline",
            Stat::MarginFuture => "future margin over the baseline",
            Stat::MarginDecay => "decay margin over the baseline",
            Stat::DeteriorationConsecutive => "deterioration (consecutive)",
            Stat::DeteriorationAnchor => "deterioration (anchor)",
            Stat::AdaptationConsecutive => "adaptation (consecutive)",
            Stat::AdaptationAnchor => "adaptation (anchor)",
        }
    }

    fn of(self, r: &Robustness) -> Option<f64> {
        match self {
            Stat::Id | Stat::MarginId => r.id,
            Stat::Future | Stat::MarginFuture => r.future,
            Stat::Decay | Stat::MarginDecay => r.decay,
            _ => None,
        }
    }

    fn score(self, m: &ModelAnalysis) -> Option<&TemporalScore> {
        let e = &m.effects;
        match self {
            Stat::DeteriorationConsecutive => Some(&e.deterioration_consecutive),
            Stat::DeteriorationAnchor => Some(&e.deterioration_anchor),
            Stat::AdaptationConsecutive => Some(&e.adaptation_consecutive),
            Stat::AdaptationAnchor => Some(&e.adaptation_anchor),
            _ => None,
        }
    }

    fn spread(self, m: &ModelAnalysis) -> Option<Spread> {
        match self {
            Stat::Id => m.spread.id,
            Stat::Future => m.spread.future,
            Stat::Decay => m.spread.decay,
            _ => None,
        }
    }
}

/// A quantity's value as the check saw it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Value {
    /// In words: `drift-concept: cohort decay`.
    pub label: String,
    /// The value (analysis scale).
    pub value: f64,
    /// The same on the paper's display scale (×100 for metrics in `[0, 1]`).
    pub shown: f64,
    /// That display scale ([`crate::Metric::display_scale`] of the study's metric).
    pub scale: f64,
    /// The range over seeds (model quantities of `id`, `future`, `decay`).
    pub seed_range: Option<(f64, f64)>,
    /// The Wilcoxon p-value (Agarwal & Nenkova scores).
    pub p_value: Option<f64>,
}

/// A claim with its values and verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClaimOutcome {
    /// The claim.
    pub claim: Claim,
    /// One per quantity, in order.
    pub values: Vec<Value>,
    /// Whether it holds.
    pub holds: bool,
    /// The comparison in words, with the numbers.
    pub detail: String,
}

/// Reads and checks the claims file's form (names, checks and their arguments).
pub fn read(path: &Path) -> Result<Vec<Claim>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let file: ClaimsFile = toml::from_str(&text).map_err(|e| Error::Preset {
        path: path.to_path_buf(),
        message: e.message().to_string(),
    })?;
    let invalid = |i: usize, message: String| Error::Preset {
        path: path.to_path_buf(),
        message: format!("claims[{i}]: {message}"),
    };
    for (i, c) in file.claims.iter().enumerate() {
        if !crate::report::study::is_name(&c.name)
            || file.claims[..i].iter().any(|o| o.name == c.name)
        {
            return Err(invalid(
                i,
                format!(
                    "name {:?} must be unique, lower-case letters, digits and '-'",
                    c.name
                ),
            ));
        }
        let n = c.quantities.len();
        let problem = match c.check {
            Check::Largest | Check::Smallest if n < 2 => Some("needs at least two quantities"),
            Check::Above | Check::Below if c.value.is_none() => Some("needs a value"),
            Check::Above | Check::Below | Check::Significant if n == 0 => {
                Some("needs at least one quantity")
            }
            Check::Separated | Check::Overlapping if n < 2 => Some("needs at least two quantities"),
            _ => None,
        };
        if let Some(p) = problem {
            return Err(invalid(i, format!("check {:?} {p}", c.check)));
        }
        if c.seed_paper.is_some() != c.agrees.is_some() {
            return Err(invalid(
                i,
                "seed_paper and agrees go together: the seed paper's claim and whether \
                 this one agrees with it"
                    .into(),
            ));
        }
        for (j, q) in c.quantities.iter().enumerate() {
            if q.model.is_some() && q.family.is_some() {
                return Err(invalid(
                    i,
                    format!("quantities[{j}]: name a model or a family, not both"),
                ));
            }
        }
    }
    Ok(file.claims)
}

/// Evaluates every claim over `studies`. A claim naming a study, model, family or
/// statistic that is not there is an error (a mistake in the file, not a finding).
pub fn evaluate(claims: &[Claim], studies: &[LoadedStudy]) -> Result<Vec<ClaimOutcome>> {
    claims.iter().map(|c| evaluate_one(c, studies)).collect()
}

/// The claims that do not hold, as one error naming each with its numbers; `Ok` when all
/// hold.
pub fn require(outcomes: &[ClaimOutcome]) -> Result<()> {
    let failed: Vec<String> = outcomes
        .iter()
        .filter(|o| !o.holds)
        .map(|o| {
            format!(
                "claim {:?} ({}) no longer holds: {}",
                o.claim.name, o.claim.says, o.detail
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

fn evaluate_one(claim: &Claim, studies: &[LoadedStudy]) -> Result<ClaimOutcome> {
    let in_claim = |e: String| Error::Invalid(format!("{CLAIMS}: claim {:?}: {e}", claim.name));
    let values: Vec<Value> = claim
        .quantities
        .iter()
        .map(|q| value(q, studies).map_err(in_claim))
        .collect::<Result<_>>()?;
    let list = |vs: &[Value]| {
        vs.iter()
            .map(|v| format!("{} = {:.4}", v.label, v.value))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (holds, detail) = match claim.check {
        Check::Largest | Check::Smallest => {
            let first = values[0].value;
            let sign = if claim.check == Check::Largest {
                1.0
            } else {
                -1.0
            };
            let holds = values[1..]
                .iter()
                .all(|v| sign * (first - v.value) > claim.margin);
            let word = if claim.check == Check::Largest {
                "largest"
            } else {
                "smallest"
            };
            let margin = if claim.margin > 0.0 {
                format!(" by more than {}", claim.margin)
            } else {
                String::new()
            };
            (
                holds,
                format!("the first must be the {word}{margin}: {}", list(&values)),
            )
        }
        Check::Above | Check::Below => {
            let bound = claim.value.expect("checked when read");
            let above = claim.check == Check::Above;
            let holds = values.iter().all(|v| {
                if above {
                    v.value > bound
                } else {
                    v.value < bound
                }
            });
            let word = if above { "above" } else { "below" };
            (
                holds,
                format!("each must be {word} {bound}: {}", list(&values)),
            )
        }
        Check::Separated | Check::Overlapping => {
            let ranges: Vec<(f64, f64)> = values
                .iter()
                .map(|v| {
                    v.seed_range.ok_or_else(|| {
                        in_claim(format!(
                            "{}: has no range over seeds (a model's id, future or decay has)",
                            v.label
                        ))
                    })
                })
                .collect::<Result<_>>()?;
            let (a0, a1) = ranges[0];
            let overlaps: Vec<bool> = ranges[1..]
                .iter()
                .map(|&(b0, b1)| a0 <= b1 && b0 <= a1)
                .collect();
            let holds = if claim.check == Check::Overlapping {
                overlaps.iter().all(|&o| o)
            } else {
                overlaps.iter().all(|&o| !o)
            };
            let want = if claim.check == Check::Overlapping {
                "overlap every other's"
            } else {
                "overlap no other's"
            };
            let listed: Vec<String> = values
                .iter()
                .zip(&ranges)
                .map(|(v, (lo, hi))| format!("{} in [{lo:.4}, {hi:.4}]", v.label))
                .collect();
            (
                holds,
                format!("the first seed range must {want}: {}", listed.join(", ")),
            )
        }
        Check::Significant => {
            let ps: Vec<f64> = values
                .iter()
                .map(|v| {
                    v.p_value
                        .ok_or_else(|| in_claim(format!("{}: not a score with a p-value", v.label)))
                })
                .collect::<Result<_>>()?;
            let holds = ps.iter().all(|&p| p < SIGNIFICANCE);
            let listed: Vec<String> = values
                .iter()
                .zip(&ps)
                .map(|(v, p)| format!("{} = {:.4} (p = {p:.4})", v.label, v.value))
                .collect();
            (
                holds,
                format!("each p must be below {SIGNIFICANCE}: {}", listed.join(", ")),
            )
        }
    };
    Ok(ClaimOutcome {
        claim: claim.clone(),
        values,
        holds,
        detail,
    })
}

fn value(q: &Quantity, studies: &[LoadedStudy]) -> std::result::Result<Value, String> {
    let study = studies
        .iter()
        .find(|s| s.spec.name == q.study)
        .ok_or_else(|| format!("no study {:?} in report/studies.toml", q.study))?;
    let a: &StudyAnalysis = &study.analysis;
    let scale = a.metric.display_scale();
    let missing = |what: &str| format!("{}: {what} has no {}", q.study, q.stat.name());
    let made = |label: String, value: f64, seed_range, p_value| Value {
        label,
        value,
        shown: value * scale,
        scale,
        seed_range,
        p_value,
    };
    if let Some(key) = &q.model {
        let m = a
            .model(key)
            .ok_or_else(|| format!("{}: no model {key:?}", q.study))?;
        let label = format!("{}: {key} {}", q.study, q.stat.name());
        if let Some(score) = q.stat.score(m) {
            let v = score.score.ok_or_else(|| missing(key))?;
            return Ok(made(label, v, None, score.p_value));
        }
        let robustness = match q.stat {
            Stat::MarginId | Stat::MarginFuture | Stat::MarginDecay => m
                .margin
                .ok_or_else(|| format!("{}: no counting baseline to compare with", q.study))?,
            _ => m.overall,
        };
        let v = q.stat.of(&robustness).ok_or_else(|| missing(key))?;
        let range = q.stat.spread(m).map(|s| (s.min, s.max));
        return Ok(made(label, v, range, None));
    }
    if q.stat.score_like() || q.stat.margin_like() {
        return Err(format!(
            "{}: {} is a per-model statistic; name a model",
            q.study,
            q.stat.name()
        ));
    }
    if let Some(family) = &q.family {
        let members: Vec<f64> = a
            .models
            .iter()
            .filter(|m| !m.baseline && &m.family == family)
            .map(|m| q.stat.of(&m.overall))
            .collect::<Option<_>>()
            .ok_or_else(|| missing(&format!("a model of family {family}")))?;
        if members.is_empty() {
            return Err(format!(
                "{}: no trained model of family {family:?}",
                q.study
            ));
        }
        let v = members.iter().sum::<f64>() / members.len() as f64;
        let label = format!("{}: {family} family {}", q.study, q.stat.name());
        return Ok(made(label, v, None, None));
    }
    let v = q
        .stat
        .of(&a.cohort_overall)
        .ok_or_else(|| missing("the cohort mean"))?;
    Ok(made(
        format!("{}: cohort {}", q.study, q.stat.name()),
        v,
        None,
        None,
    ))
}
