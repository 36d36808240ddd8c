//! Trivial baselines: "models" fitted by counting on exactly the training set each
//! cutoff's model sees, so they drift too, and written as drift-matrix artifacts of their
//! own beside the trained models' (no libtorch involved).
//!
//! The training set counted is the gold-labelled one (for self-labelling, the anchor's).
//!
//! - [`Baseline::Majority`] (single-label classification) predicts the most frequent class
//!   of the training set (the lowest of equally frequent ones);
//! - [`Baseline::LabelPrior`] (multi-label) scores every row with each label's training
//!   prior, a constant, so its macro AUC is 0.5 by construction;
//! - [`Baseline::MeanTarget`] (regression) predicts the training mean.
//!
//! A model that does not beat its baseline has learned nothing the label distribution
//! does not already say. A baseline is deterministic, so it has one run, seed
//! [`BASELINE_SEED`], when every seed of its preset trains on the same data and split; when
//! the seeds vary them ([`crate::slices::Varied`]), it has one run per seed, fitted on that
//! seed's data and split.

use std::path::{Path, PathBuf};

use crate::artifacts::{self, CodeVersion, PresetRef, RunArtifact, RunProvenance};
use crate::data::{Dataset, Targets};
use crate::eval::{self, Outputs};
use crate::matrix::Grid;
use crate::preset::{LoadedPreset, Plan};
use crate::{Error, Result};

/// The seed a baseline's one run is filed under when the data and split do not vary.
pub const BASELINE_SEED: u64 = 0;

/// The family every baseline belongs to in tables and figures.
pub const BASELINE_FAMILY: &str = "baseline";

/// A counting baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Baseline {
    /// The training set's most frequent class.
    Majority,
    /// Each label's training prior as a constant score.
    LabelPrior,
    /// The training set's mean target.
    MeanTarget,
}

impl Baseline {
    /// Every baseline.
    pub const ALL: [Baseline; 3] = [
        Baseline::Majority,
        Baseline::LabelPrior,
        Baseline::MeanTarget,
    ];

    /// The baseline of a task.
    pub fn for_targets(targets: &Targets) -> Baseline {
        match targets {
            Targets::Classes { .. } => Baseline::Majority,
            Targets::MultiLabel { .. } => Baseline::LabelPrior,
            Targets::Values(_) => Baseline::MeanTarget,
        }
    }

    /// Its model key in artifacts, tables and figures.
    pub fn key(self) -> &'static str {
        match self {
            Baseline::Majority => "majority",
            Baseline::LabelPrior => "label-prior",
            Baseline::MeanTarget => "mean-target",
        }
    }

    /// What it predicts, in a few words (the roster's architecture column).
    pub fn description(self) -> &'static str {
        match self {
            Baseline::Majority => "majority class of the training set",
            Baseline::LabelPrior => "each label's training prior as a constant score",
            Baseline::MeanTarget => "mean target of the training set",
        }
    }

    /// The baseline a model key names, if it names one.
    pub fn from_key(key: &str) -> Option<Baseline> {
        Baseline::ALL.into_iter().find(|b| b.key() == key)
    }

    /// The constant output row fitted on `rows` (logits for classification, as a model's
    /// outputs are read): a one-hot row at the majority class; each label's prior `p` as
    /// the logit `ln(p / (1 - p))` (clamped to `p` in `[1e-6, 1 - 1e-6]`), so a score
    /// above 0 means a prior above one half; the mean target.
    pub fn fit(self, targets: &Targets, rows: &[usize]) -> Result<Vec<f32>> {
        if rows.is_empty() {
            return Err(Error::Invalid(format!(
                "baseline {}: no training rows",
                self.key()
            )));
        }
        let n = rows.len() as f64;
        match (self, targets) {
            (Baseline::Majority, Targets::Classes { classes, labels }) => {
                let mut counts = vec![0usize; *classes];
                for &r in rows {
                    counts[labels[r] as usize] += 1;
                }
                let most = counts.iter().copied().max().unwrap_or(0);
                let class = counts.iter().position(|&c| c == most).unwrap_or(0);
                Ok((0..*classes)
                    .map(|c| if c == class { 1.0 } else { 0.0 })
                    .collect())
            }
            (Baseline::LabelPrior, Targets::MultiLabel { classes, labels }) => Ok((0..*classes)
                .map(|c| {
                    let positives = rows.iter().filter(|&&r| labels[r * classes + c]).count();
                    let p = (positives as f64 / n).clamp(1e-6, 1.0 - 1e-6);
                    (p / (1.0 - p)).ln() as f32
                })
                .collect()),
            (Baseline::MeanTarget, Targets::Values(values)) => Ok(vec![
                (rows.iter().map(|&r| values[r]).sum::<f64>() / n) as f32,
            ]),
            _ => Err(Error::Invalid(format!(
                "baseline {} does not fit {} targets",
                self.key(),
                targets.task()
            ))),
        }
    }
}

