//! Drift-matrix artifacts: one folder per (preset, model, seed) run,
//! `<root>/<preset>/<model>/seed-<seed>/`, holding
//!
//! - `matrix.json`: the K×K cells (null for empty cells), slices, metric and direction;
//! - `matrix.csv`: the same cells long-form, `train_slice,eval_slice,metric,value` (an
//!   empty value is an empty cell);
//! - `run.json`: provenance: preset name, path and hash, git commit and dirty flag,
//!   `Cargo.lock` SHA-256, crate version, data source (name, version, SHA-256), device,
//!   thread count and seed;
//! - `health.json` (schema 2): per cutoff, how the checkpoint behaves on its ID test set
//!   ([`Health`]: majority share or prediction variance, final training loss, and whether
//!   it collapsed to a constant predictor);
//! - `SHA256SUMS`: the SHA-256 of the other files in `sha256sum` format, written last, so
//!   `sha256sum -c SHA256SUMS` checks a folder by hand and its absence marks an
//!   unfinished run;
//! - `timing.json` (optional): wall-clock seconds of training and evaluation. It is the
//!   one file that differs between identical runs, so it is kept out of `run.json` and out
//!   of `SHA256SUMS`: the same preset, seed, code and thread count give byte-identical
//!   checked files.
//!
//! Schema 1 folders (written before health was recorded) still load, with no health.
//!
//! Every file is written atomically (temporary file in the same folder, fsync, rename).
//! [`load_run`] trusts nothing: it checks the hashes, every field, and that the JSON and
//! CSV agree, and says which file is wrong and how (missing, truncated, modified).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::checksum::{SUMS, Sums, is_hex, is_sha256, mismatch, sha256_hex};
use crate::data::DataSource;
use crate::eval::{COLLAPSE_RULE, Health};
use crate::files::{remove_if_present, write_atomic};
use crate::matrix::{DriftMatrix, Grid};
use crate::metrics::{Direction, Metric};
use crate::{Error, Result};

/// The artifact schema version this crate writes; it also reads schema 1 (no health).
pub const SCHEMA: u32 = 2;

const MATRIX_JSON: &str = "matrix.json";
const MATRIX_CSV: &str = "matrix.csv";
const RUN_JSON: &str = "run.json";
const TIMING_JSON: &str = "timing.json";
const HEALTH_JSON: &str = "health.json";
const CSV_HEADER: &str = "train_slice,eval_slice,metric,value";

/// Which preset a run belongs to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PresetRef {
    /// Preset name.
    pub name: String,
    /// The preset file, as given to the run.
    pub path: String,
    /// The preset's content hash.
    pub sha256: String,
}

/// The code that produced a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeVersion {
    /// `drift` crate version.
    pub crate_version: String,
    /// Git commit of the source tree, if it was a git checkout.
    pub git_commit: Option<String>,
    /// Whether tracked files had uncommitted changes (untracked files and the artifacts
    /// under `results/`, which runs write, do not count).
    pub git_dirty: Option<bool>,
    /// SHA-256 of the `Cargo.lock` the binary was built with.
    pub cargo_lock_sha256: String,
}

impl CodeVersion {
    /// The version of the running build; git fields are `None` outside a git checkout.
    pub fn current() -> Self {
        let dir = env!("CARGO_MANIFEST_DIR");
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .arg("-C")
                .arg(dir)
                .args(args)
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        };
        CodeVersion {
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: git(&["rev-parse", "HEAD"]),
            // Committed artifacts under results/ are outputs that runs rewrite (and
            // scripts/make-results regenerates in place): they do not make the code dirty.
            git_dirty: git(&[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                ":(exclude)results",
            ])
            .map(|s| !s.is_empty()),
            cargo_lock_sha256: sha256_hex(include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/Cargo.lock"
            ))),
        }
    }
}

/// `timing.json`: wall-clock seconds spent (the only non-deterministic part of a run
/// folder, hence not in `run.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WallTimes {
    /// Training, all cutoffs.
    pub train: f64,
    /// Evaluation, all cells.
    pub eval: f64,
    /// The kind of machine the run finished on ([`host_kind`]); absent in folders written
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl WallTimes {
    /// No time spent yet, on no recorded host.
    pub fn zero() -> Self {
        WallTimes {
            train: 0.0,
            eval: 0.0,
            host: None,
        }
    }
}

