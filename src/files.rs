//! Files written so that a crash never leaves a half-written one: every file the crate
//! writes (artifacts, checkpoints, caches' manifests, fetched records, figures, tables,
//! the paper, listings) goes through [`write_atomic`].

use std::io::Write;
use std::path::Path;

use crate::{Error, Result};

/// Writes `bytes` to `path` atomically: a temporary file beside it, synced, then renamed.
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

/// Removes `path`; a file that is already gone is not an error.
pub fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path, e)),
        _ => Ok(()),
    }
}
