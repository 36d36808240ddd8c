//! The tables of one study's further scores: Agarwal & Nenkova's deterioration and
//! adaptation, Wild-Time's protocols, the retraining policies and the bootstrap intervals.

use super::rows::{by_key, scaled};
use crate::analysis::{Interval, StudyAnalysis, TemporalScore};
use crate::table::{Column, Format, Table};
use crate::{Error, Result};

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
    let columns = vec![
        Column::text("model", rows.iter().map(|r| r.0.to_string()).collect()),
        Column::text("score", rows.iter().map(|r| r.1.to_string()).collect()),
        Column::floats(
            "value",
            rows.iter().map(|r| scaled(r.2.score, scale)).collect(),
        ),
        Column::floats("p", rows.iter().map(|r| r.2.p_value).collect()),
        Column::ints("N", rows.iter().map(|r| Some(r.2.n as i64)).collect()),
        Column::floats("min", rows.iter().map(|r| scaled(r.2.min, scale)).collect()),
        Column::floats("max", rows.iter().map(|r| scaled(r.2.max, scale)).collect()),
    ];
    Table::from_columns(
        name,
        &format!(
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
        columns,
        vec![
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
    )
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
    let columns = vec![
        Column::text("model", models.iter().map(|m| m.model.clone()).collect()),
        Column::text(
            "fix at",
            models
                .iter()
                .map(|m| {
                    m.eval_fix
                        .map_or(String::new(), |f| study.slices[f.cutoff].clone())
                })
                .collect(),
        ),
        Column::floats("fix ID", fix(|f| f.id)),
        Column::floats("fix OOD avg", fix(|f| f.ood_avg)),
        Column::floats("fix OOD worst", fix(|f| f.ood_worst)),
        Column::floats("stream avg", stream(|s| s.avg)),
        Column::floats("stream worst", stream(|s| s.worst)),
        Column::floats("stream best", stream(|s| s.best)),
    ];
    Table::from_columns(
        name,
        &format!(
            "Wild-Time's protocols read off the seed-mean matrix ({}): Eval-Fix splits at the \
             middle slice (ID: mean over the slices the model trained on, each scored on its \
             test part; OOD: every later slice, mean and worst); Eval-Stream scores each \
             cutoff's model on its next {k} slices (mean, worst and best per row, averaged \
             over rows).",
            study.metric.display_unit()
        ),
        columns,
        vec![
            Format::Text,
            Format::Text,
            Format::Fixed(d),
            Format::Fixed(d),
            Format::Fixed(d),
            Format::Fixed(d),
            Format::Fixed(d),
            Format::Fixed(d),
        ],
    )
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
    let mut columns = vec![Column::text(
        "policy",
        first
            .retraining
            .iter()
            .map(|r| r.policy.name(scale))
            .collect(),
    )];
    let mut formats = vec![Format::Text];
    for m in &models {
        columns.push(Column::text(
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
    Table::from_columns(
        name,
        &format!(
            "Retraining policies simulated from each model's cumulative matrix, with no new \
             training ({}): the mean score a deployment sees over slices 2..K when it \
             keeps the model of its latest retraining, and (in brackets) how many times it \
             retrained; \"drop > d\": retrain after a slice scored more than d below the \
             deployed model's ID score.",
            study.metric.display_unit()
        ),
        columns,
        formats,
    )
}

/// Bootstrap intervals (95%, percentile, over cutoffs) per model (by key): `model`, then
/// `low` and `high` of `ID`, `future`, `decay`, and of `future - best` (the model's future
/// score minus the best model's, same draws; empty for the best model).
pub fn bootstrap_table(study: &StudyAnalysis) -> Result<Table> {
    let name = "bootstrap";
    let scale = study.metric.display_scale();
    let d = study.metric.display_decimals();
    let models = by_key(study);
    let mut columns = vec![Column::text(
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
        columns.push(Column::text(
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
    Table::from_columns(
        name,
        &format!(
            "95% bootstrap intervals ({}; {} resamples of the cutoffs, percentile, seeded) \
             of each model's ID, future and decay on its seed-mean matrix, and of its future \
             score minus the best model's; an interval of the difference that contains 0 \
             does not separate the two.",
            study.metric.display_unit(),
            crate::analysis::BOOTSTRAP_REPLICATES
        ),
        columns,
        vec![Format::Text; 5],
    )
}
