//! The figure jobs: one function per figure family, each reading one study's analyses
//! ([`StudyFigures`]) and returning its jobs, plus the panel of every study's cohort mean.
//! Adding a figure: its renderer under `report/figures/`, a function here, and its line in
//! [`FAMILIES`].

use super::hashed::Hashed;
use super::job::OutputJob;
use crate::analysis::{Policy, SCORES, StudyAnalysis};
use crate::detectors::DetectorKind;
use crate::matrix::Grid;
use crate::metrics::Metric;
use crate::report::figures::{
    self, Curve, CurveOptions, EffectsRow, HeatmapOptions, Panel, RankingOptions, SaliencyGrid,
    Scale,
};
use crate::report::manifest::InputHashes;
use crate::report::study::LoadedStudy;
use crate::report::sweep::Sweep;
use crate::{Error, Result};

/// An SVG renderer's text as the output's bytes.
fn svg(text: Result<String>) -> Result<Vec<u8>> {
    text.map(String::into_bytes)
}

/// `grid` on the display scale `factor` (×100 for metrics in `[0, 1]`), as the tables
/// show it.
fn shown(grid: &Grid, factor: f64) -> Grid {
    grid.map(|_, _, v| Some(v * factor))
}

/// What the figures of one study read.
pub struct StudyFigures<'a> {
    /// The study; its figures go to `figures/<its name>/`.
    study: &'a LoadedStudy,
    /// Its analyses.
    analysis: &'a StudyAnalysis,
    /// The inputs of every figure of the study (its artifact files and the code).
    inputs: InputHashes,
    metric: Metric,
    /// The display scale of its values ([`Metric::display_scale`]).
    factor: f64,
    /// One colour scale for every raw heatmap of the study (display scale).
    raw_scale: Scale,
}

impl<'a> StudyFigures<'a> {
    fn new(study: &'a LoadedStudy, inputs: InputHashes) -> Result<Self> {
        let analysis = &study.analysis;
        let factor = analysis.metric.display_scale();
        let means: Vec<Grid> = analysis
            .models
            .iter()
            .map(|m| shown(&m.mean, factor))
            .collect();
        let raw_scale = Scale::shared_sequential(&means.iter().collect::<Vec<_>>())
            .ok_or_else(|| Error::Invalid(format!("study {}: no filled cell", study.spec.name)))?;
        Ok(StudyFigures {
            study,
            analysis,
            inputs,
            metric: analysis.metric,
            factor,
            raw_scale,
        })
    }

    /// Slice labels, oldest first.
    fn labels(&self) -> Vec<String> {
        self.analysis.slices.clone()
    }

    /// A job for `figures/<study>/<file>.svg`.
    fn job(
        &self,
        file: &str,
        render: impl Fn() -> Result<String> + Send + Sync + 'static,
    ) -> OutputJob {
        OutputJob::new(
            format!("figures/{}/{file}.svg", self.study.spec.name),
            self.inputs.clone(),
            move || svg(render()),
        )
    }
}

/// A figure family: the jobs of one kind of figure for one study.
type Family = fn(&StudyFigures) -> Result<Vec<OutputJob>>;

/// Every figure family of a study, in the order the jobs are planned.
const FAMILIES: &[Family] = &[
    heatmaps,
    cohort_mean,
    forgetting,
    rankings,
    temporal_effects,
    retraining,
    detectors,
    saliency,
];

