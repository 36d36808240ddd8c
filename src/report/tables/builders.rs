//! The tables of the paper, each read from the analyses of one study ([`StudyAnalysis`],
//! computed once); the compute table from the runs' provenance and timings.

use std::collections::BTreeMap;

use polars::prelude::{Column, DataFrame, SortMultipleOptions};

use super::{Format, Table, polars_error};
use crate::analysis::{
    Interval, ModelAnalysis, PickSpread, Ranked, Robustness, SeedSpread, Spread, StudyAnalysis,
    TemporalScore,
};
use crate::artifacts::ModelRuns;
use crate::baseline::Baseline;
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

/// The runs sorted by model key, as [`by_key`] sorts the analyses.
fn runs_by_key(runs: &[ModelRuns]) -> Vec<&ModelRuns> {
    let mut sorted: Vec<&ModelRuns> = runs.iter().collect();
    sorted.sort_by(|a, b| a.model.cmp(&b.model));
    sorted
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
/// study's models in listing order (the family is the study's, which a preset may set).
/// Every model's key must be in the listing.
pub fn roster(listing: &[ModelListing], study: &StudyAnalysis) -> Result<Table> {
    let name = "roster";
    // The counting baselines are not in the registry's listing: they are described here.
    let baselines: Vec<ModelListing> = by_key(study)
        .iter()
        .filter_map(|m| Baseline::from_key(&m.key))
        .map(|b| ModelListing {
            key: b.key().into(),
            family: crate::baseline::BASELINE_FAMILY.into(),
            input: "labels".into(),
            summary: b.description().into(),
            parameters: 0,
        })
        .collect();
    let listing: Vec<ModelListing> = listing.iter().cloned().chain(baselines).collect();
    for m in by_key(study) {
        if !listing.iter().any(|l| l.key == m.key) {
            return Err(Error::Invalid(format!(
                "table roster: model {:?} is not in the models listing",
                m.key
            )));
        }
    }
    // Listing order; a key the study trains on several inputs gives one row per name.
    let rows: Vec<(&ModelAnalysis, &ModelListing)> = listing
        .iter()
        .flat_map(|l| {
            by_key(study)
                .into_iter()
                .filter(move |m| m.key == l.key)
                .map(move |m| (m, l))
        })
        .collect();
    let df = frame(
        name,
        vec![
            text("model", rows.iter().map(|(m, _)| m.model.clone()).collect()),
            text(
                "family",
                rows.iter().map(|(m, _)| m.family.clone()).collect(),
            ),
            text("input", rows.iter().map(|(_, l)| l.input.clone()).collect()),
            text(
                "architecture",
                rows.iter().map(|(_, l)| l.summary.clone()).collect(),
            ),
            ints(
                "parameters",
                rows.iter()
                    .map(|(_, l)| i64::try_from(l.parameters).ok())
                    .collect(),
            ),
        ],
    )?;
    Ok(Table {
        name: name.into(),
        caption: "Models: family, input, architecture and trainable parameters; the counting \
                  baseline is fitted on each cutoff's training set."
            .into(),
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

/// [`ranked_score_columns`] with the seed spread of each score: `rank`, `model`, then
/// `ID`, `ID sd`, `ID min`, `ID max` and the same of `future` and `decay` (times `scale`),
/// and their formats: each score shown as `mean ± sd` over `[min, max]`, the sd, min and
/// max columns in the CSV only.
fn spread_score_columns(
    scores: &[(&str, Robustness)],
    spreads: &[SeedSpread],
    ranking: &[Ranked],
    scale: f64,
    decimals: usize,
) -> (Vec<Column>, Vec<Format>) {
    let mut columns = ranked_score_columns(scores, ranking, scale).into_iter();
    let mut out = vec![
        columns.next().expect("rank"),
        columns.next().expect("model"),
    ];
    let mut formats = vec![Format::Integer, Format::Text];
    let figures: [(&str, PickSpread); 3] = [
        ("ID", |s| s.id),
        ("future", |s| s.future),
        ("decay", |s| s.decay),
    ];
    for (label, spread) in figures {
        out.push(columns.next().expect("a score column"));
        let part = |f: fn(&Spread) -> Option<f64>| -> Vec<Option<f64>> {
            spreads
                .iter()
                .map(|s| scaled(spread(s).and_then(|s| f(&s)), scale))
                .collect()
        };
        out.push(floats(&format!("{label} sd"), part(|s| s.sd)));
        out.push(floats(&format!("{label} min"), part(|s| Some(s.min))));
        out.push(floats(&format!("{label} max"), part(|s| Some(s.max))));
        formats.push(Format::Spread {
            decimals,
            sd: format!("{label} sd"),
            min: format!("{label} min"),
            max: format!("{label} max"),
        });
        formats.extend([Format::Hidden, Format::Hidden, Format::Hidden]);
    }
    (out, formats)
}

/// `tied`: `tied` for a model whose place in `ranking` is tied with the next, else empty.
fn tied_column(models: &[&ModelAnalysis], ranking: &[Ranked]) -> Column {
    let tied = |m: &str| {
        ranking
            .iter()
            .find(|r| r.model == m)
            .is_some_and(|r| r.tied_with_next)
    };
    text(
        "tied",
        models
            .iter()
            .map(|m| {
                if tied(&m.model) {
                    "tied".into()
                } else {
                    String::new()
                }
            })
            .collect(),
    )
}

/// Robustness per model: `rank`, `model`, `family`, `seeds`, then `ID`, `future` and
/// `decay` on the seed-mean matrix, each with the `sd`, `min` and `max` of the per-seed
/// values (shown as `mean ± sd` over `min–max`), `margin` (future score over the
/// baseline's, positive = better) and `tied` (`tied` when the future-score seed range
/// overlaps the next place's), ranked by future score.
pub fn robustness(study: &StudyAnalysis) -> Result<Table> {
    let name = "robustness";
    let scale = study.metric.display_scale();
    let d = study.metric.display_decimals();
    let models = by_key(study);
    let scores: Vec<(&str, Robustness)> = models
        .iter()
        .map(|m| (m.model.as_str(), m.overall))
        .collect();
    let spreads: Vec<SeedSpread> = models.iter().map(|m| m.spread).collect();
    let (mut out, mut formats) =
        spread_score_columns(&scores, &spreads, &study.by_future, scale, d);
    out.insert(
        2,
        text("family", models.iter().map(|m| m.family.clone()).collect()),
    );
    out.insert(
        3,
        ints(
            "seeds",
            models.iter().map(|m| Some(m.seeds.len() as i64)).collect(),
        ),
    );
    formats.splice(2..2, [Format::Text, Format::Integer]);
    out.push(floats(
        "margin",
        models
            .iter()
            .map(|m| scaled(m.margin.and_then(|r| r.future), scale))
            .collect(),
    ));
    formats.push(Format::Fixed(d));
    out.push(tied_column(&models, &study.by_future));
    formats.push(Format::Text);
    let df = frame(name, out)?;
    Ok(Table {
        name: name.into(),
        caption: format!(
            "Robustness of each model ({}): ID, future and decay (positive = worse on the \
             future) on the seed-mean matrix ± the sd over seeds, with the per-seed range \
             below; margin: future score over the counting baseline's (positive = better); \
             tied: its seed range of future scores overlaps the next place's, so the seeds \
             do not order the two. Ranked by future score.",
            study.metric.display_unit()
        ),
        frame: by_rank(name, df)?,
        formats,
    })
}

/// One table per evenly spread cutoff ([`StudyAnalysis::spread`]), named `cutoff-1` ..
/// `cutoff-4` in timeline order: `rank`, `model`, `ID`, `future`, `decay` at that cutoff,
/// each with its seed spread as in [`robustness`], and `tied`.
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
        let spreads: Vec<SeedSpread> = models.iter().map(|m| m.cutoff_spread[at.cutoff]).collect();
        let (mut columns, mut formats) =
            spread_score_columns(&scores, &spreads, &at.by_future, scale, d);
        columns.push(tied_column(&models, &at.by_future));
        formats.push(Format::Text);
        let df = frame(&name, columns)?;
        out.push(Table {
            caption: format!(
                "Models trained through {} ({}): ID, future and decay of that row on the \
                 seed-mean matrix ± the sd over seeds, with the per-seed range below; \
                 ranked by future score; tied: its seed range of future scores overlaps \
                 the next place's.",
                study.slices[at.cutoff],
                study.metric.display_unit()
            ),
            frame: by_rank(&name, df)?,
            name,
            formats,
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
/// `design` says how the study trains ([`crate::report::study::Design`]): the caption says
/// whether that is the design the scores are defined for.
pub fn temporal_effects_table(
    study: &StudyAnalysis,
    design: &crate::report::study::Design,
) -> Result<Table> {
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
             on the seed-mean matrix, positive = the metric went up; one difference is one \
             future cell minus the cell before it in its row (deterioration, consecutive), \
             minus its row's first future cell (anchor), minus the cell above it \
             (adaptation, consecutive) or minus the first row's cell (anchor)), two-sided \
             Wilcoxon signed-rank p-value over N differences (* p < 0.05, ** p < 0.01), \
             and the min and max of the per-seed scores. {}",
            study.metric.display_unit(),
            if design.is_agarwal_nenkova() {
                "The study follows their design: single-slice training on equal-size slices."
                    .to_string()
            } else {
                format!(
                    "Caution: the scores are defined for single-slice training on equal-size \
                     slices, and this study uses {}; overlapping differences of one matrix \
                     are not independent, so the p-values describe the matrix rather than \
                     test the paper's claim.",
                    design.describe()
                )
            }
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
/// distinct devices of its seeds, sorted, joined by `, `), `threads` (the distinct
/// libtorch thread counts), `host` (the machine kinds its seeds recorded, as `H1`, `H2`,
/// ... in order of first appearance, spelled out in the caption; `-` when none did),
/// `seeds`, `timed` (seeds with a `timing.json`), `train s`, `eval s` (sums over the
/// timed seeds; null when none is). Imported runs show where they were made.
pub fn compute_table(runs: &[ModelRuns]) -> Result<Table> {
    let name = "compute";
    if runs.is_empty() {
        return Err(Error::Invalid("table compute: no model runs".into()));
    }
    let sorted = runs_by_key(runs);
    let mut devices = Vec::new();
    let (mut threads, mut hosts, mut host_names) = (Vec::new(), Vec::new(), Vec::<String>::new());
    let (mut train, mut eval, mut timed) = (Vec::new(), Vec::new(), Vec::new());
    for r in &sorted {
        let mut ds: Vec<&str> = r.provenance.iter().map(|p| p.device.as_str()).collect();
        ds.sort_unstable();
        ds.dedup();
        devices.push(ds.join(", "));
        let mut ts: Vec<u32> = r.provenance.iter().map(|p| p.threads).collect();
        ts.sort_unstable();
        ts.dedup();
        threads.push(ts.iter().map(u32::to_string).collect::<Vec<_>>().join(", "));
        let mut hs: Vec<String> = Vec::new();
        for host in r.timing.iter().flatten().filter_map(|t| t.host.as_ref()) {
            let n = match host_names.iter().position(|h| h == host) {
                Some(n) => n,
                None => {
                    host_names.push(host.clone());
                    host_names.len() - 1
                }
            };
            let label = format!("H{}", n + 1);
            if !hs.contains(&label) {
                hs.push(label);
            }
        }
        hosts.push(if hs.is_empty() {
            "-".into()
        } else {
            hs.join(", ")
        });
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
         evaluation. Hosts: {}.",
        hours(&train),
        hours(&eval),
        if host_names.is_empty() {
            "none recorded".to_string()
        } else {
            host_names
                .iter()
                .enumerate()
                .map(|(n, h)| format!("H{} = {h}", n + 1))
                .collect::<Vec<_>>()
                .join("; ")
        }
    );
    let df = frame(
        name,
        vec![
            text("model", sorted.iter().map(|r| r.model.clone()).collect()),
            text("device", devices),
            text("threads", threads),
            text("host", hosts),
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
            Format::Text,
            Format::Text,
            Format::Integer,
            Format::Integer,
            Format::Fixed(1),
            Format::Fixed(1),
        ],
    })
}

/// Checkpoint health per (model, seed, cutoff), from the runs' `health.json`: `model`,
/// `seed`, `cutoff`, `majority_share` (classification; null otherwise), `collapsed`
/// (`true` / `false`), `prediction_variance` (regression), `final_loss` (null for a
/// baseline); runs without a health record are left out.
pub fn health_table(runs: &[ModelRuns]) -> Result<Table> {
    let name = "health";
    let sorted = runs_by_key(runs);
    let mut rows = Vec::new();
    for r in sorted {
        for (p, health) in r.provenance.iter().zip(&r.health) {
            for h in health.iter().flatten() {
                rows.push((r.model.clone(), p.seed, h));
            }
        }
    }
    let collapsed = rows
        .iter()
        .filter(|r| r.2.collapsed && Baseline::from_key(&r.0).is_none())
        .count();
    let checkpoints = rows
        .iter()
        .filter(|r| Baseline::from_key(&r.0).is_none())
        .count();
    let df = frame(
        name,
        vec![
            text("model", rows.iter().map(|r| r.0.clone()).collect()),
            ints(
                "seed",
                rows.iter().map(|r| i64::try_from(r.1).ok()).collect(),
            ),
            text("cutoff", rows.iter().map(|r| r.2.cutoff.clone()).collect()),
            floats(
                "majority_share",
                rows.iter().map(|r| r.2.majority_share).collect(),
            ),
            text(
                "collapsed",
                rows.iter().map(|r| r.2.collapsed.to_string()).collect(),
            ),
            floats(
                "prediction_variance",
                rows.iter().map(|r| r.2.prediction_variance).collect(),
            ),
            floats("final_loss", rows.iter().map(|r| r.2.final_loss).collect()),
        ],
    )?;
    Ok(Table {
        name: name.into(),
        caption: format!(
            "Checkpoint health: the share of the most frequent prediction on each \
             checkpoint's ID test rows, the final training loss, and whether it collapsed \
             ({}); {collapsed} of {checkpoints} trained checkpoints collapsed. The counting \
             baseline is constant by design.",
            crate::eval::COLLAPSE_RULE
        ),
        frame: df,
        formats: vec![
            Format::Text,
            Format::Integer,
            Format::Text,
            Format::Fixed(3),
            Format::Text,
            Format::Fixed(4),
            Format::Fixed(4),
        ],
    })
}

/// The collapsed checkpoints per (model, seed), from the runs' `health.json`: `model`,
/// `seed`, `collapsed` (how many cutoffs), `cutoffs` (of how many), `where` (the collapsed
/// cutoffs' labels; for a baseline, that it is constant by design); runs without a health
/// record are left out. The long form, one row per checkpoint, is [`health_table`].
pub fn collapsed_table(runs: &[ModelRuns]) -> Result<Table> {
    let name = "collapsed";
    let sorted = runs_by_key(runs);
    let mut rows = Vec::new();
    for r in sorted {
        for (p, health) in r.provenance.iter().zip(&r.health) {
            let Some(health) = health else { continue };
            let hit: Vec<&str> = health
                .iter()
                .filter(|h| h.collapsed)
                .map(|h| h.cutoff.as_str())
                .collect();
            let place = if Baseline::from_key(&r.model).is_some() {
                "constant by design".to_string()
            } else {
                hit.join(" ")
            };
            rows.push((r.model.clone(), p.seed, hit.len(), health.len(), place));
        }
    }
    let df = frame(
        name,
        vec![
            text("model", rows.iter().map(|r| r.0.clone()).collect()),
            ints(
                "seed",
                rows.iter().map(|r| i64::try_from(r.1).ok()).collect(),
            ),
            ints("collapsed", rows.iter().map(|r| Some(r.2 as i64)).collect()),
            ints("cutoffs", rows.iter().map(|r| Some(r.3 as i64)).collect()),
            text("where", rows.iter().map(|r| r.4.clone()).collect()),
        ],
    )?;
    Ok(Table {
        name: name.into(),
        caption: format!(
            "Collapsed checkpoints per run ({}); report/build/tables/<study>-health.csv has \
             every checkpoint's figures.",
            crate::eval::COLLAPSE_RULE
        ),
        frame: df,
        formats: vec![
            Format::Text,
            Format::Integer,
            Format::Integer,
            Format::Integer,
            Format::Text,
        ],
    })
}

/// Wild-Time's protocols per model (by key), on the seed-mean matrix: `model`, `fix at`
/// (the Eval-Fix slice), `fix ID`, `fix OOD avg`, `fix OOD worst`, then Eval-Stream's
/// `stream avg`, `stream worst`, `stream best` at horizon `K`.
pub fn wild_time_table(study: &StudyAnalysis) -> Result<Table> {
    let name = "wild-time";
    let scale = study.metric.display_scale();
    let d = study.metric.display_decimals();
    let models = by_key(study);
    let fix = |f: fn(&crate::analysis::EvalFix) -> Option<f64>| -> Vec<Option<f64>> {
        models
            .iter()
            .map(|m| scaled(m.eval_fix.as_ref().and_then(f), scale))
            .collect()
    };
    let stream = |f: fn(&crate::analysis::EvalStream) -> Option<f64>| -> Vec<Option<f64>> {
        models
            .iter()
            .map(|m| scaled(f(&m.eval_stream), scale))
            .collect()
    };
    let k = models
        .first()
        .map_or(crate::analysis::STREAM_K, |m| m.eval_stream.k);
    let df = frame(
        name,
        vec![
            text("model", models.iter().map(|m| m.model.clone()).collect()),
            text(
                "fix at",
                models
                    .iter()
                    .map(|m| {
                        m.eval_fix
                            .map_or(String::new(), |f| study.slices[f.cutoff].clone())
                    })
                    .collect(),
            ),
            floats("fix ID", fix(|f| f.id)),
            floats("fix OOD avg", fix(|f| f.ood_avg)),
            floats("fix OOD worst", fix(|f| f.ood_worst)),
            floats("stream avg", stream(|s| s.avg)),
            floats("stream worst", stream(|s| s.worst)),
            floats("stream best", stream(|s| s.best)),
        ],
    )?;
    Ok(Table {
        name: name.into(),
        caption: format!(
            "Wild-Time's protocols read off the seed-mean matrix ({}): Eval-Fix splits at the \
             middle slice (ID: mean over the slices the model trained on, each scored on its \
             test part; OOD: every later slice, mean and worst); Eval-Stream scores each \
             cutoff's model on its next {k} slices (mean, worst and best per row, averaged \
             over rows).",
            study.metric.display_unit()
        ),
        frame: df,
        formats: vec![
            Format::Text,
            Format::Text,
            Format::Fixed(d),
            Format::Fixed(d),
            Format::Fixed(d),
            Format::Fixed(d),
            Format::Fixed(d),
            Format::Fixed(d),
        ],
    })
}

/// Retraining policies simulated on each model's seed-mean matrix: `policy`, then per
/// model (by key) its mean deployed score and, in `<model> retrains`, how many retrains
/// the policy made (shown together as `score (retrains)`).
pub fn retraining_table(study: &StudyAnalysis) -> Result<Table> {
    let name = "retraining";
    let scale = study.metric.display_scale();
    let d = study.metric.display_decimals();
    let models = by_key(study);
    let Some(first) = models.first() else {
        return Err(Error::Invalid("table retraining: no models".into()));
    };
    let mut columns = vec![text(
        "policy",
        first
            .retraining
            .iter()
            .map(|r| r.policy.name(scale))
            .collect(),
    )];
    let mut formats = vec![Format::Text];
    for m in &models {
        columns.push(text(
            &m.model,
            m.retraining
                .iter()
                .map(|r| match r.mean {
                    Some(v) => format!(
                        "{} ({})",
                        crate::format::fixed_typeset(v * scale, d),
                        r.retrains
                    ),
                    None => crate::format::MISSING.into(),
                })
                .collect(),
        ));
        formats.push(Format::Text);
    }
    let df = frame(name, columns)?;
    Ok(Table {
        name: name.into(),
        caption: format!(
            "Retraining policies simulated from each model's cumulative matrix, with no new \
             training ({}): the mean score a deployment sees over slices 2..K when it \
             keeps the model of its latest retraining, and (in brackets) how many times it \
             retrained; \"drop > d\": retrain after a slice scored more than d below the \
             deployed model's ID score.",
            study.metric.display_unit()
        ),
        frame: df,
        formats,
    })
}

/// Bootstrap intervals (95%, percentile, over cutoffs) per model (by key): `model`, then
/// `low` and `high` of `ID`, `future`, `decay`, and of `future - best` (the model's future
/// score minus the best model's, same draws; empty for the best model).
pub fn bootstrap_table(study: &StudyAnalysis) -> Result<Table> {
    let name = "bootstrap";
    let scale = study.metric.display_scale();
    let d = study.metric.display_decimals();
    let models = by_key(study);
    let mut columns = vec![text(
        "model",
        models.iter().map(|m| m.model.clone()).collect(),
    )];
    type PickInterval = fn(&crate::analysis::Bootstrap) -> Option<Interval>;
    let parts: [(&str, PickInterval); 4] = [
        ("ID", |b| b.id),
        ("future", |b| b.future),
        ("decay", |b| b.decay),
        ("future - best", |b| b.future_vs_best),
    ];
    for (label, f) in parts {
        columns.push(text(
            label,
            models
                .iter()
                .map(|m| match f(&m.bootstrap) {
                    Some(i) => format!(
                        "[{}, {}]",
                        crate::format::fixed_typeset(i.low * scale, d),
                        crate::format::fixed_typeset(i.high * scale, d)
                    ),
                    None => crate::format::MISSING.into(),
                })
                .collect(),
        ));
    }
    let df = frame(name, columns)?;
    Ok(Table {
        name: name.into(),
        caption: format!(
            "95% bootstrap intervals ({}; {} resamples of the cutoffs, percentile, seeded) \
             of each model's ID, future and decay on its seed-mean matrix, and of its future \
             score minus the best model's; an interval of the difference that contains 0 \
             does not separate the two.",
            study.metric.display_unit(),
            crate::analysis::BOOTSTRAP_REPLICATES
        ),
        frame: df,
        formats: vec![Format::Text; 5],
    })
}

/// The findings' claims ([`crate::report::claims`]): name, the sentence it backs, the
/// check, each quantity's value on the paper's scale (with its p-value for a score), and
/// the verdict. One table for the whole paper.
pub fn claims_table(outcomes: &[crate::report::claims::ClaimOutcome]) -> Result<Table> {
    let name = "claims";
    let values: Vec<String> = outcomes
        .iter()
        .map(|o| {
            o.values
                .iter()
                .map(|v| {
                    let p = v
                        .p_value
                        .map(|p| format!(" (p {})", crate::format::p_value(p)))
                        .unwrap_or_default();
                    format!(
                        "{} = {}{p}",
                        v.label,
                        crate::format::fixed_typeset(v.shown, 2)
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
        .collect();
    let check = |o: &crate::report::claims::ClaimOutcome| {
        let c = &o.claim;
        match c.check {
            crate::report::claims::Check::Largest | crate::report::claims::Check::Smallest
                if c.margin > 0.0 =>
            {
                format!("{} (margin {})", c.check.name(), c.margin)
            }
            crate::report::claims::Check::Above | crate::report::claims::Check::Below => {
                format!("{} {}", c.check.name(), c.value.unwrap_or_default())
            }
            _ => c.check.name().to_string(),
        }
    };
    let df = frame(
        name,
        vec![
            text(
                "claim",
                outcomes.iter().map(|o| o.claim.name.clone()).collect(),
            ),
            text(
                "says",
                outcomes.iter().map(|o| o.claim.says.clone()).collect(),
            ),
            text("check", outcomes.iter().map(check).collect()),
            text("values", values),
            text(
                "holds",
                outcomes
                    .iter()
                    .map(|o| if o.holds { "yes" } else { "no" }.to_string())
                    .collect(),
            ),
        ],
    )?;
    Ok(Table {
        name: name.into(),
        caption: "The findings' claims: each qualitative sentence of the findings is a named \
                  check over the analyses (report/claims.toml), evaluated by build-report, \
                  which stops when one fails. Values on the tables' scale (×100 for scores \
                  in [0, 1]); a quantity without a model or family is the cohort mean's."
            .into(),
        frame: df,
        formats: vec![Format::Text; 5],
    })
}

/// The paper's presets, read from the preset files themselves (each checked against its
/// runs' recorded hash): `presets` (one row per preset: data source and options, slicing,
/// regime and split, metric, seeds) and `training` (one row per set of models that train
/// alike, with the presets that train them so: optimiser, learning rate, weight decay,
/// gradient-norm clip, batch, epochs, loss). Per-model overrides show as their own rows.
pub fn hyperparameters(presets: &[&crate::preset::LoadedPreset]) -> Result<Vec<Table>> {
    let mut described: Vec<[String; 6]> = Vec::new();
    // (models, training config) -> the presets that train those models that way.
    let mut training: Vec<(String, &crate::train::TrainConfig, Vec<String>)> = Vec::new();
    for loaded in presets {
        let p = &loaded.preset;
        let options = serde_json::to_value(&p.data_options).map_err(|e| {
            Error::Invalid(format!("table presets: {}: {e}", loaded.path.display()))
        })?;
        let (source, opts) = match (&p.data, options.as_object()) {
            (crate::data::DataSpec::Source(source), Some(o)) => (
                source.clone(),
                o.iter()
                    .map(|(k, v)| format!("{k} = {}", v.to_string().trim_matches('"')))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            (crate::data::DataSpec::Source(source), None) => (source.clone(), String::new()),
            (crate::data::DataSpec::Path(path), _) => (path.display().to_string(), String::new()),
        };
        let scheme = serde_json::to_value(&p.slicing.scheme)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "edges".into());
        let mut split = format!(
            "{}, {:.0}% train",
            p.regime.name(),
            p.split.train_fraction * 100.0
        );
        if p.downsample {
            split.push_str(", equal size");
        }
        if let Some(m) = p.max_rows {
            split.push_str(&format!(", at most {m} rows"));
        }
        let seeds: Vec<String> = p.seeds.iter().map(u64::to_string).collect();
        described.push([
            p.name.clone(),
            source,
            if opts.is_empty() { "–".into() } else { opts },
            scheme,
            split,
            format!("{} ({})", p.metric.name(), seeds.join(", ")),
        ]);
        let mut groups: Vec<(Vec<&str>, &crate::train::TrainConfig)> = Vec::new();
        for m in &p.models {
            match groups.iter_mut().find(|(_, t)| **t == m.train) {
                Some((keys, _)) => keys.push(&m.key),
                None => groups.push((vec![&m.key], &m.train)),
            }
        }
        for (keys, t) in groups {
            let keys = keys.join(", ");
            match training.iter_mut().find(|(k, c, _)| *k == keys && *c == t) {
                Some((_, _, names)) => names.push(p.name.clone()),
                None => training.push((keys, t, vec![p.name.clone()])),
            }
        }
    }
    let word = |v: serde_json::Result<serde_json::Value>| {
        v.ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    };
    let trained: Vec<[String; 9]> = training
        .iter()
        .map(|(keys, t, names)| {
            [
                names.join(", "),
                keys.clone(),
                word(serde_json::to_value(t.optimizer)),
                format!("{}", t.learning_rate),
                format!("{}", t.weight_decay),
                t.grad_clip.map_or("–".into(), |c| format!("{c}")),
                t.batch_size.to_string(),
                t.epochs.to_string(),
                word(serde_json::to_value(t.loss)),
            ]
        })
        .collect();
    Ok(vec![
        text_table(
            "presets",
            "The presets of the paper, read from the preset files the runs were made from: \
             data source and its options, slicing scheme, regime and split, metric and seeds.",
            [
                "preset",
                "data",
                "options",
                "slices",
                "regime, split",
                "metric (seeds)",
            ],
            &described,
        )?,
        text_table(
            "training",
            "Training settings, read from the presets: one row per set of models that train \
             alike in the presets named (a model with its own epochs has its own row).",
            [
                "presets",
                "models",
                "optimiser",
                "lr",
                "wd",
                "clip",
                "batch",
                "epochs",
                "loss",
            ],
            &trained,
        )?,
    ])
}

/// The data of the paper: every source and packaged encoder the presets read, with what it
/// holds, its licence and, for a package, the registry package and the SHA-256 `drift data
/// fetch` checks. Read from the crate's registries ([`crate::data::SOURCES`],
/// [`crate::packages::PACKAGES`]), so the table and `drift data list` cannot disagree.
pub fn data_table(presets: &[&crate::preset::LoadedPreset]) -> Result<Table> {
    let name = "data";
    let mut rows: Vec<[String; 5]> = Vec::new();
    let mut push = |row: [String; 5]| {
        if !rows.iter().any(|r| r[0] == row[0]) {
            rows.push(row);
        }
    };
    let package = |p: &crate::packages::Package| {
        (
            format!("{} {}", p.package, p.version),
            p.sha256[..16].to_string(),
        )
    };
    for loaded in presets {
        let p = &loaded.preset;
        if let crate::data::DataSpec::Source(source) = &p.data {
            let source = crate::data::source(source)?;
            let (pkg, sha) = source.package().map_or(("–".into(), "–".into()), package);
            push([
                source.name.into(),
                source.summary().into(),
                source.licence().into(),
                pkg,
                sha,
            ]);
        }
        let base = loaded.path.parent().unwrap_or(std::path::Path::new("."));
        let who = loaded.path.display().to_string();
        if let Some((settings, _)) = crate::text::encoder_input(&who, &p.data_options, base)?
            && let Some(pkg) =
                crate::packages::find(&settings.encoder, crate::packages::Holds::Encoder)
        {
            let (version, sha) = package(pkg);
            push([
                pkg.name.into(),
                pkg.summary.into(),
                pkg.licence.into(),
                version,
                sha,
            ]);
        }
    }
    text_table(
        name,
        "The data sources and encoders the presets read: what each holds, its licence, and \
         for a registry package its name, version and the SHA-256 that `drift data fetch` \
         checks.",
        ["data", "holds", "licence", "package", "SHA-256 (first 16)"],
        &rows,
    )
}

/// A table of text cells: `header` names the columns, each row gives one cell per column.
fn text_table<const N: usize>(
    name: &str,
    caption: &str,
    header: [&str; N],
    rows: &[[String; N]],
) -> Result<Table> {
    let columns: Vec<Column> = header
        .iter()
        .enumerate()
        .map(|(c, h)| text(h, rows.iter().map(|r| r[c].clone()).collect()))
        .collect();
    Ok(Table {
        name: name.into(),
        caption: caption.into(),
        frame: frame(name, columns)?,
        formats: vec![Format::Text; N],
    })
}

/// A group of studies side by side (e.g. the drift types): per trained model, its ID and
/// decay in each study (display scale), models in the first study's order.
pub fn group_table(group: &str, studies: &[(&str, &StudyAnalysis)]) -> Result<Table> {
    let name = format!("group-{group}");
    let Some((_, first)) = studies.first() else {
        return Err(Error::Invalid(format!("table {name}: no studies")));
    };
    let models: Vec<&ModelAnalysis> = first.models.iter().filter(|m| !m.baseline).collect();
    let mut columns = vec![text(
        "model",
        models.iter().map(|m| m.model.clone()).collect(),
    )];
    let mut formats = vec![Format::Text];
    for (study, a) in studies {
        let scale = a.metric.display_scale();
        for (stat, pick) in [
            (
                "ID",
                (|r: &Robustness| r.id) as fn(&Robustness) -> Option<f64>,
            ),
            ("decay", |r: &Robustness| r.decay),
        ] {
            let values: Vec<Option<f64>> = models
                .iter()
                .map(|m| {
                    a.model(&m.model)
                        .and_then(|x| pick(&x.overall))
                        .map(|v| v * scale)
                })
                .collect();
            columns.push(floats(&format!("{study} {stat}"), values));
            formats.push(Format::Fixed(a.metric.display_decimals()));
        }
    }
    let unit = first.metric.display_unit();
    Ok(Table {
        caption: format!(
            "The studies of group {group} side by side: each model's in-distribution score \
             and decay ({unit}, seed means) in each study."
        ),
        frame: frame(&name, columns)?,
        name,
        formats,
    })
}
