//! Analyses of drift matrices (protocol.md §3): ID / future / decay overall and per
//! cutoff (with the row-matched decay and the retention beside the pooled decay), family
//! averages, cohort means and deviations, forgetting curves, rankings, and the
//! deterioration / adaptation scores of Agarwal & Nenkova with Wilcoxon tests, the
//! robustness family of drift-happens (S, R_abs, R_rel, DRS_alpha, LDRS, CVaR_tau,
//! J_lambda, H), Wild-Time's Eval-Fix and Eval-Stream read off the matrix, the spread over
//! seeds with ties and bootstrap intervals, the t-tests and Holm's correction the paper's
//! claims are decided by, retraining policies simulated from the matrix, the label-free
//! detectors backtested against it as retraining triggers (per model of a study with the
//! schedules and the accuracy estimates beside them); and
//! [`StudyAnalysis`], all of them for one study, computed once for every view of it;
//! [`Summary`], those of one model for `drift summarize`.
//!
//! Each analysis lives in a file of its own, which imports the others' types from their
//! files; this one only re-exports them.

mod backtest;
mod cohort;
mod detection;
mod forgetting;
mod ranking;
mod retraining;
mod robustness;
mod robustness_scores;
mod study;
mod summary;
pub mod t_test;
mod temporal_effects;
mod uncertainty;
pub mod wilcoxon;
mod wild_time;

pub use backtest::{DetectorBacktest, TriggerPoint, backtest, spearman};
pub use cohort::{Cohort, cohort, deviation};
pub use detection::{
    DetectorRank, DetectorStudy, EstimateCell, ScheduleMean, SeedDetectors, check_detectors,
    rank_detectors, schedules_over_seeds,
};
pub use forgetting::{ForgettingPoint, forgetting_curve, forgetting_over_seeds};
pub use ranking::{Ranked, rank_by_decay, rank_by_future};
pub use retraining::{Deployment, Observed, Policy, replay, simulate, standard_policies};
pub use robustness::{
    CutoffRow, DecayDefinitions, FamilyRow, ModelCutoffs, Robustness, SeedScores, decay,
    decay_definitions, default_family, family_averages, per_cutoff, robustness, seed_scores,
    spread_cutoffs,
};
pub use robustness_scores::{
    PickScore, RobustnessScores, SCORE_NAMES, ScoreParameters, SeedMean, over_seeds,
    robustness_scores, scores_per_seed,
};
pub use study::{
    CutoffRanking, ModelAnalysis, SPREAD_CUTOFFS, ScoredModel, SeedGrid, StudyAnalysis, StudyModel,
    ranked_by_h,
};
pub use summary::{SliceCutoff, Summary, summarize, summarize_with};
pub use temporal_effects::{
    SCORES, SalientCells, SelfLabelling, TemporalEffects, TemporalScore, differences,
    salient_cells, self_labelling, temporal_effects,
};
pub use uncertainty::{
    BOOTSTRAP_REPLICATES, BOOTSTRAP_SEED, Bootstrap, Interval, PickSpread, SAMPLE_CONFIDENCE,
    SeedSpread, Spread, bootstrap_draws, bootstrap_with, cutoff_spreads, fraction_caught, interval,
    mark_ties, percentile, resampled, seed_spread, ties_with_next,
};
pub use wilcoxon::{Wilcoxon, wilcoxon};
pub use wild_time::{EvalFix, EvalStream, STREAM_K, eval_fix, eval_stream, middle_cutoff};
