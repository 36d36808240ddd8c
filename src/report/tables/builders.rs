//! The tables of the paper, each built from the analyses of one study.

use std::collections::BTreeMap;

use polars::prelude::{Column, DataFrame, SortMultipleOptions};

use super::{CUTOFFS, Format, Table, polars_error};
use crate::analysis::{
    ModelCutoffs, Robustness, TemporalScore, default_family, family_averages, per_cutoff,
    rank_by_future, robustness as robustness_of, spread_cutoffs, temporal_effects,
};
use crate::artifacts::ModelRuns;
use crate::metrics::{Direction, Metric};
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

/// The family of a model: the registry's, else [`default_family`] (key without its size
/// suffix).
pub fn registry_family(model: &str) -> String {
    crate::models::info(model)
        .map(|i| i.family.to_string())
        .unwrap_or_else(|_| default_family(model).to_string())
}

/// One study, checked: models sorted by key, each once, all sharing slices and metric
/// (a study may span several presets).
struct Study<'a> {
    runs: Vec<&'a ModelRuns>,
    slices: &'a [String],
    metric: Metric,
    direction: Direction,
}

fn study(runs: &[ModelRuns]) -> Result<Study<'_>> {
    let first = runs
        .first()
        .ok_or_else(|| Error::Invalid("tables: no model runs".into()))?;
    let mut sorted: Vec<&ModelRuns> = runs.iter().collect();
    sorted.sort_by(|a, b| a.model.cmp(&b.model));
    for pair in sorted.windows(2) {
        if pair[0].model == pair[1].model {
            return Err(Error::Invalid(format!(
                "tables: model {:?} appears twice ({}/{} and {}/{})",
                pair[0].model, pair[0].preset, pair[0].model, pair[1].preset, pair[1].model
            )));
        }
    }
    for r in &sorted {
        if r.matrix.slices() != first.matrix.slices() || r.matrix.metric() != first.matrix.metric()
        {
            return Err(Error::Invalid(format!(
                "tables: {}/{} has other slices or another metric than {}/{}",
                r.preset, r.model, first.preset, first.model
            )));
        }
    }
    Ok(Study {
        runs: sorted,
        slices: first.matrix.slices(),
        metric: first.matrix.metric(),
        direction: first.matrix.direction(),
    })
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

