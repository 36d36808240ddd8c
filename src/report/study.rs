//! The studies of the paper (`report/studies.toml`): their loaded, checked artifacts and
//! every analysis of them, computed once here for the figures, tables, paper text and
//! notebooks to read.
//!
//! Each run's preset file (the path its provenance names, relative to the root) must still
//! have the content hash the run recorded: a changed preset makes the results stale, and
//! the report refuses them rather than describe a run that the preset would not make. The
//! preset also gives each model's family (`[[models]] family`, the registry's by default),
//! so the grouping the family analyses use is pinned by the hash in every run's provenance.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::analysis::{SeedDetectors, StudyAnalysis, StudyModel};
use crate::artifacts::{self, ModelRuns};
use crate::baseline::{BASELINE_FAMILY, Baseline};
use crate::detectors::DetectorMatrices;
use crate::matrix::DriftMatrix;
use crate::preset::{LoadedPreset, Preset};
use crate::saliency::{self, SaliencyMeans};
use crate::{Error, Result};

/// `report/studies.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudiesFile {
    /// The folder of the studies' preset files (`<presets>/<name>.toml`), relative to the
    /// repository root; `drift study` reads presets from there unless `--presets` says
    /// otherwise (default `presets`).
    pub presets: Option<std::path::PathBuf>,
    /// The studies, in the paper's order.
    pub studies: Vec<StudySpec>,
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
    /// Tags of presets (`{ "sotu-glove" = "glove" }`): a tagged preset's models are named
    /// `<key>-<tag>` in the study, so that one study can train a key on several inputs
    /// (a linear head on MiniLM and on GloVe). Untagged presets keep their keys, and
    /// baselines are never tagged: presets that share data, slicing and split fit the same
    /// baseline, which the study keeps once.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// A group of studies the paper compares side by side (e.g. `drift-types`): their
    /// cohort means share one figure, `figures/cohort-means-<group>.svg`, so they must
    /// share a metric.
    #[serde(default)]
    pub group: Option<String>,
    /// Whether the analyses leave the rows of collapsed checkpoints out (`exclude`, the
    /// default: a model that did not learn measures nothing about drift) or read them
    /// (`include`); the paper says which, and how many rows it left out.
    #[serde(default)]
    pub collapsed: Collapsed,
    /// The saliency maps `drift study` draws for this study (none by default).
    #[serde(default)]
    pub saliency: Vec<SaliencySpec>,
    /// Its runs compute the label-free drift detectors (`drift run --detectors`), which
    /// the paper backtests against the matrices; a run without them is redone.
    #[serde(default)]
    pub detectors: bool,
}

/// Saliency maps to draw (`[[studies.saliency]]`): one per model, seed and cutoff of one
/// preset's runs, each on the same slice.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaliencySpec {
    /// The preset whose runs are explained.
    pub preset: String,
    /// Its models (registry keys).
    pub models: Vec<String>,
    /// Its seeds.
    pub seeds: Vec<u64>,
    /// Labels of the checkpoints' cutoff slices.
    pub cutoffs: Vec<String>,
    /// Label of the slice whose images are explained.
    pub slice: String,
    /// How many images of that slice's evaluation set each map averages.
    pub count: usize,
}

/// What a study's analyses do with the rows of collapsed checkpoints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Collapsed {
    /// Analyse them like any other row.
    Include,
    /// Empty those rows of that seed's grid before any analysis.
    #[default]
    Exclude,
}

/// A study with its runs, one entry per (preset, model), every seed combined, and their
/// analyses.
#[derive(Clone, Debug)]
pub struct LoadedStudy {
    /// The configuration.
    pub spec: StudySpec,
    /// The runs, ordered by preset (as configured) then model key; each run's `model` is
    /// its name in the study ([`StudySpec::tags`]), a baseline that several presets share
    /// is here once.
    pub runs: Vec<ModelRuns>,
    /// Every analysis of the runs, models in run order.
    pub analysis: StudyAnalysis,
    /// The saliency maps found beside the runs (`<run>/saliency/*.json`, each checked
    /// against its folder's `SHA256SUMS`) averaged over seeds; none without maps.
    pub saliency: Option<SaliencyMeans>,
    /// Every file the study was read from (artifacts, maps and presets), relative to the
    /// root, sorted.
    pub inputs: Vec<String>,
    /// How its presets train, for the scores that assume one design.
    pub design: Design,
    /// Its presets, as configured, each checked against its runs' recorded hash.
    pub presets: Vec<LoadedPreset>,
}

