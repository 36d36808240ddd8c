//! The tables of the paper, each read from the analyses of one study ([`StudyAnalysis`],
//! computed once); the compute table from the runs' provenance and timings.

use std::collections::BTreeMap;

use polars::prelude::{Column, DataFrame, SortMultipleOptions};

use super::{Format, Table, polars_error};
use crate::analysis::{ModelAnalysis, Ranked, Robustness, StudyAnalysis, TemporalScore};
use crate::artifacts::ModelRuns;
use crate::{Error, Result};

/// One line of `drift models --params`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelListing {
    /// Model key.
    pub key: String,
    /// Family.
    pub family: String,
    /// Input kind (`image`, `tokens`, `embedding`).
    pub input: String,
    /// Architecture in one line (words joined by single spaces).
    pub summary: String,
    /// Trainable parameters.
    pub parameters: u64,
}

/// Parses the output of `drift models --params`: one model a line,
/// `key family input summary… count`, fields separated by whitespace. Blank lines and
/// lines starting with `#` are skipped. Errors name the 1-based line.
pub fn parse_models_listing(text: &str) -> Result<Vec<ModelListing>> {
    let mut out: Vec<ModelListing> = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = trimmed.split_whitespace().collect();
        if words.len() < 4 {
            return Err(Error::Invalid(format!(
                "models listing, line {n}: expected `key family input summary… count`, \
                 got {} field(s): {trimmed:?}",
                words.len()
            )));
        }
        let last = words[words.len() - 1];
        let parameters: u64 = last
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| last.parse().ok())
            .flatten()
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "models listing, line {n}: parameter count {last:?} is not a \
                     non-negative integer (was it written by `drift models --params`?)"
                ))
            })?;
        let key = words[0].to_string();
        if let Some(first) = seen.get(&key) {
            return Err(Error::Invalid(format!(
                "models listing, line {n}: model {key:?} is listed twice (first on line {first})"
            )));
        }
        seen.insert(key.clone(), n);
        out.push(ModelListing {
            key,
            family: words[1].to_string(),
            input: words[2].to_string(),
            summary: words[3..words.len() - 1].join(" "),
            parameters,
        });
    }
    if out.is_empty() {
        return Err(Error::Invalid("models listing: no models".into()));
    }
    Ok(out)
}

/// The models of a study sorted by key: tables list models in key order whatever the
/// order of the study's presets.
fn by_key(study: &StudyAnalysis) -> Vec<&ModelAnalysis> {
    let mut models: Vec<&ModelAnalysis> = study.models.iter().collect();
    models.sort_by(|a, b| a.model.cmp(&b.model));
    models
}

fn text(name: &str, values: Vec<String>) -> Column {
    Column::new(name.into(), values)
}

fn floats(name: &str, values: Vec<Option<f64>>) -> Column {
    Column::new(name.into(), values)
}

fn ints(name: &str, values: Vec<Option<i64>>) -> Column {
    Column::new(name.into(), values)
}

/// `rank` (from `ranking`; null for a model not in it), `model`, then the `ID`, `future`
/// and `decay` columns of `scores` times `scale`.
fn ranked_score_columns(
    scores: &[(&str, Robustness)],
    ranking: &[Ranked],
    scale: f64,
) -> Vec<Column> {
    let rank = |m: &str| ranking.iter().find(|r| r.model == m).map(|r| r.rank as i64);
    let column = |name: &str, value: fn(&Robustness) -> Option<f64>| {
        floats(
            name,
            scores
                .iter()
                .map(|(_, s)| scaled(value(s), scale))
                .collect(),
        )
    };
    vec![
        ints("rank", scores.iter().map(|(m, _)| rank(m)).collect()),
        text("model", scores.iter().map(|(m, _)| m.to_string()).collect()),
        column("ID", |s| s.id),
        column("future", |s| s.future),
        column("decay", |s| s.decay),
    ]
}

fn frame(name: &str, columns: Vec<Column>) -> Result<DataFrame> {
    DataFrame::new_infer_height(columns).map_err(polars_error(name))
}

/// Sorts by `rank` (nulls last), then `model`.
fn by_rank(name: &str, df: DataFrame) -> Result<DataFrame> {
    df.sort(
        ["rank", "model"],
        SortMultipleOptions::default()
            .with_nulls_last(true)
            .with_maintain_order(true)
            .with_multithreaded(false),
    )
    .map_err(polars_error(name))
}

fn scaled(value: Option<f64>, scale: f64) -> Option<f64> {
    value.map(|v| v * scale)
}

