//! The paper's context: every value its templates quote, read from the studies' analyses,
//! the claims and the proof, one function per section of it (a study, a group of studies,
//! the claims, the provenance). Nothing the paper prints is computed in a template.

use std::path::Path;

use serde_json::{Value, json};

use crate::analysis::{ModelAnalysis, PickSpread, Ranked, StudyAnalysis};
use crate::artifacts::ModelRuns;
use crate::report::claims::ClaimOutcome;
use crate::report::proof::PaperProvenance;
use crate::report::study::{LoadedStudy, group_members, groups};
use crate::report::sweep::Sweep;
use crate::{Error, Result};

/// Rows an audit of the proof appendix draws.
pub const AUDIT_SAMPLE: usize = 10;

/// What the proof appendix says of `drift audit`: the rows it draws from (every cutoff
/// with a model of every trained run, each preset once) and the expected minutes of
/// [`AUDIT_SAMPLE`] of them, the mean estimate of a row from its run's recorded wall times
/// ([`crate::artifacts::WallTimes::cutoffs_estimate`], with the cutoffs it starts from)
/// times the sample, on the machines the runs recorded.
fn audit_context(studies: &[LoadedStudy]) -> Value {
    let mut seen = std::collections::BTreeSet::new();
    let (mut rows, mut seconds, mut hosts) = (0usize, 0.0, std::collections::BTreeSet::new());
    for study in studies {
        for loaded in &study.presets {
            let preset = &loaded.preset;
            if !seen.insert(preset.name.clone()) {
                continue;
            }
            let regime = &preset.regime;
            let trained = |key: &str| preset.models.iter().any(|m| m.key == key);
            let runs = study.runs.iter().filter(|r| r.preset == preset.name);
            for run in runs {
                let k = run.matrix.slices().len();
                for (p, times) in run.provenance.iter().zip(&run.timing) {
                    if !trained(&p.model) {
                        continue;
                    }
                    for i in (0..k).filter(|&i| !regime.trained_slices(i).is_empty()) {
                        rows += 1;
                        if let Some(t) = times {
                            let needs = regime.cutoffs_to_train(&[i]);
                            seconds += t.cutoffs_estimate(regime, k, &needs);
                            hosts.extend(t.host.clone());
                        }
                    }
                }
            }
        }
    }
    let minutes = seconds / rows.max(1) as f64 * AUDIT_SAMPLE as f64 / 60.0;
    json!({
        "sample": AUDIT_SAMPLE,
        "rows": rows,
        "minutes": format!("{minutes:.0}"),
        "caught": format!("{:.2}", crate::analysis::fraction_caught(AUDIT_SAMPLE, crate::analysis::SAMPLE_CONFIDENCE)),
        "hosts": hosts.into_iter().collect::<Vec<_>>().join("; "),
    })
}

/// The numbers the paper's text quotes, per study, read from its analyses, and the
/// claims. `tables` lists each study's tables by study name ([`crate::report::jobs::table_jobs`]).
pub fn paper_context(
    root: &Path,
    studies: &[LoadedStudy],
    sweeps: &[Sweep],
    tables: &Value,
    outcomes: &[ClaimOutcome],
) -> Result<Value> {
    let out = studies
        .iter()
        .map(|study| study_context(root, study, tables))
        .collect::<Result<Vec<_>>>()?;
    let by_name: serde_json::Map<String, Value> = out
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or_default().to_string(),
                s.clone(),
            )
        })
        .collect();
    let mut group_map = serde_json::Map::new();
    for group in groups(studies) {
        let context = group_context(root, studies, sweeps, &group)?;
        group_map.insert(group, context);
    }
    Ok(json!({
        "studies": out,
        "study": by_name,
        "groups": group_map,
        "claims": claims_context(outcomes),
        // How many claims each Holm family holds (the size of its correction).
        "claim_families": claim_families(outcomes),
        "audit": audit_context(studies),
        // The claims that test one of the seed paper's, in file order.
        "seed_paper_claims": seed_paper_claims(outcomes),
        "claims_table": "/report/build/tables/claims.typ",
        "presets_table": "/report/build/tables/presets.typ",
        "training_table": "/report/build/tables/training.typ",
        "data_table": "/report/build/tables/data.typ",
    }))
}

