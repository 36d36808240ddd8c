//! Files written so that a crash never leaves a half-written one: every file the crate
//! writes (artifacts, checkpoints, caches' manifests, fetched records, figures, tables,
//! the paper, listings) goes through [`write_atomic`].

use std::io::Write;
use std::path::Path;

use crate::{Error, Result};

/// Writes `bytes` to `path` atomically: a temporary file beside it
/// (`.<name>.tmp-<pid>`), synced, then renamed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// Takes an exclusive OS lock on `path` (created if missing), or fails with `busy` when
/// another process holds it. The lock goes with the returned file (dropped, or the
/// process ending, even by a kill), so no stale lock can block a later run.
pub fn lock_exclusive(path: &Path, busy: impl FnOnce() -> String) -> Result<std::fs::File> {
    let file = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::Invalid(busy())),
        Err(std::fs::TryLockError::Error(e)) => Err(Error::io(path, e)),
    }
}

/// Takes a shared OS lock on the lock file `path` when there is one (readers share it; a
/// writer holding it exclusively makes this fail with `busy`). No file, no writer: `None`.
pub fn lock_shared(path: &Path, busy: impl FnOnce() -> String) -> Result<Option<std::fs::File>> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
    };
    match file.try_lock_shared() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::Invalid(busy())),
        Err(std::fs::TryLockError::Error(e)) => Err(Error::io(path, e)),
    }
}

/// Refuses `path` when it names a place under `root` but resolves, through a symbolic
/// link, outside it: whatever is read there (or written) would come from elsewhere,
/// unseen by the tree's checks. A path that does not exist yet is judged by its nearest
/// existing ancestor.
pub fn inside(root: &Path, path: &Path) -> Result<()> {
    let resolve = |p: &Path| -> Result<std::path::PathBuf> {
        let mut existing = p;
        loop {
            match existing.canonicalize() {
                Ok(c) => return Ok(c),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    existing = match existing.parent() {
                        Some(parent) if !parent.as_os_str().is_empty() => parent,
                        _ => Path::new("."),
                    };
                }
                Err(e) => return Err(Error::io(existing, e)),
            }
        }
    };
    let (root_real, real) = (resolve(root)?, resolve(path)?);
    if real.starts_with(&root_real) {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "{}: resolves to {}, outside {} (a symbolic link out of the tree); refusing to \
             read or write there",
            path.display(),
            real.display(),
            root_real.display()
        )))
    }
}

/// Whether `name` is one of [`write_atomic`]'s temporary files: `.<name>.tmp-<pid>`.
pub fn is_temporary(name: &str) -> bool {
    name.starts_with('.')
        && name.rsplit_once(".tmp-").is_some_and(|(stem, pid)| {
            stem.len() > 1 && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
        })
}

/// Removes the temporary files a killed [`write_atomic`] left in `dir` (not below it) and
/// returns how many. Only call it while holding the folder's lock: another process's
/// write in progress looks the same. A missing folder has none.
pub fn remove_stale_temporaries(dir: &Path) -> Result<usize> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name();
        if entry.path().is_file() && name.to_str().is_some_and(is_temporary) {
            remove_if_present(&entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Whether the process `pid` (decimal) has ended: on Linux, no `/proc/<pid>`; elsewhere
/// it cannot be told, and the process is taken as running.
pub fn process_gone(pid: &str) -> bool {
    !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && Path::new("/proc/self").exists()
        && !Path::new("/proc").join(pid).exists()
}

/// Removes, in `dir` and below, the temporary files [`write_atomic`] left when its process
/// was killed (those of a running process are left alone), and returns how many. A
/// missing folder has none.
pub fn remove_dead_temporaries(dir: &Path) -> Result<usize> {
    let mut removed = 0;
    for entry in walkdir::WalkDir::new(dir) {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e)
                if e.io_error()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound) =>
            {
                continue;
            }
            Err(e) => {
                let path = e.path().unwrap_or(dir).to_path_buf();
                return Err(Error::io(path, e.into()));
            }
        };
        let name = entry.file_name().to_string_lossy();
        let dead = is_temporary(&name)
            && name
                .rsplit_once(".tmp-")
                .is_some_and(|(_, pid)| process_gone(pid));
        if entry.file_type().is_file() && dead {
            remove_if_present(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Removes `path`; a file that is already gone is not an error.
pub fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path, e)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_temporaries_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            ".2002.timing.json.tmp-25212",
            ".matrix.json.tmp-7",
            "2002.json",
            ".lock",
            ".x.tmp-",
            ".tmp-12",
            "a.tmp-12",
        ] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        assert_eq!(remove_stale_temporaries(dir.path()).unwrap(), 2);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [".lock", ".tmp-12", ".x.tmp-", "2002.json", "a.tmp-12"]
        );
        assert_eq!(
            remove_stale_temporaries(&dir.path().join("absent")).unwrap(),
            0
        );
    }

    #[test]
    fn temporaries_of_ended_processes_are_removed_below_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        let own = format!(".b.svg.tmp-{}", std::process::id());
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        // No process has this id: Linux's pid_max is at most 2^22.
        for name in [
            ".a.svg.tmp-999999999",
            "sub/.c.csv.tmp-999999999",
            &own,
            "d.svg",
        ] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        assert_eq!(remove_dead_temporaries(dir.path()).unwrap(), 2);
        assert!(dir.path().join(&own).exists() && dir.path().join("d.svg").exists());
        assert!(!dir.path().join("sub/.c.csv.tmp-999999999").exists());
        assert_eq!(
            remove_dead_temporaries(&dir.path().join("absent")).unwrap(),
            0
        );
    }
}
