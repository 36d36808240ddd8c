//! Every analysis of one study, computed once: per model and for the cohort. The report's
//! figures, tables and paper text and the notebooks' display read this value and derive
//! no numbers of their own, so two views of a study can never disagree.

use serde::Serialize;

use super::cohort::{Cohort, cohort, deviation};
use super::detection::{
    DetectorRank, DetectorStudy, SeedDetectors, check_detectors, rank_detectors,
};
use super::forgetting::{ForgettingPoint, forgetting_curve, forgetting_over_seeds};
use super::ranking::{Ranked, rank_by_decay, rank_by_future};
use super::retraining::{Deployment, simulate, standard_policies};
use super::robustness::{
    CutoffRow, DecayDefinitions, FamilyRow, ModelCutoffs, Robustness, SeedScores,
    decay_definitions, family_averages, per_cutoff, robustness, seed_scores, spread_cutoffs,
};
use super::robustness_scores::{
    RobustnessScores, ScoreParameters, SeedMean, over_seeds, scores_per_seed,
};
use super::temporal_effects::{TemporalEffects, temporal_effects};
use super::uncertainty::{
    BOOTSTRAP_REPLICATES, BOOTSTRAP_SEED, Bootstrap, PickSpread, SeedSpread, bootstrap_draws,
    bootstrap_with, cutoff_spreads, mark_ties, seed_spread,
};
use super::wild_time::{EvalFix, EvalStream, STREAM_K, eval_fix, eval_stream, middle_cutoff};
use crate::matrix::{DriftMatrix, Grid, sample_std};
use crate::metrics::{Direction, Metric};
use crate::{Error, Result};

/// How many evenly spread cutoffs the per-cutoff tables and family averages report
/// (protocol.md §3).
pub const SPREAD_CUTOFFS: usize = 4;

/// One model of a study as the analyses enter it.
#[derive(Clone, Copy, Debug)]
pub struct StudyModel<'a> {
    /// Its name in the study, unique there: the registry key, or the key tagged with its
    /// preset's tag when one study trains a key on several inputs (`linear-glove`).
    pub model: &'a str,
    /// Registry key (what the model computes).
    pub key: &'a str,
    /// Family for the family analyses (the preset's, which defaults to the registry's).
    pub family: &'a str,
    /// Its drift matrix over every seed.
    pub matrix: &'a DriftMatrix,
    /// Whether it is a counting baseline: ranked and tabled with the models, but kept out
    /// of the cohort, and what every model's margin is measured against.
    pub baseline: bool,
    /// Its runs' label-free detectors with the full matrix they are backtested on
    /// ([`super::detection`]); `None` when some seed has none.
    pub detectors: Option<SeedDetectors<'a>>,
}

/// One seed's grid of a model, with what the explorer derives from it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeedGrid {
    /// The seed.
    pub seed: u64,
    /// Its grid as analysed.
    pub grid: Grid,
    /// `grid` minus the same seed's cohort mean (`Cohort::per_seed`), where both are
    /// filled; `None` when the cohort has no grid of this seed.
    pub deviation: Option<Grid>,
    /// Its forgetting curve (`(lag, F(lag))`).
    pub forgetting: Vec<(usize, f64)>,
}