/// One study's section: its models, places, margins over the baseline, health, figures
/// and tables, every value on the tables' scale (×100 for metrics in [0, 1]).
fn study_context(root: &Path, study: &LoadedStudy, tables: &Value) -> Result<Value> {
    let a = &study.analysis;
    let metric = a.metric;
    let c = a.cohort_overall;
    let (best, steady) = (&a.by_future, &a.by_decay);
    let name = &study.spec.name;
    let figure = |file: &str| placed(root, &format!("/figures/{name}/{file}.svg"));
    // The text quotes values on the tables' scale (×100 for metrics in [0, 1]).
    let scale = metric.display_scale();
    let scaled = |v: Option<f64>| v.map(|v| v * scale);
    let unit = metric.display_unit();
    let saliency = saliency_context(study, figure)?;
    let detectors = detectors_context(a, figure)?;
    let trained: Vec<&ModelAnalysis> = a.models.iter().filter(|m| !m.baseline).collect();
    let baseline = a.models.iter().find(|m| m.baseline);
    let health = health_counts(&study.runs);
    // The leader and the runner-up by future score, and whether the seeds or the
    // bootstrap separate them.
    let place =
        |ranking: &[Ranked], n: usize, pick: PickSpread| ranked_place(a, ranking, n, pick, scale);
    let margin_future = |m: &&ModelAnalysis| m.margin.and_then(|r| r.future);
    // One entry more than `json!` nests within the recursion limit: set after.
    let mut context = json!({
        "name": name,
        "title": study.spec.title,
        "metric": metric.name(),
        "models": trained.iter().map(|m| m.model.clone()).collect::<Vec<_>>(),
        // Every model of the figures, the baseline included, in figure order.
        "models_all": a.models.iter().map(|m| m.model.clone()).collect::<Vec<_>>(),
        "seeds": trained.first().map_or(0, |m| m.seeds.len()),
        "baseline": baseline.map(|b| json!({
            "model": b.model,
            "id": scaled(b.overall.id),
            "future": scaled(b.overall.future),
            // A constant score under an AUC: 0.5 in every cell.
            "constant_score": metric.reads() == crate::metrics::Reads::Scores,
        })),
        "margin_min": scaled(trained.iter().filter_map(margin_future).reduce(f64::min)),
        "margin_max": scaled(trained.iter().filter_map(margin_future).reduce(f64::max)),
        "margins": margins(&trained, scale),
        "below_baseline": below_baseline(&trained),
        "health": health,
        "health_csv": format!("report/build/tables/{name}-health.csv"),
        "collapsed_excluded": study.spec.collapsed == crate::report::study::Collapsed::Exclude,
        "first_place": place(best, 0, |s| s.future),
        "second_place": place(best, 1, |s| s.future),
        "first_steady": place(steady, 0, |s| s.decay),
        "second_steady": place(steady, 1, |s| s.decay),
        "runner_up_vs_best": runner_up_vs_best(a, scale),
        "slices": a.slices.len(),
        "first_slice": a.slices.first(),
        "last_slice": a.slices.last(),
        "unit": unit,
        "cohort_id": scaled(c.id),
        "cohort_future": scaled(c.future),
        "cohort_decay": scaled(c.decay),
        "raw": a.models.iter().map(|m| figure(&format!("{}-raw", m.model))).collect::<Result<Vec<_>>>()?,
        "deviation": a.models.iter().map(|m| figure(&format!("{}-deviation", m.model))).collect::<Result<Vec<_>>>()?,
        "cohort_mean": figure("cohort-mean")?,
        "forgetting_models": figure("forgetting-models")?,
        "forgetting_families": figure("forgetting-families")?,
        "ranking_future": figure("ranking-future")?,
        "ranking_decay": figure("ranking-decay")?,
        "temporal_effects": figure("temporal-effects")?,
        "group": study.spec.group,
        "agarwal_nenkova_design": study.design.is_agarwal_nenkova(),
        "design": study.design.describe(),
        "retraining": figure("retraining")?,
        "retraining_drops": if scale == 100.0 {
            "1, 2, 5 or 10 points"
        } else {
            "1%, 2%, 5% or 10% of the mean ID score"
        },
        "saliency": saliency,
        "tables": tables.get(name.as_str()).cloned().unwrap_or_default(),
    });
    context["detectors"] = detectors.unwrap_or(Value::Null);
    Ok(context)
}

