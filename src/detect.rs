//! `drift detect`: adds the label-free drift detectors to a finished run folder.
//!
//! The detectors need each checkpoint's outputs on every later slice. A run folder keeps
//! its checkpoints under `checkpoints/` (`drift run` leaves them there; the committed
//! results do not ship them), so the detectors come from them when they are there; else
//! the run is trained again, at the device and thread count it recorded, which gives the
//! same checkpoints. Either way the work happens in a hidden staging folder of the
//! results root, and the new folder replaces the old one only if its matrix is the
//! committed one cell for cell: a run whose matrix would change is refused, and nothing
//! is written.

use std::path::{Path, PathBuf};

use crate::artifacts::{self, RunArtifact};
use crate::device::DeviceChoice;
use crate::preset::Preset;
use crate::run::{RunOptions, run_preset};
use crate::{Error, Result};

/// What [`detect`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum Detected {
    /// The run already had its detectors; nothing was done.
    AlreadyThere,
    /// Computed from the run's own checkpoints.
    FromCheckpoints,
    /// The run was trained again (no checkpoints were kept) to the same matrix; the
    /// largest relative difference of a cutoff's final training loss from the recorded
    /// one (0 when the checkpoints are bit-identical; another CPU kind can change float
    /// rounding without changing a cell).
    Retrained {
        /// Largest relative final-loss difference.
        loss_difference: f64,
    },
}

/// How [`detect`] runs.
#[derive(Clone, Debug)]
pub struct DetectOptions {
    /// libtorch threads; the run's recorded count when `None` (results are bit-identical
    /// only for the same count, and a retrained matrix must be).
    pub threads: Option<u32>,
    /// The device; the run's recorded one when `None`.
    pub device: Option<DeviceChoice>,
    /// Recompute detectors the run already has.
    pub force: bool,
    /// Draw progress bars on stderr.
    pub progress: bool,
}

/// Adds `detectors.json` to the run folder `dir` (`<root>/<preset>/<model>/seed-<n>`),
/// reading its preset from the path its `run.json` records.
pub fn detect(dir: &Path, options: &DetectOptions) -> Result<Detected> {
    let run = artifacts::load_run(dir)?;
    if run.detectors.is_some() && !options.force {
        return Ok(Detected::AlreadyThere);
    }
    let p = &run.provenance;
    let preset_path = PathBuf::from(&p.preset.path);
    let loaded = Preset::load(&preset_path).map_err(|e| {
        Error::Invalid(format!(
            "{}: its run.json names preset {} (relative to the folder the run was made \
             in): {e}",
            dir.display(),
            preset_path.display()
        ))
    })?;
    if loaded.sha256 != p.preset.sha256 {
        return Err(Error::Invalid(format!(
            "{}: made for preset hash {}, but {} now hashes to {}: its matrix cannot be \
             reproduced, so detectors computed now would not belong to it; run the preset \
             again with `drift run --detectors`",
            dir.display(),
            p.preset.sha256,
            preset_path.display(),
            loaded.sha256
        )));
    }
    let root = results_root(dir, &run)?;
    let staging = root.join(format!(".detect.tmp-{}", std::process::id()));
    let result = (|| {
        let staged = artifacts::run_dir(&staging, &p.preset.name, &p.model, p.seed);
        let kept = copy_checkpoints(&dir.join("checkpoints"), &staged.join("checkpoints"))?;
        let device = match options.device {
            Some(device) => device,
            None => p.device.parse()?,
        };
        let run_options = RunOptions {
            out: staging.clone(),
            models: vec![p.model.clone()],
            seeds: vec![p.seed],
            device,
            threads: options.threads.unwrap_or(p.threads),
            progress: options.progress,
            detectors: true,
            cutoffs: None,
        };
        run_preset(&loaded, &run_options)?;
        let new = artifacts::load_run(&staged)?;
        same_matrix(dir, &run, &new, &run_options)?;
        let loss_difference = final_losses(&run)
            .zip(final_losses(&new))
            .filter_map(|(a, b)| {
                Some((a? - b?).abs() / a?.abs().max(b?.abs()).max(f64::MIN_POSITIVE))
            })
            .fold(0.0, f64::max);
        swap(dir, &staged, &staging)?;
        Ok(if kept {
            Detected::FromCheckpoints
        } else {
            Detected::Retrained { loss_difference }
        })
    })();
    let _ = std::fs::remove_dir_all(&staging);
    result
}

