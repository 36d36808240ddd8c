//! `drift study`: a studies file (`report/studies.toml`) as a graph of work items, each in
//! a state read from the disk, run in dependency order by an executor.
//!
//! The items, in stage order ([`Stage`]): the encoder cache of every preset that reads
//! one; per preset its counting baseline and one run per (model, seed), and the model
//! listing the paper's roster reads; the saliency maps the studies ask for; the paper.
//! Every item is one `drift` command line ([`Item::command`]), so the local executor
//! ([`local`]) and a Slurm job array ([`slurm`]) run exactly the same thing, and an
//! item's work is resumable as `drift run` is.
//!
//! An item is done when its artifact loads (every check and checksum of
//! [`crate::artifacts`]) and was made for the preset's current content hash and data
//! identity; otherwise it is missing, stale (with the reason) or failed (its last
//! attempt's record). Stale work is never reused or overwritten silently: the caller
//! chooses with [`Rerun`].

pub mod local;
pub mod slurm;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::artifacts::{self, RunArtifact};
use crate::baseline::{BASELINE_SEED, Baseline};
use crate::data::DataSource;
use crate::files::write_atomic;
use crate::preset::{LoadedPreset, Preset};
use crate::report::study::{self, StudySpec};
use crate::{Error, Result};

/// The folder under the results root that holds the study's own files: failure records,
/// logs and the Slurm scripts.
pub const STATE_DIR: &str = ".study";

/// The stages, in the order their items run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Encoder caches.
    Caches,
    /// Baselines, runs and the model listing.
    Runs,
    /// Saliency maps.
    Saliency,
    /// The paper.
    Report,
}

impl Stage {
    /// Every stage, in order.
    pub const ALL: [Stage; 4] = [Stage::Caches, Stage::Runs, Stage::Saliency, Stage::Report];

    /// The stage's name (`caches`, `runs`, `saliency`, `report`).
    pub fn name(self) -> &'static str {
        match self {
            Stage::Caches => "caches",
            Stage::Runs => "runs",
            Stage::Saliency => "saliency",
            Stage::Report => "report",
        }
    }
}

/// What one item does.
#[derive(Clone, Debug, PartialEq)]
pub enum Work {
    /// `drift cache PRESET`.
    Cache {
        /// The preset file.
        preset: PathBuf,
    },
    /// `drift run PRESET --baseline-only`.
    Baseline {
        /// The preset file.
        preset: PathBuf,
        /// Its artifact folder.
        dir: PathBuf,
    },
    /// `drift run PRESET --models MODEL --seeds SEED`.
    Run {
        /// The preset file.
        preset: PathBuf,
        /// Model key.
        model: String,
        /// Seed.
        seed: u64,
        /// Its artifact folder.
        dir: PathBuf,
        /// Cutoffs the run trains (for progress).
        cutoffs: usize,
    },
    /// `drift models --params --output FILE`.
    Models {
        /// The listing.
        file: PathBuf,
    },
    /// `drift saliency RUN --cutoff C --slice S --count N`.
    Saliency {
        /// The run folder.
        run: PathBuf,
        /// Cutoff label.
        cutoff: String,
        /// Slice label.
        slice: String,
        /// Images averaged.
        count: usize,
    },
    /// `build-report --root ROOT`.
    Report {
        /// The repository root.
        root: PathBuf,
        /// Rewrite the manifest instead of checking against it.
        update: bool,
    },
}

/// Where an item stands.
#[derive(Clone, Debug, PartialEq)]
pub enum State {
    /// Its output is there, checked and current.
    Done,
    /// Not there yet (the detail says how far a resumable run got).
    Missing(String),
    /// There, but made for something else or damaged: the reason.
    Stale(String),
    /// Its last attempt failed: how.
    Failed(String),
}

impl State {
    /// `done`, `missing`, `stale` or `failed`.
    pub fn name(&self) -> &'static str {
        match self {
            State::Done => "done",
            State::Missing(_) => "missing",
            State::Stale(_) => "stale",
            State::Failed(_) => "failed",
        }
    }

    /// The detail, empty when done.
    pub fn detail(&self) -> &str {
        match self {
            State::Done => "",
            State::Missing(d) | State::Stale(d) | State::Failed(d) => d,
        }
    }
}

