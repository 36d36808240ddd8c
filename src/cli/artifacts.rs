//! `drift artifacts`: verify run folders, and import run folders made elsewhere.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::artifacts::{Imported, RunArtifact, find_runs, import_run, load_run};
use crate::baseline::Baseline;
use crate::output::{errln, outln};
use crate::preset::Preset;
use crate::{Error, Result};

/// Artifact subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Load every run folder under the given roots through the checked loader; prints one
    /// line per run and exits non-zero if any is missing, truncated, tampered or
    /// inconsistent. A run whose checkpoints collapsed to a constant predictor (one class
    /// for at least 99% of its ID test rows, or a near-constant regression) is listed
    /// with the cutoffs where it did; the counting baselines are constant by design and
    /// say so instead.
    Verify {
        /// Artifact roots (folders holding <preset>/<model>/seed-<n>/).
        #[arg(required = true)]
        roots: Vec<PathBuf>,
    },
    /// Import run folders made on another machine (a GPU box, a cluster): every run folder
    /// under DIR is checked fully and must have been made for its preset as it is now
    /// (the hash in its run.json against the preset file); it is then copied atomically
    /// into the artifact root, where the compute table shows its device, thread count
    /// and host. A run that does not verify, was made for another version of its preset,
    /// or would replace other results is refused and named; the others are imported.
    Import {
        /// A folder holding run folders (<preset>/<model>/seed-<n>/, at any depth).
        dir: PathBuf,
        /// The artifact root to import into.
        #[arg(long, default_value = "results")]
        out: PathBuf,
        /// The folder of the preset files (`<presets>/<name>.toml`) [default: the path
        /// each run recorded, relative to the current folder].
        #[arg(long)]
        presets: Option<PathBuf>,
    },
}

/// Runs an artifact subcommand.
pub fn run(command: Command) -> Result<ExitCode> {
    match command {
        Command::Verify { roots } => verify(&roots),
        Command::Import { dir, out, presets } => import(&dir, &out, presets.as_deref()),
    }
}

/// `drift artifacts import`: one line per run folder, exit status 1 if any was refused.
fn import(dir: &Path, out: &Path, presets: Option<&Path>) -> Result<ExitCode> {
    let runs = find_runs(dir)?;
    if runs.is_empty() {
        return Err(Error::Artifact {
            path: dir.to_path_buf(),
            message: "no run folders (folders with SHA256SUMS) to import".into(),
        });
    }
    // Each preset is read once; its error (a missing or malformed file) refuses its runs.
    let mut hashes: BTreeMap<PathBuf, std::result::Result<String, String>> = BTreeMap::new();
    let (mut copied, mut present, mut refused) = (0, 0, 0);
    for run in &runs {
        let outcome = load_run(run).and_then(|artifact| {
            let p = &artifact.provenance.preset;
            let file = match presets {
                Some(folder) => folder.join(format!("{}.toml", p.name)),
                None => PathBuf::from(&p.path),
            };
            let hash = hashes
                .entry(file.clone())
                .or_insert_with(|| {
                    Preset::load(&file)
                        .map(|l| l.sha256)
                        .map_err(|e| e.to_string())
                })
                .clone()
                .map_err(Error::Invalid)?;
            import_run(run, out, &hash)
        });
        match outcome {
            Ok(Imported::Copied(dest)) => {
                copied += 1;
                outln!("imported {} -> {}", run.display(), dest.display())?;
            }
            Ok(Imported::AlreadyThere(dest)) => {
                present += 1;
                outln!(
                    "present  {} (the same run is already in {})",
                    run.display(),
                    dest.display()
                )?;
            }
            Err(e) => {
                refused += 1;
                outln!("refused  {e}")?;
            }
        }
    }
    outln!(
        "{} run folders: {copied} imported, {present} already present, {refused} refused",
        runs.len()
    )?;
    Ok(if refused == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `drift artifacts verify`.
fn verify(roots: &[PathBuf]) -> Result<ExitCode> {
    let mut bad = 0;
    let mut runs = 0;
    let mut collapsed = (0, 0, 0);
    for root in roots {
        for dir in find_runs(root)? {
            runs += 1;
            match load_run(&dir) {
                Ok(run) => {
                    let health = health_note(&run);
                    if Baseline::from_key(&run.provenance.model).is_none() {
                        let cutoffs = run.collapsed().len();
                        collapsed.0 += cutoffs;
                        collapsed.1 += usize::from(cutoffs > 0);
                        collapsed.2 += run.health.as_ref().map_or(0, Vec::len);
                    }
                    outln!("ok    {}{health}", dir.display())?;
                }
                Err(e) => {
                    bad += 1;
                    outln!("error {e}")?;
                }
            }
        }
    }
    if runs == 0 {
        errln!("no run folders (folders with SHA256SUMS) under the given roots");
        return Ok(ExitCode::FAILURE);
    }
    outln!(
        "{runs} runs, {bad} bad; {} of {} checkpoints collapsed, in {} runs",
        collapsed.0,
        collapsed.2,
        collapsed.1
    )?;
    Ok(if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// What `verify` says about a loaded run after its folder: its health, and what its seed
/// varied when that was more than the initialisation (runs made before `vary` varied
/// nothing else, and say nothing).
fn health_note(run: &RunArtifact) -> String {
    let varied = &run.provenance.varied;
    let note = health_only_note(run);
    if varied.len() > 1 {
        let words: Vec<&str> = varied.iter().map(|v| v.name()).collect();
        format!("{note}  varied {}", words.join(" "))
    } else {
        note
    }
}

/// The health part of [`health_note`].
fn health_only_note(run: &RunArtifact) -> String {
    if run.health.is_none() {
        return " (schema 1: no health record)".into();
    }
    if Baseline::from_key(&run.provenance.model).is_some() {
        return " (counting baseline: constant by design)".into();
    }
    match run.collapsed().as_slice() {
        [] => String::new(),
        cutoffs => format!(
            "  collapsed at {} of {} cutoffs: {}",
            cutoffs.len(),
            run.slices.len(),
            cutoffs.join(" ")
        ),
    }
}
