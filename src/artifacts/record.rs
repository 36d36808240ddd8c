//! What a run folder records, as types: the run ([`RunArtifact`]), where it came from
//! ([`RunProvenance`], `run.json`: preset, code, data, device) and how long it took
//! ([`WallTimes`], `timing.json`). The types every other part of `artifacts` reads, so
//! they sit below them.

use serde::{Deserialize, Serialize};

use crate::checksum::sha256_hex;
use crate::data::DataSource;
use crate::detectors::DetectorMatrices;
use crate::eval::Health;
use crate::matrix::Grid;
use crate::metrics::Metric;
use crate::slices::{Regime, Varied, only_init};
use crate::train::Epoch;

/// The artifact schema version this crate writes; it also reads schema 1 (no health).
pub const SCHEMA: u32 = 2;

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
    /// The label-free detectors, all cutoffs (runs with `--detectors`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detectors: Option<f64>,
    /// Each cutoff's epochs' wall seconds, in slice order (the times of `history.json`'s
    /// epochs, kept here so that the history of identical runs is identical).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epochs: Option<Vec<Vec<f64>>>,
}

impl WallTimes {
    /// No time spent yet, on no recorded host.
    pub fn zero() -> Self {
        WallTimes {
            train: 0.0,
            eval: 0.0,
            host: None,
            detectors: None,
            epochs: None,
        }
    }

    /// An estimate of the seconds that training and scoring the cutoffs `needed` (0-based)
    /// of a run of `slices` slices under `regime` take again, from these times of the
    /// whole run: its training time shared among the cutoffs in proportion to the slices
    /// each trains on (gold and self-labelled: a proxy for its rows, which the times do not
    /// record), its evaluation time evenly among the cutoffs with a model.
    pub fn cutoffs_estimate(&self, regime: &Regime, slices: usize, needed: &[usize]) -> f64 {
        let weight = |i: usize| {
            (regime.trained_slices(i).len() + regime.self_labelled_slices(i).len()) as f64
        };
        let total: f64 = (0..slices).map(weight).sum();
        let modelled = (0..slices).filter(|&i| weight(i) > 0.0).count();
        if total == 0.0 {
            return 0.0;
        }
        needed
            .iter()
            .filter(|&&i| weight(i) > 0.0)
            .map(|&i| self.train * weight(i) / total + self.eval / modelled as f64)
            .sum()
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
pub struct RunProvenance {
    /// Artifact schema version.
    pub schema: u32,
    /// The preset.
    pub preset: PresetRef,
    /// Model key.
    pub model: String,
    /// Training seed.
    pub seed: u64,
    /// What this seed varied, in canonical order: `init`, then `split` and `data` when the
    /// preset varied them ([`crate::preset::Preset::varied`]). Runs made before it was
    /// recorded varied the initialisation alone, which is what its absence means.
    #[serde(default = "only_init")]
    pub varied: Vec<Varied>,
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
    /// The cells scored on the classes each cutoff trained on (`matrix.json`'s
    /// `seen_classes`), when the preset asks for them.
    pub seen_classes: Option<Grid>,
    /// `run.json`.
    pub provenance: RunProvenance,
    /// `timing.json`, when the run recorded one.
    pub timing: Option<WallTimes>,
    /// `health.json`: one entry per cutoff, in slice order (`None` in a schema-1 folder).
    pub health: Option<Vec<Health>>,
    /// `detectors.json`: the label-free drift detectors, when the run computed them
    /// (`drift run --detectors`).
    pub detectors: Option<DetectorMatrices>,
    /// `history.json`: each cutoff's training epoch by epoch, in slice order (no epochs
    /// for a cutoff without a model); `None` in folders written before it was recorded.
    pub history: Option<Vec<CutoffHistory>>,
}

/// One cutoff's training, epoch by epoch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CutoffHistory {
    /// The cutoff's slice label.
    pub cutoff: String,
    /// Its epochs, from 1 (none without a model).
    pub epochs: Vec<Epoch>,
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
