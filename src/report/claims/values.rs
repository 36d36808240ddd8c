//! A claim's quantities read off the studies' analyses: the value the paper quotes and
//! the per-seed values its test compares.

use serde::Serialize;

use super::file::{Quantity, Stat};
use crate::analysis::{
    DecayDefinitions, ModelAnalysis, Robustness, SeedScores, StudyAnalysis, TemporalScore,
};
use crate::metrics::Direction;
use crate::report::study::LoadedStudy;

/// A quantity's value as the claim's test saw it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Value {
    /// In words: `drift-concept: cohort decay`.
    pub label: String,
    /// The mean of `seeds`, which the test compares (analysis scale); a score's value on the
    /// seed-mean grid. It can differ from the tables' value of the same statistic, which
    /// is that of the seed-mean grid, where a seed's row is left out (a collapsed
    /// checkpoint): there the other seeds fill the row of the mean.
    pub value: f64,
    /// The same on the paper's display scale (×100 for metrics in `[0, 1]`).
    pub shown: f64,
    /// That display scale ([`crate::Metric::display_scale`] of the study's metric).
    pub scale: f64,
    /// The value of each seed on its own (analysis scale), in seed order: what the t-tests
    /// compare. Empty for the Agarwal & Nenkova scores.
    pub seeds: Vec<f64>,
    /// The smallest and largest of `seeds`.
    pub seed_range: Option<(f64, f64)>,
    /// The Wilcoxon p-value (Agarwal & Nenkova scores).
    pub p_value: Option<f64>,
}

/// The quantity's [`Value`], or what in the file does not match the studies.
pub fn value(q: &Quantity, studies: &[LoadedStudy]) -> Result<Value, String> {
    let study = find(q, studies)?;
    let a: &StudyAnalysis = &study.analysis;
    let direction = a.metric.direction();
    let missing = |what: &str| format!("{}: {what} has no {}", q.study, q.stat.name());
    let made = |label: String, point: f64, seeds: Vec<f64>, p_value| {
        let value = if seeds.is_empty() {
            point
        } else {
            mean(&seeds)
        };
        Value {
            label,
            value,
            shown: value * a.metric.display_scale(),
            scale: a.metric.display_scale(),
            seed_range: range(&seeds),
            seeds,
            p_value,
        }
    };
    if let Some(key) = &q.model {
        let m = a
            .model(key)
            .ok_or_else(|| format!("{}: no model {key:?}", q.study))?;
        let label = format!("{}: {key} {}", q.study, q.stat.name());
        if let Some(score) = score(q.stat, m) {
            let v = score.score.ok_or_else(|| missing(key))?;
            return Ok(made(label, v, Vec::new(), score.p_value));
        }
        let (v, seeds) = if q.stat.margin_like() {
            margin(q.stat, m, a, direction)
                .ok_or_else(|| format!("{}: no counting baseline to compare with", q.study))?
        } else {
            (
                stat_of(q.stat, &m.overall, &m.decay),
                per_seed(q.stat, &m.per_seed),
            )
        };
        let v = v.ok_or_else(|| missing(key))?;
        return Ok(made(label, v, seeds, None));
    }
    if q.stat.score_like() || q.stat.margin_like() {
        return Err(format!(
            "{}: {} is a per-model statistic; name a model",
            q.study,
            q.stat.name()
        ));
    }
    if let Some(family) = &q.family {
        let members: Vec<&ModelAnalysis> = a
            .models
            .iter()
            .filter(|m| !m.baseline && &m.family == family)
            .collect();
        if members.is_empty() {
            return Err(format!(
                "{}: no trained model of family {family:?}",
                q.study
            ));
        }
        let values: Vec<f64> = members
            .iter()
            .map(|m| stat_of(q.stat, &m.overall, &m.decay))
            .collect::<Option<_>>()
            .ok_or_else(|| missing(&format!("a model of family {family}")))?;
        // Seed s of the family: the mean of its members' seed-s values (seeds every member
        // has, so each replication is averaged over the same models).
        let seeds: Vec<f64> = members[0]
            .per_seed
            .iter()
            .filter_map(|first| {
                let at_seed: Vec<f64> = members
                    .iter()
                    .map(|m| {
                        let s = m.per_seed.iter().find(|s| s.seed == first.seed)?;
                        stat_of(q.stat, &s.overall, &s.decay)
                    })
                    .collect::<Option<_>>()?;
                Some(at_seed.iter().sum::<f64>() / at_seed.len() as f64)
            })
            .collect();
        let label = format!("{}: {family} family {}", q.study, q.stat.name());
        return Ok(made(label, mean(&values), seeds, None));
    }
    let v = stat_of(q.stat, &a.cohort_overall, &a.cohort_decay)
        .ok_or_else(|| missing("the cohort mean"))?;
    Ok(made(
        format!("{}: cohort {}", q.study, q.stat.name()),
        v,
        per_seed(q.stat, &a.cohort_per_seed),
        None,
    ))
}

