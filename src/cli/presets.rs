//! `drift presets`: validate preset files and print their content hashes.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::Result;
use crate::output::{errln, outln};
use crate::preset::{Preset, preset_files};

/// Preset subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Validate presets and print each one's content hash; exits non-zero if any is bad.
    ///
    /// With no paths, checks every presets/*.toml. A folder checks the *.toml files in it.
    Check {
        /// Preset files or folders.
        paths: Vec<PathBuf>,
    },
}

/// Runs a preset subcommand.
pub fn run(command: Command) -> Result<ExitCode> {
    let Command::Check { paths } = command;
    let paths = if paths.is_empty() {
        vec![PathBuf::from("presets")]
    } else {
        paths
    };
    let mut files = Vec::new();
    for path in &paths {
        if path.is_dir() {
            files.extend(preset_files(path)?);
        } else {
            files.push(path.clone());
        }
    }
    let mut bad = 0;
    for file in &files {
        match Preset::load(Path::new(file)) {
            Ok(loaded) => outln!(
                "ok    {}  {} models, {} seeds  sha256:{}",
                file.display(),
                loaded.preset.models.len(),
                loaded.preset.seeds.len(),
                loaded.sha256
            )?,
            Err(e) => {
                bad += 1;
                outln!("error {e}")?;
            }
        }
    }
    if files.is_empty() {
        errln!(
            "no preset files found in {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