/// One unit of work.
#[derive(Clone, Debug)]
pub struct Item {
    /// Unique and stable: `cache/<preset>`, `baseline/<preset>`,
    /// `run/<preset>/<model>/seed-<n>`, `models`, `saliency/<preset>/<model>/seed-<n>/
    /// <cutoff>-on-<slice>`, `report`.
    pub id: String,
    /// Its stage.
    pub stage: Stage,
    /// What it does.
    pub work: Work,
    /// Indices of the items it needs first.
    pub deps: Vec<usize>,
    /// Where it stands on disk.
    pub state: State,
    /// Seconds it is expected to take, from earlier timings; `None` when nothing is known.
    pub estimate: Option<f64>,
}

/// Which existing results to redo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Rerun {
    /// None: stale items are an error.
    #[default]
    None,
    /// Stale items (their old output is removed first).
    Stale,
    /// Every item.
    All,
}

/// Where a study's files are and what to plan.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The studies file.
    pub studies: PathBuf,
    /// The folder of the preset files (`<presets>/<name>.toml`), relative to the current
    /// folder, as runs record it.
    pub presets: PathBuf,
    /// Results root.
    pub out: PathBuf,
    /// Plan the paper too (when the studies file is a repository's `report/studies.toml`
    /// and `out` is its `results/`).
    pub report: bool,
    /// The report item rewrites the manifest under `checksums/`.
    pub update_report: bool,
}

/// The planned items, in an order that respects every dependency.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The items.
    pub items: Vec<Item>,
    /// The results root.
    pub out: PathBuf,
}

/// The data identity a preset's runs must record, with its baseline and number of
/// cutoffs; an error text when it cannot be known yet.
type DataIdentity = std::result::Result<(Expected, Baseline, usize), String>;

/// The data identity a preset's runs must have recorded.
enum Expected {
    /// The data set's, as it loads here.
    Known(DataSource),
    /// An encoder preset whose cache this machine has not built: the identity of the
    /// cache `key` and `input` kind of the texts of `source`, wherever it was encoded
    /// ([`crate::text::is_encoded_identity`]), so that a fresh checkout can check the
    /// committed runs without running the encoder.
    Encoded {
        source: DataSource,
        key: String,
        input: &'static str,
    },
}

/// What loading a preset's data found.
struct Inspected {
    /// The key and state of its encoder cache, when it reads one.
    cache: Option<(String, State)>,
    data: DataIdentity,
}

/// Loads a preset's data (without building an encoder cache) for the identity its runs
/// must record.
fn inspect(loaded: &LoadedPreset, file: &Path) -> Result<Inspected> {
    let preset = &loaded.preset;
    let base = loaded.path.parent().unwrap_or(Path::new("."));
    let who = file.display().to_string();
    let mut cache = None;
    if let Some((settings, raw)) = crate::text::encoder_input(&who, &preset.data_options, base)? {
        let texts = crate::data::load(&preset.data, &raw, base)?;
        let crate::data::Inputs::Text(list) = &texts.inputs else {
            return Err(Error::Invalid(format!(
                "{who}: text = \"encoder\" needs a source that yields text"
            )));
        };
        let spec = settings.spec(&texts.source, list)?;
        let built = crate::encoders::cache::Cache::open(&crate::encoders::cache::root(), &spec);
        let state = match built {
            Ok(Some(_)) => State::Done,
            Ok(None) => State::Missing(format!("{} cache not built", settings.encoder)),
            Err(e) => State::Stale(e.to_string()),
        };
        let done = state == State::Done;
        cache = Some((spec.key(), state));
        if !done {
            let cutoffs = preset.plan(&texts)?.timeline.slices.len();
            return Ok(Inspected {
                cache,
                data: Ok((
                    Expected::Encoded {
                        source: texts.source.clone(),
                        key: spec.key(),
                        input: settings.input.name(),
                    },
                    Baseline::for_targets(&texts.targets),
                    cutoffs,
                )),
            });
        }
    }
    let data = crate::text::load(&preset.data, &preset.data_options, base)?;
    let cutoffs = preset.plan(&data)?.timeline.slices.len();
    Ok(Inspected {
        cache,
        data: Ok((
            Expected::Known(data.source.clone()),
            Baseline::for_targets(&data.targets),
            cutoffs,
        )),
    })
}