/// The model roster: `model`, `family`, `input`, `architecture`, `parameters`, for the
/// study's models in listing order. Every model of the study must be in the listing.
pub fn roster(listing: &[ModelListing], study: &StudyAnalysis) -> Result<Table> {
    let name = "roster";
    for m in by_key(study) {
        if !listing.iter().any(|l| l.key == m.model) {
            return Err(Error::Invalid(format!(
                "table roster: model {:?} is not in the models listing",
                m.model
            )));
        }
    }
    let rows: Vec<&ModelListing> = listing
        .iter()
        .filter(|l| study.model(&l.key).is_some())
        .collect();
    let df = frame(
        name,
        vec![
            text("model", rows.iter().map(|l| l.key.clone()).collect()),
            text("family", rows.iter().map(|l| l.family.clone()).collect()),
            text("input", rows.iter().map(|l| l.input.clone()).collect()),
            text(
                "architecture",
                rows.iter().map(|l| l.summary.clone()).collect(),
            ),
            ints(
                "parameters",
                rows.iter()
                    .map(|l| i64::try_from(l.parameters).ok())
                    .collect(),
            ),
        ],
    )?;
    Ok(Table {
        name: name.into(),
        caption: "Models: family, input, architecture and trainable parameters.".into(),
        frame: df,
        formats: vec![
            Format::Text,
            Format::Text,
            Format::Text,
            Format::Text,
            Format::Grouped,
        ],
    })
}

/// Robustness per model: `rank`, `model`, `family`, `seeds`, `ID`, `future`, `decay` on
/// the seed-mean matrix, ranked by future score.
pub fn robustness(study: &StudyAnalysis) -> Result<Table> {
    let name = "robustness";
    let models = by_key(study);
    let scores: Vec<(&str, Robustness)> = models
        .iter()
        .map(|m| (m.model.as_str(), m.overall))
        .collect();
    let mut columns = ranked_score_columns(&scores, &study.by_future, study.metric.display_scale());
    columns.insert(
        2,
        text("family", models.iter().map(|m| m.family.clone()).collect()),
    );
    columns.insert(
        3,
        ints(
            "seeds",
            models.iter().map(|m| Some(m.seeds.len() as i64)).collect(),
        ),
    );
    let df = frame(name, columns)?;
    let d = study.metric.display_decimals();
    Ok(Table {
        name: name.into(),
        caption: format!(
            "Robustness of each model ({}, mean over seeds): ID, future and decay \
             (positive = worse on the future), ranked by future score.",
            study.metric.display_unit()
        ),
        frame: by_rank(name, df)?,
        formats: vec![
            Format::Integer,
            Format::Text,
            Format::Text,
            Format::Integer,
            Format::Fixed(d),
            Format::Fixed(d),
            Format::Fixed(d),
        ],
    })
}

/// One table per evenly spread cutoff ([`StudyAnalysis::spread`]), named `cutoff-1` ..
/// `cutoff-4` in timeline order: `rank`, `model`, `ID`, `future`, `decay` at that cutoff.
pub fn cutoff_tables(study: &StudyAnalysis) -> Result<Vec<Table>> {
    let scale = study.metric.display_scale();
    let d = study.metric.display_decimals();
    let models = by_key(study);
    let mut out = Vec::new();
    for (t, at) in study.cutoff_rankings.iter().enumerate() {
        let name = format!("cutoff-{}", t + 1);
        let scores: Vec<(&str, Robustness)> = models
            .iter()
            .map(|m| (m.model.as_str(), m.per_cutoff[at.cutoff].scores))
            .collect();
        let df = frame(&name, ranked_score_columns(&scores, &at.by_future, scale))?;
        out.push(Table {
            caption: format!(
                "Models trained through {} ({}, mean over seeds): ID, future and decay, \
                 ranked by future score.",
                study.slices[at.cutoff],
                study.metric.display_unit()
            ),
            frame: by_rank(&name, df)?,
            name,
            formats: vec![
                Format::Integer,
                Format::Text,
                Format::Fixed(d),
                Format::Fixed(d),
                Format::Fixed(d),
            ],
        });
    }
    Ok(out)
}

/// Family averages over the evenly spread cutoffs: `family`, `cutoff` (the slice label,
/// or `mean` for the mean over the cutoffs), `models`, `ID`, `future`, `decay`.
pub fn family_table(study: &StudyAnalysis) -> Result<Table> {
    let name = "families";
    let scale = study.metric.display_scale();
    let d = study.metric.display_decimals();
    let averages = &study.families;
    let df = frame(
        name,
        vec![
            text(
                "family",
                averages.iter().map(|a| a.family.clone()).collect(),
            ),
            text(
                "cutoff",
                averages
                    .iter()
                    .map(|a| match a.cutoff {
                        Some(c) => study.slices[c].clone(),
                        None => "mean".into(),
                    })
                    .collect(),
            ),
            ints(
                "models",
                averages.iter().map(|a| Some(a.models as i64)).collect(),
            ),
            floats(
                "ID",
                averages
                    .iter()
                    .map(|a| scaled(a.scores.id, scale))
                    .collect(),
            ),
            floats(
                "future",
                averages
                    .iter()
                    .map(|a| scaled(a.scores.future, scale))
                    .collect(),
            ),
            floats(
                "decay",
                averages
                    .iter()
                    .map(|a| scaled(a.scores.decay, scale))
                    .collect(),
            ),
        ],
    )?;
    let labels: Vec<&str> = study
        .spread
        .iter()
        .map(|&c| study.slices[c].as_str())
        .collect();
    Ok(Table {
        name: name.into(),
        caption: format!(
            "Family averages ({}) at the cutoffs {} and their mean.",
            study.metric.display_unit(),
            labels.join(", ")
        ),
        frame: df,
        formats: vec![
            Format::Text,
            Format::Text,
            Format::Integer,
            Format::Fixed(d),
            Format::Fixed(d),
            Format::Fixed(d),
        ],
    })
}

