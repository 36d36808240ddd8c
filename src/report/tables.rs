//! The appendix tables of the paper (protocol.md §6), each a polars [`DataFrame`] computed
//! from the analyses of one study (one preset's [`ModelRuns`]), and their rendering as a
//! Typst `#table(..)` block ([`to_typst`]) or CSV ([`to_csv`]).
//!
//! Tables:
//! - [`roster`]: model, family, input, architecture, parameter count (from the committed
//!   output of `drift models --params`, read by [`parse_models_listing`]);
//! - [`robustness`]: rank by future score, model, family, seeds, ID, future, decay;
//! - [`cutoff_tables`]: one per evenly spread cutoff ([`spread_cutoffs`]`(K, 4)`): rank,
//!   model, ID, future, decay at that cutoff;
//! - [`family_table`]: [`family_averages`] of those cutoff figures, per cutoff and over all;
//! - [`temporal_effects_table`]: the four Agarwal & Nenkova scores per model with their
//!   Wilcoxon p-value, N, and min / max over seeds;
//! - [`compute_table`]: training and evaluation wall-clock seconds from `timing.json`.
//!
//! Units: scores of metrics in `[0, 1]` (accuracy, balanced accuracy, macro AUC, the F1s)
//! are multiplied by 100 in the frames ([`display_scale`]); error metrics (MSE, MAE,
//! balanced MSE) are left as they are. ID / future / decay are computed on the per-cell
//! mean over seeds.
//!
//! Order: ranked tables by rank (future score, best first, ties by model key; models
//! without a future score last, by key), other per-model tables by model key, the family
//! table by family name, then cutoff in timeline order, then the mean over the cutoffs.
//!
//! Rendering ([`Format`], one per column): text as is; integers in plain digits
//! ([`Format::Integer`]) or grouped by thousands with commas ([`Format::Grouped`]);
//! scores with fixed decimals ([`Format::Fixed`]: 2 for ×100 metrics, 3 for error
//! metrics; seconds 1); the A&N scores with significance marks ([`Format::Marked`]: `*`
//! for p < 0.05, `**` for p < 0.01, from the p-value column of the same row); p-values
//! with 3 decimals, `<0.001` below 0.0005 ([`Format::PValue`]). A missing (null) or
//! non-finite value is `–` (en dash). In Typst a negative number starts with `−` (U+2212);
//! `-0.00` is written `0.00`. Every Typst cell, header included, is a quoted string literal
//! ([`typst_string`]), so no data can inject Typst code. The CSV holds the frame's raw
//! values instead (full precision, empty for null).

use std::collections::BTreeMap;

use polars::prelude::{Column, DataFrame, DataType, SortMultipleOptions};

use crate::analysis::{
    ModelCutoffs, Robustness, TemporalScore, default_family, family_averages, per_cutoff,
    rank_by_future, robustness as robustness_of, spread_cutoffs, temporal_effects,
};
use crate::artifacts::ModelRuns;
use crate::metrics::{Direction, Metric};
use crate::{Error, Result};

/// How many evenly spread cutoffs the paper reads (protocol.md §3).
pub const CUTOFFS: usize = 4;

/// How one column is written in Typst.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// A string column, as is.
    Text,
    /// An integer column in plain digits.
    Integer,
    /// An integer column grouped by thousands with commas (`1,234,567`).
    Grouped,
    /// A float column with this many decimals.
    Fixed(usize),
    /// A float column with this many decimals and the significance marks of the p-value
    /// in the named column of the same row: `**` p < 0.01, `*` p < 0.05.
    Marked {
        /// Decimals.
        decimals: usize,
        /// The p-value column.
        p_value: String,
    },
    /// A p-value: 3 decimals, `<0.001` when it would round to `0.000`.
    PValue,
}

/// One table: a name (the output file stem), a caption and the frame, with one
/// [`Format`] per column.
#[derive(Clone, Debug)]
pub struct Table {
    /// File stem, e.g. `robustness`, `cutoff-1` (never derived from data).
    pub name: String,
    /// Caption (plain text; may contain slice labels and the metric name: escape it with
    /// [`typst_string`] when it goes into Typst).
    pub caption: String,
    /// The values; column names are the header.
    pub frame: DataFrame,
    /// How each column is rendered, in column order.
    pub formats: Vec<Format>,
}

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