/// The baseline run of `loaded` on `data` cut as `plan`, filed under `seed`: for every
/// cutoff the baseline fitted on that cutoff's training rows, scored on every cell under
/// the preset's regime, with its health.
pub fn baseline_run(
    loaded: &LoadedPreset,
    data: &Dataset,
    plan: &Plan,
    seed: u64,
) -> Result<RunArtifact> {
    let preset = &loaded.preset;
    let baseline = Baseline::for_targets(&data.targets);
    let k = plan.timeline.slices.len();
    let rows = data.rows();
    let mut grid = Grid::empty(k);
    let mut seen_classes = preset.seen_classes.then(|| Grid::empty(k));
    let mut health = Vec::with_capacity(k);
    for (i, slice) in plan.timeline.slices.iter().enumerate() {
        // A row without a model (self-labelling, before the anchor) stays empty.
        let training = preset.regime.gold_rows(&plan.splits, i);
        if training.is_empty() {
            health.push(eval::Health::without_model(&slice.label));
            continue;
        }
        let row = baseline
            .fit(&data.targets, &training)
            .map_err(|e| Error::Invalid(format!("cutoff {}: {e}", slice.label)))?;
        let outputs = Outputs {
            width: row.len(),
            values: row.repeat(rows),
        };
        let cells = eval::matrix_row(
            preset.metric,
            &data.targets,
            &outputs,
            &preset.regime,
            &plan.splits,
            i,
        )?;
        grid.set_row(i, &cells);
        if let Some(seen) = seen_classes.as_mut() {
            let cells = eval::seen_classes_row(
                preset.metric,
                &data.targets,
                &outputs,
                &preset.regime,
                &plan.splits,
                i,
                &training,
            )?;
            seen.set_row(i, &cells);
        }
        let id_rows = eval::id_test_rows(&preset.regime, &plan.splits, i);
        health.push(eval::health(
            &data.targets,
            &outputs,
            &id_rows,
            &slice.label,
            None,
        ));
    }
    Ok(RunArtifact {
        slices: plan.timeline.labels(),
        grid,
        seen_classes,
        provenance: RunProvenance {
            schema: artifacts::SCHEMA,
            preset: PresetRef {
                name: preset.name.clone(),
                path: loaded.path.display().to_string(),
                sha256: loaded.sha256.clone(),
            },
            model: baseline.key().to_string(),
            seed,
            varied: preset.varied(),
            metric: preset.metric,
            code: CodeVersion::current(),
            data: data.source.clone(),
            // Counting runs on the CPU in one thread, whatever the models use.
            device: "cpu".into(),
            threads: 1,
        },
        timing: None,
        health: Some(health),
        detectors: None,
        history: None,
    })
}

/// The seed the baseline of run seed `seed` is filed under: [`BASELINE_SEED`] when the
/// preset's seeds share data and split, else `seed`.
pub fn baseline_seed(loaded: &LoadedPreset, seed: u64) -> u64 {
    if loaded.preset.varies_data_or_split() {
        seed
    } else {
        BASELINE_SEED
    }
}

/// The seeds a preset's baseline runs are filed under ([`baseline_seed`] of each seed).
pub fn baseline_seeds(loaded: &LoadedPreset) -> Vec<u64> {
    let mut seeds: Vec<u64> = (loaded.preset.seeds.iter())
        .map(|&s| baseline_seed(loaded, s))
        .collect();
    seeds.dedup();
    seeds
}

/// Writes the baseline run of `loaded` for run seed `seed` (filed under
/// [`baseline_seed`]) under `out` and returns its folder.
pub fn write_baseline(
    loaded: &LoadedPreset,
    data: &Dataset,
    plan: &Plan,
    out: &Path,
    seed: u64,
) -> Result<PathBuf> {
    let run = baseline_run(loaded, data, plan, baseline_seed(loaded, seed))?;
    // Every `drift run` of a preset writes its baseline first. One already there with the
    // same cells, health and provenance but for the commit is kept: rewriting it would
    // only churn the commit its run.json names (committed results changed by a rerun).
    let p = &run.provenance;
    let dir = artifacts::run_dir(out, &p.preset.name, &p.model, p.seed);
    if let Ok(existing) = artifacts::load_run(&dir) {
        let same = existing.slices == run.slices
            && existing.grid == run.grid
            && existing.health == run.health
            && existing.provenance.preset == p.preset
            && existing.provenance.data == p.data
            && existing.provenance.metric == p.metric
            && existing.provenance.varied == p.varied
            && existing.provenance.schema == p.schema;
        if same {
            return Ok(dir);
        }
    }
    artifacts::write_run(out, &run)
}

/// Loads the data of `loaded`, cuts it as the preset says and writes the preset's baseline
/// runs under `out`, one per [`baseline_seeds`] (what `drift run` writes before any model;
/// `drift run --baseline-only` and `drift study` write them alone). Returns their folders.
pub fn write_for_preset(loaded: &LoadedPreset, out: &Path) -> Result<Vec<PathBuf>> {
    let preset = &loaded.preset;
    let base = loaded.path.parent().unwrap_or(Path::new("."));
    let mut dirs = Vec::new();
    let mut data: Option<Dataset> = None;
    for seed in baseline_seeds(loaded) {
        // The data is loaded once unless each seed draws its own.
        if data.is_none() || preset.varied().contains(&crate::slices::Varied::Data) {
            data = Some(preset.load_data(base, seed)?);
        }
        let data = data.as_ref().expect("loaded above");
        let plan = preset.plan(data, seed)?;
        dirs.push(write_baseline(loaded, data, &plan, out, seed)?);
    }
    Ok(dirs)
}
