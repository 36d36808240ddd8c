//! Every analysis of one study, computed once: per model and for the cohort. The report's
//! figures, tables and paper text and the notebooks' display read this value and derive
//! no numbers of their own, so two views of a study can never disagree.

use serde::Serialize;

use super::{
    Cohort, CutoffRow, FamilyRow, ForgettingPoint, ModelCutoffs, Ranked, Robustness,
    TemporalEffects, cohort, deviation, family_averages, forgetting_over_seeds, per_cutoff,
    rank_by_decay, rank_by_future, robustness, spread_cutoffs, temporal_effects,
};
use crate::matrix::{DriftMatrix, Grid, sample_std};
use crate::metrics::Metric;
use crate::{Error, Result};

/// How many evenly spread cutoffs the per-cutoff tables and family averages report
/// (protocol.md §3).
pub const SPREAD_CUTOFFS: usize = 4;

/// One model of a study as the analyses enter it.
#[derive(Clone, Copy, Debug)]
pub struct StudyModel<'a> {
    /// Model key.
    pub model: &'a str,
    /// Family for the family analyses (the preset's, which defaults to the registry's).
    pub family: &'a str,
    /// Its drift matrix over every seed.
    pub matrix: &'a DriftMatrix,
}

/// The analyses of one model of a study.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelAnalysis {
    /// Model key.
    pub model: String,
    /// Its family.
    pub family: String,
    /// Seeds, ascending.
    pub seeds: Vec<u64>,
    /// The per-cell mean over seeds.
    pub mean: Grid,
    /// `mean` minus the cohort mean, where both are filled.
    pub deviation: Grid,
    /// ID / future / decay of `mean`.
    pub overall: Robustness,
    /// The same per cutoff (row of `mean`).
    pub per_cutoff: Vec<CutoffRow>,
    /// Forgetting curve, mean and std over seeds.
    pub forgetting: Vec<ForgettingPoint>,
    /// The four Agarwal & Nenkova scores.
    pub effects: TemporalEffects,
}

/// Per-cutoff ranking of the models at one of the spread cutoffs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CutoffRanking {
    /// The cutoff (row index).
    pub cutoff: usize,
    /// The models ranked by future score at that row.
    pub by_future: Vec<Ranked>,
}

/// Every analysis of one study.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StudyAnalysis {
    /// Slice labels, oldest first (shared by every model).
    pub slices: Vec<String>,
    /// The metric of every cell.
    pub metric: Metric,
    /// The models in the order given.
    pub models: Vec<ModelAnalysis>,
    /// The cohort of the models over the first model's seeds.
    pub cohort: Cohort,
    /// ID / future / decay of the cohort mean.
    pub cohort_overall: Robustness,
    /// The models ranked by future score on their seed mean.
    pub by_future: Vec<Ranked>,
    /// The models ranked by decay.
    pub by_decay: Vec<Ranked>,
    /// [`SPREAD_CUTOFFS`] evenly spread cutoffs ([`spread_cutoffs`]), in timeline order.
    pub spread: Vec<usize>,
    /// The ranking at each of `spread`.
    pub cutoff_rankings: Vec<CutoffRanking>,
    /// Family averages at `spread` and their mean; families and members in name order.
    pub families: Vec<FamilyRow>,
    /// One forgetting curve per family, families in model order: at each lag the mean of
    /// the members' means (members with a value there), std the sample std over them.
    pub family_forgetting: Vec<(String, Vec<ForgettingPoint>)>,
}

