//! `drift artifacts`: verify run folders.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::Result;
use crate::artifacts::{RunArtifact, find_runs, load_run};
use crate::baseline::Baseline;

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
}

/// Runs an artifact subcommand.
pub fn run(command: Command) -> Result<ExitCode> {
    let Command::Verify { roots } = command;
    let mut bad = 0;
    let mut runs = 0;
    let mut collapsed = (0, 0, 0);
    for root in &roots {
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
                    println!("ok    {}{health}", dir.display());
                }
                Err(e) => {
                    bad += 1;
                    println!("error {e}");
                }
            }
        }
    }
    if runs == 0 {
        eprintln!("no run folders (folders with SHA256SUMS) under the given roots");
        return Ok(ExitCode::FAILURE);
    }
    println!(
        "{runs} runs, {bad} bad; {} of {} checkpoints collapsed, in {} runs",
        collapsed.0, collapsed.2, collapsed.1
    );
    Ok(if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// What `verify` says about a loaded run's health, after its folder.
fn health_note(run: &RunArtifact) -> String {
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