/// The figure jobs of every study, plus one panel figure of cohort means per group of
/// studies.
pub fn figure_jobs(
    studies: &[LoadedStudy],
    sweeps: &[Sweep],
    hashed: &Hashed,
) -> Result<Vec<OutputJob>> {
    let mut jobs = Vec::new();
    let mut cohorts = Vec::new();
    for (at, study) in studies.iter().enumerate() {
        let figures = StudyFigures::new(study, hashed.of([at]))?;
        for family in FAMILIES {
            jobs.extend(family(&figures)?);
        }
        let Some(group) = &study.spec.group else {
            continue;
        };
        cohorts.push(CohortPanel {
            group: group.clone(),
            study: study.spec.name.clone(),
            inputs: figures.inputs.clone(),
            title: study.spec.title.clone(),
            labels: figures.labels(),
            grid: study.analysis.cohort.mean.clone(),
            metric: figures.metric,
        });
    }
    jobs.extend(cohort_means(cohorts)?);
    jobs.extend(strength_figures(studies, sweeps, hashed));
    Ok(jobs)
}

/// `figures/strength-<group>.svg` for every group that is a drift-strength sweep
/// ([`crate::report::sweep`]): row-matched decay against strength, one panel per model,
/// one line per kind of drift, bars over the seeds.
fn strength_figures(studies: &[LoadedStudy], sweeps: &[Sweep], hashed: &Hashed) -> Vec<OutputJob> {
    let mut jobs = Vec::new();
    for sweep in sweeps {
        let group = &sweep.group;
        let at = studies
            .iter()
            .enumerate()
            .filter(|(_, s)| s.spec.group.as_ref() == Some(group))
            .map(|(i, _)| i);
        let scale = sweep.metric.display_scale();
        let panels: Vec<figures::StrengthPanel> = sweep
            .models
            .iter()
            .map(|model| figures::StrengthPanel {
                title: model.clone(),
                lines: sweep
                    .curves
                    .iter()
                    .filter(|c| &c.model == model)
                    .map(|c| figures::StrengthLine {
                        label: format!("{} drift", c.kind),
                        points: c
                            .points
                            .iter()
                            .map(|p| figures::StrengthPoint {
                                strength: p.strength,
                                mean: p.decay.mean * scale,
                                min: p.decay.min * scale,
                                max: p.decay.max * scale,
                            })
                            .collect(),
                    })
                    .collect(),
            })
            .collect();
        let y_label = format!("row-matched decay, {}", sweep.metric.display_unit());
        jobs.push(OutputJob::new(
            format!("figures/strength-{group}.svg"),
            hashed.of(at),
            move || svg(figures::strength_curves(&panels, &y_label)),
        ));
    }
    jobs
}

/// Each model's raw heatmap on the study's shared scale, and its deviation from the
/// cohort mean on a shared diverging scale.
fn heatmaps(s: &StudyFigures) -> Result<Vec<OutputJob>> {
    let models = &s.analysis.models;
    let deviations: Vec<Grid> = models
        .iter()
        .map(|m| shown(&m.deviation, s.factor))
        .collect();
    let dev_scale = Scale::shared_diverging(&deviations.iter().collect::<Vec<_>>())
        .unwrap_or(Scale::Diverging { max_abs: 1e-9 });
    let mut jobs = Vec::new();
    for (m, deviation) in models.iter().zip(deviations) {
        let title = Some(m.model.clone());
        for (kind, grid, scale, opts) in [
            (
                "raw",
                shown(&m.mean, s.factor),
                s.raw_scale,
                HeatmapOptions::raw(s.metric, title.clone()),
            ),
            (
                "deviation",
                deviation,
                dev_scale,
                HeatmapOptions::deviation(s.metric, title.clone()),
            ),
        ] {
            let labels = s.labels();
            jobs.push(s.job(&format!("{}-{kind}", m.model), move || {
                figures::heatmap(&grid, &labels, scale, &opts)
            }));
        }
    }
    Ok(jobs)
}

/// The cohort mean's heatmap on its own scale.
fn cohort_mean(s: &StudyFigures) -> Result<Vec<OutputJob>> {
    let cohort = &shown(&s.analysis.cohort.mean, s.factor);
    let scale = Scale::shared_sequential(&[cohort]).unwrap_or(s.raw_scale);
    let opts = HeatmapOptions::raw(s.metric, Some("cohort mean".into()));
    let (grid, labels) = (cohort.clone(), s.labels());
    Ok(vec![s.job("cohort-mean", move || {
        figures::heatmap(&grid, &labels, scale, &opts)
    })])
}

