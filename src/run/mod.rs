//! Running a preset end to end: load the data, cut and split the timeline, then for every
//! (model, seed) train one model per cutoff, checkpoint it, score it on every slice, and
//! write the drift-matrix artifact ([`crate::artifacts`]).
//!
//! A run folder `<out>/<preset>/<model>/seed-<n>/` keeps its work under `checkpoints/`:
//! per cutoff `<label>.safetensors` (the final weights), `<label>.json` (the matrix row
//! and the checkpoint's SHA-256, written after the row is scored) and
//! `<label>.timing.json`; the row's record also holds the checkpoint's health
//! ([`crate::eval::Health`]). Before any model, the preset's counting baseline
//! ([`crate::baseline`]) is written beside the models' runs.
//!
//! When the preset's seeds share data and split (`vary = ["init"]`), the data is loaded
//! and cut once for all of them; when they vary ([`crate::slices::Varied`]), each seed
//! loads (a generator's own draw) and cuts its own, with its own baseline, and every model
//! at that seed trains on them, so model comparisons stay paired.
//!
//! A rerun reuses every cutoff whose files are there and were made for the same preset,
//! data, model, seed, device and thread count, so an interrupted run resumes where it
//! stopped and ends with the same bytes as an uninterrupted one; work made for anything
//! else is an error, never silently reused.
//! The fine-tuning regimes start cutoff `i` from cutoff `i-1`'s checkpoint file, and
//! self-labelling relabels its slices with the anchor checkpoint's predictions (recomputed
//! from the file on a resume), so a resumed chain trains on what an uninterrupted one did.
//! With [`RunOptions::detectors`], every cutoff's label-free drift detectors
//! ([`crate::detectors`]) are computed from the same outputs right after its row is scored,
//! kept as `checkpoints/<label>.detectors.json` (tied to the checkpoint's SHA-256; a resume
//! that finds a scored cutoff without them reloads its checkpoint to compute them), and
//! written as `detectors.json`. The representation detectors do not depend on the model,
//! so they are computed once per cutoff for all models that share the data.
//! `.lock` in the run folder is held (an OS file lock, released when the process ends)
//! while a process writes there, so two runs cannot write the same folder; holding it, a
//! run first removes the temporary files of atomic writes a killed run left behind.

use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::artifacts::{
    self, CodeVersion, CutoffHistory, PresetRef, RunArtifact, RunProvenance, WallTimes,
};
use crate::baseline;
use crate::data::Dataset;
use crate::detectors::{CutoffDetectors, DetectorMatrices, SharedDetectors};
use crate::device::{self, DeviceChoice};
use crate::eval::{self, EVAL_BATCH, Health};
use crate::files::write_atomic;
use crate::matrix::Grid;
use crate::models::{self, ModelConfig};
use crate::preset::{LoadedPreset, ModelSpec, Plan};
use crate::slices::Varied;
use crate::train::checkpoint::{self, CheckpointId};
use crate::train::{self, DataTensors, Epoch, TrainJob, loss::LossFn};
use crate::{Error, Result};

mod record;
mod score;
mod setup;

use record::{CutoffRecord, read_record, read_timing};
pub use record::{read_history, scored_row, write_history};
use score::lock;
pub use setup::model_config;
use setup::{backbone, check_models};

/// What to run and where.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Root of the artifact folders.
    pub out: PathBuf,
    /// Model keys to run (all of the preset's when empty).
    pub models: Vec<String>,
    /// Seeds to run (the preset's when empty).
    pub seeds: Vec<u64>,
    /// Device.
    pub device: DeviceChoice,
    /// libtorch threads.
    pub threads: u32,
    /// Draw progress bars on stderr.
    pub progress: bool,
    /// Compute the label-free drift detectors (`detectors.json`).
    pub detectors: bool,
    /// Train and score only these cutoffs (0-based) and the earlier ones they start from
    /// (a fine-tuning chain, a self-label anchor), leaving each one's record under
    /// `checkpoints/` ([`scored_row`]) and writing no artifact; every cutoff when `None`.
    /// What `drift audit` re-executes.
    pub cutoffs: Option<Vec<usize>>,
}