/// How a study's presets cut and train, as the temporal-effects scores need to know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Design {
    /// The regimes of its presets, in words (`cumulative`, `single`, `window(3)`), sorted
    /// and distinct.
    pub regimes: Vec<String>,
    /// Whether every preset down-samples its slices to equal size.
    pub downsampled: bool,
}

impl Design {
    /// Whether this is Agarwal & Nenkova's design: one slice per model, equal-size slices.
    pub fn is_agarwal_nenkova(&self) -> bool {
        self.regimes == ["single"] && self.downsampled
    }

    /// In words, for captions: e.g. `cumulative training on slices of their natural size`.
    pub fn describe(&self) -> String {
        format!(
            "{} training on {}",
            self.regimes.join(" and "),
            if self.downsampled {
                "slices down-sampled to equal size"
            } else {
                "slices of their natural size"
            }
        )
    }
}

/// Whether `name` is a name the report's files accept for a study or a claim: non-empty,
/// lower-case letters, digits and `-`, at most [`crate::preset::MAX_NAME`] bytes (it becomes
/// part of file names and labels).
pub fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= crate::preset::MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Reads the study list.
pub fn read_specs(path: &Path) -> Result<Vec<StudySpec>> {
    Ok(read_studies(path)?.studies)
}

/// Reads the studies file: the study list and where its presets live.
pub fn read_studies(path: &Path) -> Result<StudiesFile> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let file: StudiesFile = toml::from_str(&text).map_err(|e| Error::Preset {
        path: path.to_path_buf(),
        message: e.message().to_string(),
    })?;
    for (i, s) in file.studies.iter().enumerate() {
        if !is_name(&s.name) || file.studies[..i].iter().any(|o| o.name == s.name) {
            return Err(Error::Preset {
                path: path.to_path_buf(),
                message: format!(
                    "studies[{i}].name: {:?} must be unique, lower-case letters, digits and '-'",
                    s.name
                ),
            });
        }
        if let Some(group) = &s.group
            && !is_name(group)
        {
            return Err(Error::Preset {
                path: path.to_path_buf(),
                message: format!(
                    "studies[{i}].group: {group:?} must be lower-case letters, digits and '-'"
                ),
            });
        }
        if s.presets.is_empty() {
            return Err(Error::Preset {
                path: path.to_path_buf(),
                message: format!("studies[{i}].presets: needs at least one preset"),
            });
        }
        for (preset, tag) in &s.tags {
            let problem = if !s.presets.contains(preset) {
                Some(format!(
                    "preset {preset:?} is not one of the study's presets"
                ))
            } else if !is_name(tag) {
                Some(format!(
                    "{tag:?} must be lower-case letters, digits and '-'"
                ))
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(Error::Preset {
                    path: path.to_path_buf(),
                    message: format!("studies[{i}].tags: {problem}"),
                });
            }
        }
        for (j, m) in s.saliency.iter().enumerate() {
            let problem = if !s.presets.contains(&m.preset) {
                Some(format!(
                    "preset {:?} is not one of the study's presets",
                    m.preset
                ))
            } else if m.models.is_empty() || m.seeds.is_empty() || m.cutoffs.is_empty() {
                Some("needs at least one model, seed and cutoff".to_string())
            } else if m.count == 0 {
                Some("count must be at least 1".to_string())
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(Error::Preset {
                    path: path.to_path_buf(),
                    message: format!("studies[{i}].saliency[{j}]: {problem}"),
                });
            }
        }
    }
    Ok(file)
}