/// A preset of the studies, loaded once.
struct PresetInfo {
    loaded: LoadedPreset,
    /// The preset file as runs are given it.
    file: PathBuf,
    /// The data identity its runs must record.
    data: DataIdentity,
    /// Its encoder cache's key and state, when it reads one.
    cache: Option<(String, State)>,
}

impl Plan {
    /// Plans every item of the studies in `setup`, each with its state.
    pub fn new(setup: &Setup) -> Result<Plan> {
        let specs = study::read_specs(&setup.studies)?;
        let mut plan = Plan {
            items: Vec::new(),
            out: setup.out.clone(),
        };
        let failed = failures(&setup.out)?;
        let mut listed: Vec<(LoadedPreset, PathBuf)> = Vec::new();
        for spec in &specs {
            for name in &spec.presets {
                if listed.iter().any(|(l, _)| l.preset.name == *name) {
                    continue;
                }
                let file = setup.presets.join(format!("{name}.toml"));
                let loaded = Preset::load(&file).map_err(|e| {
                    Error::Invalid(format!(
                        "{}: study {:?} names preset {name:?}: {e}",
                        setup.studies.display(),
                        spec.name
                    ))
                })?;
                if loaded.preset.name != *name {
                    return Err(Error::Invalid(format!(
                        "{}: is named {:?}, but study {:?} lists it as {name:?}",
                        file.display(),
                        loaded.preset.name,
                        spec.name
                    )));
                }
                listed.push((loaded, file));
            }
        }
        // Loading each preset's data is most of the planning: one preset per core.
        use rayon::prelude::*;
        let inspected: Vec<Inspected> = listed
            .par_iter()
            .map(|(loaded, file)| inspect(loaded, file))
            .collect::<Result<_>>()?;
        let presets: Vec<PresetInfo> = listed
            .into_iter()
            .zip(inspected)
            .map(|((loaded, file), found)| PresetInfo {
                data: found.data,
                loaded,
                file,
                cache: found.cache,
            })
            .collect();
        // One item per cache key: presets that read one cache (token states and pooled
        // embeddings of one encoder) share its item, so it is built once.
        let mut caches: BTreeMap<String, usize> = BTreeMap::new();
        let mut runs: BTreeMap<(String, String, u64), usize> = BTreeMap::new();
        for info in &presets {
            plan.add_runs(info, &mut runs, &mut caches)?;
        }
        plan.push(
            "models",
            Stage::Runs,
            Work::Models {
                file: setup.out.join("models.txt"),
            },
            Vec::new(),
            models_state(&setup.out.join("models.txt")),
            None,
        );
        for spec in &specs {
            plan.add_saliency(spec, &runs)?;
        }
        if setup.report {
            let root = std::env::current_dir().map_err(|e| Error::io(Path::new("."), e))?;
            let deps = (0..plan.items.len()).collect();
            plan.push(
                "report",
                Stage::Report,
                Work::Report {
                    root,
                    update: setup.update_report,
                },
                deps,
                report_state(),
                None,
            );
        }
        for item in &mut plan.items {
            if item.state != State::Done
                && let Some(how) = failed.get(&item.id)
            {
                item.state = State::Failed(how.clone());
            }
        }
        Ok(plan)
    }

    fn push(
        &mut self,
        id: &str,
        stage: Stage,
        work: Work,
        deps: Vec<usize>,
        state: State,
        estimate: Option<f64>,
    ) -> usize {
        self.items.push(Item {
            id: id.to_string(),
            stage,
            work,
            deps,
            state,
            estimate,
        });
        self.items.len() - 1
    }

