//! The ranked tables of one study: robustness over the whole matrix, one table per
//! evenly spread cutoff (each score with its seed spread), and the family averages.

use super::rows::{by_key, scaled};
use crate::Result;
use crate::analysis::{
    ModelAnalysis, PickSpread, Ranked, Robustness, SeedSpread, Spread, StudyAnalysis,
};
use crate::table::{Column, Format, Table};

/// `rank` (from `ranking`; null for a model not in it), `model`, then the `ID`, `future`
/// and `decay` columns of `scores` times `scale`.
fn ranked_score_columns(
    scores: &[(&str, Robustness)],
    ranking: &[Ranked],
    scale: f64,
) -> Vec<Column> {
    let rank = |m: &str| ranking.iter().find(|r| r.model == m).map(|r| r.rank as i64);
    let column = |name: &str, value: fn(&Robustness) -> Option<f64>| {
        Column::floats(
            name,
            scores
                .iter()
                .map(|(_, s)| scaled(value(s), scale))
                .collect(),
        )
    };
    vec![
        Column::ints("rank", scores.iter().map(|(m, _)| rank(m)).collect()),
        Column::text("model", scores.iter().map(|(m, _)| m.to_string()).collect()),
        column("ID", |s| s.id),
        column("future", |s| s.future),
        column("decay", |s| s.decay),
    ]
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
        out.push(Column::floats(&format!("{label} sd"), part(|s| s.sd)));
        out.push(Column::floats(
            &format!("{label} min"),
            part(|s| Some(s.min)),
        ));
        out.push(Column::floats(
            &format!("{label} max"),
            part(|s| Some(s.max)),
        ));
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
    Column::text(
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
        Column::text("family", models.iter().map(|m| m.family.clone()).collect()),
    );
    out.insert(
        3,
        Column::ints(
            "seeds",
            models.iter().map(|m| Some(m.seeds.len() as i64)).collect(),
        ),
    );
    formats.splice(2..2, [Format::Text, Format::Integer]);
    out.push(Column::floats(
        "margin",
        models
            .iter()
            .map(|m| scaled(m.margin.and_then(|r| r.future), scale))
            .collect(),
    ));
    formats.push(Format::Fixed(d));
    out.push(tied_column(&models, &study.by_future));
    formats.push(Format::Text);
    let columns = out;
    Table::from_columns(
        name,
        &format!(
            "Robustness of each model ({}): ID, future and decay (positive = worse on the \
             future) on the seed-mean matrix ± the sd over seeds, with the per-seed range \
             below; margin: future score over the counting baseline's (positive = better); \
             tied: its seed range of future scores overlaps the next place's, so the seeds \
             do not order the two. Ranked by future score.",
            study.metric.display_unit()
        ),
        columns,
        formats,
    )?
    .sorted_by_rank()
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
        out.push(
            Table::from_columns(
                &name,
                &format!(
                    "Models trained through {} ({}): ID, future and decay of that row on the \
                 seed-mean matrix ± the sd over seeds, with the per-seed range below; \
                 ranked by future score; tied: its seed range of future scores overlaps \
                 the next place's.",
                    study.slices[at.cutoff],
                    study.metric.display_unit()
                ),
                columns,
                formats,
            )?
            .sorted_by_rank()?,
        );
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
    let columns = vec![
        Column::text(
            "family",
            averages.iter().map(|a| a.family.clone()).collect(),
        ),
        Column::text(
            "cutoff",
            averages
                .iter()
                .map(|a| match a.cutoff {
                    Some(c) => study.slices[c].clone(),
                    None => "mean".into(),
                })
                .collect(),
        ),
        Column::ints(
            "models",
            averages.iter().map(|a| Some(a.models as i64)).collect(),
        ),
        Column::floats(
            "ID",
            averages
                .iter()
                .map(|a| scaled(a.scores.id, scale))
                .collect(),
        ),
        Column::floats(
            "future",
            averages
                .iter()
                .map(|a| scaled(a.scores.future, scale))
                .collect(),
        ),
        Column::floats(
            "decay",
            averages
                .iter()
                .map(|a| scaled(a.scores.decay, scale))
                .collect(),
        ),
    ];
    let labels: Vec<&str> = study
        .spread
        .iter()
        .map(|&c| study.slices[c].as_str())
        .collect();
    Table::from_columns(
        name,
        &format!(
            "Family averages ({}) at the cutoffs {} and their mean.",
            study.metric.display_unit(),
            labels.join(", ")
        ),
        columns,
        vec![
            Format::Text,
            Format::Text,
            Format::Integer,
            Format::Fixed(d),
            Format::Fixed(d),
            Format::Fixed(d),
        ],
    )
}