/// Loads every study's runs from `<root>/<results>`: each run through the checked artifact
/// loader; a configured preset without runs is an error.
pub fn load(root: &Path, results: &str, specs: &[StudySpec]) -> Result<Vec<LoadedStudy>> {
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
            let detected = has_detectors(&runs);
            let mut inputs = Vec::new();
            let mut maps = Vec::new();
            for r in &runs {
                for (n, p) in r.provenance.iter().enumerate() {
                    let dir = format!("{results}/{}/{}/seed-{}", r.preset, r.model, p.seed);
                    for file in ["matrix.json", "matrix.csv", "run.json", "SHA256SUMS"] {
                        inputs.push(format!("{dir}/{file}"));
                    }
                    if root.join(&dir).join("health.json").is_file() {
                        inputs.push(format!("{dir}/health.json"));
                    }
                    if root.join(&dir).join("timing.json").is_file() {
                        inputs.push(format!("{dir}/timing.json"));
                    }
                    // The gallery's explorer plots it.
                    if r.history.get(n).is_some_and(Option::is_some) {
                        inputs.push(format!("{dir}/{}", artifacts::HISTORY_JSON));
                    }
                    if detected && r.detectors.get(n).is_some_and(Option::is_some) {
                        inputs.push(format!("{dir}/{}", artifacts::DETECTORS_JSON));
                    }
                    for file in saliency_files(root, &format!("{dir}/saliency"))? {
                        if file.ends_with(".json") {
                            maps.push(saliency::load(&root.join(&file))?);
                        }
                        inputs.push(file);
                    }
                }
            }
            let presets = presets_of(root, results, &runs)?;
            inputs.extend(presets.keys().cloned());
            let mut regimes: Vec<String> =
                presets.values().map(|p| p.preset.regime.name()).collect();
            regimes.sort();
            regimes.dedup();
            let design = Design {
                regimes,
                downsampled: presets.values().all(|p| p.preset.downsample),
            };
            inputs.sort();
            let in_error = |e: Error| Error::Invalid(format!("study {}: {e}", spec.name));
            let named = name_runs(spec, runs)?;
            let families: Vec<&str> = named
                .iter()
                .map(|(r, key)| family(&presets, r, key))
                .collect::<Result<_>>()?;
            let (runs, keys): (Vec<ModelRuns>, Vec<String>) = named.into_iter().unzip();
            // A counting baseline predicts a constant by design: it is never "collapsed".
            let matrices: Vec<DriftMatrix> = runs
                .iter()
                .zip(&keys)
                .map(|(r, key)| match spec.collapsed {
                    Collapsed::Exclude if Baseline::from_key(key).is_none() => {
                        r.matrix.without_rows(|seed, i| r.collapsed(seed, i))
                    }
                    _ => r.matrix.clone(),
                })
                .collect();
            // Each run's detector files in its matrix's seed order, when the study has them.
            let detectors: Vec<Option<Vec<&DetectorMatrices>>> = runs
                .iter()
                .map(|r| if detected { seed_detectors(r) } else { None })
                .collect();
            let models: Vec<StudyModel> = runs
                .iter()
                .zip(&families)
                .zip(&matrices)
                .zip(&keys)
                .zip(&detectors)
                .map(|((((r, family), matrix), key), detectors)| StudyModel {
                    model: &r.model,
                    key,
                    family,
                    matrix,
                    baseline: Baseline::from_key(key).is_some(),
                    // The full matrix, collapsed rows included (see `analysis::detection`).
                    detectors: detectors.as_deref().map(|detectors| SeedDetectors {
                        matrix: &r.matrix,
                        detectors,
                    }),
                })
                .collect();
            let analysis = StudyAnalysis::new(&models).map_err(in_error)?;
            let saliency = saliency::seed_means(&maps, &analysis.slices).map_err(in_error)?;
            let mut loaded: Vec<LoadedPreset> = Vec::new();
            for name in &spec.presets {
                if let Some(p) = presets.values().find(|p| &p.preset.name == name) {
                    loaded.push(p.clone());
                }
            }
            Ok(LoadedStudy {
                spec: spec.clone(),
                runs,
                analysis,
                saliency,
                inputs,
                design,
                presets: loaded,
            })
        })
        .collect()
}

/// Whether the study's detectors are backtested: every seed of every model that is not a
/// counting baseline has `detectors.json` (baselines have none). Without them the study
/// reads no detector file and shows no detector table or figure.
fn has_detectors(runs: &[ModelRuns]) -> bool {
    let mut trained = runs
        .iter()
        .filter(|r| Baseline::from_key(&r.model).is_none())
        .peekable();
    trained.peek().is_some() && trained.all(|r| seed_detectors(r).is_some())
}