/// A study's detector figures (none unless every trained model's runs have detectors):
/// the accuracy estimates (when a model has any) and the trigger curves; `figure` places
/// one of its figures.
fn detectors_context(
    a: &StudyAnalysis,
    figure: impl Fn(&str) -> Result<Value>,
) -> Result<Option<Value>> {
    let Some(models) = a.detector_models() else {
        return Ok(None);
    };
    let estimates = models.iter().any(|(_, d)| !d.estimates.is_empty());
    Ok(Some(json!({
        "estimates": if estimates { Some(figure("detectors-estimates")?) } else { None },
        "retraining": figure("detectors-retraining")?,
    })))
}

/// A study's saliency maps as the text describes them (none without maps); `figure`
/// places one of its figures.
fn saliency_context(
    study: &LoadedStudy,
    figure: impl Fn(&str) -> Result<Value>,
) -> Result<Option<Value>> {
    let Some(m) = &study.saliency else {
        return Ok(None);
    };
    Ok(Some(json!({
        "figure": figure("saliency")?,
        "models": m.rows,
        "columns": m.columns,
        "seeds_min": m.seeds.0,
        "seeds_max": m.seeds.1,
        "images_min": m.images.0,
        "images_max": m.images.1,
        "blind": m.blind,
    })))
}

/// The trained model at place `n` of `ranking` (the text compares trained models; the
/// baseline's place is in the tables): its name, value on the display scale `scale`, and
/// whether the seeds tie it with the next one (their `pick` ranges overlap).
fn ranked_place(
    a: &StudyAnalysis,
    ranking: &[Ranked],
    n: usize,
    pick: PickSpread,
    scale: f64,
) -> Option<Value> {
    let trained: Vec<&ModelAnalysis> = ranking
        .iter()
        .filter_map(|r| a.model(&r.model))
        .filter(|m| !m.baseline)
        .collect();
    let value = |m: &ModelAnalysis| ranking.iter().find(|r| r.model == m.model).map(|r| r.value);
    trained.get(n).map(|m| {
        // Tied with the next trained model: their seed ranges overlap.
        let tied = trained.get(n + 1).is_some_and(|next| {
            pick(&m.spread)
                .zip(pick(&next.spread))
                .is_some_and(|(x, y)| x.overlaps(&y))
        });
        json!({
            "model": m.model,
            "value": value(m).map(|v| v * scale),
            "tied_with_next": tied,
        })
    })
}

/// The bootstrap interval of the runner-up's future score minus the leader's, on the
/// display scale, when there is a runner-up with one.
fn runner_up_vs_best(a: &StudyAnalysis, scale: f64) -> Option<Value> {
    a.by_future
        .iter()
        .filter_map(|r| a.model(&r.model))
        .filter(|m| !m.baseline)
        .nth(1)
        .and_then(|m| m.bootstrap.future_vs_best)
        .map(|i| {
            json!({
                "low": i.low * scale,
                "high": i.high * scale,
                "excludes_zero": i.excludes_zero(),
            })
        })
}

/// Each trained model's future margin over the baseline, on the display scale.
fn margins(trained: &[&ModelAnalysis], scale: f64) -> Vec<Value> {
    trained
        .iter()
        .map(|m| {
            json!({
                "model": m.model,
                "future": m.margin.and_then(|r| r.future).map(|v| v * scale),
            })
        })
        .collect()
}

/// The trained models whose future score is no better than the baseline's.
fn below_baseline(trained: &[&ModelAnalysis]) -> Vec<String> {
    trained
        .iter()
        .filter(|m| m.margin.and_then(|r| r.future).is_some_and(|v| v <= 0.0))
        .map(|m| m.model.clone())
        .collect()
}

/// One group's section: its studies, their health and baseline margins together, and
/// its shared figure and table.
fn group_context(
    root: &Path,
    studies: &[LoadedStudy],
    sweeps: &[Sweep],
    group: &str,
) -> Result<Value> {
    let in_group = group_members(studies, group);
    let members: Vec<&str> = in_group.iter().map(|s| s.spec.name.as_str()).collect();
    // Health and the baseline margins over every study of the group.
    let (mut checkpoints, mut collapsed) = (0, 0);
    for s in &in_group {
        let h = health_counts(&s.runs);
        checkpoints += h["checkpoints"].as_u64().unwrap_or(0);
        collapsed += h["collapsed"].as_u64().unwrap_or(0);
    }
    let margins: Vec<f64> = in_group
        .iter()
        .flat_map(|s| {
            let scale = s.analysis.metric.display_scale();
            s.analysis
                .models
                .iter()
                .filter(|m| !m.baseline)
                .filter_map(move |m| m.margin.and_then(|r| r.id).map(|v| v * scale))
        })
        .collect();
    Ok(json!({
        "studies": members,
        "checkpoints": checkpoints,
        "collapsed": collapsed,
        "collapsed_percent": if checkpoints > 0 { 100.0 * collapsed as f64 / checkpoints as f64 } else { 0.0 },
        "margin_id_min": margins.iter().copied().reduce(f64::min),
        "margin_id_max": margins.iter().copied().reduce(f64::max),
        "cohort_means": placed(root, &format!("/figures/cohort-means-{group}.svg"))?,
        "table": format!("/report/build/tables/group-{group}.typ"),
        "sweep": match sweeps.iter().find(|s| s.group == group) {
            Some(sweep) => sweep_context(root, sweep)?,
            None => Value::Null,
        },
    }))
}

