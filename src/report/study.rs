//! The studies of the paper (`report/studies.toml`) and their loaded, checked artifacts.

use std::path::Path;

use serde::Deserialize;

use crate::artifacts::{self, ModelRuns};
use crate::saliency::{self, SaliencyMap};
use crate::{Error, Result};

/// `report/studies.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StudiesFile {
    studies: Vec<StudySpec>,
}

/// One study as configured: a section of the paper built from some presets' runs.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudySpec {
    /// Folder and file name stem, e.g. `portraits`.
    pub name: String,
    /// Section title.
    pub title: String,
    /// Preset names whose runs under the results folder form the study.
    pub presets: Vec<String>,
}

/// A study with its runs, one entry per (preset, model), every seed combined.
#[derive(Clone, Debug)]
pub struct Study {
    /// The configuration.
    pub spec: StudySpec,
    /// The runs, ordered by preset (as configured) then model key.
    pub runs: Vec<ModelRuns>,
    /// The saliency maps found beside the runs (`<run>/saliency/*.json`, each checked
    /// against its folder's `SHA256SUMS`), in run order then file name order.
    pub saliency: Vec<SaliencyMap>,
    /// Every artifact file the runs and maps were read from, relative to the root, sorted.
    pub inputs: Vec<String>,
}

/// Reads the study list.
pub fn read_specs(path: &Path) -> Result<Vec<StudySpec>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let file: StudiesFile = toml::from_str(&text).map_err(|e| Error::Preset {
        path: path.to_path_buf(),
        message: e.message().to_string(),
    })?;
    for (i, s) in file.studies.iter().enumerate() {
        let ok = !s.name.is_empty()
            && s.name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !ok || file.studies[..i].iter().any(|o| o.name == s.name) {
            return Err(Error::Preset {
                path: path.to_path_buf(),
                message: format!(
                    "studies[{i}].name: {:?} must be unique, lower-case letters, digits and '-'",
                    s.name
                ),
            });
        }
        if s.presets.is_empty() {
            return Err(Error::Preset {
                path: path.to_path_buf(),
                message: format!("studies[{i}].presets: needs at least one preset"),
            });
        }
    }
    Ok(file.studies)
}

/// Loads every study's runs from `<root>/<results>`: each run through the checked artifact
/// loader; a configured preset without runs is an error.
pub fn load(root: &Path, results: &str, specs: &[StudySpec]) -> Result<Vec<Study>> {
    let all = artifacts::load_all(&root.join(results))?;
    specs
        .iter()
        .map(|spec| {
            let mut runs = Vec::new();
            for preset in &spec.presets {
                let found: Vec<ModelRuns> = all
                    .iter()
                    .filter(|r| &r.preset == preset)
                    .cloned()
                    .collect();
                if found.is_empty() {
                    return Err(Error::Invalid(format!(
                        "study {}: no runs of preset {preset} under {results}/ \
                         (run scripts/make-results)",
                        spec.name
                    )));
                }
                runs.extend(found);
            }
            let mut inputs = Vec::new();
            let mut maps = Vec::new();
            for r in &runs {
                for p in &r.provenance {
                    let dir = format!("{results}/{}/{}/seed-{}", r.preset, r.model, p.seed);
                    for file in ["matrix.json", "matrix.csv", "run.json", "SHA256SUMS"] {
                        inputs.push(format!("{dir}/{file}"));
                    }
                    if root.join(&dir).join("timing.json").is_file() {
                        inputs.push(format!("{dir}/timing.json"));
                    }
                    for file in saliency_files(root, &format!("{dir}/saliency"))? {
                        if file.ends_with(".json") {
                            maps.push(saliency::load(&root.join(&file))?);
                        }
                        inputs.push(file);
                    }
                }
            }
            inputs.sort();
            Ok(Study {
                spec: spec.clone(),
                runs,
                saliency: maps,
                inputs,
            })
        })
        .collect()
}

/// The files of a run's saliency folder (relative to the root, sorted), none when absent.
fn saliency_files(root: &Path, dir: &str) -> Result<Vec<String>> {
    let path = root.join(dir);
    let entries = match std::fs::read_dir(&path) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(&path, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_file() {
            files.push(format!("{dir}/{name}"));
        }
    }
    files.sort();
    Ok(files)
}
