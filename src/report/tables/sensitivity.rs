//! The tables that show how much a study's conclusions depend on definitions: decay under
//! its three definitions side by side, and drift-happens' robustness family ranked by
//! its headline score H.

use super::rows::by_key;
use crate::Result;
use crate::analysis::{ModelAnalysis, SCORE_NAMES, SeedScores, Spread, StudyAnalysis, ranked_by_h};
use crate::table::{Column, Format, Table};

/// Decay under its three definitions per trained model (by key), each the mean and sample
/// sd over the seeds of the seeds' values, with the model's rank under it (1 = steadiest:
/// the smallest decay, the largest retention): `model`, `seeds`, `pooled`, `pooled sd`,
/// `pooled rank`, `row-matched`, ..., `retention`, ....
pub fn decay_definitions_table(study: &StudyAnalysis) -> Result<Table> {
    let name = "decay-definitions";
    let scale = study.metric.display_scale();
    let d = study.metric.display_decimals();
    let models: Vec<&ModelAnalysis> = by_key(study).into_iter().filter(|m| !m.baseline).collect();
    type Pick = fn(&SeedScores) -> Option<f64>;
    let definitions: [(&str, Pick, bool); 3] = [
        ("pooled", |s| s.decay.pooled, false),
        ("row-matched", |s| s.decay.row_matched, false),
        ("retention", |s| s.decay.retention, true),
    ];
    let mut columns = vec![
        Column::text("model", models.iter().map(|m| m.model.clone()).collect()),
        Column::ints(
            "seeds",
            models
                .iter()
                .map(|m| Some(m.per_seed.len() as i64))
                .collect(),
        ),
    ];
    let mut formats = vec![Format::Text, Format::Integer];
    for (label, pick, higher_is_steadier) in definitions {
        let spread: Vec<(Option<f64>, Option<f64>)> = models
            .iter()
            .map(|m| {
                let values: Vec<f64> = m.per_seed.iter().filter_map(pick).collect();
                mean_sd(&values)
            })
            .collect();
        // Retention is a share, not a score: it is not scaled.
        let unit = if higher_is_steadier { 1.0 } else { scale };
        let ranks = rank(
            &spread.iter().map(|s| s.0).collect::<Vec<_>>(),
            higher_is_steadier,
        );
        columns.push(Column::floats(
            label,
            spread.iter().map(|s| s.0.map(|v| v * unit)).collect(),
        ));
        columns.push(Column::floats(
            &format!("{label} sd"),
            spread.iter().map(|s| s.1.map(|v| v * unit)).collect(),
        ));
        columns.push(Column::ints(&format!("{label} rank"), ranks));
        let decimals = if higher_is_steadier { 3 } else { d };
        formats.extend([
            Format::Fixed(decimals),
            Format::Fixed(decimals),
            Format::Integer,
        ]);
    }
    Table::from_columns(
        name,
        &format!(
            "Decay under three definitions ({}; retention unscaled), each the mean and sd \
             over the seeds of each seed's own value, and the model's rank under it (1 = \
             steadiest). Pooled: the mean of the diagonal minus the mean of the cells right \
             of it. Row-matched: per cutoff with a future, its diagonal cell minus the mean \
             of its later cells, averaged over those cutoffs. Retention: the future score \
             as a share of the ID score (ID over future for errors); 1 keeps everything. \
             Where the ranks differ, the ordering of the models by decay depends on its \
             definition.",
            study.metric.display_unit()
        ),
        columns,
        formats,
    )
}

/// A model, its scores' means over seeds and H's sd.
type ScoredRow<'a> = (&'a ModelAnalysis, Vec<Option<f64>>, Option<f64>);

/// drift-happens' robustness family per trained model, at its default parameters (alpha
/// 1, tau 0.1, lambda 0.5, beta 0), each score's mean over seeds, and H's sd; ranked by
/// the mean H, best first: `rank`, `model`, `seeds`, then the eight scores, `H sd`.
pub fn robustness_scores_table(study: &StudyAnalysis) -> Result<Table> {
    let name = "robustness-scores";
    // Per model: its means (SCORE_NAMES order) and H's sd; ties in H by key.
    let rows: Vec<ScoredRow> = ranked_by_h(by_key(study))
        .into_iter()
        .map(|(m, means)| {
            let h_sd = means.last().and_then(|(_, h)| h.and_then(|h| h.sd));
            (
                m,
                means.iter().map(|(_, s)| s.map(|s| s.mean)).collect(),
                h_sd,
            )
        })
        .collect();
    let mut columns = vec![
        Column::ints("rank", (1..=rows.len() as i64).map(Some).collect()),
        Column::text("model", rows.iter().map(|r| r.0.model.clone()).collect()),
        Column::ints(
            "seeds",
            rows.iter()
                .map(|r| Some(r.0.robustness_scores.len() as i64))
                .collect(),
        ),
    ];
    for (i, (score, _)) in SCORE_NAMES.iter().enumerate() {
        columns.push(Column::floats(score, rows.iter().map(|r| r.1[i]).collect()));
    }
    columns.push(Column::floats("H sd", rows.iter().map(|r| r.2).collect()));
    let mut formats = vec![Format::Integer, Format::Text, Format::Integer];
    formats.extend(std::iter::repeat_n(Format::Fixed(3), SCORE_NAMES.len() + 1));
    Table::from_columns(
        name,
        "The robustness family of drift-happens per model, mean over seeds (each seed's \
         matrix scored on its own), ranked by H: utility U = clip(M, 0, 1), or exp(-M) for \
         errors; S the mean diagonal utility over every cutoff but the last; over the \
         future cells, R_abs one minus the mean drop from the diagonal, R_rel the mean \
         share of the diagonal kept, DRS_alpha the same over the diagonal to the power \
         alpha = 1, LDRS their geometric mean, CVaR_tau the mean of the worst tau = 10% of \
         them; J_lambda = S/2 + R_rel/2 and H their harmonic mean.",
        columns,
        formats,
    )
}

fn mean_sd(values: &[f64]) -> (Option<f64>, Option<f64>) {
    Spread::of(values).map_or((None, None), |s| (Some(s.mean), s.sd))
}

/// 1-based ranks of `values` (ties share the better rank), the largest first when
/// `larger_first`; `None` stays unranked.
fn rank(values: &[Option<f64>], larger_first: bool) -> Vec<Option<i64>> {
    values
        .iter()
        .map(|v| {
            let v = (*v)?;
            let better = values
                .iter()
                .flatten()
                .filter(|&&o| if larger_first { o > v } else { o < v })
                .count();
            Some(better as i64 + 1)
        })
        .collect()
}