impl StudyAnalysis {
    /// Analyses `models`: each model key once, all sharing slices and metric.
    pub fn new(models: &[StudyModel]) -> Result<StudyAnalysis> {
        let Some(first) = models.first() else {
            return Err(Error::Invalid("a study needs at least one model".into()));
        };
        for (n, m) in models.iter().enumerate() {
            if models[..n].iter().any(|o| o.model == m.model) {
                return Err(Error::Invalid(format!(
                    "model {:?} appears twice in the study",
                    m.model
                )));
            }
            if m.matrix.slices() != first.matrix.slices()
                || m.matrix.metric() != first.matrix.metric()
            {
                return Err(Error::Invalid(format!(
                    "model {} has other slices or another metric than model {}",
                    m.model, first.model
                )));
            }
        }
        let metric = first.matrix.metric();
        let direction = metric.direction();
        let matrices: Vec<(&str, &DriftMatrix)> =
            models.iter().map(|m| (m.model, m.matrix)).collect();
        let cohort = cohort(&matrices, first.matrix.seeds())?;
        let analysed: Vec<ModelAnalysis> = models
            .iter()
            .map(|m| {
                let mean = m.matrix.mean();
                ModelAnalysis {
                    model: m.model.to_string(),
                    family: m.family.to_string(),
                    seeds: m.matrix.seeds().to_vec(),
                    deviation: deviation(&mean, &cohort.mean),
                    overall: robustness(&mean, direction),
                    per_cutoff: per_cutoff(&mean, direction),
                    forgetting: forgetting_over_seeds(m.matrix),
                    effects: temporal_effects(m.matrix),
                    mean,
                }
            })
            .collect();
        let scores = |score: &dyn Fn(&ModelAnalysis) -> Robustness| -> Vec<(&str, Robustness)> {
            analysed
                .iter()
                .map(|m| (m.model.as_str(), score(m)))
                .collect()
        };
        let overall = scores(&|m| m.overall);
        let spread = spread_cutoffs(first.matrix.k(), SPREAD_CUTOFFS);
        let cutoff_rankings = spread
            .iter()
            .map(|&c| CutoffRanking {
                cutoff: c,
                by_future: rank_by_future(&scores(&|m| m.per_cutoff[c].scores), direction),
            })
            .collect();
        let mut by_family: Vec<&ModelAnalysis> = analysed.iter().collect();
        // Families in name order: family_averages keeps first-seen order.
        by_family.sort_by(|a, b| (&a.family, &a.model).cmp(&(&b.family, &b.model)));
        let tagged: Vec<ModelCutoffs> = by_family
            .iter()
            .map(|m| ModelCutoffs {
                model: &m.model,
                family: &m.family,
                rows: &m.per_cutoff,
            })
            .collect();
        Ok(StudyAnalysis {
            slices: first.matrix.slices().to_vec(),
            metric,
            cohort_overall: robustness(&cohort.mean, direction),
            by_future: rank_by_future(&overall, direction),
            by_decay: rank_by_decay(&overall),
            families: family_averages(&tagged, &spread),
            family_forgetting: family_forgetting(&analysed),
            cutoff_rankings,
            spread,
            cohort,
            models: analysed,
        })
    }

    /// The analysis of `model`, if it is in the study.
    pub fn model(&self, model: &str) -> Option<&ModelAnalysis> {
        self.models.iter().find(|m| m.model == model)
    }
}

/// One forgetting curve per family, families in order of first appearance.
fn family_forgetting(models: &[ModelAnalysis]) -> Vec<(String, Vec<ForgettingPoint>)> {
    let mut families: Vec<(String, Vec<&ModelAnalysis>)> = Vec::new();
    for m in models {
        match families.iter_mut().find(|(name, _)| *name == m.family) {
            Some((_, members)) => members.push(m),
            None => families.push((m.family.clone(), vec![m])),
        }
    }
    families
        .into_iter()
        .map(|(family, members)| {
            let mut lags: Vec<usize> = members
                .iter()
                .flat_map(|m| m.forgetting.iter().map(|p| p.lag))
                .collect();
            lags.sort_unstable();
            lags.dedup();
            let points = lags
                .into_iter()
                .map(|lag| {
                    let values: Vec<f64> = members
                        .iter()
                        .filter_map(|m| m.forgetting.iter().find(|p| p.lag == lag))
                        .map(|p| p.mean)
                        .collect();
                    ForgettingPoint {
                        lag,
                        mean: values.iter().sum::<f64>() / values.len() as f64,
                        std: sample_std(&values),
                    }
                })
                .collect();
            (family, points)
        })
        .collect()
}
