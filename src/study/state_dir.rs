//! `<out>/.study`, the study's own folder beside its results, and the lock that keeps a
//! second `drift study` from writing there at the same time.

use std::path::Path;

use crate::{Error, Result};

/// The folder under the results root that holds the study's own files: failure records,
/// logs and the Slurm scripts.
pub const STATE_DIR: &str = ".study";

/// Takes `<out>/.study/lock` for a process that runs or submits the study's items: a
/// second `drift study` on the same results folder is refused, naming the lock, instead
/// of clearing and writing what the first one is writing. Released when the file is
/// dropped or the process ends (even by a kill). Holding it, the temporary files a killed
/// study left in the folder (a half-written `failed.json`) are removed.
pub fn lock(out: &Path) -> Result<std::fs::File> {
    let dir = out.join(STATE_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let path = dir.join("lock");
    let lock = crate::files::lock_exclusive(&path, || {
        format!(
            "{}: another drift study is running on this results folder (it holds {}); wait \
             for it, or see its progress with drift study --plan",
            out.display(),
            path.display()
        )
    })?;
    crate::files::remove_stale_temporaries(&dir)?;
    Ok(lock)
}
