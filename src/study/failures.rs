//! The failure records, `<out>/.study/failed.json`: the last failed attempt of each item,
//! kept until it succeeds, so that `drift study --plan` shows how it failed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::state_dir::STATE_DIR;
use crate::files::write_atomic;
use crate::{Error, Result};

/// `<out>/.study/failed.json`: the last failed attempt of each item that has one.
fn failures_path(out: &Path) -> PathBuf {
    out.join(STATE_DIR).join("failed.json")
}

/// The failure records under `out` (none when there is no file).
pub fn failures(out: &Path) -> Result<BTreeMap<String, String>> {
    let path = failures_path(out);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            Error::Invalid(format!(
                "{}: not a failure record ({e}); delete it to start afresh",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(Error::io(&path, e)),
    }
}

/// Rewrites the failure records (atomically).
pub fn write_failures(out: &Path, failed: &BTreeMap<String, String>) -> Result<()> {
    let path = failures_path(out);
    let dir = path.parent().expect("a file in a folder");
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let text = serde_json::to_string_pretty(failed).expect("strings serialise") + "\n";
    write_atomic(&path, text.as_bytes())
}