/// A drift-strength sweep's part of its group's section: the figure, the table, the
/// strengths, and the range of the models' in-distribution scores (display scale), which
/// says whether ID is off the ceiling.
fn sweep_context(root: &Path, sweep: &Sweep) -> Result<Value> {
    let scale = sweep.metric.display_scale();
    let ids: Vec<f64> = sweep
        .curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.id.mean * scale))
        .collect();
    let seeds: Vec<usize> = sweep
        .curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.decay.n))
        .collect();
    Ok(json!({
        "figure": placed(root, &format!("/figures/strength-{}.svg", sweep.group))?,
        "table": format!("/report/build/tables/strength-{}.typ", sweep.group),
        "none": sweep.none,
        "rows_per_year": sweep.params.timeline.rows_per_year,
        // The share of images whose cue marks the wrong class, in percent.
        "cue_wrong_percent": (1.0 - sweep.params.cue_reliability) * 100.0,
        "models": sweep.models,
        // Rust's shortest form: 0.25, 0.5, 1.
        "strengths": sweep.strengths.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        "kinds": crate::report::sweep::KINDS,
        "id_min": ids.iter().copied().reduce(f64::min),
        "id_max": ids.iter().copied().reduce(f64::max),
        "seeds_min": seeds.iter().min(),
        "seeds_max": seeds.iter().max(),
    }))
}

/// What the paper says about checkpoint health: trained checkpoints (cutoffs of every
/// model's every seed, baselines left out), how many collapsed, the runs with at least one
/// collapsed cutoff, the filled cells those rows hold, and whether every run recorded
/// its health.
fn health_counts(runs: &[ModelRuns]) -> Value {
    let (mut checkpoints, mut collapsed, mut cells, mut runs_hit) = (0, 0, 0, 0);
    let trained = runs
        .iter()
        .filter(|r| crate::baseline::Baseline::from_key(&r.model).is_none());
    let mut recorded = true;
    // Per model, in run order: "mlp_s 3" for each model with a collapsed checkpoint.
    let mut per_model: Vec<String> = Vec::new();
    for r in trained {
        recorded &= r.has_health();
        let mut of_model = 0;
        for (health, grid) in r.health.iter().zip(r.matrix.grids()) {
            let Some(health) = health else { continue };
            checkpoints += health.len();
            let hit: Vec<usize> = (0..health.len()).filter(|&i| health[i].collapsed).collect();
            of_model += hit.len();
            runs_hit += usize::from(!hit.is_empty());
            cells += grid.filled().filter(|(i, _, _)| hit.contains(i)).count();
        }
        collapsed += of_model;
        if of_model > 0 {
            per_model.push(format!("{} {of_model}", r.model));
        }
    }
    json!({
        "recorded": recorded,
        "checkpoints": checkpoints,
        "collapsed": collapsed,
        "per_model": per_model.join(", "),
        "runs": runs_hit,
        "cells": cells,
    })
}

/// A figure as the paper places it: its path (from the report root) and its printed
/// width in points, read from the rendered SVG ([`crate::report::figures::printed_width`]).
fn placed(root: &Path, path: &str) -> Result<Value> {
    let file = root.join(path.trim_start_matches('/'));
    let svg = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
    let width = crate::report::figures::printed_width(&svg)
        .map_err(|e| Error::Invalid(format!("{}: {e}", file.display())))?;
    Ok(json!({"path": path, "width": (width * 10.0).round() / 10.0}))
}

