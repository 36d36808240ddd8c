//! The plan: every item of a studies file, in dependency order, each with its state on
//! disk and an estimate of its cost.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::disk_state::{models_state, report_state, run_state, saliency_state};
use super::failures::failures;
use super::item::{Item, Stage, State, Work};
use super::presets::{Expected, PresetInfo, load_presets};
use super::state_dir::STATE_DIR;
use super::timings::Timings;
use crate::artifacts;
use crate::report::study::{self, StudySpec};
use crate::{Error, Result};

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
pub struct StudyPlan {
    /// The items.
    pub items: Vec<Item>,
    /// The results root.
    pub out: PathBuf,
}

impl StudyPlan {
    /// Plans every item of the studies in `setup`, each with its state.
    pub fn new(setup: &Setup) -> Result<StudyPlan> {
        let specs = study::read_specs(&setup.studies)?;
        let mut plan = StudyPlan {
            items: Vec::new(),
            out: setup.out.clone(),
        };
        let failed = failures(&setup.out)?;
        let presets = load_presets(&setup.studies, &setup.presets, &specs)?;
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
        let cutoffs = info.data.as_ref().map_or(0, |(_, _, k)| *k);
        // The data identity of a seed: its own draw's when the seeds vary the data.
        let seeded: Vec<(u64, Expected)> = (info.per_seed.iter())
            .map(|(&seed, source)| (seed, Expected::Known(source.clone())))
            .collect();
        let expected = |seed: u64| match seeded.iter().find(|(s, _)| *s == seed) {
            Some((_, known)) => Ok(known),
            None => info.data.as_ref().map(|(source, _, _)| source),
        };
        let baseline = info.data.as_ref().ok().map(|(_, baseline, _)| {
            let mut dirs = Vec::new();
            let mut state = State::Done;
            for seed in crate::baseline::baseline_seeds(&info.loaded) {
                let dir = artifacts::run_dir(&self.out, &preset.name, baseline.key(), seed);
                let found = run_state(&dir, &info.loaded, expected(seed), cutoffs);
                if state == State::Done {
                    state = found;
                }
                dirs.push(dir);
            }
            (dirs, state)
        });
        let mut planned = Vec::new();
        for spec in &preset.models {
            for &seed in &preset.seeds {
                let dir = artifacts::run_dir(&self.out, &preset.name, &spec.key, seed);
                let state = run_state(&dir, &info.loaded, expected(seed), cutoffs);
                // A finished run without the detectors its study asks for gets them from
                // `drift detect`, which checks that its matrix stays what it is.
                let detect = info.detectors
                    && state == State::Done
                    && !dir.join(artifacts::DETECTORS_JSON).exists();
                let state = if detect {
                    State::Missing(
                        "no detectors.json: drift detect adds them (from its checkpoints when \
                         kept, else it trains again and keeps them only if the matrix is the \
                         same)"
                            .into(),
                    )
                } else {
                    state
                };
                planned.push((spec, seed, dir, state, detect));
            }
        }
        let all_done = info.data.is_ok()
            && baseline.iter().all(|(_, s)| *s == State::Done)
            && planned.iter().all(|(.., s, _)| *s == State::Done);
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
        if let Some((dirs, state)) = baseline {
            self.push(
                &format!("baseline/{}", preset.name),
                Stage::Runs,
                Work::Baseline {
                    preset: info.file.clone(),
                    dirs,
                },
                deps.clone(),
                state,
                None,
            );
        }
        let timings = Timings::read(&self.out, &preset.name, preset);
        for (spec, seed, dir, state, detect) in planned {
            let estimate = timings.estimate(&spec.key, seed, &dir, cutoffs);
            let work = if detect {
                Work::Detect { dir }
            } else {
                Work::Run {
                    preset: info.file.clone(),
                    model: spec.key.clone(),
                    seed,
                    dir,
                    cutoffs,
                    detectors: info.detectors,
                }
            };
            let index = self.push(
                &format!("run/{}/{}/seed-{seed}", preset.name, spec.key),
                Stage::Runs,
                work,
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
                        let state = saliency_state(&file);
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

    /// The state folder, `<out>/.study`.
    pub fn state_dir(&self) -> PathBuf {
        self.out.join(STATE_DIR)
    }
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
