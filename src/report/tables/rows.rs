//! What the table builders share: models and runs in key order (tables list models by
//! key whatever the order of a study's presets) and values on the display scale.

use crate::analysis::{ModelAnalysis, StudyAnalysis};
use crate::artifacts::ModelRuns;

/// The models of a study sorted by key: tables list models in key order whatever the
/// order of the study's presets.
pub(super) fn by_key(study: &StudyAnalysis) -> Vec<&ModelAnalysis> {
    let mut models: Vec<&ModelAnalysis> = study.models.iter().collect();
    models.sort_by(|a, b| a.model.cmp(&b.model));
    models
}

/// The runs sorted by model key, as [`by_key`] sorts the analyses.
pub(super) fn runs_by_key(runs: &[ModelRuns]) -> Vec<&ModelRuns> {
    let mut sorted: Vec<&ModelRuns> = runs.iter().collect();
    sorted.sort_by(|a, b| a.model.cmp(&b.model));
    sorted
}

pub(super) fn scaled(value: Option<f64>, scale: f64) -> Option<f64> {
    value.map(|v| v * scale)
}