/// The kind of machine this process runs on, for the compute table: the CPU model (from
/// `/proc/cpuinfo` where there is one), the logical CPUs and the architecture, e.g.
/// `AMD EPYC 7B13, 2 CPUs, x86_64`. Not part of a run's checked files: a run is the
/// same result on any host with the same thread count.
pub fn host_kind() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(k, _)| k.trim() == "model name")
                .map(|(_, v)| v.split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    format!("{model}, {cpus} CPUs, {}", std::env::consts::ARCH)
}

/// `run.json`: where a run came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// Artifact schema version.
    pub schema: u32,
    /// The preset.
    pub preset: PresetRef,
    /// Model key.
    pub model: String,
    /// Training seed.
    pub seed: u64,
    /// Metric of the cells.
    pub metric: Metric,
    /// The code.
    pub code: CodeVersion,
    /// The data.
    pub data: DataSource,
    /// `cpu`, `cuda` or `cuda:N`.
    pub device: String,
    /// libtorch intra-op thread count.
    pub threads: u32,
}

/// One run: its matrix and provenance.
#[derive(Clone, Debug, PartialEq)]
pub struct RunArtifact {
    /// Slice labels, oldest first.
    pub slices: Vec<String>,
    /// This seed's cells.
    pub grid: Grid,
    /// `run.json`.
    pub provenance: Provenance,
    /// `timing.json`, when the run recorded one.
    pub timing: Option<WallTimes>,
    /// `health.json`: one entry per cutoff, in slice order (`None` in a schema-1 folder).
    pub health: Option<Vec<Health>>,
}

impl RunArtifact {
    /// The labels of the cutoffs whose checkpoint collapsed, in slice order.
    pub fn collapsed(&self) -> Vec<&str> {
        self.health
            .iter()
            .flatten()
            .filter(|h| h.collapsed)
            .map(|h| h.cutoff.as_str())
            .collect()
    }
}

/// `health.json`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HealthFile {
    schema: u32,
    /// The rule, in words, so the file explains itself.
    collapsed_when: String,
    cutoffs: Vec<Health>,
}

/// `matrix.json`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct MatrixFile {
    schema: u32,
    preset: String,
    model: String,
    seed: u64,
    metric: Metric,
    direction: Direction,
    slices: Vec<String>,
    cells: Vec<Vec<Option<f64>>>,
}

/// The folder of one run under `root`.
pub fn run_dir(root: &Path, preset: &str, model: &str, seed: u64) -> PathBuf {
    root.join(preset).join(model).join(format!("seed-{seed}"))
}

fn json_line<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("artifact values serialise")
}

impl RunArtifact {
    fn matrix_json(&self) -> String {
        let p = &self.provenance;
        let rows: Vec<String> = self
            .grid
            .rows()
            .map(|r| format!("    {}", json_line(&r)))
            .collect();
        format!(
            "{{\n  \"schema\": {},\n  \"preset\": {},\n  \"model\": {},\n  \"seed\": {},\n  \
             \"metric\": {},\n  \"direction\": {},\n  \"slices\": {},\n  \"cells\": [\n{}\n  ]\n}}\n",
            p.schema,
            json_line(&p.preset.name),
            json_line(&p.model),
            p.seed,
            json_line(&p.metric),
            json_line(&p.metric.direction()),
            json_line(&self.slices),
            rows.join(",\n"),
        )
    }

    fn health_json(&self) -> Option<String> {
        let cutoffs = self.health.as_ref()?;
        let lines: Vec<String> = cutoffs
            .iter()
            .map(|h| format!("    {}", json_line(h)))
            .collect();
        Some(format!(
            "{{\n  \"schema\": {},\n  \"collapsed_when\": {},\n  \"cutoffs\": [\n{}\n  ]\n}}\n",
            self.provenance.schema,
            json_line(&COLLAPSE_RULE),
            lines.join(",\n"),
        ))
    }

