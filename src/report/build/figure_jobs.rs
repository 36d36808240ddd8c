//! The figure jobs: one function per figure family, each reading one study's analyses
//! ([`StudyFigures`]) and returning its jobs, plus the panel of every study's cohort mean.
//! Adding a figure: its renderer under `report/figures/`, a function here, and its line in
//! [`FAMILIES`].

use std::path::Path;

use super::{Job, svg};
use crate::analysis::{SCORES, StudyAnalysis};
use crate::matrix::Grid;
use crate::metrics::Metric;
use crate::report::figures::{
    self, Curve, CurveOptions, EffectsRow, HeatmapOptions, Panel, RankingOptions, SaliencyGrid,
    Scale,
};
use crate::report::manifest::{self, Inputs};
use crate::report::study::Study;
use crate::{Error, Result};

/// What the figures of one study read.
pub struct StudyFigures<'a> {
    /// The study; its figures go to `figures/<its name>/`.
    study: &'a Study,
    /// Its analyses.
    analysis: &'a StudyAnalysis,
    /// The inputs of every figure of the study (its artifact files and the code).
    inputs: Inputs,
    metric: Metric,
    /// One colour scale for every raw heatmap of the study.
    raw_scale: Scale,
}

impl<'a> StudyFigures<'a> {
    fn new(root: &Path, study: &'a Study, code: &str) -> Result<Self> {
        let mut inputs = manifest::hash_files(root, &study.inputs)?;
        inputs.insert("src".into(), code.to_string());
        let analysis = &study.analysis;
        let means: Vec<&Grid> = analysis.models.iter().map(|m| &m.mean).collect();
        let raw_scale = Scale::shared_sequential(&means)
            .ok_or_else(|| Error::Invalid(format!("study {}: no filled cell", study.spec.name)))?;
        Ok(StudyFigures {
            study,
            analysis,
            inputs,
            metric: analysis.metric,
            raw_scale,
        })
    }

    /// Slice labels, oldest first.
    fn labels(&self) -> Vec<String> {
        self.analysis.slices.clone()
    }

    /// A job for `figures/<study>/<file>.svg`.
    fn job(&self, file: &str, render: impl Fn() -> Result<String> + Send + Sync + 'static) -> Job {
        Job::new(
            format!("figures/{}/{file}.svg", self.study.spec.name),
            self.inputs.clone(),
            move || svg(render()),
        )
    }
}

/// A figure family: the jobs of one kind of figure for one study.
type Family = fn(&StudyFigures) -> Result<Vec<Job>>;

/// Every figure family of a study, in the order the jobs are planned.
const FAMILIES: &[Family] = &[
    heatmaps,
    cohort_mean,
    forgetting,
    rankings,
    temporal_effects,
    retraining,
    saliency,
];

/// The figure jobs of every study, plus the panel figure of all studies' cohort means.
pub fn figure_jobs(root: &Path, studies: &[Study], code: &str) -> Result<Vec<Job>> {
    let mut jobs = Vec::new();
    let mut all_inputs = Inputs::new();
    let mut cohorts = Vec::new();
    for study in studies {
        let figures = StudyFigures::new(root, study, code)?;
        for family in FAMILIES {
            jobs.extend(family(&figures)?);
        }
        all_inputs.extend(figures.inputs.clone());
        cohorts.push(CohortPanel {
            title: study.spec.title.clone(),
            labels: figures.labels(),
            grid: study.analysis.cohort.mean.clone(),
            metric: figures.metric,
        });
    }
    jobs.extend(cohort_means(cohorts, all_inputs));
    Ok(jobs)
}

