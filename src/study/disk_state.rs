//! Each item's state read from the disk: whether a run's artifact loads and was made for
//! the preset and data as they are now, how far a resumable run got, and the states of
//! the model listing and the paper.

use std::path::Path;

use super::item::State;
use super::presets::Expected;
use crate::artifacts::{self, RunArtifact};
use crate::data::DataSource;
use crate::preset::LoadedPreset;

/// The state of a run (or baseline) folder.
pub(super) fn run_state(
    dir: &Path,
    loaded: &LoadedPreset,
    data: std::result::Result<&Expected, &String>,
    cutoffs: usize,
) -> State {
    if dir.join("run.json").exists() {
        return match artifacts::load_run(dir) {
            Err(e) => State::Stale(format!("does not verify: {e}")),
            Ok(run) => current(&run, loaded, data),
        };
    }
    let records = cutoff_records(dir);
    if let Some(old) = records.iter().find(|sha| **sha != loaded.sha256) {
        return State::Stale(format!(
            "its checkpoints were made for preset hash {}, not {}",
            short(old),
            short(&loaded.sha256)
        ));
    }
    if records.is_empty() {
        State::Missing(String::new())
    } else {
        State::Missing(format!(
            "{} of {cutoffs} cutoffs done; resumes",
            records.len()
        ))
    }
}

/// Whether a loaded artifact was made for the preset and data as they are now.
fn current(
    run: &RunArtifact,
    loaded: &LoadedPreset,
    data: std::result::Result<&Expected, &String>,
) -> State {
    let p = &run.provenance;
    if p.preset.sha256 != loaded.sha256 {
        return State::Stale(format!(
            "made for preset hash {}, the preset is now {}",
            short(&p.preset.sha256),
            short(&loaded.sha256)
        ));
    }
    let stale = |source: &DataSource| {
        State::Stale(format!(
            "made for data {} {} ({}), the data is now {} {} ({})",
            p.data.name,
            p.data.version,
            short(&p.data.sha256),
            source.name,
            source.version,
            short(&source.sha256)
        ))
    };
    match data {
        Err(why) => State::Stale(format!("its data cannot be checked: {why}")),
        Ok(Expected::Known(source)) if p.data != *source => stale(source),
        Ok(Expected::Encoded { source, key, input })
            if !crate::text::is_encoded_identity(&p.data, source, key, input) =>
        {
            stale(source)
        }
        Ok(_) => State::Done,
    }
}

/// The preset hashes of a run folder's scored cutoffs (`checkpoints/<label>.json`).
fn cutoff_records(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir.join("checkpoints")) else {
        return Vec::new();
    };
    let mut hashes = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // Not the other files a cutoff keeps beside its record.
        let other = [".timing.json", ".history.json", ".detectors.json"];
        if !name.ends_with(".json")
            || other.iter().any(|o| name.ends_with(o))
            || name.starts_with('.')
        {
            continue;
        }
        let sha = std::fs::read(entry.path())
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v["id"]["preset_sha256"].as_str().map(str::to_string))
            .unwrap_or_default();
        hashes.push(sha);
    }
    hashes
}

/// The number of a run folder's scored cutoffs, for progress.
pub fn cutoffs_done(dir: &Path) -> usize {
    cutoff_records(dir).len()
}

/// Whether the outputs on disk match the committed manifest (`build-report --check`).
#[cfg(feature = "paper")]
pub(super) fn report_state() -> State {
    use crate::report::{layout::OUTPUT_DIRS, manifest};
    let root = Path::new(".");
    match manifest::Manifest::read(root).and_then(|m| manifest::check(root, &m, &OUTPUT_DIRS)) {
        Ok(d) if d.is_empty() => State::Done,
        Ok(d) => State::Missing(format!("{} outputs differ from checksums/", d.len())),
        Err(e) => State::Missing(e.to_string()),
    }
}

#[cfg(not(feature = "paper"))]
pub(super) fn report_state() -> State {
    State::Missing("this drift was built without the paper".into())
}

/// The state of the model listing: done when it has any text.
pub(super) fn models_state(file: &Path) -> State {
    match std::fs::read_to_string(file) {
        Ok(text) if !text.trim().is_empty() => State::Done,
        Ok(_) => State::Stale("empty".into()),
        Err(_) => State::Missing(String::new()),
    }
}

/// The state of a saliency map's file: done when it loads.
pub(super) fn saliency_state(file: &Path) -> State {
    match crate::saliency::load(file) {
        Ok(_) => State::Done,
        Err(_) if !file.exists() => State::Missing(String::new()),
        Err(e) => State::Stale(e.to_string()),
    }
}

/// The first 12 digits of a hash, enough to tell two apart in a message.
fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}