/// How many claims each Holm family holds, by family name.
fn claim_families(outcomes: &[ClaimOutcome]) -> Value {
    let mut counts = serde_json::Map::new();
    for o in outcomes {
        let n = counts
            .get(o.claim.family())
            .and_then(Value::as_u64)
            .unwrap_or(0);
        counts.insert(o.claim.family().to_string(), json!(n + 1));
    }
    Value::Object(counts)
}

/// The claims as the paper's text quotes them: by name, the sentence, each value on the
/// display scale with its seed range, the test's p-values, and the outcome (a question's
/// text is worded from it).
fn claims_context(outcomes: &[ClaimOutcome]) -> Value {
    let map: serde_json::Map<String, Value> = outcomes
        .iter()
        .map(|o| {
            // A correlation's test (`correlated`): its rho and its number of points.
            let correlation = (o.claim.check == crate::report::claims::Check::Correlated)
                .then(|| o.test.comparisons.first())
                .flatten();
            let values: Vec<Value> = o
                .values
                .iter()
                .zip(&o.claim.quantities)
                .map(|(v, q)| {
                    json!({
                        "label": v.label,
                        "value": v.shown,
                        "low": v.seed_range.map(|r| r.0 * v.scale),
                        "high": v.seed_range.map(|r| r.1 * v.scale),
                        "p": v.p_value,
                        "study": q.study,
                        "model": q.model,
                        "family": q.family,
                    })
                })
                .collect();
            (
                o.claim.name.clone(),
                json!({
                    "says": o.claim.says,
                    "family": o.claim.family(),
                    // The bound of `above` / `below`, on the display scale of the first
                    // quantity's study.
                    "bound": o.claim.value.zip(o.values.first()).map(|(b, v)| b * v.scale),
                    "outcome": o.outcome,
                    "outcome_words": o.outcome.words(o.claim.check),
                    "holds": o.outcome == crate::report::claims::Outcome::Holds,
                    "question": o.claim.form == crate::report::claims::Form::Question,
                    "p": o.test.p,
                    "adjusted_p": o.adjusted_p,
                    "p_words": crate::report::claims::p_value(o.adjusted_p),
                    // For prose: "= 0.020" or "< 0.001", as the tables round p.
                    "p_prose": match crate::format::p_value(o.adjusted_p) {
                        small if small.starts_with('<') => "< 0.001".to_string(),
                        p => format!("= {p}"),
                    },
                    "values": values,
                    "rho": correlation.map(|c| c.difference),
                    "points": correlation.and_then(|c| c.df).map(|df| df + 2.0),
                    "seed_paper": o.claim.seed_paper,
                    "agrees": o.claim.agrees,
                    "verdict": o.seed.as_ref().map(|s| s.verdict.words()),
                }),
            )
        })
        .collect();
    Value::Object(map)
}

/// The claims that test one of the seed paper's, in file order, with the verdict and its
/// reason.
fn seed_paper_claims(outcomes: &[ClaimOutcome]) -> Vec<Value> {
    outcomes
        .iter()
        .filter_map(|o| Some((o, o.seed.as_ref()?)))
        .map(|(o, seed)| {
            json!({
                "name": o.claim.name,
                "seed_paper": o.claim.seed_paper,
                "seed_data": o.claim.seed_data,
                "says": o.claim.says,
                "question": o.claim.form == crate::report::claims::Form::Question,
                "agrees": o.claim.agrees,
                "outcome_words": o.outcome.words(o.claim.check),
                "verdict": seed.verdict.words(),
                "reason": seed.reason,
            })
        })
        .collect()
}

/// What the paper's reproducibility section and last page print, from the proof the PDF
/// attaches: the commits the runs were made at (with whether the tree was clean), every
/// preset's data identity, and the SHA-256 of the proved outputs' manifest
/// ([`crate::report::proof`]), which `sha256sum report/build/proof/SHA256SUMS` prints.
pub fn provenance_context(proof: &PaperProvenance) -> Value {
    let mut data: Vec<Value> = Vec::new();
    for preset in proof.studies.iter().flat_map(|s| &s.presets) {
        let entry = json!({
            "preset": preset.name,
            "name": preset.data.name,
            "version": preset.data.version,
            "sha256": preset.data.sha256,
        });
        if !data.contains(&entry) {
            data.push(entry);
        }
    }
    json!({
        "commits": proof.commits,
        "data": data,
        "outputs_sha256": proof.manifest_sha256,
        "outputs": proof.outputs,
        "code_sha256": proof.code_sha256,
    })
}