/// Runs every selected (model, seed) of `loaded` and returns the artifact folders.
pub fn run_preset(loaded: &LoadedPreset, options: &RunOptions) -> Result<Vec<PathBuf>> {
    let preset = &loaded.preset;
    // Validate everything before any work.
    let specs: Vec<&ModelSpec> = if options.models.is_empty() {
        preset.models.iter().collect()
    } else {
        options
            .models
            .iter()
            .map(|key| {
                preset.models.iter().find(|m| &m.key == key).ok_or_else(|| {
                    let keys: Vec<&str> = preset.models.iter().map(|m| m.key.as_str()).collect();
                    Error::Invalid(format!(
                        "model {key:?} is not in preset {} (it has {})",
                        preset.name,
                        keys.join(", ")
                    ))
                })
            })
            .collect::<Result<_>>()?
    };
    let seeds = if options.seeds.is_empty() {
        preset.seeds.clone()
    } else {
        options.seeds.clone()
    };
    // Threads first: loading may build an encoder cache, whose bytes depend on them.
    device::set_threads(options.threads)?;
    device::keep_freed_memory();
    let base = loaded.path.parent().unwrap_or(Path::new("."));
    let data = preset.load_data(base, seeds[0])?;
    let backbone = backbone(loaded)?;
    let config = match &backbone {
        Some(backbone) => backbone.head_config(&model_config(&data)?)?,
        None => model_config(&data)?,
    };
    check_models(&specs, &data, &config)?;
    let device = device::resolve(options.device)?;
    let run = |spec: &ModelSpec,
               seed: u64,
               data: &Dataset,
               tensors: &DataTensors,
               plan: &Plan,
               shared: &SharedDetectors| {
        let config = ModelConfig {
            positional_embedding: spec.positional_embedding,
            channels_last: spec.train.channels_last,
            ..config
        };
        let run = SeedRun {
            anchor_targets: std::cell::OnceCell::new(),
            loaded,
            spec,
            seed,
            data,
            tensors,
            config: &config,
            plan,
            device,
            options,
            backbone: backbone.as_ref(),
            shared: options.detectors.then_some(shared),
        };
        run.run().map_err(|e| {
            Error::Invalid(format!(
                "{}/{}/seed-{seed}: {e}; no artifact was written for this run",
                preset.name, spec.key
            ))
        })
    };
    let mut dirs = Vec::new();
    if !preset.varies_data_or_split() {
        // One data set and plan for every seed, loaded once.
        let plan = preset.plan(&data, seeds[0])?;
        baseline::write_baseline(loaded, &data, &plan, &options.out, seeds[0])?;
        let tensors = DataTensors::new(&data)?;
        // The draws are keyed by the preset's first seed, whichever seeds this process
        // runs, so that a run's detectors do not depend on how its preset was split into
        // processes (drift study runs each model and seed alone), which share them.
        let shared = SharedDetectors::new(&data, preset.seeds[0], options.detectors).with_cache(
            &detector_cache(options, preset),
            &identity_of(loaded, &data),
        );
        for spec in &specs {
            for &seed in &seeds {
                dirs.push(run(spec, seed, &data, &tensors, &plan, &shared)?);
            }
        }
        return Ok(dirs);
    }
    // Each seed its own split (and draw of the data), shared by every model at that seed.
    // The data of the first seed, or of every seed when only the split varies.
    let mut shared = Some(data);
    for &seed in &seeds {
        let data = match shared.take() {
            Some(data) => data,
            None => preset.load_data(base, seed)?,
        };
        let plan = preset.plan(&data, seed)?;
        baseline::write_baseline(loaded, &data, &plan, &options.out, seed)?;
        let tensors = DataTensors::new(&data)?;
        let detectors = SharedDetectors::new(&data, seed, options.detectors).with_cache(
            &detector_cache(options, preset),
            &identity_of(loaded, &data),
        );
        for spec in &specs {
            dirs.push(run(spec, seed, &data, &tensors, &plan, &detectors)?);
        }
        if !preset.varied().contains(&Varied::Data) {
            shared = Some(data);
        }
    }
    Ok(dirs)
}