/// Forgetting curves per model and per family.
fn forgetting(s: &StudyFigures) -> Result<Vec<OutputJob>> {
    let scaled = |points: &[crate::analysis::ForgettingPoint]| -> Vec<_> {
        points
            .iter()
            .map(|p| crate::analysis::ForgettingPoint {
                lag: p.lag,
                mean: p.mean * s.factor,
                std: p.std.map(|v| v * s.factor),
            })
            .collect()
    };
    let curves: Vec<Curve> = s
        .analysis
        .models
        .iter()
        .map(|m| Curve::new(&m.model, &scaled(&m.forgetting)))
        .collect();
    let families: Vec<Curve> = s
        .analysis
        .family_forgetting
        .iter()
        .map(|(family, points)| Curve::new(family, &scaled(points)))
        .collect();
    Ok([
        ("forgetting-models", curves),
        ("forgetting-families", families),
    ]
    .into_iter()
    .map(|(file, curves)| {
        let opts = CurveOptions::forgetting(s.metric, None);
        s.job(file, move || figures::forgetting_curves(&curves, &opts))
    })
    .collect())
}

/// The retraining policies simulated on every model's seed-mean matrix.
fn retraining(s: &StudyFigures) -> Result<Vec<OutputJob>> {
    let scale = s.metric.display_scale();
    let series: Vec<figures::PolicySeries> = s
        .analysis
        .models
        .iter()
        .map(|m| figures::PolicySeries {
            label: m.model.clone(),
            deployments: m
                .retraining
                .iter()
                .map(|d| crate::analysis::Deployment {
                    mean: d.mean.map(|v| v * scale),
                    ..d.clone()
                })
                .collect(),
        })
        .collect();
    let label = format!("mean deployed {}", s.metric.display_unit());
    Ok(vec![s.job("retraining", move || {
        figures::retraining(&series, &label)
    })])
}

