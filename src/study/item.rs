//! The plan's vocabulary: the stages, what an item does ([`Work`]), where it stands
//! ([`State`]), and the item itself with the one `drift` command line it runs, which the
//! local executor and a Slurm task share.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The stages, in the order their items run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Encoder caches.
    Caches,
    /// Baselines, runs and the model listing.
    Runs,
    /// Saliency maps.
    Saliency,
    /// The paper.
    Report,
}

impl Stage {
    /// Every stage, in order.
    pub const ALL: [Stage; 4] = [Stage::Caches, Stage::Runs, Stage::Saliency, Stage::Report];

    /// The stage's name (`caches`, `runs`, `saliency`, `report`).
    pub fn name(self) -> &'static str {
        match self {
            Stage::Caches => "caches",
            Stage::Runs => "runs",
            Stage::Saliency => "saliency",
            Stage::Report => "report",
        }
    }
}

/// What one item does.
#[derive(Clone, Debug, PartialEq)]
pub enum Work {
    /// `drift cache PRESET`.
    Cache {
        /// The preset file.
        preset: PathBuf,
    },
    /// `drift run PRESET --baseline-only`.
    Baseline {
        /// The preset file.
        preset: PathBuf,
        /// Its artifact folders: one, or one per seed when the seeds vary data or split.
        dirs: Vec<PathBuf>,
    },
    /// `drift run PRESET --models MODEL --seeds SEED`.
    Run {
        /// The preset file.
        preset: PathBuf,
        /// Model key.
        model: String,
        /// Seed.
        seed: u64,
        /// Its artifact folder.
        dir: PathBuf,
        /// Cutoffs the run trains (for progress).
        cutoffs: usize,
        /// It computes the drift detectors (`--detectors`).
        detectors: bool,
    },
    /// `drift detect DIR`: the detectors of a finished run that lacks them (from its
    /// checkpoints, else trained again at its recorded thread count and kept only if its
    /// matrix comes out the same).
    Detect {
        /// The run folder.
        dir: PathBuf,
    },
    /// `drift models --params --output FILE`.
    Models {
        /// The listing.
        file: PathBuf,
    },
    /// `drift saliency RUN --cutoff C --slice S --count N`.
    Saliency {
        /// The run folder.
        run: PathBuf,
        /// Cutoff label.
        cutoff: String,
        /// Slice label.
        slice: String,
        /// Images averaged.
        count: usize,
    },
    /// `build-report --root ROOT`.
    Report {
        /// The repository root.
        root: PathBuf,
        /// Rewrite the manifest instead of checking against it.
        update: bool,
    },
}

/// Where an item stands.
#[derive(Clone, Debug, PartialEq)]
pub enum State {
    /// Its output is there, checked and current.
    Done,
    /// Not there yet (the detail says how far a resumable run got).
    Missing(String),
    /// There, but made for something else or damaged: the reason.
    Stale(String),
    /// Its last attempt failed: how.
    Failed(String),
}

impl State {
    /// `done`, `missing`, `stale` or `failed`.
    pub fn name(&self) -> &'static str {
        match self {
            State::Done => "done",
            State::Missing(_) => "missing",
            State::Stale(_) => "stale",
            State::Failed(_) => "failed",
        }
    }

    /// The detail, empty when done.
    pub fn detail(&self) -> &str {
        match self {
            State::Done => "",
            State::Missing(d) | State::Stale(d) | State::Failed(d) => d,
        }
    }
}

/// One unit of work.
#[derive(Clone, Debug)]
pub struct Item {
    /// Unique and stable: `cache/<preset>`, `baseline/<preset>`,
    /// `run/<preset>/<model>/seed-<n>`, `models`, `saliency/<preset>/<model>/seed-<n>/
    /// <cutoff>-on-<slice>`, `report`.
    pub id: String,
    /// Its stage.
    pub stage: Stage,
    /// What it does.
    pub work: Work,
    /// Indices of the items it needs first.
    pub deps: Vec<usize>,
    /// Where it stands on disk.
    pub state: State,
    /// Seconds it is expected to take, from earlier timings; `None` when nothing is known.
    pub estimate: Option<f64>,
}

impl Item {
    /// The item's command line: the program (`drift`, or `build-report` beside it) and
    /// its arguments. `threads` and `device` are given as text so a Slurm script can pass
    /// `$SLURM_CPUS_PER_TASK`.
    pub fn command(&self, drift: &Path, out: &Path, threads: &str, device: &str) -> Vec<String> {
        let p = |path: &Path| path.display().to_string();
        let mut argv = vec![p(drift)];
        let args: Vec<String> = match &self.work {
            Work::Cache { preset } => vec![
                "cache".into(),
                p(preset),
                "--threads".into(),
                threads.into(),
                "--quiet".into(),
            ],
            Work::Baseline { preset, .. } => vec![
                "run".into(),
                p(preset),
                "--baseline-only".into(),
                "--out".into(),
                p(out),
            ],
            Work::Run {
                preset,
                model,
                seed,
                detectors,
                ..
            } => [
                "run".into(),
                p(preset),
                "--models".into(),
                model.clone(),
                "--seeds".into(),
                seed.to_string(),
                "--out".into(),
                p(out),
                "--device".into(),
                device.into(),
                "--threads".into(),
                threads.into(),
                "--quiet".into(),
            ]
            .into_iter()
            .chain(detectors.then(|| "--detectors".into()))
            .collect(),
            Work::Detect { dir } => vec!["detect".into(), p(dir), "--quiet".into()],
            Work::Models { file } => vec![
                "models".into(),
                "--params".into(),
                "--output".into(),
                p(file),
            ],
            Work::Saliency {
                run,
                cutoff,
                slice,
                count,
            } => vec![
                "saliency".into(),
                p(run),
                "--cutoff".into(),
                cutoff.clone(),
                "--slice".into(),
                slice.clone(),
                "--count".into(),
                count.to_string(),
            ],
            Work::Report { root, update } => {
                argv[0] = p(&drift.with_file_name("build-report"));
                let mut a = vec!["--root".into(), p(root)];
                if *update {
                    a.push("--update".into());
                }
                a
            }
        };
        argv.extend(args);
        argv
    }
}