    fn matrix_csv(&self) -> Result<String> {
        let mut csv = csv::Writer::from_writer(Vec::new());
        let io = |e: csv::Error| Error::Invalid(format!("writing {MATRIX_CSV}: {e}"));
        csv.write_record(CSV_HEADER.split(',')).map_err(io)?;
        let metric = self.provenance.metric.name();
        for (i, row) in self.grid.rows().enumerate() {
            for (j, value) in row.iter().enumerate() {
                let value = value.map_or(String::new(), |v| v.to_string());
                csv.write_record([&self.slices[i], &self.slices[j], metric, &value])
                    .map_err(io)?;
            }
        }
        let bytes = csv
            .into_inner()
            .map_err(|e| Error::Invalid(e.to_string()))?;
        Ok(String::from_utf8(bytes).expect("CSV of UTF-8 fields is UTF-8"))
    }
}

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
    match run.health_json() {
        Some(text) => files.insert(0, (HEALTH_JSON, text)),
        None => remove_if_present(&dir.join(HEALTH_JSON))?,
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

/// The field checks shared by writing and loading; the error starts with the field.
fn check_run(run: &RunArtifact) -> Result<(), String> {
    let p = &run.provenance;
    let k = run.slices.len();
    if !(1..=SCHEMA).contains(&p.schema) {
        return Err(format!(
            "schema: expected 1 to {SCHEMA}, found {}",
            p.schema
        ));
    }
    if (p.schema >= 2) != run.health.is_some() {
        return Err(format!(
            "{HEALTH_JSON}: schema {} folders {} one",
            p.schema,
            if p.schema >= 2 { "need" } else { "have no" }
        ));
    }
    for (field, value) in [("preset.name", &p.preset.name), ("model", &p.model)] {
        if value.is_empty() || value.contains(['/', '\\']) || value.starts_with('.') {
            return Err(format!("{field}: {value:?} is not a valid folder name"));
        }
    }
    for (field, value) in [
        ("preset.sha256", &p.preset.sha256),
        ("code.cargo_lock_sha256", &p.code.cargo_lock_sha256),
        ("data.sha256", &p.data.sha256),
    ] {
        if !is_sha256(value) {
            return Err(format!(
                "{field}: expected 64 lower-case hex digits, found {value:?}"
            ));
        }
    }
    if let Some(commit) = &p.code.git_commit
        && !is_hex(commit, 40)
        && !is_hex(commit, 64)
    {
        return Err(format!(
            "code.git_commit: expected a hex commit id, found {commit:?}"
        ));
    }
    if p.code.git_commit.is_none() != p.code.git_dirty.is_none() {
        return Err("code.git_dirty: must be null exactly when code.git_commit is".into());
    }
    for (field, value) in [
        ("code.crate_version", &p.code.crate_version),
        ("data.name", &p.data.name),
        ("data.version", &p.data.version),
    ] {
        if value.is_empty() {
            return Err(format!("{field}: must not be empty"));
        }
    }
    let device_ok = p.device == "cpu"
        || p.device == "cuda"
        || p.device
            .strip_prefix("cuda:")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if !device_ok {
        return Err(format!(
            "device: expected cpu, cuda or cuda:N, found {:?}",
            p.device
        ));
    }
    if p.threads == 0 {
        return Err("threads: must be at least 1".into());
    }
    let times = run.timing.as_ref().map_or([0.0; 2], |t| [t.train, t.eval]);
    for (field, value) in [("train", times[0]), ("eval", times[1])] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(format!(
                "{TIMING_JSON}: {field}: expected a non-negative number of seconds, found {value}"
            ));
        }
    }
    if k == 0 {
        return Err("slices: a matrix needs at least one slice".into());
    }
    if let Some(n) =
        (0..k).find(|&n| run.slices[..n].contains(&run.slices[n]) || run.slices[n].is_empty())
    {
        return Err(format!(
            "slices[{n}]: {:?} is empty or repeated",
            run.slices[n]
        ));
    }
    if run.grid.k() != k {
        return Err(format!("cells: {0}x{0} cells for {k} slices", run.grid.k()));
    }
    if let Some((i, j, v)) = run.grid.filled().find(|(_, _, v)| !v.is_finite()) {
        return Err(format!("cells[{i}][{j}]: {v} is not a finite number"));
    }
    if let Some(health) = &run.health {
        check_health(health, &run.slices).map_err(|m| format!("{HEALTH_JSON}: {m}"))?;
    }
    Ok(())
}