/// The detector files of `run` in its matrix's seed order; `None` when a seed has none.
fn seed_detectors(run: &ModelRuns) -> Option<Vec<&DetectorMatrices>> {
    run.matrix
        .seeds()
        .iter()
        .map(|seed| {
            run.provenance
                .iter()
                .zip(&run.detectors)
                .find(|(p, _)| p.seed == *seed)
                .and_then(|(_, d)| d.as_ref())
        })
        .collect()
}

/// The groups of the studies (`group` in `report/studies.toml`), sorted.
pub fn groups(studies: &[LoadedStudy]) -> Vec<String> {
    let mut groups: Vec<String> = studies
        .iter()
        .filter_map(|s| s.spec.group.clone())
        .collect();
    groups.sort();
    groups.dedup();
    groups
}

/// The studies of `group`, in study order.
pub fn group_members<'a>(studies: &'a [LoadedStudy], group: &str) -> Vec<&'a LoadedStudy> {
    studies
        .iter()
        .filter(|s| s.spec.group.as_deref() == Some(group))
        .collect()
}

/// Names every run in the study and pairs it with its registry key: a tagged preset's
/// models become `<key>-<tag>`; a baseline that several presets fitted is kept once, and
/// only if they all fitted the same grids (else the presets do not share data, slicing and
/// split, and their models cannot be compared).
fn name_runs(spec: &StudySpec, runs: Vec<ModelRuns>) -> Result<Vec<(ModelRuns, String)>> {
    let mut named: Vec<(ModelRuns, String)> = Vec::new();
    for mut run in runs {
        let key = run.model.clone();
        if Baseline::from_key(&key).is_some() {
            if let Some((first, _)) = named.iter().find(|(r, _)| r.model == key) {
                if first.matrix != run.matrix {
                    return Err(Error::Invalid(format!(
                        "study {}: presets {} and {} fitted different {key} baselines; \
                         the presets of one study must share data, slicing and split",
                        spec.name, first.preset, run.preset
                    )));
                }
                continue;
            }
        } else if let Some(tag) = spec.tags.get(&run.preset) {
            run.model = format!("{key}-{tag}");
        }
        named.push((run, key));
    }
    Ok(named)
}

/// The preset file of every run (by path relative to the root), each checked against the
/// content hash every seed's provenance recorded.
fn presets_of(
    root: &Path,
    results: &str,
    runs: &[ModelRuns],
) -> Result<BTreeMap<String, LoadedPreset>> {
    let mut presets: BTreeMap<String, LoadedPreset> = BTreeMap::new();
    for r in runs {
        for p in &r.provenance {
            let run = format!("{results}/{}/{}/seed-{}", r.preset, r.model, p.seed);
            let path = &p.preset.path;
            if !presets.contains_key(path) {
                let file = root.join(path);
                if Path::new(path).is_absolute() || !file.is_file() {
                    return Err(Error::Invalid(format!(
                        "{run}/run.json: its preset {path} is not a file under the root; \
                         the report reads each run's preset to check the run is current \
                         and to take its model families"
                    )));
                }
                presets.insert(path.clone(), Preset::load(&file)?);
            }
            let loaded = &presets[path];
            if loaded.sha256 != p.preset.sha256 || loaded.preset.name != r.preset {
                return Err(Error::Invalid(format!(
                    "{run}: made from preset {} with sha256 {}, but {path} is now preset {} \
                     with sha256 {}: the results are stale; rerun `drift run {path}` or \
                     restore the preset",
                    r.preset, p.preset.sha256, loaded.preset.name, loaded.sha256
                )));
            }
        }
    }
    Ok(presets)
}

/// The family a run's preset gives its model ([`BASELINE_FAMILY`] for a baseline).
fn family<'a>(
    presets: &'a BTreeMap<String, LoadedPreset>,
    run: &ModelRuns,
    key: &str,
) -> Result<&'a str> {
    if Baseline::from_key(key).is_some() {
        return Ok(BASELINE_FAMILY);
    }
    let path = &run.provenance[0].preset.path;
    presets[path]
        .preset
        .models
        .iter()
        .find(|m| m.key == key)
        .map(|m| m.family.as_str())
        .ok_or_else(|| {
            Error::Invalid(format!(
                "{}/{key}: preset {path} has no model {key}",
                run.preset
            ))
        })
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
