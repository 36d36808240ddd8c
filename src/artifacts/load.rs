//! Reading run folders back: [`load_run`] checks one folder fully (hashes, every field,
//! the files agreeing with each other and with the canonical layout), [`find_runs`] and
//! [`hold_runs`] find and lock the folders under a root, and [`load_all`] combines the
//! seeds of each (preset, model) into one matrix.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::check::check_run;
use super::layout::{
    DETECTORS_JSON, HEALTH_JSON, HISTORY_JSON, HealthFile, HistoryFile, MATRIX_CSV, MATRIX_JSON,
    MatrixFile, RUN_JSON, TIMING_JSON, run_dir,
};
use super::record::{CutoffHistory, RunArtifact, RunProvenance, WallTimes};
use crate::checksum::{SUMS, Sums, mismatch, sha256_hex};
use crate::eval::Health;
use crate::matrix::{DriftMatrix, Grid};
use crate::{Error, Result};

/// Loads one run folder, checking hashes, every field, and that the files agree.
pub fn load_run(dir: &Path) -> Result<RunArtifact> {
    let fail = |file: &str, message: String| Error::Artifact {
        path: dir.join(file),
        message,
    };
    let sums_path = dir.join(SUMS);
    if !sums_path.exists() {
        return Err(Error::Artifact {
            path: dir.to_path_buf(),
            message: format!("no {SUMS}: the run is unfinished or this is not a run folder"),
        });
    }
    let recorded = Sums::read(&sums_path)?;
    let expected = &expected_files(&recorded)[..];
    if recorded.paths().ne(expected.iter().copied()) {
        return Err(fail(
            SUMS,
            format!(
                "lists {:?}, expected exactly {expected:?}",
                recorded.paths().collect::<Vec<_>>()
            ),
        ));
    }
    let mut texts: BTreeMap<&str, String> = BTreeMap::new();
    for &name in expected {
        let path = dir.join(name);
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        let recorded = recorded.get(name).expect("listed: checked above");
        let actual = sha256_hex(&bytes);
        if actual != recorded {
            return Err(fail(name, damage(name, &bytes, &actual, recorded)));
        }
        let text = String::from_utf8(bytes).map_err(|_| fail(name, "not UTF-8 text".into()))?;
        texts.insert(name, text);
    }

    let provenance: RunProvenance =
        serde_json::from_str(&texts[RUN_JSON]).map_err(|e| fail(RUN_JSON, json_error(&e)))?;
    let matrix: MatrixFile =
        serde_json::from_str(&texts[MATRIX_JSON]).map_err(|e| fail(MATRIX_JSON, json_error(&e)))?;
    let grid =
        Grid::from_rows(&matrix.cells).map_err(|e| fail(MATRIX_JSON, format!("cells: {e}")))?;
    let seen_classes = matrix
        .seen_classes
        .as_deref()
        .map(Grid::from_rows)
        .transpose()
        .map_err(|e| fail(MATRIX_JSON, format!("seen_classes: {e}")))?;
    let timing_path = dir.join(TIMING_JSON);
    let timing = match std::fs::read_to_string(&timing_path) {
        Ok(text) => Some(
            serde_json::from_str::<WallTimes>(&text)
                .map_err(|e| fail(TIMING_JSON, json_error(&e)))?,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(&timing_path, e)),
    };
    let health = match texts.get(HEALTH_JSON) {
        None => None,
        Some(text) => {
            let file: HealthFile =
                serde_json::from_str(text).map_err(|e| fail(HEALTH_JSON, json_error(&e)))?;
            if file.schema != provenance.schema {
                return Err(fail(
                    HEALTH_JSON,
                    format!("schema: {} disagrees with {RUN_JSON}", file.schema),
                ));
            }
            Some(file.cutoffs)
        }
    };
    let detectors = match texts.get(DETECTORS_JSON) {
        None => None,
        Some(text) => {
            let file: crate::detectors::DetectorMatrices =
                serde_json::from_str(text).map_err(|e| fail(DETECTORS_JSON, json_error(&e)))?;
            Some(file)
        }
    };
    let history = match texts.get(HISTORY_JSON) {
        None => None,
        Some(text) => {
            let file: HistoryFile =
                serde_json::from_str(text).map_err(|e| fail(HISTORY_JSON, json_error(&e)))?;
            if file.schema != provenance.schema {
                return Err(fail(
                    HISTORY_JSON,
                    format!("schema: {} disagrees with {RUN_JSON}", file.schema),
                ));
            }
            Some(file.cutoffs)
        }
    };
    let run = RunArtifact {
        slices: matrix.slices.clone(),
        grid,
        seen_classes,
        provenance,
        timing,
        health,
        detectors,
        history,
    };
    check_run(&run).map_err(|message| {
        // A message about one file starts with its name.
        for file in [TIMING_JSON, HEALTH_JSON, DETECTORS_JSON, HISTORY_JSON] {
            if let Some(rest) = message.strip_prefix(&format!("{file}: ")) {
                return fail(file, rest.to_string());
            }
        }
        let matrix = message.starts_with("slices") || message.starts_with("cells");
        fail(if matrix { MATRIX_JSON } else { RUN_JSON }, message)
    })?;

    let p = &run.provenance;
    let agree = [
        ("schema", matrix.schema == p.schema),
        ("preset", matrix.preset == p.preset.name),
        ("model", matrix.model == p.model),
        ("seed", matrix.seed == p.seed),
        ("metric", matrix.metric == p.metric),
        ("direction", matrix.direction == p.metric.direction()),
    ];
    if let Some((field, _)) = agree.iter().find(|(_, ok)| !ok) {
        return Err(fail(
            MATRIX_JSON,
            format!("{field}: disagrees with {RUN_JSON}"),
        ));
    }
    let expected_dir = run_dir(Path::new(""), &p.preset.name, &p.model, p.seed);
    if !dir.ends_with(&expected_dir) {
        return Err(fail(
            RUN_JSON,
            format!(
                "says preset {}, model {}, seed {}, but the folder is not {}",
                p.preset.name,
                p.model,
                p.seed,
                expected_dir.display()
            ),
        ));
    }
    check_canonical(dir, &texts, &run)?;
    Ok(run)
}