/// The names of the data sources the quantity's study was measured on, sorted and
/// distinct (from its runs' provenance).
pub fn data_sources(q: &Quantity, studies: &[LoadedStudy]) -> Result<Vec<String>, String> {
    let study = find(q, studies)?;
    let mut names: Vec<String> = study
        .runs
        .iter()
        .flat_map(|r| r.provenance.iter().map(|p| p.data.name.clone()))
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

fn find<'a>(q: &Quantity, studies: &'a [LoadedStudy]) -> Result<&'a LoadedStudy, String> {
    studies
        .iter()
        .find(|s| s.spec.name == q.study)
        .ok_or_else(|| format!("no study {:?} in report/studies.toml", q.study))
}

fn score(stat: Stat, m: &ModelAnalysis) -> Option<&TemporalScore> {
    let e = &m.effects;
    match stat {
        Stat::DeteriorationConsecutive => Some(&e.deterioration_consecutive),
        Stat::DeteriorationAnchor => Some(&e.deterioration_anchor),
        Stat::AdaptationConsecutive => Some(&e.adaptation_consecutive),
        Stat::AdaptationAnchor => Some(&e.adaptation_anchor),
        _ => None,
    }
}

/// The statistic of one grid (a seed's, or a seed mean) whose ID / future / decay are `r`
/// and whose decay definitions are `d`.
fn stat_of(stat: Stat, r: &Robustness, d: &DecayDefinitions) -> Option<f64> {
    match stat {
        Stat::Id | Stat::MarginId => r.id,
        Stat::Future | Stat::MarginFuture => r.future,
        Stat::Decay | Stat::MarginDecay => d.pooled,
        Stat::DecayMatched => d.row_matched,
        Stat::Retention => d.retention,
        _ => None,
    }
}

fn per_seed(stat: Stat, seeds: &[SeedScores]) -> Vec<f64> {
    seeds
        .iter()
        .filter_map(|s| stat_of(stat, &s.overall, &s.decay))
        .collect()
}

/// A model's lead over the study's baseline, oriented so positive is better: on the
/// seed-mean grids, and per seed against the baseline's seed-mean value (a counting
/// baseline has no initialisation to vary).
fn margin(
    stat: Stat,
    m: &ModelAnalysis,
    a: &StudyAnalysis,
    direction: Direction,
) -> Option<(Option<f64>, Vec<f64>)> {
    let lead = m.margin?;
    let base = a.models.iter().find(|b| b.baseline)?;
    let base_value = stat_of(stat, &base.overall, &base.decay);
    let oriented = |own: f64, base: f64| match (stat, direction) {
        (Stat::MarginDecay, _) => base - own,
        (_, Direction::HigherIsBetter) => own - base,
        (_, Direction::LowerIsBetter) => base - own,
    };
    let seeds = match base_value {
        Some(b) => per_seed(stat, &m.per_seed)
            .into_iter()
            .map(|v| oriented(v, b))
            .collect(),
        None => Vec::new(),
    };
    let point = match stat {
        Stat::MarginId => lead.id,
        Stat::MarginFuture => lead.future,
        _ => lead.decay,
    };
    Some((point, seeds))
}

fn range(values: &[f64]) -> Option<(f64, f64)> {
    let first = *values.first()?;
    Some(
        values
            .iter()
            .fold((first, first), |(lo, hi), &v| (lo.min(v), hi.max(v))),
    )
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}