/// The results root of the run folder `dir`: three folders up, where
/// [`artifacts::run_dir`] puts it back.
fn results_root(dir: &Path, run: &RunArtifact) -> Result<PathBuf> {
    let p = &run.provenance;
    let root = dir.ancestors().nth(3).map(Path::to_path_buf);
    match root {
        Some(root) if artifacts::run_dir(&root, &p.preset.name, &p.model, p.seed) == dir => {
            Ok(root)
        }
        _ => Err(Error::Invalid(format!(
            "{}: not laid out as <results>/{}/{}/seed-{} (the folder its run.json describes)",
            dir.display(),
            p.preset.name,
            p.model,
            p.seed
        ))),
    }
}

/// Copies the checkpoint files (not a lock, a temporary file or a cutoff's detectors) of
/// `from` into `to`; whether there were any.
fn copy_checkpoints(from: &Path, to: &Path) -> Result<bool> {
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(false);
    };
    std::fs::create_dir_all(to).map_err(|e| Error::io(to, e))?;
    let mut any = false;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(from, e))?;
        let name = entry.file_name().to_string_lossy().to_string();
        let is_file = entry.file_type().map_err(|e| Error::io(entry.path(), e))?;
        // Not the cutoffs' detector files: they hold what an earlier computation gave, and
        // detect is asked to compute them now.
        if !is_file.is_file()
            || name == ".lock"
            || crate::files::is_temporary(&name)
            || name.ends_with(".detectors.json")
        {
            continue;
        }
        let target = to.join(&name);
        std::fs::copy(entry.path(), &target).map_err(|e| Error::io(&target, e))?;
        any |= name.ends_with(".safetensors");
    }
    Ok(any)
}

/// Each cutoff's recorded final training loss.
fn final_losses(run: &RunArtifact) -> impl Iterator<Item = Option<f64>> + '_ {
    run.health.iter().flatten().map(|h| h.final_loss)
}

/// The run made now scores every cell as the committed one did.
fn same_matrix(
    dir: &Path,
    old: &RunArtifact,
    new: &RunArtifact,
    options: &RunOptions,
) -> Result<()> {
    let k = old.slices.len();
    for i in 0..k {
        for j in 0..k {
            let (a, b) = (old.grid.get(i, j), new.grid.get(i, j));
            if a.map(f64::to_bits) != b.map(f64::to_bits) {
                return Err(Error::Invalid(format!(
                    "{}: the run made now scores cell ({}, {}) {b:?}, the folder holds {a:?} \
                     (recorded: {} with {} threads; now: {:?} with {} threads); nothing was \
                     changed",
                    dir.display(),
                    old.slices[i],
                    old.slices[j],
                    old.provenance.device,
                    old.provenance.threads,
                    options.device,
                    options.threads
                )));
            }
        }
    }
    Ok(())
}

/// Puts the folder `new` in the place of `dir`: the old folder moves into the staging
/// folder first, so that a crash between the two renames leaves it there, hidden, not lost.
fn swap(dir: &Path, new: &Path, staging: &Path) -> Result<()> {
    let old = staging.join("replaced");
    std::fs::rename(dir, &old).map_err(|e| Error::io(dir, e))?;
    if let Err(e) = std::fs::rename(new, dir) {
        // Put it back; the error is the one worth reporting.
        let _ = std::fs::rename(&old, dir);
        return Err(Error::io(dir, e));
    }
    Ok(())
}
