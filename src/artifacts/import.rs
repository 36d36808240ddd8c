//! Importing a run folder made on another machine: checked fully, copied atomically
//! through a hidden staging folder, checked again, then renamed into place.

use std::path::{Path, PathBuf};

use super::layout::{RUN_JSON, run_dir};
use super::load::load_run;
use crate::checksum::SUMS;
use crate::files::write_atomic;
use crate::{Error, Result};

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
/// [`find_runs`](super::load::find_runs) and removed by the next import once its process
/// is gone). A destination that already holds the same checked files is left as it is;
/// one with other files is refused.
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