    /// Adds a preset's baseline and one run per (model, seed), after its encoder cache
    /// (one item per key in `caches`). A cache is work only for the runs that read it: a
    /// missing one whose runs are all done is not planned, so that a fresh checkout checks
    /// the committed runs without running the encoder.
    fn add_runs(
        &mut self,
        info: &PresetInfo,
        runs: &mut BTreeMap<(String, String, u64), usize>,
        caches: &mut BTreeMap<String, usize>,
    ) -> Result<()> {
        let preset = &info.loaded.preset;
        let expected = info.data.as_ref().map(|(source, _, _)| source);
        let cutoffs = info.data.as_ref().map_or(0, |(_, _, k)| *k);
        let baseline = info.data.as_ref().ok().map(|(_, baseline, _)| {
            let dir = artifacts::run_dir(&self.out, &preset.name, baseline.key(), BASELINE_SEED);
            let state = run_state(&dir, &info.loaded, expected, cutoffs);
            (dir, state)
        });
        let mut planned = Vec::new();
        for spec in &preset.models {
            for &seed in &preset.seeds {
                let dir = artifacts::run_dir(&self.out, &preset.name, &spec.key, seed);
                let state = run_state(&dir, &info.loaded, expected, cutoffs);
                planned.push((spec, seed, dir, state));
            }
        }
        let all_done = info.data.is_ok()
            && baseline.iter().all(|(_, s)| *s == State::Done)
            && planned.iter().all(|(.., s)| *s == State::Done);
        let deps: Vec<usize> = match &info.cache {
            Some((key, state))
                if caches.contains_key(key) || !all_done || *state == State::Done =>
            {
                vec![*caches.entry(key.clone()).or_insert_with(|| {
                    self.push(
                        &format!("cache/{}", preset.name),
                        Stage::Caches,
                        Work::Cache {
                            preset: info.file.clone(),
                        },
                        Vec::new(),
                        state.clone(),
                        None,
                    )
                })]
            }
            _ => Vec::new(),
        };
        if let Some((dir, state)) = baseline {
            self.push(
                &format!("baseline/{}", preset.name),
                Stage::Runs,
                Work::Baseline {
                    preset: info.file.clone(),
                    dir,
                },
                deps.clone(),
                state,
                None,
            );
        }
        let timings = Timings::read(&self.out, &preset.name, preset);
        for (spec, seed, dir, state) in planned {
            let estimate = timings.estimate(&spec.key, seed, &dir, cutoffs);
            let index = self.push(
                &format!("run/{}/{}/seed-{seed}", preset.name, spec.key),
                Stage::Runs,
                Work::Run {
                    preset: info.file.clone(),
                    model: spec.key.clone(),
                    seed,
                    dir,
                    cutoffs,
                },
                deps.clone(),
                state,
                estimate,
            );
            runs.insert((preset.name.clone(), spec.key.clone(), seed), index);
        }
        Ok(())
    }