/// Each model's raw heatmap on the study's shared scale, and its deviation from the
/// cohort mean on a shared diverging scale.
fn heatmaps(s: &StudyFigures) -> Result<Vec<Job>> {
    let models = &s.analysis.models;
    let deviations: Vec<&Grid> = models.iter().map(|m| &m.deviation).collect();
    let dev_scale =
        Scale::shared_diverging(&deviations).unwrap_or(Scale::Diverging { max_abs: 1e-9 });
    let mut jobs = Vec::new();
    for m in models {
        let title = Some(m.model.clone());
        for (kind, grid, scale, opts) in [
            (
                "raw",
                m.mean.clone(),
                s.raw_scale,
                HeatmapOptions::raw(s.metric, title.clone()),
            ),
            (
                "deviation",
                m.deviation.clone(),
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
fn cohort_mean(s: &StudyFigures) -> Result<Vec<Job>> {
    let cohort = &s.analysis.cohort.mean;
    let scale = Scale::shared_sequential(&[cohort]).unwrap_or(s.raw_scale);
    let opts = HeatmapOptions::raw(s.metric, Some("cohort mean".into()));
    let (grid, labels) = (cohort.clone(), s.labels());
    Ok(vec![s.job("cohort-mean", move || {
        figures::heatmap(&grid, &labels, scale, &opts)
    })])
}

/// Forgetting curves per model and per family.
fn forgetting(s: &StudyFigures) -> Result<Vec<Job>> {
    let curves: Vec<Curve> = s
        .analysis
        .models
        .iter()
        .map(|m| Curve::new(&m.model, &m.forgetting))
        .collect();
    let families: Vec<Curve> = s
        .analysis
        .family_forgetting
        .iter()
        .map(|(family, points)| Curve::new(family, points))
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
fn retraining(s: &StudyFigures) -> Result<Vec<Job>> {
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

/// The models ranked by future score and by decay.
fn rankings(s: &StudyFigures) -> Result<Vec<Job>> {
    Ok([
        (
            "ranking-future",
            s.analysis.by_future.clone(),
            format!("future {}", s.metric.name()),
        ),
        (
            "ranking-decay",
            s.analysis.by_decay.clone(),
            "decay (positive = worse on the future)".to_string(),
        ),
    ]
    .into_iter()
    .map(|(file, entries, label)| {
        let opts = RankingOptions {
            title: None,
            value_label: label,
        };
        s.job(file, move || figures::ranking(&entries, &opts))
    })
    .collect())
}

/// The Agarwal & Nenkova scores of every model as a dot plot.
fn temporal_effects(s: &StudyFigures) -> Result<Vec<Job>> {
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
fn saliency(s: &StudyFigures) -> Result<Vec<Job>> {
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

/// One study's panel of `figures/cohort-means.svg`.
struct CohortPanel {
    title: String,
    labels: Vec<String>,
    grid: Grid,
    metric: Metric,
}

/// One panel per study, for the studies whose metric shares the first one's direction,
/// with one colour bar that names each metric it stands for.
fn cohort_means(cohorts: Vec<CohortPanel>, inputs: Inputs) -> Option<Job> {
    let direction = cohorts.first()?.metric.direction();
    let shared: Vec<CohortPanel> = cohorts
        .into_iter()
        .filter(|c| c.metric.direction() == direction)
        .collect();
    let mut metrics: Vec<&str> = Vec::new();
    for c in &shared {
        if !metrics.contains(&c.metric.name()) {
            metrics.push(c.metric.name());
        }
    }
    let opts = HeatmapOptions {
        title: None,
        direction,
        value_label: metrics.join(" / "),
    };
    let scale = Scale::shared_sequential(&shared.iter().map(|c| &c.grid).collect::<Vec<_>>())
        .unwrap_or(Scale::Sequential { lo: 0.0, hi: 1.0 });
    Some(Job::new(
        "figures/cohort-means.svg".into(),
        inputs,
        move || {
            let panels: Vec<Panel> = shared
                .iter()
                .map(|c| Panel {
                    title: &c.title,
                    grid: &c.grid,
                    labels: &c.labels,
                })
                .collect();
            svg(figures::panels(&panels, scale, &opts))
        },
    ))
}
