//! Scoring one cutoff's checkpoint: its outputs on every row, its matrix row under the
//! regime's ID/OOD rule, the row scored on the classes its training saw (when the preset
//! asks for it) and its health; and the run folder's lock.

use std::fs::File;
use std::path::Path;

use crate::Result;
use crate::data::Dataset;
use crate::eval::{self, EVAL_BATCH, Health, Outputs};
use crate::models::Model;
use crate::preset::Preset;
use crate::slices::SliceSplit;
use crate::train::DataTensors;

/// What scoring a cutoff's checkpoint gives, for its record.
pub(super) struct CutoffScores {
    pub(super) cells: Vec<Option<f64>>,
    pub(super) seen_classes: Option<Vec<Option<f64>>>,
    pub(super) health: Health,
}

/// What scoring reads: the preset, its data and their tensors, the slices' splits and
/// the device.
pub(super) struct Scorer<'a> {
    pub(super) preset: &'a Preset,
    pub(super) data: &'a Dataset,
    pub(super) tensors: &'a DataTensors<'a>,
    pub(super) splits: &'a [SliceSplit],
    pub(super) device: tch::Device,
}

impl Scorer<'_> {
    /// Runs `model`, cutoff `i`'s checkpoint (trained to `final_loss`), over `rows` (every
    /// row a cell reads) and scores it.
    pub(super) fn score(
        &self,
        model: &dyn Model,
        rows: &[usize],
        (i, label): (usize, &str),
        final_loss: f64,
    ) -> Result<(Outputs, CutoffScores)> {
        let (preset, splits) = (self.preset, self.splits);
        let outputs = eval::predict(
            model,
            self.tensors,
            self.data.rows(),
            rows,
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