/// The analyses of one model of a study.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelAnalysis {
    /// Its name in the study ([`StudyModel::model`]).
    pub model: String,
    /// Registry key.
    pub key: String,
    /// Its family.
    pub family: String,
    /// Seeds, ascending.
    pub seeds: Vec<u64>,
    /// The per-cell mean over seeds.
    pub mean: Grid,
    /// `mean` minus the cohort mean, where both are filled.
    pub deviation: Grid,
    /// The per-cell sample standard deviation over seeds (ddof 1; empty for one seed).
    pub std: Grid,
    /// Each seed's grid as analysed (collapsed rows left out where the study leaves them
    /// out), in seed order: what the gallery's explorer shows seed by seed.
    pub seed_grids: Vec<SeedGrid>,
    /// ID / future / decay of `mean`.
    pub overall: Robustness,
    /// The three definitions of decay of `mean`.
    pub decay: DecayDefinitions,
    /// The same per cutoff (row of `mean`).
    pub per_cutoff: Vec<CutoffRow>,
    /// Forgetting curve, mean and std over seeds.
    pub forgetting: Vec<ForgettingPoint>,
    /// The four Agarwal & Nenkova scores.
    pub effects: TemporalEffects,
    /// Whether it is a counting baseline.
    pub baseline: bool,
    /// ID / future / decay of each seed on its own, spread over the seeds.
    pub spread: SeedSpread,
    /// The same with the decay definitions, one entry per seed: what the claims test.
    pub per_seed: Vec<SeedScores>,
    /// drift-happens' robustness family of each seed's grid, at its default parameters.
    pub robustness_scores: Vec<(u64, RobustnessScores)>,
    /// The same per cutoff (row).
    pub cutoff_spread: Vec<SeedSpread>,
    /// Bootstrap intervals over cutoffs of `overall`, and of the future score minus the
    /// best model's.
    pub bootstrap: Bootstrap,
    /// `overall` minus the study's baseline's, oriented so positive is better than the
    /// baseline (its decay field: the baseline's decay minus this one's); `None` without a
    /// baseline.
    pub margin: Option<Robustness>,
    /// Wild-Time's Eval-Fix at the middle slice.
    pub eval_fix: Option<EvalFix>,
    /// Wild-Time's Eval-Stream, horizon [`STREAM_K`].
    pub eval_stream: EvalStream,
    /// The standard retraining policies simulated on `mean`.
    pub retraining: Vec<Deployment>,
    /// Its label-free detectors backtested on every seed's full grid, collapsed rows
    /// included ([`super::detection`]); `None` when some seed has none.
    pub detectors: Option<DetectorStudy>,
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
    /// The three definitions of decay of the cohort mean.
    pub cohort_decay: DecayDefinitions,
    /// The same with the decay definitions of each seed's cohort on its own.
    pub cohort_per_seed: Vec<SeedScores>,
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
    /// The label-free detectors ranked over the trained models by how well they track the
    /// true drop; `None` unless every trained model has [`ModelAnalysis::detectors`].
    pub detectors: Option<Vec<DetectorRank>>,
}

impl StudyAnalysis {
    /// Analyses `models`: each model key once, all sharing slices and metric.
    pub fn new(models: &[StudyModel]) -> Result<StudyAnalysis> {
        let first = check_models(models)?;
        let metric = first.matrix.metric();
        let direction = metric.direction();
        let cohort = cohort_of(models)?;
        let k = first.matrix.k();
        let mut analysed: Vec<ModelAnalysis> = models
            .iter()
            .map(|m| ModelAnalysis::new(m, &cohort, k))
            .collect();
        set_margins(&mut analysed, direction);
        let overall: Vec<(&str, Robustness)> = analysed
            .iter()
            .map(|m| (m.model.as_str(), m.overall))
            .collect();
        let mut by_future = rank_by_future(&overall, direction);
        let mut by_decay = rank_by_decay(&overall);
        let spread_of = |model: &str, pick: PickSpread| {
            analysed
                .iter()
                .find(|m| m.model == model)
                .and_then(|m| pick(&m.spread))
        };
        mark_ties(&mut by_future, |m| spread_of(m, |s| s.future));
        mark_ties(&mut by_decay, |m| spread_of(m, |s| s.decay));
        set_bootstrap(&mut analysed, &by_future, k, direction);
        let spread = spread_cutoffs(first.matrix.k(), SPREAD_CUTOFFS);
        let cutoff_rankings = cutoff_rankings(&analysed, &spread, direction);
        Ok(StudyAnalysis {
            slices: first.matrix.slices().to_vec(),
            metric,
            cohort_overall: robustness(&cohort.mean, direction),
            cohort_decay: decay_definitions(&cohort.mean, direction),
            cohort_per_seed: seed_scores(cohort.per_seed.iter().map(|(s, g)| (*s, g)), direction),
            by_future,
            by_decay,
            families: families(&analysed, &spread),
            family_forgetting: family_forgetting(&analysed),
            cutoff_rankings,
            spread,
            cohort,
            detectors: trained_detectors(&analysed)
                .map(|models| rank_detectors(&models.iter().map(|m| m.1).collect::<Vec<_>>())),
            models: analysed,
        })
    }