/// Every file is in the canonical layout this version writes (the matrix's CSV agreeing
/// with its JSON).
fn check_canonical(dir: &Path, texts: &BTreeMap<&str, String>, run: &RunArtifact) -> Result<()> {
    let fail = |file: &str, message: String| Error::Artifact {
        path: dir.join(file),
        message,
    };
    if texts[MATRIX_CSV] != run.matrix_csv()? {
        return Err(fail(
            MATRIX_CSV,
            format!("its cells disagree with {MATRIX_JSON}"),
        ));
    }
    if let Some(text) = texts.get(HEALTH_JSON)
        && Some(text) != run.health_json().as_ref()
    {
        return Err(fail(
            HEALTH_JSON,
            "not in the canonical layout this version writes".into(),
        ));
    }
    if let Some(text) = texts.get(HISTORY_JSON)
        && Some(text) != run.history_json().as_ref()
    {
        return Err(fail(
            HISTORY_JSON,
            "not in the canonical layout this version writes".into(),
        ));
    }
    if let Some(text) = texts.get(DETECTORS_JSON)
        && Some(text) != run.detectors_json().as_ref()
    {
        return Err(fail(
            DETECTORS_JSON,
            "not in the canonical layout this version writes".into(),
        ));
    }
    if texts[MATRIX_JSON] != run.matrix_json() {
        return Err(fail(
            MATRIX_JSON,
            "not in the canonical layout this version writes".into(),
        ));
    }
    Ok(())
}

/// `line L column C: problem`, without the position serde_json appends to its message.
fn json_error(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let problem = message.strip_suffix(&suffix).unwrap_or(&message);
    format!("line {} column {}: {problem}", e.line(), e.column())
}

/// Says how a file whose hash does not match was damaged.
fn damage(name: &str, bytes: &[u8], actual: &str, recorded: &str) -> String {
    // Every file this crate writes ends with a newline, so a JSON file cut just before
    // it still parses; one cut anywhere else ends early.
    let truncated = !bytes.ends_with(b"\n")
        || (name.ends_with(".json")
            && serde_json::from_slice::<serde_json::Value>(bytes).is_err_and(|e| e.is_eof()));
    if truncated {
        format!(
            "truncated ({} bytes): {}",
            bytes.len(),
            mismatch(actual, recorded, SUMS)
        )
    } else {
        format!(
            "modified after it was written: {}",
            mismatch(actual, recorded, SUMS)
        )
    }
}

/// Every run folder (a folder with `SHA256SUMS`) under `root`, sorted.
pub fn find_runs(root: &Path) -> Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    // A run's subfolders (checkpoints/, saliency/ with its own SHA256SUMS) are not runs,
    // nor are hidden folders (the study's logs, an import in progress).
    let inside_run = |e: &walkdir::DirEntry| {
        e.depth() > 0
            && e.file_type().is_dir()
            && (e.path().parent().is_some_and(|p| p.join(SUMS).is_file())
                || e.file_name().to_str().is_some_and(|n| n.starts_with('.')))
    };
    for entry in walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| !inside_run(e))
    {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(root).to_path_buf();
            Error::io(path, e.into())
        })?;
        // Not followed by the walk, so a run behind one would silently be missing.
        if entry.path_is_symlink() && entry.depth() > 0 {
            return Err(Error::Artifact {
                path: entry.path().to_path_buf(),
                message: "a symbolic link among the run folders (refused: every run must \
                          lie in the artifact folder itself)"
                    .into(),
            });
        }
        if entry.file_type().is_file() && entry.file_name() == SUMS {
            dirs.push(entry.path().parent().unwrap_or(root).to_path_buf());
        }
    }
    Ok(dirs)
}

