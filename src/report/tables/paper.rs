//! The paper-wide tables: the findings' claims, the presets and training settings, the
//! data sources, and a group of studies side by side.

use crate::analysis::{ModelAnalysis, Robustness, StudyAnalysis};
use crate::report::claims::{Check, ClaimOutcome, Form};
use crate::table::{Column, Format, Table};
use crate::{Error, Result};

/// The findings' claims ([`crate::report::claims`]): name, the sentence it backs (or asks),
/// the check, each quantity's value on the paper's scale with its seed range, the test's
/// p-value before and after Holm's correction, the outcome, and the verdict against a seed
/// paper with its reason. One table for the whole paper.
pub fn claims_table(outcomes: &[ClaimOutcome]) -> Result<Table> {
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
                    let range = v
                        .seed_range
                        .map(|(lo, hi)| {
                            format!(
                                " [{}, {}]",
                                crate::format::fixed_typeset(lo * v.scale, 2),
                                crate::format::fixed_typeset(hi * v.scale, 2)
                            )
                        })
                        .unwrap_or_default();
                    format!(
                        "{} = {}{range}{p}",
                        v.label,
                        crate::format::fixed_typeset(v.shown, 2)
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
        .collect();
    let check = |o: &ClaimOutcome| {
        let c = &o.claim;
        let mut words = match c.check {
            Check::Above | Check::Below => {
                format!("{} {}", c.check.name(), c.value.unwrap_or_default())
            }
            Check::Largest | Check::Smallest if c.margin > 0.0 => {
                format!("{} (margin {})", c.check.name(), c.margin)
            }
            _ => c.check.name().to_string(),
        };
        if c.robust {
            words.push_str(", robust");
        }
        if c.form == Form::Question {
            words.push_str(" (question)");
        }
        words
    };
    let outcome = |o: &ClaimOutcome| {
        let mut words = o.outcome.words(o.claim.check).to_string();
        if o.uncorrected != o.outcome {
            words.push_str(&format!(
                " ({} before the correction)",
                o.uncorrected.words(o.claim.check)
            ));
        }
        words
    };
    let verdict = |o: &ClaimOutcome| {
        o.seed
            .as_ref()
            .map(|s| format!("{}: {}", s.verdict.words(), s.reason))
            .unwrap_or_default()
    };
    let columns = vec![
        Column::text(
            "claim",
            outcomes.iter().map(|o| o.claim.name.clone()).collect(),
        ),
        Column::text(
            "says",
            outcomes.iter().map(|o| o.claim.says.clone()).collect(),
        ),
        Column::text("check", outcomes.iter().map(check).collect()),
        Column::text("values", values),
        Column::text(
            "p",
            outcomes
                .iter()
                .map(|o| crate::report::claims::p_value(o.test.p))
                .collect(),
        ),
        Column::text(
            "holm_p",
            outcomes
                .iter()
                .map(|o| crate::report::claims::p_value(o.adjusted_p))
                .collect(),
        ),
        Column::text("outcome", outcomes.iter().map(outcome).collect()),
        Column::text("seed_verdict", outcomes.iter().map(verdict).collect()),
    ];
    Table::from_columns(
        name,
        "The findings' claims: each qualitative sentence of the findings is a named \
         statistical test over the studies' per-seed values (report/claims.toml; Welch's \
         t-test between quantities, the one-sample t-test against a bound, Wilcoxon's \
         signed-rank test for the Agarwal & Nenkova scores, Spearman's rank correlation \
         over runs), its p-value adjusted by Holm's step-down correction within its \
         family of claims, evaluated by build-report, \
         which stops when a finding does not come out as written. Values on the tables' \
         scale (×100 for scores in [0, 1]) with their range over seeds; a quantity \
         without a model or family is the cohort mean's.",
        columns,
        // The verdicts are the seed-claims table's (and the CSV's); here they would crowd
        // out the values.
        [vec![Format::Text; 7], vec![Format::Hidden]].concat(),
    )?
    .with_typst_widths(&["1.2fr", "1.8fr", "0.9fr", "2.6fr", "auto", "auto", "1.1fr"])
}

/// The paper's presets, read from the preset files themselves (each checked against its
/// runs' recorded hash): `presets` (one row per preset: data source and options, slicing,
/// regime and split, metric, seeds, what the seeds vary) and `training` (one row per set of models that train
/// alike, with the presets that train them so: optimiser, learning rate, weight decay,
/// gradient-norm clip, batch, epochs, loss). Per-model overrides show as their own rows.
pub fn hyperparameters(presets: &[&crate::preset::LoadedPreset]) -> Result<Vec<Table>> {
    let mut described: Vec<[String; 7]> = Vec::new();
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
        let varied: Vec<&str> = p.varied().iter().map(|v| v.name()).collect();
        described.push([
            p.name.clone(),
            source,
            if opts.is_empty() { "–".into() } else { opts },
            scheme,
            split,
            format!("{} ({})", p.metric.name(), seeds.join(", ")),
            varied.join(", "),
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
             data source and its options, slicing scheme, regime and split, metric and seeds, \
             and what a seed varies (init: the initialisation and batch order; split: the \
             once-per-slice train/test split; data: a generator's draw).",
            [
                "preset",
                "data",
                "options",
                "slices",
                "regime, split",
                "metric (seeds)",
                "seeds vary",
            ],
            &described,
        )?
        // The options are the longest cells: room for them keeps the table on one page.
        .with_typst_widths(&["auto", "auto", "2.6fr", "auto", "1.2fr", "1.1fr", "auto"])?,
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
        .map(|(c, h)| Column::text(h, rows.iter().map(|r| r[c].clone()).collect()))
        .collect();
    Table::from_columns(name, caption, columns, vec![Format::Text; N])
}

/// A group of studies side by side (e.g. the drift types): per trained model, its ID and
/// decay in each study (display scale), models in the first study's order.
pub fn group_table(group: &str, studies: &[(&str, &StudyAnalysis)]) -> Result<Table> {
    let name = format!("group-{group}");
    let Some((_, first)) = studies.first() else {
        return Err(Error::Invalid(format!("table {name}: no studies")));
    };
    let models: Vec<&ModelAnalysis> = first.models.iter().filter(|m| !m.baseline).collect();
    let mut columns = vec![Column::text(
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
            columns.push(Column::floats(&format!("{study} {stat}"), values));
            formats.push(Format::Fixed(a.metric.display_decimals()));
        }
    }
    let unit = first.metric.display_unit();
    Table::from_columns(
        &name,
        &format!(
            "The studies of group {group} side by side: each model's in-distribution score \
             and decay ({unit}, seed means) in each study."
        ),
        columns,
        formats,
    )
}

/// A drift-strength sweep ([`crate::report::sweep`]): one row per kind of drift and
/// strength (the no-drift study once, as strength 0), per model its in-distribution score
/// and row-matched decay (display scale, seed means) with the decay's range over the seeds.
pub fn strength_table(sweep: &crate::report::sweep::Sweep) -> Result<Table> {
    let name = format!("strength-{}", sweep.group);
    let scale = sweep.metric.display_scale();
    let decimals = sweep.metric.display_decimals();
    // Rows: (kind, strength, the curve point's index), no drift first.
    let mut rows: Vec<(&str, f64, usize)> = vec![("none", 0.0, 0)];
    for kind in crate::report::sweep::KINDS {
        let Some(curve) = sweep.models.first().and_then(|m| sweep.curve(m, kind)) else {
            continue;
        };
        rows.extend(
            curve
                .points
                .iter()
                .enumerate()
                .skip(1)
                .map(|(i, p)| (kind, p.strength, i)),
        );
    }
    let mut columns = vec![
        Column::text("drift", rows.iter().map(|r| r.0.to_string()).collect()),
        Column::floats("strength", rows.iter().map(|r| Some(r.1)).collect()),
    ];
    let mut formats = vec![Format::Text, Format::Fixed(2)];
    for model in &sweep.models {
        // Every curve of the model starts at the no-drift point.
        let point = |(kind, _, i): &(&str, f64, usize)| {
            sweep
                .curves
                .iter()
                .find(|c| &c.model == model && (*kind == "none" || c.kind == *kind))
                .and_then(|c| c.points.get(*i))
        };
        let pick = |f: fn(&crate::report::sweep::SweepPoint) -> f64| {
            rows.iter()
                .map(|r| point(r).map(|p| f(p) * scale))
                .collect::<Vec<_>>()
        };
        columns.push(Column::floats(&format!("{model} ID"), pick(|p| p.id.mean)));
        columns.push(Column::floats(
            &format!("{model} decay"),
            pick(|p| p.decay.mean),
        ));
        let ranges = rows
            .iter()
            .map(|r| {
                point(r)
                    .map(|p| {
                        format!(
                            "{} to {}",
                            crate::format::fixed_typeset(p.decay.min * scale, decimals),
                            crate::format::fixed_typeset(p.decay.max * scale, decimals)
                        )
                    })
                    .unwrap_or_else(|| "–".into())
            })
            .collect();
        columns.push(Column::text(&format!("{model} decay range"), ranges));
        formats.extend([
            Format::Fixed(decimals),
            Format::Fixed(decimals),
            Format::Text,
        ]);
    }
    let unit = sweep.metric.display_unit();
    Table::from_columns(
        &name,
        &format!(
            "Drift-strength sweep {}: each model's in-distribution score and row-matched \
             decay ({unit}, means over the seeds) at each strength of each kind of drift, \
             with the decay's range over the seeds; strength 0 is the no-drift study {}.",
            sweep.group, sweep.none
        ),
        columns,
        formats,
    )
}
