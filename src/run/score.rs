//! Scoring one cutoff's checkpoint: its outputs on every row, its matrix row under the
//! regime's ID/OOD rule, the row scored on the classes its training saw (when the preset
//! asks for it) and its health; and the run folder's lock.

use std::fs::File;
use std::path::Path;

use super::SeedRun;
use crate::Result;
use crate::eval::{self, EVAL_BATCH, Health, Outputs};
use crate::models::Model;

/// What scoring a cutoff's checkpoint gives, for its record.
pub(super) struct CutoffScores {
    pub(super) cells: Vec<Option<f64>>,
    pub(super) seen_classes: Option<Vec<Option<f64>>>,
    pub(super) health: Health,
}

impl SeedRun<'_> {
    /// Runs `model`, cutoff `i`'s checkpoint (trained to `final_loss`), over every row and
    /// scores it.
    pub(super) fn score(
        &self,
        model: &dyn Model,
        i: usize,
        label: &str,
        final_loss: f64,
    ) -> Result<(Outputs, CutoffScores)> {
        let preset = &self.loaded.preset;
        let splits = &self.plan.splits;
        let outputs = eval::predict(
            model,
            self.tensors,
            self.data.rows(),
            &self.all_rows(),
            EVAL_BATCH,
            self.device,
        )?;
        let targets = &self.data.targets;
        let cells = eval::matrix_row(preset.metric, targets, &outputs, &preset.regime, splits, i)?;
        let seen_classes = preset
            .seen_classes
            .then(|| {
                let gold = preset.regime.gold_rows(splits, i);
                eval::seen_classes_row(
                    preset.metric,
                    targets,
                    &outputs,
                    &preset.regime,
                    splits,
                    i,
                    &gold,
                )
            })
            .transpose()?;
        let id_rows = eval::id_test_rows(&preset.regime, splits, i);
        let health = eval::health(targets, &outputs, &id_rows, label, Some(final_loss));
        let scores = CutoffScores {
            cells,
            seen_classes,
            health,
        };
        Ok((outputs, scores))
    }
}

/// Takes the run folder's lock, or says who holds it.
pub(super) fn lock(dir: &Path) -> Result<File> {
    let path = dir.join(".lock");
    crate::files::lock_exclusive(&path, || {
        format!(
            "{}: another drift process is writing this run folder (it holds {})",
            dir.display(),
            path.display()
        )
    })
}