/// The Agarwal & Nenkova scores per model (by key), four rows each in score order:
/// `model`, `score`, `value` (marked by `p`), `p`, `N`, `min`, `max` (over seeds); the
/// score names are [`crate::analysis::SCORES`].
pub fn temporal_effects_table(study: &StudyAnalysis) -> Result<Table> {
    let name = "temporal-effects";
    let scale = study.metric.display_scale();
    let d = study.metric.display_decimals();
    let mut rows: Vec<(&str, &str, TemporalScore)> = Vec::new();
    for m in by_key(study) {
        for (label, score) in m.effects.named() {
            rows.push((m.model.as_str(), label, score));
        }
    }
    let df = frame(
        name,
        vec![
            text("model", rows.iter().map(|r| r.0.to_string()).collect()),
            text("score", rows.iter().map(|r| r.1.to_string()).collect()),
            floats(
                "value",
                rows.iter().map(|r| scaled(r.2.score, scale)).collect(),
            ),
            floats("p", rows.iter().map(|r| r.2.p_value).collect()),
            ints("N", rows.iter().map(|r| Some(r.2.n as i64)).collect()),
            floats("min", rows.iter().map(|r| scaled(r.2.min, scale)).collect()),
            floats("max", rows.iter().map(|r| scaled(r.2.max, scale)).collect()),
        ],
    )?;
    Ok(Table {
        name: name.into(),
        caption: format!(
            "Deterioration and adaptation scores of Agarwal & Nenkova ({}; mean difference \
             on the seed-mean matrix, positive = the metric went up), two-sided Wilcoxon \
             signed-rank p-value over N differences (* p < 0.05, ** p < 0.01), and the \
             min and max of the per-seed scores.",
            study.metric.display_unit()
        ),
        frame: df,
        formats: vec![
            Format::Text,
            Format::Text,
            Format::Marked {
                decimals: d,
                p_value: "p".into(),
            },
            Format::PValue,
            Format::Integer,
            Format::Fixed(d),
            Format::Fixed(d),
        ],
    })
}

/// Compute per model (by key), from provenance and `timing.json`: `model`, `device` (the
/// distinct devices of its seeds, sorted, joined by `, `), `seeds`, `timed` (seeds with a
/// `timing.json`), `train s`, `eval s` (sums over the timed seeds; null when none is).
pub fn compute_table(runs: &[ModelRuns]) -> Result<Table> {
    let name = "compute";
    if runs.is_empty() {
        return Err(Error::Invalid("table compute: no model runs".into()));
    }
    let mut sorted: Vec<&ModelRuns> = runs.iter().collect();
    sorted.sort_by(|a, b| a.model.cmp(&b.model));
    let mut devices = Vec::new();
    let (mut train, mut eval, mut timed) = (Vec::new(), Vec::new(), Vec::new());
    for r in &sorted {
        let mut ds: Vec<&str> = r.provenance.iter().map(|p| p.device.as_str()).collect();
        ds.sort_unstable();
        ds.dedup();
        devices.push(ds.join(", "));
        let times: Vec<_> = r.timing.iter().flatten().collect();
        timed.push(Some(times.len() as i64));
        let sum = |f: fn(&crate::artifacts::WallTimes) -> f64| {
            (!times.is_empty()).then(|| times.iter().map(|t| f(t)).sum::<f64>())
        };
        train.push(sum(|t| t.train));
        eval.push(sum(|t| t.eval));
    }
    let hours = |v: &[Option<f64>]| v.iter().flatten().sum::<f64>() / 3600.0;
    let caption = format!(
        "Compute: wall-clock seconds of training (all cutoffs) and evaluation (all cells), \
         summed over the seeds that recorded them; in all {:.2} h training and {:.2} h \
         evaluation.",
        hours(&train),
        hours(&eval)
    );
    let df = frame(
        name,
        vec![
            text("model", sorted.iter().map(|r| r.model.clone()).collect()),
            text("device", devices),
            ints(
                "seeds",
                sorted
                    .iter()
                    .map(|r| Some(r.provenance.len() as i64))
                    .collect(),
            ),
            ints("timed", timed),
            floats("train s", train),
            floats("eval s", eval),
        ],
    )?;
    Ok(Table {
        name: name.into(),
        caption,
        frame: df,
        formats: vec![
            Format::Text,
            Format::Text,
            Format::Integer,
            Format::Integer,
            Format::Fixed(1),
            Format::Fixed(1),
        ],
    })
}