/// The label-free detectors, for a study whose trained models all have them: the
/// accuracy estimates against the truth (`detectors-estimates`, every model and seed) and
/// each detector as a retraining trigger beside the policies (`detectors-retraining`).
fn detectors(s: &StudyFigures) -> Result<Vec<OutputJob>> {
    let Some(models) = s.analysis.detector_models() else {
        return Ok(Vec::new());
    };
    let kind_of = |name: &str| crate::detectors::detector_named(name).map(|d| d.kind);
    let estimators: Vec<&str> = crate::detectors::DETECTORS
        .iter()
        .filter(|d| d.kind == DetectorKind::Estimate)
        .map(|d| d.name)
        .collect();
    let series: Vec<figures::EstimateSeries> = estimators
        .iter()
        .filter_map(|&name| {
            let points: Vec<(f64, f64)> = models
                .iter()
                .flat_map(|(_, d)| &d.estimates)
                .filter(|c| c.detector == name)
                .map(|c| (c.accuracy * 100.0, c.estimate * 100.0))
                .collect();
            // "average confidence (estimated accuracy)": the words before the brackets.
            let about = crate::detectors::detector_named(name)?.about;
            let label = about.split(" (").next().unwrap_or(about).to_string();
            (!points.is_empty()).then_some(figures::EstimateSeries { label, points })
        })
        .collect();
    let mut jobs = Vec::new();
    if !series.is_empty() {
        jobs.push(s.job("detectors-estimates", move || {
            figures::estimates(&series, "accuracy ×100")
        }));
    }
    let kinds = [
        (DetectorKind::Representation, "representation shift"),
        (DetectorKind::Output, "output shift"),
        (DetectorKind::Estimate, "accuracy estimates"),
    ];
    // The columns: each kind some model has, its detectors in table order; a p-value
    // (`<statistic>_p`) dashed in its statistic's colour.
    let columns: Vec<(DetectorKind, figures::TriggerColumn)> = kinds
        .iter()
        .filter_map(|&(kind, title)| {
            let names: Vec<&str> = crate::detectors::DETECTORS
                .iter()
                .filter(|d| d.kind == kind)
                .filter(|d| models.iter().any(|(_, m)| m.detector(d.name).is_some()))
                .map(|d| d.name)
                .collect();
            let mut statistics: Vec<&str> = Vec::new();
            let detectors: Vec<figures::TriggerKey> = names
                .iter()
                .map(|&name| {
                    let statistic = name
                        .strip_suffix("_p")
                        .filter(|s| crate::detectors::detector_named(s).is_some());
                    let base = statistic.unwrap_or(name);
                    let color = match statistics.iter().position(|s| *s == base) {
                        Some(at) => at,
                        None => {
                            statistics.push(base);
                            statistics.len() - 1
                        }
                    };
                    figures::TriggerKey {
                        label: name.to_string(),
                        color,
                        dashed: statistic.is_some(),
                    }
                })
                .collect();
            let column = figures::TriggerColumn {
                title: title.into(),
                detectors,
            };
            (!column.detectors.is_empty()).then_some((kind, column))
        })
        .collect();
    let scale = s.factor;
    let rows = models
        .iter()
        .map(|(m, d)| {
            let policies = |on_drop: bool| -> Vec<(f64, f64)> {
                d.schedules
                    .iter()
                    .filter(|p| matches!(p.policy, Policy::OnDrop { .. }) == on_drop)
                    .filter_map(|p| Some((p.retrains, p.mean? * scale)))
                    .collect()
            };
            figures::TriggerRow {
                title: m.model.clone(),
                curves: columns
                    .iter()
                    .map(|(kind, column)| {
                        column
                            .detectors
                            .iter()
                            .map(|key| match d.detector(&key.label) {
                                Some(b) if kind_of(&key.label) == Some(*kind) => b
                                    .curve
                                    .iter()
                                    .map(|p| (p.retrains, p.mean * scale))
                                    .collect(),
                                _ => Vec::new(),
                            })
                            .collect()
                    })
                    .collect(),
                scheduled: policies(false),
                on_drop: policies(true),
            }
        })
        .collect();
    let figure = figures::TriggerFigure {
        columns: columns.into_iter().map(|(_, c)| c).collect(),
        rows,
        y_label: vec!["mean deployed".into(), s.metric.display_unit()],
    };
    jobs.push(s.job("detectors-retraining", move || {
        figures::trigger_curves(&figure)
    }));
    Ok(jobs)
}

/// The models ranked by future score and by decay.
fn rankings(s: &StudyFigures) -> Result<Vec<OutputJob>> {
    let future: crate::analysis::PickSpread = |spread| spread.future;
    let decay: crate::analysis::PickSpread = |spread| spread.decay;
    Ok([
        (
            "ranking-future",
            &s.analysis.by_future,
            format!("future {}", s.metric.display_unit()),
            future,
        ),
        (
            "ranking-decay",
            &s.analysis.by_decay,
            format!("decay, {} (positive = worse)", s.metric.display_unit()),
            decay,
        ),
    ]
    .into_iter()
    .map(|(file, ranked, label, pick)| {
        let entries: Vec<crate::analysis::Ranked> = ranked
            .iter()
            .map(|r| crate::analysis::Ranked {
                value: r.value * s.factor,
                ..r.clone()
            })
            .collect();
        let ranges = ranked
            .iter()
            .map(|r| {
                let spread = pick(&s.analysis.model(&r.model)?.spread)?;
                Some((spread.min * s.factor, spread.max * s.factor))
            })
            .collect();
        let opts = RankingOptions {
            title: None,
            value_label: label,
            ranges,
        };
        s.job(file, move || figures::ranking(&entries, &opts))
    })
    .collect())
}