fn check_health(health: &[Health], slices: &[String]) -> Result<(), String> {
    if health.len() != slices.len() {
        return Err(format!(
            "cutoffs: {} entries for {} slices",
            health.len(),
            slices.len()
        ));
    }
    for (n, (h, label)) in health.iter().zip(slices).enumerate() {
        if &h.cutoff != label {
            return Err(format!(
                "cutoffs[{n}].cutoff: {:?}, but slice {n} is {label:?}",
                h.cutoff
            ));
        }
        let fractions = [("majority_share", h.majority_share)];
        for (field, v) in fractions {
            if v.is_some_and(|v| !(0.0..=1.0).contains(&v)) {
                return Err(format!("cutoffs[{n}].{field}: {v:?} is not in [0, 1]"));
            }
        }
        let finite = [
            ("prediction_variance", h.prediction_variance),
            ("target_variance", h.target_variance),
            ("final_loss", h.final_loss),
        ];
        for (field, v) in finite {
            if v.is_some_and(|v| !v.is_finite() || (field != "final_loss" && v < 0.0)) {
                return Err(format!("cutoffs[{n}].{field}: {v:?} is not a valid value"));
            }
        }
        if h.collapsed != h.meets_collapse_rule() {
            return Err(format!(
                "cutoffs[{n}].collapsed: {} disagrees with its figures ({COLLAPSE_RULE})",
                h.collapsed,
            ));
        }
    }
    Ok(())
}

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
    let with_health = recorded.get(HEALTH_JSON).is_some();
    let expected: &[&str] = if with_health {
        &[HEALTH_JSON, MATRIX_CSV, MATRIX_JSON, RUN_JSON]
    } else {
        &[MATRIX_CSV, MATRIX_JSON, RUN_JSON]
    };
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

    let provenance: Provenance =
        serde_json::from_str(&texts[RUN_JSON]).map_err(|e| fail(RUN_JSON, json_error(&e)))?;
    let matrix: MatrixFile =
        serde_json::from_str(&texts[MATRIX_JSON]).map_err(|e| fail(MATRIX_JSON, json_error(&e)))?;
    let grid =
        Grid::from_rows(&matrix.cells).map_err(|e| fail(MATRIX_JSON, format!("cells: {e}")))?;
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
    let run = RunArtifact {
        slices: matrix.slices.clone(),
        grid,
        provenance,
        timing,
        health,
    };
    check_run(&run).map_err(|message| {
        let file = if message.starts_with("slices") || message.starts_with("cells") {
            MATRIX_JSON
        } else if let Some(rest) = message.strip_prefix(&format!("{TIMING_JSON}: ")) {
            return fail(TIMING_JSON, rest.to_string());
        } else if let Some(rest) = message.strip_prefix(&format!("{HEALTH_JSON}: ")) {
            return fail(HEALTH_JSON, rest.to_string());
        } else {
            RUN_JSON
        };
        fail(file, message)
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
    if texts[MATRIX_JSON] != run.matrix_json() {
        return Err(fail(
            MATRIX_JSON,
            "not in the canonical layout this version writes".into(),
        ));
    }
    Ok(run)
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

/// What [`import_run`] did with one run folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Imported {
    /// Copied to this folder.
    Copied(PathBuf),
    /// This folder already held the same checked files; nothing was written.
    AlreadyThere(PathBuf),
}

/// Imports the run folder `src`, made on another machine, into the artifact root `root`
/// (`<root>/<preset>/<model>/seed-<seed>/`). It is checked fully first ([`load_run`]) and
/// must have been made for the preset whose hash is now `preset_sha256`. The copy is
/// atomic: every file of the folder (checkpoints included; not its lock or a
/// temporary file, and no symbolic link, which is refused) goes to a hidden staging
/// folder of `root`, is checked again there and then renamed into place, so a crash
/// leaves no folder that looks finished (a staging folder left by a crash is hidden from
/// [`find_runs`] and removed by the next import once its process is gone). A destination that already holds the same checked files
/// is left as it is; one with other files is refused.
pub fn import_run(src: &Path, root: &Path, preset_sha256: &str) -> Result<Imported> {
    let run = load_run(src)?;
    let p = &run.provenance;
    if p.preset.sha256 != preset_sha256 {
        return Err(Error::Artifact {
            path: src.join(RUN_JSON),
            message: format!(
                "made for preset {} with hash {}, but {} now hashes to {preset_sha256}: \
                 a run of another preset version is not imported",
                p.preset.name, p.preset.sha256, p.preset.path
            ),
        });
    }
    let dest = run_dir(root, &p.preset.name, &p.model, p.seed);
    if dest.exists() {
        let same = load_run(&dest).is_ok()
            && std::fs::read(dest.join(SUMS)).ok() == std::fs::read(src.join(SUMS)).ok();
        return if same {
            Ok(Imported::AlreadyThere(dest))
        } else {
            Err(Error::Artifact {
                path: dest,
                message: format!(
                    "already holds a run with other results than {}: remove it first to replace it",
                    src.display()
                ),
            })
        };
    }
    let parent = dest.parent().expect("a run folder has a parent");
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    // The copy is made as `<root>/.import.tmp-<pid>/<preset>/<model>/seed-<n>`: a run
    // folder that the checked loader accepts, in a hidden folder no reader looks into.
    remove_dead_stagings(root);
    let staging = root.join(format!(".import.tmp-{}", std::process::id()));
    let tmp = run_dir(&staging, &p.preset.name, &p.model, p.seed);
    let copy = || -> Result<()> {
        if staging.exists() {
            std::fs::remove_dir_all(&staging).map_err(|e| Error::io(&staging, e))?;
        }
        for entry in walkdir::WalkDir::new(src).sort_by_file_name() {
            let entry =
                entry.map_err(|e| Error::io(e.path().unwrap_or(src).to_path_buf(), e.into()))?;
            let rel = entry.path().strip_prefix(src).expect("walked under src");
            let target = tmp.join(rel);
            let kind = entry.file_type();
            let name = entry.file_name().to_string_lossy();
            if kind.is_symlink() {
                return Err(Error::Artifact {
                    path: entry.path().to_path_buf(),
                    message: "a symbolic link in a run folder is not imported".into(),
                });
            } else if kind.is_dir() {
                std::fs::create_dir_all(&target).map_err(|e| Error::io(&target, e))?;
            } else if name != ".lock" && !crate::files::is_temporary(&name) {
                let bytes = std::fs::read(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
                write_atomic(&target, &bytes)?;
            }
        }
        // What lands is what was checked: the copy is checked again before it is named.
        if load_run(&tmp)? != run {
            return Err(Error::Artifact {
                path: src.to_path_buf(),
                message: "changed while it was being imported".into(),
            });
        }
        std::fs::rename(&tmp, &dest).map_err(|e| Error::io(&dest, e))
    };
    let copied = copy();
    let _ = std::fs::remove_dir_all(&staging);
    copied?;
    Ok(Imported::Copied(dest))
}

/// Removes the staging folders of [`import_run`] whose process no longer runs (read from
/// `/proc`; elsewhere they are left for the user).
fn remove_dead_stagings(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(".import.tmp-")) else {
            continue;
        };
        if crate::files::process_gone(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
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
    pub provenance: Vec<Provenance>,
    /// Each seed's wall times, in seed order, when recorded.
    pub timing: Vec<Option<WallTimes>>,
    /// Each seed's health record, in seed order (`None` for a schema-1 folder).
    pub health: Vec<Option<Vec<Health>>>,
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
    }
    let mut out: Vec<ModelRuns> = groups.into_values().collect();
    for m in &mut out {
        // Seed order, applied to the three per-seed lists alike.
        let mut order: Vec<usize> = (0..m.provenance.len()).collect();
        order.sort_by_key(|&n| m.provenance[n].seed);
        m.provenance = order.iter().map(|&n| m.provenance[n].clone()).collect();
        m.timing = order.iter().map(|&n| m.timing[n].clone()).collect();
        m.health = order.iter().map(|&n| m.health[n].clone()).collect();
    }
    Ok(out)
}
