//! `drift artifacts`: verify run folders.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::Result;
use crate::artifacts::{find_runs, load_run};

/// Artifact subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Load every run folder under the given roots through the checked loader; prints one
    /// line per run and exits non-zero if any is missing, truncated, tampered or inconsistent.
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
    for root in &roots {
        for dir in find_runs(root)? {
            runs += 1;
            match load_run(&dir) {
                Ok(_) => println!("ok    {}", dir.display()),
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
    println!("{runs} runs, {bad} bad");
    Ok(if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
