//! A run's per-cutoff records under `checkpoints/`: `<label>.json`, the scored row and
//! the checkpoint's SHA-256 and health, written once the row is scored (so a resume
//! trusts it), `<label>.history.json`, the epochs that trained the checkpoint, written
//! with it, and `<label>.timing.json`, its wall times.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::artifacts::WallTimes;
use crate::checksum::sha256_hex;
use crate::eval::Health;
use crate::train::Epoch;
use crate::train::checkpoint::CheckpointId;
use crate::{Error, Result};

/// `checkpoints/<label>.json`: one scored cutoff.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CutoffRecord {
    pub(super) id: CheckpointId,
    pub(super) checkpoint_sha256: String,
    pub(super) cells: Vec<Option<f64>>,
    /// The row scored on the classes the cutoff trained on, when the preset asks for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) seen_classes: Option<Vec<Option<f64>>>,
    pub(super) health: Health,
}

/// The matrix row a (partial) run scored for cutoff `label` in its folder `dir`: the
/// record `checkpoints/<label>.json`.
pub fn scored_row(dir: &Path, label: &str) -> Result<Vec<Option<f64>>> {
    let path = dir.join("checkpoints").join(format!("{label}.json"));
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let record: CutoffRecord = serde_json::from_str(&text).map_err(|e| Error::Artifact {
        path: path.clone(),
        message: format!("not a scored cutoff: {e}"),
    })?;
    Ok(record.cells)
}

/// Reads a cutoff record, checking it belongs to `id` and its checkpoint is intact.
pub(super) fn read_record(
    path: &Path,
    id: &CheckpointId,
    checkpoint: &Path,
) -> Result<CutoffRecord> {
    let fail = |message: String| Error::Artifact {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let record: CutoffRecord =
        serde_json::from_str(&text).map_err(|e| fail(format!("not a cutoff record: {e}")))?;
    if &record.id != id {
        return Err(fail(format!(
            "made for {}, not for this run ({}); delete the run folder or use another --out",
            serde_json::to_string(&record.id).expect("ids serialise"),
            serde_json::to_string(id).expect("ids serialise"),
        )));
    }
    let bytes = std::fs::read(checkpoint).map_err(|e| Error::io(checkpoint, e))?;
    let actual = sha256_hex(&bytes);
    if actual != record.checkpoint_sha256 {
        return Err(Error::Artifact {
            path: checkpoint.to_path_buf(),
            message: format!(
                "its sha256 {actual} is not the {} recorded in {}: the checkpoint was modified",
                record.checkpoint_sha256,
                path.display()
            ),
        });
    }
    Ok(record)
}

/// A cutoff's wall times; zero when the file is missing or unreadable (times are
/// informative only and never checked).
pub(super) fn read_timing(path: &Path) -> WallTimes {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(WallTimes::zero)
}

/// `checkpoints/<label>.history.json`: the epochs that trained a checkpoint, written with
/// it (before it), so that a run resumed after training still has its history. It holds
/// the SHA-256 of its epochs and is written in one canonical form, so any damage is seen.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HistoryRecord {
    checkpoint_sha256: String,
    epochs: Vec<Epoch>,
    epochs_sha256: String,
}

fn epochs_sha256(epochs: &[Epoch]) -> String {
    sha256_hex(
        serde_json::to_string(epochs)
            .expect("epochs serialise")
            .as_bytes(),
    )
}

fn history_text(record: &HistoryRecord) -> String {
    serde_json::to_string(record).expect("histories serialise") + "\n"
}

/// Writes the epochs that trained the checkpoint with SHA-256 `checkpoint_sha256`.
pub fn write_history(path: &Path, checkpoint_sha256: &str, epochs: &[Epoch]) -> Result<()> {
    let record = HistoryRecord {
        checkpoint_sha256: checkpoint_sha256.to_string(),
        epochs: epochs.to_vec(),
        epochs_sha256: epochs_sha256(epochs),
    };
    crate::files::write_atomic(path, history_text(&record).as_bytes())
}

/// The epochs that trained the checkpoint `checkpoint_sha256`; `None` when no file is
/// there (a checkpoint trained before histories were kept). A file that is not the one
/// written for this checkpoint, byte for byte, is an error naming it.
pub fn read_history(path: &Path, checkpoint_sha256: &str) -> Result<Option<Vec<Epoch>>> {
    if !path.exists() {
        return Ok(None);
    }
    let fail = |message: String| Error::Artifact {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let record: HistoryRecord = serde_json::from_str(&text)
        .map_err(|e| fail(format!("not a checkpoint's training history: {e}")))?;
    if record.epochs_sha256 != epochs_sha256(&record.epochs) || history_text(&record) != text {
        return Err(fail(
            "damaged: its epochs or bytes are not the ones written (delete it and the \
             checkpoint beside it to train that cutoff again)"
                .into(),
        ));
    }
    if record.checkpoint_sha256 != checkpoint_sha256 {
        return Err(fail(format!(
            "made for checkpoint {}, not for the one beside it ({checkpoint_sha256}): \
             delete it and the checkpoint to train that cutoff again",
            record.checkpoint_sha256
        )));
    }
    for epoch in &record.epochs {
        epoch.check().map_err(fail)?;
    }
    Ok(Some(record.epochs))
}