    /// The analysis of `model`, if it is in the study.
    pub fn model(&self, model: &str) -> Option<&ModelAnalysis> {
        self.models.iter().find(|m| m.model == model)
    }

    /// The trained models (baselines left out) in study order, each with its detectors'
    /// backtest; `None` unless every one has it (what the detector table and figures show).
    pub fn detector_models(&self) -> Option<Vec<(&ModelAnalysis, &DetectorStudy)>> {
        trained_detectors(&self.models)
    }
}

/// The trained models of `models` with their detector backtests, when every one has it.
fn trained_detectors(models: &[ModelAnalysis]) -> Option<Vec<(&ModelAnalysis, &DetectorStudy)>> {
    let trained: Vec<(&ModelAnalysis, &DetectorStudy)> = models
        .iter()
        .filter(|m| !m.baseline)
        .map(|m| Some((m, m.detectors.as_ref()?)))
        .collect::<Option<_>>()?;
    (!trained.is_empty()).then_some(trained)
}

/// The first model, once every model is checked: named once, with the first one's slices
/// and metric.
fn check_models<'a, 'm>(models: &'a [StudyModel<'m>]) -> Result<&'a StudyModel<'m>> {
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
        if m.matrix.slices() != first.matrix.slices() || m.matrix.metric() != first.matrix.metric()
        {
            return Err(Error::Invalid(format!(
                "model {} has other slices or another metric than model {}",
                m.model, first.model
            )));
        }
        if let Some(runs) = &m.detectors {
            check_detectors(m.model, runs)?;
        }
    }
    Ok(first)
}

/// The cohort of the models that are not baselines, over the first one's seeds.
fn cohort_of(models: &[StudyModel]) -> Result<Cohort> {
    let matrices: Vec<(&str, &DriftMatrix)> = models
        .iter()
        .filter(|m| !m.baseline)
        .map(|m| (m.model, m.matrix))
        .collect();
    let Some(&(_, seeds_of)) = matrices.first() else {
        return Err(Error::Invalid(
            "a study needs at least one model that is not a baseline".into(),
        ));
    };
    cohort(&matrices, seeds_of.seeds())
}

impl ModelAnalysis {
    /// Every analysis of one model on its own and against the `cohort`, but those that
    /// need the other models (its margin and bootstrap, set later). `k` is the study's
    /// number of cutoffs.
    fn new(m: &StudyModel, cohort: &Cohort, k: usize) -> ModelAnalysis {
        let metric = m.matrix.metric();
        let direction = metric.direction();
        let mean = m.matrix.mean();
        ModelAnalysis {
            model: m.model.to_string(),
            key: m.key.to_string(),
            family: m.family.to_string(),
            seeds: m.matrix.seeds().to_vec(),
            deviation: deviation(&mean, &cohort.mean),
            std: m.matrix.std(),
            seed_grids: m
                .matrix
                .seeds()
                .iter()
                .zip(m.matrix.grids())
                .map(|(&seed, grid)| SeedGrid {
                    seed,
                    grid: grid.clone(),
                    deviation: cohort
                        .per_seed
                        .iter()
                        .find(|(s, _)| *s == seed)
                        .map(|(_, c)| deviation(grid, c)),
                    forgetting: forgetting_curve(grid),
                })
                .collect(),
            overall: robustness(&mean, direction),
            decay: decay_definitions(&mean, direction),
            per_cutoff: per_cutoff(&mean, direction),
            forgetting: forgetting_over_seeds(m.matrix),
            effects: temporal_effects(m.matrix),
            baseline: m.baseline,
            spread: seed_spread(m.matrix),
            per_seed: seed_scores(
                m.matrix.seeds().iter().copied().zip(m.matrix.grids()),
                direction,
            ),
            robustness_scores: scores_per_seed(m.matrix, &ScoreParameters::default()),
            cutoff_spread: cutoff_spreads(m.matrix),
            bootstrap: Bootstrap::default(),
            margin: None,
            eval_fix: (k > 0)
                .then(|| eval_fix(&mean, direction, middle_cutoff(k), 0..middle_cutoff(k) + 1)),
            eval_stream: eval_stream(&mean, direction, STREAM_K),
            retraining: standard_policies(&mean, metric.display_scale())
                .into_iter()
                .map(|p| simulate(&mean, direction, p))
                .collect(),
            detectors: m.detectors.as_ref().map(DetectorStudy::new),
            mean,
        }
    }
}