/// Where the runs of `preset` under `options.out` share their representation detectors:
/// `<out>/<preset>/.detectors/` (hidden, so not a run; not committed).
fn detector_cache(options: &RunOptions, preset: &crate::preset::Preset) -> PathBuf {
    options.out.join(&preset.name).join(".detectors")
}

/// What else decides the representation detectors (see [`SharedDetectors::with_cache`]).
fn identity_of(loaded: &LoadedPreset, data: &Dataset) -> String {
    format!("preset {} data {}", loaded.sha256, data.source.sha256)
}

/// What scoring one cutoff gave ([`SeedRun::cutoff`]).
struct Scored {
    record: CutoffRecord,
    times: WallTimes,
    /// The outputs on every row, when this process computed them.
    outputs: Option<eval::Outputs>,
    /// The epochs that trained the checkpoint (`None` if not recorded).
    epochs: Option<Vec<Epoch>>,
}

/// One (model, seed) of a preset.
struct SeedRun<'a> {
    /// Self-labelling: the targets with the anchor model's predictions, made once.
    anchor_targets: std::cell::OnceCell<crate::data::Targets>,
    loaded: &'a LoadedPreset,
    spec: &'a ModelSpec,
    seed: u64,
    data: &'a Dataset,
    tensors: &'a DataTensors<'a>,
    config: &'a ModelConfig,
    plan: &'a Plan,
    device: tch::Device,
    options: &'a RunOptions,
    /// The encoder the models fine-tune, if the preset says so.
    backbone: Option<&'a models::Backbone>,
    /// The shared representation detectors, when the run computes detectors.
    shared: Option<&'a SharedDetectors<'a>>,
}

