//! Running jobs: render the outputs that are not fresh, in parallel, write them, and
//! record what was built ([`BuiltOutputs`]).

use std::collections::BTreeMap;
use std::path::Path;

use super::job::OutputJob;
use crate::checksum::sha256_hex;
use crate::files::write_atomic;
use crate::report::manifest::Manifest;
use crate::{Error, Result};

/// What a build did: the outputs built so far, with their manifest, which were rendered
/// and which kept, and the committed bytes of those that changed.
#[derive(Debug, Default)]
pub struct BuiltOutputs {
    /// The manifest of the outputs as built.
    pub manifest: Manifest,
    /// Outputs rendered this time.
    pub rendered: Vec<String>,
    /// Outputs kept because their inputs and file were unchanged.
    pub kept: Vec<String>,
    /// The committed bytes of each output rendered with other bytes, as they were on disk
    /// before it was written again (only when they matched the manifest), for
    /// [`crate::report::explain`].
    pub previous: BTreeMap<String, Vec<u8>>,
}

/// Renders every job whose output is not fresh (or all, with `force`), in parallel, then
/// writes each file atomically in job order and adds it to `built`. Jobs of one call must
/// not read each other's files (the paper's PDF is a later call than the figures).
pub fn run_jobs(
    root: &Path,
    jobs: &[OutputJob],
    committed: &Manifest,
    force: bool,
    built: &mut BuiltOutputs,
) -> Result<()> {
    use rayon::prelude::*;
    let mut todo = Vec::new();
    for job in jobs {
        if built.manifest.get(&job.path).is_some() {
            return Err(Error::Invalid(format!(
                "{}: two outputs share this path",
                job.path
            )));
        }
        if !force && committed.is_fresh(root, &job.path, &job.inputs)? {
            let entry = committed
                .get(&job.path)
                .expect("fresh outputs are in the manifest");
            built
                .manifest
                .add_hashed(&job.path, entry.sha256.clone(), job.inputs.clone())?;
            built.kept.push(job.path.clone());
        } else {
            todo.push(job);
        }
    }
    let rendered: Vec<Result<Vec<u8>>> = todo.par_iter().map(|job| job.render()).collect();
    for (job, bytes) in todo.into_iter().zip(rendered) {
        let bytes = bytes?;
        let path = root.join(&job.path);
        if let Some(entry) = committed.get(&job.path)
            && entry.sha256 != sha256_hex(&bytes)
            && let Ok(old) = std::fs::read(&path)
            && sha256_hex(&old) == entry.sha256
        {
            built.previous.insert(job.path.clone(), old);
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        write_atomic(&path, &bytes)?;
        built.manifest.add(&job.path, &bytes, job.inputs.clone())?;
        built.rendered.push(job.path.clone());
    }
    Ok(())
}