    /// Adds the saliency maps a study asks for, each after its run.
    fn add_saliency(
        &mut self,
        spec: &StudySpec,
        runs: &BTreeMap<(String, String, u64), usize>,
    ) -> Result<()> {
        for s in &spec.saliency {
            for model in &s.models {
                for &seed in &s.seeds {
                    let key = (s.preset.clone(), model.clone(), seed);
                    let Some(&run) = runs.get(&key) else {
                        return Err(Error::Invalid(format!(
                            "study {:?}: saliency of {}/{model}/seed-{seed}, which preset {} \
                             does not run",
                            spec.name, s.preset, s.preset
                        )));
                    };
                    let dir = artifacts::run_dir(&self.out, &s.preset, model, seed);
                    for cutoff in &s.cutoffs {
                        let file = dir
                            .join("saliency")
                            .join(format!("{cutoff}-on-{}.json", s.slice));
                        let state = match crate::saliency::load(&file) {
                            Ok(_) => State::Done,
                            Err(_) if !file.exists() => State::Missing(String::new()),
                            Err(e) => State::Stale(e.to_string()),
                        };
                        self.push(
                            &format!(
                                "saliency/{}/{model}/seed-{seed}/{cutoff}-on-{}",
                                s.preset, s.slice
                            ),
                            Stage::Saliency,
                            Work::Saliency {
                                run: dir.clone(),
                                cutoff: cutoff.clone(),
                                slice: s.slice.clone(),
                                count: s.count,
                            },
                            vec![run],
                            state,
                            None,
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// The items to execute under `rerun`: those not done, plus every item after one of
    /// them (a redone run makes its saliency maps and the paper out of date). Stale items
    /// are an error under [`Rerun::None`], naming each with its reason.
    pub fn selected(&self, rerun: Rerun) -> Result<Vec<usize>> {
        if rerun == Rerun::None {
            let stale: Vec<String> = self
                .items
                .iter()
                .filter(|i| matches!(i.state, State::Stale(_)))
                .map(|i| format!("  {}: {}", i.id, i.state.detail()))
                .collect();
            if !stale.is_empty() {
                return Err(Error::Invalid(format!(
                    "{} item(s) have results made for something else; drift never reuses or \
                     overwrites them silently: pass --rerun stale to redo them (or --rerun \
                     all to redo everything)\n{}",
                    stale.len(),
                    stale.join("\n")
                )));
            }
        }
        let mut chosen = vec![false; self.items.len()];
        for (i, item) in self.items.iter().enumerate() {
            let upstream = item.deps.iter().any(|&d| chosen[d]);
            chosen[i] = rerun == Rerun::All
                || item.state != State::Done
                || (upstream && matches!(item.stage, Stage::Saliency | Stage::Report));
        }
        Ok((0..self.items.len()).filter(|&i| chosen[i]).collect())
    }

    /// Removes the old output of the selected items that are redone from scratch: stale
    /// ones, and every run under [`Rerun::All`]. A resumable run's checkpoints stay.
    pub fn clear(&self, selected: &[usize], rerun: Rerun) -> Result<()> {
        for &i in selected {
            let item = &self.items[i];
            let redo = rerun == Rerun::All || matches!(item.state, State::Stale(_));
            if !redo {
                continue;
            }
            if let Work::Run { dir, .. } | Work::Baseline { dir, .. } = &item.work
                && dir.exists()
            {
                std::fs::remove_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            }
        }
        Ok(())
    }

    /// The `--plan` listing: one line per item with its state, the reason, and the
    /// estimate; then the totals.
    pub fn describe(&self, selected: &[usize]) -> String {
        let width = self.items.iter().map(|i| i.id.len()).max().unwrap_or(0);
        let mut text = String::new();
        for (i, item) in self.items.iter().enumerate() {
            let runs = if selected.contains(&i) { "*" } else { " " };
            text += &format!(
                "{runs} {:<width$}  {:<7}  {:>8}  {}\n",
                item.id,
                item.state.name(),
                item.estimate.map_or("-".into(), seconds),
                item.state.detail()
            );
        }
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for item in &self.items {
            *counts.entry(item.state.name()).or_default() += 1;
        }
        let tally: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
        let known: f64 = selected
            .iter()
            .filter_map(|&i| self.items[i].estimate)
            .sum();
        let unknown = selected
            .iter()
            .filter(|&&i| self.items[i].estimate.is_none())
            .count();
        text += &format!(
            "{} items ({}); {} to run (*), estimated {} of work{}\n",
            self.items.len(),
            tally.join(", "),
            selected.len(),
            seconds(known),
            if unknown > 0 {
                format!(" plus {unknown} without an earlier timing")
            } else {
                String::new()
            }
        );
        text
    }

    /// The state folder, `<out>/.study`.
    pub fn state_dir(&self) -> PathBuf {
        self.out.join(STATE_DIR)
    }
}

impl Item {
    /// The item's command line: the program (`drift`, or `build-report` beside it) and
    /// its arguments. `threads` and `device` are given as text so a Slurm script can pass
    /// `$SLURM_CPUS_PER_TASK` (see [`slurm`]).
    pub fn command(&self, drift: &Path, out: &Path, threads: &str, device: &str) -> Vec<String> {
        let p = |path: &Path| path.display().to_string();
        let mut argv = vec![p(drift)];
        let args: Vec<String> = match &self.work {
            Work::Cache { preset } => vec![
                "cache".into(),
                p(preset),
                "--threads".into(),
                threads.into(),
                "--quiet".into(),
            ],
            Work::Baseline { preset, .. } => vec![
                "run".into(),
                p(preset),
                "--baseline-only".into(),
                "--out".into(),
                p(out),
            ],
            Work::Run {
                preset,
                model,
                seed,
                ..
            } => vec![
                "run".into(),
                p(preset),
                "--models".into(),
                model.clone(),
                "--seeds".into(),
                seed.to_string(),
                "--out".into(),
                p(out),
                "--device".into(),
                device.into(),
                "--threads".into(),
                threads.into(),
                "--quiet".into(),
            ],
            Work::Models { file } => vec![
                "models".into(),
                "--params".into(),
                "--output".into(),
                p(file),
            ],
            Work::Saliency {
                run,
                cutoff,
                slice,
                count,
            } => vec![
                "saliency".into(),
                p(run),
                "--cutoff".into(),
                cutoff.clone(),
                "--slice".into(),
                slice.clone(),
                "--count".into(),
                count.to_string(),
            ],
            Work::Report { root, update } => {
                argv[0] = p(&drift.with_file_name("build-report"));
                let mut a = vec!["--root".into(), p(root)];
                if *update {
                    a.push("--update".into());
                }
                a
            }
        };
        argv.extend(args);
        argv
    }
}

/// The state of a run (or baseline) folder.
fn run_state(
    dir: &Path,
    loaded: &LoadedPreset,
    data: std::result::Result<&Expected, &String>,
    cutoffs: usize,
) -> State {
    if dir.join("run.json").exists() {
        return match artifacts::load_run(dir) {
            Err(e) => State::Stale(format!("does not verify: {e}")),
            Ok(run) => current(&run, loaded, data),
        };
    }
    let records = cutoff_records(dir);
    if let Some(old) = records.iter().find(|sha| **sha != loaded.sha256) {
        return State::Stale(format!(
            "its checkpoints were made for preset hash {}, not {}",
            short(old),
            short(&loaded.sha256)
        ));
    }
    if records.is_empty() {
        State::Missing(String::new())
    } else {
        State::Missing(format!(
            "{} of {cutoffs} cutoffs done; resumes",
            records.len()
        ))
    }
}

/// Whether a loaded artifact was made for the preset and data as they are now.
fn current(
    run: &RunArtifact,
    loaded: &LoadedPreset,
    data: std::result::Result<&Expected, &String>,
) -> State {
    let p = &run.provenance;
    if p.preset.sha256 != loaded.sha256 {
        return State::Stale(format!(
            "made for preset hash {}, the preset is now {}",
            short(&p.preset.sha256),
            short(&loaded.sha256)
        ));
    }
    let stale = |source: &DataSource| {
        State::Stale(format!(
            "made for data {} {} ({}), the data is now {} {} ({})",
            p.data.name,
            p.data.version,
            short(&p.data.sha256),
            source.name,
            source.version,
            short(&source.sha256)
        ))
    };
    match data {
        Err(why) => State::Stale(format!("its data cannot be checked: {why}")),
        Ok(Expected::Known(source)) if p.data != *source => stale(source),
        Ok(Expected::Encoded { source, key, input })
            if !crate::text::is_encoded_identity(&p.data, source, key, input) =>
        {
            stale(source)
        }
        Ok(_) => State::Done,
    }
}

/// The preset hashes of a run folder's scored cutoffs (`checkpoints/<label>.json`).
fn cutoff_records(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir.join("checkpoints")) else {
        return Vec::new();
    };
    let mut hashes = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".json") || name.ends_with(".timing.json") || name.starts_with('.') {
            continue;
        }
        let sha = std::fs::read(entry.path())
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v["id"]["preset_sha256"].as_str().map(str::to_string))
            .unwrap_or_default();
        hashes.push(sha);
    }
    hashes
}

/// The number of a run folder's scored cutoffs, for progress.
pub fn cutoffs_done(dir: &Path) -> usize {
    cutoff_records(dir).len()
}

/// Whether the outputs on disk match the committed manifest (`build-report --check`).
#[cfg(feature = "paper")]
fn report_state() -> State {
    use crate::report::{layout::OUTPUT_DIRS, manifest};
    let root = Path::new(".");
    match manifest::Manifest::read(root).and_then(|m| manifest::check(root, &m, &OUTPUT_DIRS)) {
        Ok(d) if d.is_empty() => State::Done,
        Ok(d) => State::Missing(format!("{} outputs differ from checksums/", d.len())),
        Err(e) => State::Missing(e.to_string()),
    }
}

#[cfg(not(feature = "paper"))]
fn report_state() -> State {
    State::Missing("this drift was built without the paper".into())
}

fn models_state(file: &Path) -> State {
    match std::fs::read_to_string(file) {
        Ok(text) if !text.trim().is_empty() => State::Done,
        Ok(_) => State::Stale("empty".into()),
        Err(_) => State::Missing(String::new()),
    }
}

/// Earlier wall times of a preset's runs, for estimates.
struct Timings {
    /// (model, seed) -> seconds of a finished run.
    runs: BTreeMap<(String, u64), f64>,
}

impl Timings {
    fn read(out: &Path, name: &str, preset: &Preset) -> Timings {
        let mut runs = BTreeMap::new();
        for spec in &preset.models {
            for &seed in &preset.seeds {
                let path = artifacts::run_dir(out, name, &spec.key, seed).join("timing.json");
                if let Some(t) = std::fs::read(&path)
                    .ok()
                    .and_then(|b| serde_json::from_slice::<artifacts::WallTimes>(&b).ok())
                {
                    runs.insert((spec.key.clone(), seed), t.train + t.eval);
                }
            }
        }
        Timings { runs }
    }

    /// The run's own earlier time; else the mean of the model's other seeds; less the
    /// share of cutoffs a resumable run has done.
    fn estimate(&self, model: &str, seed: u64, dir: &Path, cutoffs: usize) -> Option<f64> {
        let whole = self
            .runs
            .get(&(model.to_string(), seed))
            .copied()
            .or_else(|| {
                let others: Vec<f64> = self
                    .runs
                    .iter()
                    .filter(|((m, _), _)| m == model)
                    .map(|(_, &t)| t)
                    .collect();
                (!others.is_empty()).then(|| others.iter().sum::<f64>() / others.len() as f64)
            })?;
        if dir.join("run.json").exists() || cutoffs == 0 {
            return Some(whole);
        }
        let done = cutoffs_done(dir).min(cutoffs);
        Some(whole * (cutoffs - done) as f64 / cutoffs as f64)
    }
}

/// `1m05s`, `42s`.
pub fn seconds(s: f64) -> String {
    let s = s.round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

/// Takes `<out>/.study/lock` for a process that runs or submits the study's items: a
/// second `drift study` on the same results folder is refused, naming the lock, instead
/// of clearing and writing what the first one is writing. Released when the file is
/// dropped or the process ends (even by a kill).
pub fn lock(out: &Path) -> Result<std::fs::File> {
    let dir = out.join(STATE_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let path = dir.join("lock");
    crate::files::lock_exclusive(&path, || {
        format!(
            "{}: another drift study is running on this results folder (it holds {}); wait \
             for it, or see its progress with drift study --plan",
            out.display(),
            path.display()
        )
    })
}

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

/// Whether `studies` is the paper's own list (`<cwd>/report/studies.toml`) and `out` its
/// `results/`: only then does the plan end with the paper.
pub fn is_the_papers(studies: &Path, out: &Path) -> bool {
    let same = |a: &Path, b: &str| {
        let cwd = std::env::current_dir().ok();
        match (a.canonicalize(), cwd.map(|c| c.join(b).canonicalize())) {
            (Ok(a), Some(Ok(b))) => a == b,
            _ => false,
        }
    };
    same(studies, "report/studies.toml") && same(out, "results") && Path::new("checksums").is_dir()
}
