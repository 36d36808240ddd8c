//! Estimates of an item's cost from the wall times earlier runs recorded, and how a
//! duration is written.

use std::collections::BTreeMap;
use std::path::Path;

use super::disk_state::cutoffs_done;
use crate::artifacts;
use crate::preset::Preset;

/// Earlier wall times of a preset's runs, for estimates.
pub(super) struct Timings {
    /// (model, seed) -> seconds of a finished run.
    runs: BTreeMap<(String, u64), f64>,
}

impl Timings {
    /// The wall times recorded under `out` for the runs of preset `name`.
    pub(super) fn read(out: &Path, name: &str, preset: &Preset) -> Timings {
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
    pub(super) fn estimate(
        &self,
        model: &str,
        seed: u64,
        dir: &Path,
        cutoffs: usize,
    ) -> Option<f64> {
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