/// Sets each model's margin over the study's baseline, when it has one.
fn set_margins(analysed: &mut [ModelAnalysis], direction: Direction) {
    let Some(base) = analysed.iter().find(|m| m.baseline).map(|m| m.overall) else {
        return;
    };
    let better = |own: Option<f64>, base: Option<f64>, higher: bool| {
        let (own, base) = (own?, base?);
        Some(if higher { own - base } else { base - own })
    };
    let higher = direction == Direction::HigherIsBetter;
    for m in analysed {
        m.margin = Some(Robustness {
            id: better(m.overall.id, base.id, higher),
            future: better(m.overall.future, base.future, higher),
            decay: better(base.decay, m.overall.decay, true),
        });
    }
}

/// Sets each model's bootstrap intervals: its own draws, seeded by its key; the
/// difference to the best model by future score (first of `by_future`) reuses this
/// model's draws for both.
fn set_bootstrap(
    analysed: &mut [ModelAnalysis],
    by_future: &[Ranked],
    k: usize,
    direction: Direction,
) {
    let best = by_future
        .first()
        .and_then(|r| analysed.iter().find(|m| m.model == r.model))
        .map(|m| (m.model.clone(), m.mean.clone()));
    for m in analysed {
        let draws = bootstrap_draws(k, BOOTSTRAP_REPLICATES, BOOTSTRAP_SEED, &m.model);
        let against = best
            .as_ref()
            .filter(|(model, _)| *model != m.model)
            .map(|(_, grid)| grid);
        m.bootstrap = bootstrap_with(&m.mean, against, &draws, direction);
    }
}

/// The ranking by future score at each cutoff of `spread`, ties marked by the seeds.
fn cutoff_rankings(
    analysed: &[ModelAnalysis],
    spread: &[usize],
    direction: Direction,
) -> Vec<CutoffRanking> {
    let scores = |score: &dyn Fn(&ModelAnalysis) -> Robustness| -> Vec<(&str, Robustness)> {
        analysed
            .iter()
            .map(|m| (m.model.as_str(), score(m)))
            .collect()
    };
    spread
        .iter()
        .map(|&c| {
            let mut by_future = rank_by_future(&scores(&|m| m.per_cutoff[c].scores), direction);
            mark_ties(&mut by_future, |model| {
                analysed
                    .iter()
                    .find(|m| m.model == model)
                    .and_then(|m| m.cutoff_spread[c].future)
            });
            CutoffRanking {
                cutoff: c,
                by_future,
            }
        })
        .collect()
}

/// The family averages at the cutoffs of `spread`.
fn families(analysed: &[ModelAnalysis], spread: &[usize]) -> Vec<FamilyRow> {
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
    family_averages(&tagged, spread)
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

/// A trained model with drift-happens' robustness scores over its seeds
/// ([`over_seeds`], in [`super::SCORE_NAMES`] order).
pub type ScoredModel<'a> = (&'a ModelAnalysis, Vec<(&'static str, Option<SeedMean>)>);

/// The trained models of `models` (baselines left out) with their robustness scores over
/// seeds, ranked by the mean H, best first; a model without H last; ties keep the order
/// given. The report's table and the notebooks' display both rank by this.
pub fn ranked_by_h<'a>(
    models: impl IntoIterator<Item = &'a ModelAnalysis>,
) -> Vec<ScoredModel<'a>> {
    let mut scored: Vec<ScoredModel> = models
        .into_iter()
        .filter(|m| !m.baseline)
        .map(|m| {
            let per_seed: Vec<RobustnessScores> = m.robustness_scores.iter().map(|s| s.1).collect();
            (m, over_seeds(&per_seed))
        })
        .collect();
    let h = |s: &ScoredModel| s.1.last().and_then(|(_, h)| h.map(|h| h.mean));
    scored.sort_by(|a, b| match (h(a), h(b)) {
        (Some(x), Some(y)) => y.total_cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    scored
}