/// Shared locks on every run folder under `root` that has a `.lock` (the one a writing
/// `drift run` holds exclusively): while the returned files live, no run writes there.
/// Fails, naming the folder, when a run is writing one now: a reader must see finished
/// runs only, never a folder half rewritten.
pub fn hold_runs(root: &Path) -> Result<Vec<std::fs::File>> {
    let mut held = Vec::new();
    for dir in find_runs(root)? {
        let path = dir.join(".lock");
        held.extend(crate::files::lock_shared(&path, || {
            format!(
                "{}: a drift process is writing this run folder now (it holds {}); run again \
                 when it is done",
                dir.display(),
                path.display()
            )
        })?);
    }
    Ok(held)
}

/// The runs of one (preset, model) pair combined into one matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelRuns {
    /// Preset name.
    pub preset: String,
    /// Model key.
    pub model: String,
    /// All seeds' grids.
    pub matrix: DriftMatrix,
    /// Each seed's provenance, in seed order.
    pub provenance: Vec<RunProvenance>,
    /// Each seed's wall times, in seed order, when recorded.
    pub timing: Vec<Option<WallTimes>>,
    /// Each seed's health record, in seed order (`None` for a schema-1 folder).
    pub health: Vec<Option<Vec<Health>>>,
    /// Each seed's label-free detectors, in seed order (`None` for a run without them).
    pub detectors: Vec<Option<crate::detectors::DetectorMatrices>>,
    /// Each seed's training history, in seed order (`None` for a run made before
    /// `history.json`).
    pub history: Vec<Option<Vec<CutoffHistory>>>,
}

impl ModelRuns {
    /// Whether every seed recorded its health.
    pub fn has_health(&self) -> bool {
        self.health.iter().all(Option::is_some)
    }

    /// Whether the checkpoint of `cutoff` (row index) of `seed` collapsed (false when
    /// unknown).
    pub fn collapsed(&self, seed: u64, cutoff: usize) -> bool {
        self.provenance
            .iter()
            .zip(&self.health)
            .find(|(p, _)| p.seed == seed)
            .and_then(|(_, h)| h.as_ref())
            .is_some_and(|h| h[cutoff].collapsed)
    }
}

/// The files a run's `SHA256SUMS` must list, in its order: the optional ones it lists
/// (detectors.json for runs with detectors, health.json from schema 2 on, history.json),
/// then the three every run has.
fn expected_files(recorded: &Sums) -> Vec<&'static str> {
    let optional = [DETECTORS_JSON, HEALTH_JSON, HISTORY_JSON];
    let mut expected: Vec<&str> = optional
        .into_iter()
        .filter(|name| recorded.get(name).is_some())
        .collect();
    expected.extend([MATRIX_CSV, MATRIX_JSON, RUN_JSON]);
    expected
}

/// Loads every run under `root` and combines seeds per (preset, model); the seeds of one
/// model must share slices and metric.
pub fn load_all(root: &Path) -> Result<Vec<ModelRuns>> {
    let mut groups: BTreeMap<(String, String), ModelRuns> = BTreeMap::new();
    for dir in find_runs(root)? {
        let run = load_run(&dir)?;
        let p = run.provenance.clone();
        let key = (p.preset.name.clone(), p.model.clone());
        let entry = groups.entry(key).or_insert_with(|| ModelRuns {
            preset: p.preset.name.clone(),
            model: p.model.clone(),
            matrix: DriftMatrix::new(run.slices.clone(), p.metric),
            provenance: Vec::new(),
            timing: Vec::new(),
            health: Vec::new(),
            detectors: Vec::new(),
            history: Vec::new(),
        });
        if entry.matrix.slices() != run.slices.as_slice() || entry.matrix.metric() != p.metric {
            return Err(Error::Artifact {
                path: dir.join(MATRIX_JSON),
                message: format!(
                    "slices or metric differ from the other seeds of {}/{}",
                    p.preset.name, p.model
                ),
            });
        }
        entry
            .matrix
            .add_seed(p.seed, run.grid)
            .map_err(|e| Error::Artifact {
                path: dir.clone(),
                message: e.to_string(),
            })?;
        entry.provenance.push(p);
        entry.timing.push(run.timing);
        entry.health.push(run.health);
        entry.detectors.push(run.detectors);
        entry.history.push(run.history);
    }
    let mut out: Vec<ModelRuns> = groups.into_values().collect();
    for m in &mut out {
        // Seed order, applied to the per-seed lists alike.
        let mut order: Vec<usize> = (0..m.provenance.len()).collect();
        order.sort_by_key(|&n| m.provenance[n].seed);
        m.provenance = order.iter().map(|&n| m.provenance[n].clone()).collect();
        m.timing = order.iter().map(|&n| m.timing[n].clone()).collect();
        m.health = order.iter().map(|&n| m.health[n].clone()).collect();
        m.detectors = order.iter().map(|&n| m.detectors[n].clone()).collect();
        m.history = order.iter().map(|&n| m.history[n].clone()).collect();
    }
    Ok(out)
}