/// The `ID`, `future` and `decay` columns of `scores`, times `scale`.
fn score_columns(scores: &[(&str, Robustness)], scale: f64) -> [Column; 3] {
    let column = |name: &str, value: fn(&Robustness) -> Option<f64>| {
        floats(
            name,
            scores
                .iter()
                .map(|(_, s)| scaled(value(s), scale))
                .collect(),
        )
    };
    [
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

/// Ranks `(model, scores)` by future score: 1-based ranks, `None` without a future score.
fn ranks(entries: &[(&str, Robustness)], direction: Direction) -> BTreeMap<String, i64> {
    rank_by_future(entries, direction)
        .into_iter()
        .map(|r| (r.model, r.rank as i64))
        .collect()
}

/// The model roster: `model`, `family`, `input`, `architecture`, `parameters`, for the
/// study's models in listing order. Every model of the study must be in the listing.
pub fn roster(listing: &[ModelListing], runs: &[ModelRuns]) -> Result<Table> {
    let name = "roster";
    let study = study(runs)?;
    for r in &study.runs {
        if !listing.iter().any(|l| l.key == r.model) {
            return Err(Error::Invalid(format!(
                "table roster: model {:?} is not in the models listing",
                r.model
            )));
        }
    }
    let rows: Vec<&ModelListing> = listing
        .iter()
        .filter(|l| study.runs.iter().any(|r| r.model == l.key))
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
pub fn robustness(runs: &[ModelRuns], family: &dyn Fn(&str) -> String) -> Result<Table> {
    let name = "robustness";
    let study = study(runs)?;
    let scale = study.metric.display_scale();
    let scores: Vec<(&str, Robustness)> = study
        .runs
        .iter()
        .map(|r| {
            (
                r.model.as_str(),
                robustness_of(&r.matrix.mean(), study.direction),
            )
        })
        .collect();
    let rank = ranks(&scores, study.direction);
    let mut columns = vec![
        ints(
            "rank",
            scores.iter().map(|(m, _)| rank.get(*m).copied()).collect(),
        ),
        text("model", scores.iter().map(|(m, _)| m.to_string()).collect()),
        text("family", scores.iter().map(|(m, _)| family(m)).collect()),
        ints(
            "seeds",
            study
                .runs
                .iter()
                .map(|r| Some(r.matrix.seeds().len() as i64))
                .collect(),
        ),
    ];
    columns.extend(score_columns(&scores, scale));
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

/// One table per evenly spread cutoff ([`spread_cutoffs`]`(K, 4)`), named `cutoff-1` ..
/// `cutoff-4` in timeline order: `rank`, `model`, `ID`, `future`, `decay` at that cutoff.
pub fn cutoff_tables(runs: &[ModelRuns]) -> Result<Vec<Table>> {
    let study = study(runs)?;
    let scale = study.metric.display_scale();
    let d = study.metric.display_decimals();
    let rows: Vec<_> = study
        .runs
        .iter()
        .map(|r| per_cutoff(&r.matrix.mean(), study.direction))
        .collect();
    let mut out = Vec::new();
    for (t, c) in spread_cutoffs(study.slices.len(), CUTOFFS)
        .into_iter()
        .enumerate()
    {
        let name = format!("cutoff-{}", t + 1);
        let scores: Vec<(&str, Robustness)> = study
            .runs
            .iter()
            .zip(&rows)
            .map(|(r, rows)| (r.model.as_str(), rows[c].scores))
            .collect();
        let rank = ranks(&scores, study.direction);
        let mut columns = vec![
            ints(
                "rank",
                scores.iter().map(|(m, _)| rank.get(*m).copied()).collect(),
            ),
            text("model", scores.iter().map(|(m, _)| m.to_string()).collect()),
        ];
        columns.extend(score_columns(&scores, scale));
        let df = frame(&name, columns)?;
        out.push(Table {
            caption: format!(
                "Models trained through {} ({}, mean over seeds): ID, future and decay, \
                 ranked by future score.",
                study.slices[c],
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
pub fn family_table(runs: &[ModelRuns], family: &dyn Fn(&str) -> String) -> Result<Table> {
    let name = "families";
    let study = study(runs)?;
    let scale = study.metric.display_scale();
    let d = study.metric.display_decimals();
    let cutoffs = spread_cutoffs(study.slices.len(), CUTOFFS);
    let mut models: Vec<(String, &str, Vec<_>)> = study
        .runs
        .iter()
        .map(|r| {
            (
                family(&r.model),
                r.model.as_str(),
                per_cutoff(&r.matrix.mean(), study.direction),
            )
        })
        .collect();
    // Families in name order: family_averages keeps first-seen order.
    models.sort_by(|a, b| (a.0.as_str(), a.1).cmp(&(b.0.as_str(), b.1)));
    let tagged: Vec<ModelCutoffs> = models
        .iter()
        .map(|(f, m, rows)| ModelCutoffs {
            model: m,
            family: f,
            rows,
        })
        .collect();
    let averages = family_averages(&tagged, &cutoffs);
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
    let labels: Vec<&str> = cutoffs.iter().map(|&c| study.slices[c].as_str()).collect();
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
pub fn temporal_effects_table(runs: &[ModelRuns]) -> Result<Table> {
    let name = "temporal-effects";
    let study = study(runs)?;
    let scale = study.metric.display_scale();
    let d = study.metric.display_decimals();
    let mut rows: Vec<(&str, &str, TemporalScore)> = Vec::new();
    for r in &study.runs {
        for (label, score) in temporal_effects(&r.matrix).named() {
            rows.push((r.model.as_str(), label, score));
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
    let study = study(runs)?;
    let mut devices = Vec::new();
    let (mut train, mut eval, mut timed) = (Vec::new(), Vec::new(), Vec::new());
    for r in &study.runs {
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
            text(
                "model",
                study.runs.iter().map(|r| r.model.clone()).collect(),
            ),
            text("device", devices),
            ints(
                "seeds",
                study
                    .runs
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
