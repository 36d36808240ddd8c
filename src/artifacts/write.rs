//! Writing a run folder: every file atomically, `SHA256SUMS` last, so a folder with
//! sums is a finished run.

use std::path::{Path, PathBuf};

use super::check::check_run;
use super::layout::{
    DETECTORS_JSON, HEALTH_JSON, HISTORY_JSON, MATRIX_CSV, MATRIX_JSON, RUN_JSON, TIMING_JSON,
    json_line, run_dir,
};
use super::record::RunArtifact;
use crate::checksum::{SUMS, Sums};
use crate::files::{remove_if_present, write_atomic};
use crate::{Error, Result};

/// Writes a run folder under `root` and returns its path. Every checked file is
/// deterministic; only `timing.json` differs between identical runs.
pub fn write_run(root: &Path, run: &RunArtifact) -> Result<PathBuf> {
    check_run(run)
        .map_err(|message| Error::Invalid(format!("refusing to write a run: {message}")))?;
    let p = &run.provenance;
    let dir = run_dir(root, &p.preset.name, &p.model, p.seed);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    // Rewriting a folder: drop the old sums first, so a crash before the new ones are
    // written leaves an unfinished run, not a stale checksum.
    remove_if_present(&dir.join(SUMS))?;
    let mut files = vec![
        (MATRIX_CSV, run.matrix_csv()?),
        (MATRIX_JSON, run.matrix_json()),
        (
            RUN_JSON,
            serde_json::to_string_pretty(p).expect("provenance serialises") + "\n",
        ),
    ];
    match run.history_json() {
        Some(text) => files.insert(0, (HISTORY_JSON, text)),
        None => remove_if_present(&dir.join(HISTORY_JSON))?,
    }
    match run.health_json() {
        Some(text) => files.insert(0, (HEALTH_JSON, text)),
        None => remove_if_present(&dir.join(HEALTH_JSON))?,
    }
    // In the sums' (name) order: detectors.json first.
    match run.detectors_json() {
        Some(text) => files.insert(0, (DETECTORS_JSON, text)),
        None => remove_if_present(&dir.join(DETECTORS_JSON))?,
    }
    let mut sums = Sums::new();
    for (name, text) in &files {
        write_atomic(&dir.join(name), text.as_bytes())?;
        sums.add(*name, text.as_bytes());
    }
    let timing = dir.join(TIMING_JSON);
    match &run.timing {
        Some(t) => write_atomic(&timing, (json_line(t) + "\n").as_bytes())?,
        None => remove_if_present(&timing)?,
    }
    sums.write(&dir.join(SUMS))?;
    Ok(dir)
}