/// The Agarwal & Nenkova scores of every model as a dot plot.
fn temporal_effects(s: &StudyFigures) -> Result<Vec<OutputJob>> {
    let rows: Vec<EffectsRow> = s
        .analysis
        .models
        .iter()
        .map(|m| EffectsRow {
            model: m.model.clone(),
            scores: m.effects.all().to_vec(),
        })
        .collect();
    let factor = s.metric.display_scale();
    let label = format!("mean difference, {}", s.metric.display_unit());
    Ok(vec![s.job("temporal-effects", move || {
        figures::temporal_effects(&SCORES.map(|s| s.0), &rows, factor, &label)
    })])
}

/// The saliency maps of the study's runs, when they have any.
fn saliency(s: &StudyFigures) -> Result<Vec<OutputJob>> {
    let Some(maps) = s.study.saliency.clone() else {
        return Ok(Vec::new());
    };
    Ok(vec![s.job("saliency", move || {
        let grid = SaliencyGrid {
            rows: maps.rows.clone(),
            columns: maps.columns.clone(),
            maps: maps
                .maps
                .iter()
                .map(|r| r.iter().map(|m| m.as_deref()).collect())
                .collect(),
            value_label: "normalised |∂ logit / ∂ pixel|".into(),
        };
        figures::saliency_grid(&grid)
    })])
}

/// One study's panel of a group's cohort-mean figure.
struct CohortPanel {
    group: String,
    study: String,
    /// The study's figure inputs.
    inputs: InputHashes,
    title: String,
    labels: Vec<String>,
    grid: Grid,
    metric: Metric,
}

/// `figures/cohort-means-<group>.svg` for every group of studies: one panel per study (on
/// the display scale), one colour bar for the group's one metric.
fn cohort_means(cohorts: Vec<CohortPanel>) -> Result<Vec<OutputJob>> {
    let mut groups: Vec<String> = cohorts.iter().map(|c| c.group.clone()).collect();
    groups.sort();
    groups.dedup();
    let mut jobs = Vec::new();
    for group in groups {
        let members: Vec<CohortPanel> = cohorts
            .iter()
            .filter(|c| c.group == group)
            .map(|c| CohortPanel {
                grid: shown(&c.grid, c.metric.display_scale()),
                group: c.group.clone(),
                study: c.study.clone(),
                inputs: c.inputs.clone(),
                title: c.title.clone(),
                labels: c.labels.clone(),
                metric: c.metric,
            })
            .collect();
        let metric = members[0].metric;
        let mut inputs = InputHashes::new();
        for c in &members {
            inputs.extend(c.inputs.clone());
        }
        if let Some(other) = members.iter().find(|c| c.metric != metric) {
            return Err(Error::Invalid(format!(
                "report/studies.toml: group {group}: study {} scores {} but {} scores {}; \
                 a group's cohort means share one colour bar, so one metric",
                members[0].study,
                metric.name(),
                other.study,
                other.metric.name()
            )));
        }
        let opts = HeatmapOptions::raw(metric, None);
        // The studies of a group differ widely (a drift that costs nothing next to one that
        // inverts the labels): the full range, so that no panel's cells leave the bar.
        let scale = Scale::full_sequential(&members.iter().map(|c| &c.grid).collect::<Vec<_>>())
            .unwrap_or(Scale::Sequential { lo: 0.0, hi: 1.0 });
        jobs.push(OutputJob::new(
            format!("figures/cohort-means-{group}.svg"),
            inputs,
            move || {
                let panels: Vec<Panel> = members
                    .iter()
                    .map(|c| Panel {
                        title: &c.title,
                        grid: &c.grid,
                        labels: &c.labels,
                    })
                    .collect();
                svg(figures::panels(&panels, scale, &opts))
            },
        ));
    }
    Ok(jobs)
}
