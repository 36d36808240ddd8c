//! Writing the proof of a build: the proved outputs' lines of the manifest and the
//! provenance of the runs they were made from.

use std::path::Path;

use super::format::{
    Commit, DataRecord, INPUTS, PROVENANCE, PaperProvenance, PresetRecord, ProofFiles, RunRecord,
    SCHEMA, SUMS, StudyRecord, is_proved,
};
use crate::artifacts::run_dir;
use crate::checksum::sha256_hex;
use crate::report::manifest::{InputHashes, Manifest};
use crate::report::study::LoadedStudy;
use crate::{Error, Result};

/// The proof of a build: `outputs` is the manifest of what the build rendered so far
/// (at least every proved output), `studies` what it was rendered from, `results` the
/// folder of the run artifacts under `root`, `inputs` the hashes of every input (each
/// run's `SHA256SUMS` and `src`, the code hash, among them).
pub fn build(
    root: &Path,
    results: &str,
    studies: &[LoadedStudy],
    outputs: &Manifest,
    inputs: &InputHashes,
) -> Result<ProofFiles> {
    let proved = outputs.filtered(is_proved);
    let sums = proved.sums_text();
    let inputs_text = proved.inputs_text();
    let lock = root.join("Cargo.lock");
    let cargo_lock_sha256 = match std::fs::read(&lock) {
        Ok(bytes) => Some(sha256_hex(&bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(lock, e)),
    };
    let mut commits = Vec::new();
    let mut records = Vec::new();
    for study in studies {
        let mut presets = Vec::new();
        let mut runs = Vec::new();
        for model in &study.runs {
            for p in &model.provenance {
                let commit = Commit {
                    commit: p
                        .code
                        .git_commit
                        .clone()
                        .unwrap_or_else(|| "unknown".into()),
                    dirty: p.code.git_dirty.unwrap_or(true),
                };
                let rel = run_dir(Path::new(results), &model.preset, &p.model, p.seed);
                let rel = rel.to_string_lossy().replace('\\', "/");
                let sums_path = format!("{rel}/SHA256SUMS");
                let sha256sums = inputs.get(&sums_path).cloned().ok_or_else(|| {
                    Error::Invalid(format!("{sums_path}: not among the build's inputs"))
                })?;
                runs.push(RunRecord {
                    path: rel,
                    sha256sums,
                    commit: commit.commit.clone(),
                    dirty: commit.dirty,
                    device: p.device.clone(),
                    threads: p.threads,
                });
                if !commits.contains(&commit) {
                    commits.push(commit);
                }
                if !presets
                    .iter()
                    .any(|r: &PresetRecord| r.name == p.preset.name)
                {
                    presets.push(PresetRecord {
                        name: p.preset.name.clone(),
                        path: p.preset.path.clone(),
                        sha256: p.preset.sha256.clone(),
                        data: DataRecord {
                            name: p.data.name.clone(),
                            version: p.data.version.clone(),
                            sha256: p.data.sha256.clone(),
                        },
                    });
                }
            }
        }
        records.push(StudyRecord {
            name: study.spec.name.clone(),
            presets,
            runs,
        });
    }
    commits.sort();
    let provenance = PaperProvenance {
        schema: SCHEMA,
        manifest_sha256: sha256_hex(sums.as_bytes()),
        outputs: proved.len(),
        code_sha256: inputs
            .get("src")
            .cloned()
            .ok_or_else(|| Error::Invalid("the build's inputs lack the code hash".into()))?,
        cargo_lock_sha256,
        commits,
        studies: records,
    };
    let json = serde_json::to_string_pretty(&provenance).expect("provenance serialises") + "\n";
    Ok(ProofFiles {
        files: vec![
            (SUMS, sums.into_bytes()),
            (INPUTS, inputs_text.into_bytes()),
            (PROVENANCE, json.into_bytes()),
        ],
        provenance,
    })
}