impl SeedRun<'_> {
    fn run(&self) -> Result<PathBuf> {
        let preset = &self.loaded.preset;
        let dir = artifacts::run_dir(&self.options.out, &preset.name, &self.spec.key, self.seed);
        let work = dir.join("checkpoints");
        std::fs::create_dir_all(&work).map_err(|e| Error::io(&work, e))?;
        let _lock = lock(&dir)?;
        // Under the lock no other process writes here: a temporary file is what a killed
        // run was writing when it died.
        for folder in [&dir, &work] {
            crate::files::remove_stale_temporaries(folder)?;
        }

        let slices = &self.plan.timeline.slices;
        let k = slices.len();
        let epochs = self.spec.train.epochs;
        let total: u64 = (0..k)
            .map(|i| preset.regime.training_rows(&self.plan.splits, i).len() as u64 * epochs)
            .sum();
        let bar = self.progress_bar(total);

        let mut grid = Grid::empty(k);
        let mut seen_classes = preset.seen_classes.then(|| Grid::empty(k));
        let mut health = Vec::with_capacity(k);
        let mut timing = WallTimes::zero();
        let mut detectors = Vec::with_capacity(k);
        let mut detector_seconds = 0.0;
        // Each cutoff's epochs and their wall seconds (none without a model); `None` once
        // a cutoff's are unknown (trained by a drift that kept no history).
        let mut history: Option<Vec<CutoffHistory>> = Some(Vec::with_capacity(k));
        let mut epoch_seconds: Option<Vec<Vec<f64>>> = Some(Vec::with_capacity(k));
        let needed = self
            .options
            .cutoffs
            .as_ref()
            .map(|wanted| preset.regime.cutoffs_to_train(wanted));
        for (i, slice) in slices.iter().enumerate() {
            if needed.as_ref().is_some_and(|n| !n.contains(&i)) {
                continue;
            }
            let label = &slice.label;
            let rows = preset.regime.training_rows(&self.plan.splits, i);
            if preset.regime.trained_slices(i).is_empty() {
                // No model at this cutoff (self-labelling, before the anchor): an empty row.
                health.push(Health::without_model(label));
                detectors.push(CutoffDetectors::default());
                if let Some(h) = history.as_mut() {
                    h.push(CutoffHistory {
                        cutoff: label.clone(),
                        epochs: Vec::new(),
                    });
                }
                if let Some(s) = epoch_seconds.as_mut() {
                    s.push(Vec::new());
                }
                continue;
            }
            bar.set_message(format!(
                "{} seed {} cutoff {label} ({}/{k})",
                self.spec.key,
                self.seed,
                i + 1
            ));
            let Scored {
                record,
                mut times,
                outputs,
                epochs,
            } = self.cutoff(&work, i, label, &rows, &bar)?;
            history = history.zip(epochs).map(|(mut h, epochs)| {
                h.push(CutoffHistory {
                    cutoff: label.clone(),
                    epochs,
                });
                h
            });
            epoch_seconds = epoch_seconds
                .zip(times.epochs.take().and_then(|mut e| e.pop()))
                .map(|(mut s, seconds)| {
                    s.push(seconds);
                    s
                });
            if self.shared.is_some() {
                let started = Instant::now();
                detectors.push(self.detectors(&work, i, &record, outputs)?);
                detector_seconds += started.elapsed().as_secs_f64();
            }
            grid.set_row(i, &record.cells);
            if let Some(seen) = seen_classes.as_mut() {
                let row = record
                    .seen_classes
                    .as_ref()
                    .ok_or_else(|| Error::Artifact {
                        path: work.join(format!("{label}.json")),
                        message: "the preset scores seen classes, this record has none".into(),
                    })?;
                seen.set_row(i, row);
            }
            health.push(record.health);
            timing.train += times.train;
            timing.eval += times.eval;
        }
        bar.finish_and_clear();
        if needed.is_some() {
            // Part of the run: its records are what was asked for.
            return Ok(dir);
        }

        let provenance = RunProvenance {
            schema: artifacts::SCHEMA,
            preset: PresetRef {
                name: preset.name.clone(),
                path: self.loaded.path.display().to_string(),
                sha256: self.loaded.sha256.clone(),
            },
            model: self.spec.key.clone(),
            seed: self.seed,
            varied: preset.varied(),
            metric: preset.metric,
            code: CodeVersion::current(),
            data: self.data.source.clone(),
            device: device::name(self.device),
            threads: self.options.threads,
        };
        let run = RunArtifact {
            slices: self.plan.timeline.labels(),
            grid,
            seen_classes,
            provenance,
            timing: Some(WallTimes {
                host: Some(artifacts::host_kind()),
                detectors: self.shared.map(|_| detector_seconds),
                epochs: epoch_seconds,
                ..timing
            }),
            health: Some(health),
            detectors: self
                .shared
                .map(|_| DetectorMatrices::assemble(self.plan.timeline.labels(), &detectors))
                .transpose()?,
            history,
        };
        artifacts::write_run(&self.options.out, &run)
    }

    fn progress_bar(&self, total: u64) -> ProgressBar {
        let bar = ProgressBar::with_draw_target(
            Some(total),
            if self.options.progress {
                ProgressDrawTarget::stderr()
            } else {
                ProgressDrawTarget::hidden()
            },
        );
        bar.set_style(
            ProgressStyle::with_template(
                "{msg} [{bar:24}] {human_pos}/{human_len} rows, {rate} rows/s ({eta} left)",
            )
            .expect("the template is valid")
            .with_key(
                "rate",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.0}", state.per_sec());
                },
            )
            .progress_chars("=> "),
        );
        bar
    }

    /// The id of cutoff `i`'s checkpoint.
    fn checkpoint_id(&self, label: &str) -> CheckpointId {
        CheckpointId::new(
            &self.loaded.sha256,
            &self.data.source.sha256,
            &self.spec.key,
            self.seed,
            label,
            &device::name(self.device),
            self.options.threads,
        )
    }

    /// A model of the run's kind with the weights of the checkpoint of cutoff `i`.
    fn load_cutoff(
        &self,
        work: &Path,
        i: usize,
    ) -> Result<(train::BuiltModel, checkpoint::Loaded)> {
        let label = &self.plan.timeline.slices[i].label;
        let id = self.checkpoint_id(label);
        let job = TrainJob {
            model: &self.spec.key,
            config: self.config,
            train: &self.spec.train,
            rows: &[],
            training_seed: id.training_seed,
            device: self.device,
            backbone: self.backbone,
        };
        let built = train::build(&job)?;
        let path = work.join(format!("{label}.safetensors"));
        let loaded = checkpoint::load(&built.vs, &id, &path)?;
        Ok((built, loaded))
    }

    /// The targets self-labelled cutoffs train on: the data's, with the train parts of every
    /// self-labelled slice relabelled by the anchor checkpoint (scored before them).
    fn anchor_targets(&self, work: &Path) -> Result<&crate::data::Targets> {
        if let Some(t) = self.anchor_targets.get() {
            return Ok(t);
        }
        let regime = &self.loaded.preset.regime;
        let anchor = regime.anchor().expect("only self-labelling asks");
        let (built, _) = self.load_cutoff(work, anchor)?;
        let relabel: Vec<usize> = (anchor + 1..self.plan.splits.len())
            .flat_map(|k| self.plan.splits[k].train.iter().copied())
            .collect();
        let outputs = eval::predict(
            built.model.as_ref(),
            self.tensors,
            self.data.rows(),
            &relabel,
            EVAL_BATCH,
            self.device,
        )?;
        let targets = eval::predicted_targets(&self.data.targets, &outputs, &relabel);
        Ok(self.anchor_targets.get_or_init(|| targets))
    }

    /// The detectors of cutoff `i` (scored as `record`), from `outputs` when this process
    /// computed them, else from the file an earlier process wrote or from the checkpoint.
    fn detectors(
        &self,
        work: &Path,
        i: usize,
        record: &CutoffRecord,
        outputs: Option<eval::Outputs>,
    ) -> Result<CutoffDetectors> {
        let label = &self.plan.timeline.slices[i].label;
        let path = work.join(format!("{label}.detectors.json"));
        if let Some(done) = crate::detectors::read_cutoff(&path, &record.checkpoint_sha256)? {
            return Ok(done);
        }
        let outputs = match outputs {
            Some(outputs) => outputs,
            None => {
                let (built, _) = self.load_cutoff(work, i)?;
                eval::predict(
                    built.model.as_ref(),
                    self.tensors,
                    self.data.rows(),
                    &self.all_rows(),
                    EVAL_BATCH,
                    self.device,
                )?
            }
        };
        let regime = &self.loaded.preset.regime;
        let mut detectors = crate::detectors::output_row(
            &self.data.targets,
            &outputs,
            regime,
            &self.plan.splits,
            i,
            self.seed,
        )?;
        let shared = self.shared.expect("asked only when detectors are on");
        detectors
            .values
            .extend(shared.row(regime, &self.plan.splits, i)?);
        crate::detectors::write_cutoff(&path, &record.checkpoint_sha256, &detectors)?;
        Ok(detectors)
    }

    /// Every row of every slice, ascending.
    fn all_rows(&self) -> Vec<usize> {
        let mut rows: Vec<usize> = self
            .plan
            .timeline
            .slices
            .iter()
            .flat_map(|s| s.rows.iter().copied())
            .collect();
        rows.sort_unstable();
        rows
    }

    /// Scores cutoff `i`, reusing what an earlier process finished; the outputs on every
    /// row when this process computed them, and the epochs that trained its checkpoint
    /// (`None` for a checkpoint of a drift that kept no history).
    fn cutoff(
        &self,
        work: &Path,
        i: usize,
        label: &str,
        rows: &[usize],
        bar: &ProgressBar,
    ) -> Result<Scored> {
        let epochs = self.spec.train.epochs;
        let id = self.checkpoint_id(label);
        let record_path = work.join(format!("{label}.json"));
        let checkpoint_path = work.join(format!("{label}.safetensors"));
        let timing_path = work.join(format!("{label}.timing.json"));
        let history_path = work.join(format!("{label}.history.json"));

        if record_path.exists() {
            let record = read_record(&record_path, &id, &checkpoint_path)?;
            let times = read_timing(&timing_path);
            let history = read_history(&history_path, &record.checkpoint_sha256)?;
            bar.inc(rows.len() as u64 * epochs);
            return Ok(Scored {
                record,
                times,
                outputs: None,
                epochs: history,
            });
        }

        let job = TrainJob {
            model: &self.spec.key,
            config: self.config,
            train: &self.spec.train,
            rows,
            training_seed: id.training_seed,
            device: self.device,
            backbone: self.backbone,
        };
        let started = Instant::now();
        let (built, checkpoint_sha256, final_loss, history, epoch_seconds) =
            if checkpoint_path.exists() {
                // Trained before an interruption during scoring.
                let (built, loaded) = self.load_cutoff(work, i)?;
                bar.inc(rows.len() as u64 * epochs);
                let history = read_history(&history_path, &loaded.sha256)?;
                (built, loaded.sha256, loaded.final_loss, history, None)
            } else {
                let regime = &self.loaded.preset.regime;
                let relabelled;
                let (targets, tensors) = if regime.self_labelled_slices(i).is_empty() {
                    (&self.data.targets, self.tensors)
                } else {
                    let targets = self.anchor_targets(work)?;
                    relabelled = self.tensors.with_targets(targets);
                    (targets, &relabelled)
                };
                let previous = regime.starts_from_previous(i).then(|| {
                    let label = &self.plan.timeline.slices[i - 1].label;
                    (
                        work.join(format!("{label}.safetensors")),
                        self.checkpoint_id(label),
                    )
                });
                let init = previous.as_ref().map(|(path, id)| (path.as_path(), id));
                let loss = LossFn::new(self.spec.train.loss, targets, rows, self.device)?;
                let message = bar.message();
                let trained = train::train(&job, init, tensors, &loss, |step| {
                    bar.set_message(format!(
                        "{message} epoch {}/{epochs} loss {:.4}",
                        step.epoch, step.loss
                    ));
                    bar.inc(step.rows as u64);
                })
                .map_err(|e| Error::Invalid(format!("cutoff {label}: {e}")))?;
                // The history first: a checkpoint on disk always has its own.
                let sha = checkpoint::save_after(
                    &trained.built.vs,
                    &id,
                    trained.final_loss,
                    &checkpoint_path,
                    |sha| write_history(&history_path, sha, &trained.epochs),
                )?;
                (
                    trained.built,
                    sha,
                    trained.final_loss,
                    Some(trained.epochs),
                    Some(vec![trained.epoch_seconds]),
                )
            };
        let train_seconds = started.elapsed().as_secs_f64();

        let started = Instant::now();
        let scorer = score::Scorer {
            preset: &self.loaded.preset,
            data: self.data,
            tensors: self.tensors,
            splits: &self.plan.splits,
            device: self.device,
        };
        let rows = self.all_rows();
        let (outputs, scored) =
            scorer.score(built.model.as_ref(), &rows, (i, label), final_loss)?;
        let times = WallTimes {
            train: train_seconds,
            eval: started.elapsed().as_secs_f64(),
            host: None,
            detectors: None,
            epochs: epoch_seconds,
        };
        let record = CutoffRecord {
            id,
            checkpoint_sha256,
            cells: scored.cells,
            seen_classes: scored.seen_classes,
            health: scored.health,
        };
        write_atomic(
            &timing_path,
            (serde_json::to_string(&times).expect("times serialise") + "\n").as_bytes(),
        )?;
        write_atomic(
            &record_path,
            (serde_json::to_string_pretty(&record).expect("records serialise") + "\n").as_bytes(),
        )?;
        Ok(Scored {
            record,
            times,
            outputs: Some(outputs),
            epochs: history,
        })
    }
}