/// The factor the tables apply to a metric's values: 100 for metrics in `[0, 1]`
/// (accuracy, balanced accuracy, macro AUC, F1, macro F1, micro F1), 1 for error metrics.
pub fn display_scale(metric: Metric) -> f64 {
    match metric {
        Metric::BalancedMse | Metric::Mse | Metric::Mae => 1.0,
        Metric::Accuracy
        | Metric::BalancedAccuracy
        | Metric::MacroAuc
        | Metric::F1
        | Metric::MacroF1
        | Metric::MicroF1 => 100.0,
    }
}

/// Decimals of a metric's (scaled) values: 2 when ×100, else 3.
pub fn value_decimals(metric: Metric) -> usize {
    if display_scale(metric) == 100.0 { 2 } else { 3 }
}

/// The metric as the captions name it, e.g. `accuracy ×100` or `mse`.
pub fn unit(metric: Metric) -> String {
    if display_scale(metric) == 100.0 {
        format!("{} ×100", metric.name())
    } else {
        metric.name().to_string()
    }
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

fn polars_error(name: &str) -> impl Fn(polars::error::PolarsError) -> Error + '_ {
    move |e| Error::Invalid(format!("table {name}: {e}"))
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
    let scale = display_scale(study.metric);
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
    let d = value_decimals(study.metric);
    Ok(Table {
        name: name.into(),
        caption: format!(
            "Robustness of each model ({}, mean over seeds): ID, future and decay \
             (positive = worse on the future), ranked by future score.",
            unit(study.metric)
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
    let scale = display_scale(study.metric);
    let d = value_decimals(study.metric);
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
                unit(study.metric)
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
    let scale = display_scale(study.metric);
    let d = value_decimals(study.metric);
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
            unit(study.metric),
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
    let scale = display_scale(study.metric);
    let d = value_decimals(study.metric);
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
            unit(study.metric)
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

/// A cell read back from a frame.
enum Cell {
    Null,
    Text(String),
    Int(i64),
    Float(f64),
}

fn cells(table: &Table) -> Result<Vec<Vec<Cell>>> {
    let err = polars_error(&table.name);
    let mut out = Vec::new();
    for column in table.frame.columns() {
        let values: Vec<Cell> = match column.dtype() {
            DataType::String => column
                .str()
                .map_err(&err)?
                .iter()
                .map(|v| v.map_or(Cell::Null, |s| Cell::Text(s.to_string())))
                .collect(),
            DataType::Int64 => column
                .i64()
                .map_err(&err)?
                .iter()
                .map(|v| v.map_or(Cell::Null, Cell::Int))
                .collect(),
            DataType::Float64 => column
                .f64()
                .map_err(&err)?
                .iter()
                .map(|v| v.map_or(Cell::Null, Cell::Float))
                .collect(),
            other => {
                return Err(Error::Invalid(format!(
                    "table {}: column {:?} has unsupported type {other}",
                    table.name,
                    column.name().as_str()
                )));
            }
        };
        out.push(values);
    }
    Ok(out)
}

const MISSING: &str = "–";

/// `value` with `decimals` decimals; `-0.00` becomes `0.00`, a leading minus `−`.
fn fixed(value: f64, decimals: usize) -> String {
    if !value.is_finite() {
        return MISSING.into();
    }
    let s = format!("{value:.decimals$}");
    match s.strip_prefix('-') {
        Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_string(),
        Some(rest) => format!("−{rest}"),
        None => s,
    }
}

fn grouped(value: i64) -> String {
    let digits = value.unsigned_abs().to_string();
    let mut out = String::new();
    for (n, ch) in digits.chars().enumerate() {
        if n > 0 && (digits.len() - n).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if value < 0 { format!("−{out}") } else { out }
}

fn marks(p: Option<f64>) -> &'static str {
    match p {
        Some(p) if p < 0.01 => "**",
        Some(p) if p < 0.05 => "*",
        _ => "",
    }
}

fn p_value(p: f64) -> String {
    if !p.is_finite() {
        MISSING.into()
    } else if p < 0.0005 {
        "<0.001".into()
    } else {
        fixed(p, 3)
    }
}

fn render(table: &Table, columns: &[Vec<Cell>], col: usize, row: usize) -> Result<String> {
    let cell = &columns[col][row];
    let format = &table.formats[col];
    let bad = || {
        Error::Invalid(format!(
            "table {}: column {:?} does not fit its format {format:?}",
            table.name,
            table.frame.columns()[col].name().as_str()
        ))
    };
    Ok(match (format, cell) {
        (_, Cell::Null) => MISSING.into(),
        (Format::Text, Cell::Text(s)) => s.clone(),
        (Format::Integer, Cell::Int(v)) if *v < 0 => format!("−{}", v.unsigned_abs()),
        (Format::Integer, Cell::Int(v)) => v.to_string(),
        (Format::Grouped, Cell::Int(v)) => grouped(*v),
        (Format::Fixed(d), Cell::Float(v)) => fixed(*v, *d),
        (Format::PValue, Cell::Float(v)) => p_value(*v),
        (Format::Marked { decimals, p_value }, Cell::Float(v)) => {
            let p_col = table
                .frame
                .columns()
                .iter()
                .position(|c| c.name().as_str() == p_value)
                .ok_or_else(bad)?;
            let p = match columns[p_col][row] {
                Cell::Float(p) => Some(p),
                Cell::Null => None,
                _ => return Err(bad()),
            };
            let s = fixed(*v, *decimals);
            if s == MISSING {
                s
            } else {
                format!("{s}{}", marks(p))
            }
        }
        _ => return Err(bad()),
    })
}

fn check_formats(table: &Table) -> Result<()> {
    if table.formats.len() != table.frame.width() {
        return Err(Error::Invalid(format!(
            "table {}: {} formats for {} columns",
            table.name,
            table.formats.len(),
            table.frame.width()
        )));
    }
    Ok(())
}

/// `s` as a quoted Typst string literal: `\`, `"`, and control characters escaped
/// (`\n`, `\r`, `\t`, else `\u{..}`), so that it is always exactly one string value.
pub fn typst_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The table as a Typst `#table(..)` block: `columns`, `align` (text left, numbers
/// right), a `table.header` of `strong` column names, then one line of cells per row;
/// every cell a quoted string literal. Ends with a newline.
pub fn to_typst(table: &Table) -> Result<String> {
    check_formats(table)?;
    let columns = cells(table)?;
    let align: Vec<&str> = table
        .formats
        .iter()
        .map(|f| match f {
            Format::Text => "left",
            _ => "right",
        })
        .collect();
    let header: Vec<String> = table
        .frame
        .columns()
        .iter()
        .map(|c| format!("strong({})", typst_string(c.name().as_str())))
        .collect();
    let mut out = String::new();
    out.push_str("#table(\n");
    out.push_str(&format!("  columns: {},\n", table.frame.width()));
    out.push_str(&format!("  align: ({}),\n", align.join(", ")));
    out.push_str(&format!("  table.header({}),\n", header.join(", ")));
    for row in 0..table.frame.height() {
        let line: Vec<String> = (0..columns.len())
            .map(|col| render(table, &columns, col, row).map(|s| typst_string(&s)))
            .collect::<Result<_>>()?;
        out.push_str(&format!("  {},\n", line.join(", ")));
    }
    out.push_str(")\n");
    Ok(out)
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The frame as CSV: a header of column names, then the raw values (floats in Rust's
/// shortest round-trip form, integers in digits, null as an empty field), fields quoted
/// when they hold `,`, `"`, a line break or edge spaces; lines end with `\n`.
pub fn to_csv(table: &Table) -> Result<String> {
    let columns = cells(table)?;
    let mut out = String::new();
    let header: Vec<String> = table
        .frame
        .columns()
        .iter()
        .map(|c| csv_field(c.name().as_str()))
        .collect();
    out.push_str(&header.join(","));
    out.push('\n');
    for row in 0..table.frame.height() {
        let line: Vec<String> = columns
            .iter()
            .map(|col| match &col[row] {
                Cell::Null => String::new(),
                Cell::Text(s) => csv_field(s),
                Cell::Int(v) => v.to_string(),
                Cell::Float(v) if v.is_finite() => v.to_string(),
                Cell::Float(_) => String::new(),
            })
            .collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    Ok(out)
}
