//! `drift audit`: a reviewer's check that the committed matrices are what training gives,
//! by training a random sample of their rows again.
//!
//! The manifest proves that the paper follows from the committed matrices, not that the
//! matrices are what their presets train to; rerunning everything costs hours. An audit
//! draws a few rows and retrains them.
//!
//! The population is every scored row of the studies' trained runs (not the counting
//! baselines): one item per preset, model, seed and cutoff with a model, counted once (in
//! the first study that names its preset). A draw of `n` items is stratified by study in
//! proportion to its items, the fractional shares rounded by systematic sampling (one
//! uniform offset), so every item has the same chance `n / total` and every study can be
//! drawn; within a study the items are drawn without replacement. If a fraction `f` of the
//! items were not what training gives, such a draw misses all of them with probability at
//! most `(1 - f)^n` (per stratum it is at most `(1 - f_s)^(n_s)`, and the logarithm's
//! concavity bounds their product), so `n` passing items catch any fraction of at least
//! `1 - 0.05^(1/n)` with 95 % probability ([`fraction_caught`]).
//!
//! Each drawn item is trained again from its preset, with the cutoffs it starts from (a
//! fine-tuning chain, a self-label anchor), in a hidden staging folder of the results
//! root, scored, and its row compared with the committed one: bit for bit when the thread
//! count and the CPU kind are the ones the run recorded (drift's determinism promise),
//! else within [`TOLERANCE`], and the certificate says why.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::artifacts;
use crate::checksum::sha256_hex;
use crate::preset::Preset;
use crate::report::study::read_studies;
use crate::slices::{Regime, shuffle, stream};
use crate::{Error, Result};

/// The certificate's schema.
pub const SCHEMA: u32 = 1;
/// The largest difference of a cell allowed where bit-identity is not promised (another
/// thread count or CPU kind changes float rounding, which training amplifies): two points
/// of the metric's scale, 0.02 on [0, 1].
pub const TOLERANCE: f64 = 0.02;
/// The confidence of the fraction the certificate states.
pub const CONFIDENCE: f64 = crate::analysis::SAMPLE_CONFIDENCE;

/// One row of one run that a draw can pick.
#[derive(Clone, Debug)]
pub struct AuditItem {
    /// The study it counts in.
    pub study: String,
    /// Preset name.
    pub preset: String,
    /// The preset's file.
    pub preset_file: PathBuf,
    /// Model key.
    pub model: String,
    /// Seed.
    pub seed: u64,
    /// Row index (0-based) of the cutoff.
    pub cutoff: usize,
    /// Its label.
    pub label: String,
    /// The committed run folder.
    pub dir: PathBuf,
    /// The committed row.
    pub row: Vec<Option<f64>>,
    /// The cutoffs retraining it trains (itself and what it starts from).
    pub needs: Vec<usize>,
    /// Expected seconds, from the run's recorded wall times (`None` without them).
    pub estimate: Option<f64>,
    /// The run's recorded wall times.
    pub times: Option<artifacts::WallTimes>,
    /// Its preset's regime.
    pub regime: Regime,
    /// The thread count the run recorded.
    pub threads: u32,
    /// The device it ran on.
    pub device: String,
    /// The kind of machine it finished on, when recorded.
    pub host: Option<String>,
}

impl AuditItem {
    /// `preset/model/seed-N/CUTOFF`, as `--items` names it.
    pub fn id(&self) -> String {
        format!(
            "{}/{}/seed-{}/{}",
            self.preset, self.model, self.seed, self.label
        )
    }
}

/// Every item of a studies file's runs, in study, preset, model, seed and cutoff order.
#[derive(Clone, Debug)]
pub struct Population {
    /// The items.
    pub items: Vec<AuditItem>,
    /// The studies, in file order, with how many items count in each.
    pub studies: Vec<(String, usize)>,
}

impl Population {
    /// The items of the studies in `studies_file`, whose presets are read from
    /// `presets/<name>.toml` and runs from `results`; every run folder checked as it loads.
    pub fn read(studies_file: &Path, presets: &Path, results: &Path) -> Result<Population> {
        let file = read_studies(studies_file)?;
        let mut items: Vec<AuditItem> = Vec::new();
        let mut studies = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for spec in &file.studies {
            let before = items.len();
            for name in &spec.presets {
                if !seen.insert(name.clone()) {
                    continue;
                }
                let preset_file = presets.join(format!("{name}.toml"));
                let loaded = Preset::load(&preset_file).map_err(|e| {
                    Error::Invalid(format!(
                        "{}: study {:?} names preset {name:?}: {e}",
                        studies_file.display(),
                        spec.name
                    ))
                })?;
                let regime = loaded.preset.regime;
                for model in &loaded.preset.models {
                    for &seed in &loaded.preset.seeds {
                        let dir = artifacts::run_dir(results, name, &model.key, seed);
                        let run = artifacts::load_run(&dir).map_err(|e| {
                            Error::Invalid(format!(
                                "study {:?}: {e} (an audit reads the committed runs; make \
                                 them with scripts/make-results)",
                                spec.name
                            ))
                        })?;
                        items.extend(run_items(&spec.name, &preset_file, &regime, &dir, &run));
                    }
                }
            }
            studies.push((spec.name.clone(), items.len() - before));
        }
        Ok(Population { items, studies })
    }

    /// The items named `preset/model/seed-N/CUTOFF`, in population order.
    pub fn named(&self, ids: &[String]) -> Result<Vec<usize>> {
        let mut chosen = Vec::new();
        for id in ids {
            let found = self.items.iter().position(|item| &item.id() == id);
            chosen.push(found.ok_or_else(|| {
                Error::Invalid(format!(
                    "--items: no item {id:?} among the {} rows of the studies' runs (an item \
                     is PRESET/MODEL/seed-N/CUTOFF, e.g. {})",
                    self.items.len(),
                    self.items.first().map_or(String::new(), AuditItem::id)
                ))
            })?);
        }
        chosen.sort_unstable();
        chosen.dedup();
        Ok(chosen)
    }

    /// `n` items drawn by `seed`: stratified by study, in proportion (see the module docs).
    pub fn draw(&self, n: usize, seed: u64) -> Result<Vec<usize>> {
        let total = self.items.len();
        if n == 0 || n > total {
            return Err(Error::Invalid(format!(
                "--sample {n}: the studies' runs have {total} rows to draw from; ask for 1 to \
                 {total}"
            )));
        }
        // Study s gets floor(n T_s / T) items, plus one where the systematic points
        // u + k T (u uniform in [0, T)) fall in its share of the remainders n T_s mod T:
        // integer arithmetic, so the shares add up to n exactly.
        let mut rng = stream("audit", seed, "strata");
        let offset = (rand_core::Rng::next_u64(&mut rng) % total as u64) as usize;
        let mut quotas = Vec::new();
        let mut cumulative = 0usize;
        for (_, count) in &self.studies {
            let share = n * count;
            let (whole, rest) = (share / total, share % total);
            let extra = (cumulative + rest + total - 1 - offset) / total
                - (cumulative + total - 1 - offset) / total;
            cumulative += rest;
            quotas.push(whole + extra);
        }
        let mut chosen = Vec::new();
        let mut start = 0;
        for ((name, count), quota) in self.studies.iter().zip(quotas) {
            let mut indices: Vec<usize> = (start..start + count).collect();
            shuffle(&mut stream("audit", seed, name), &mut indices);
            chosen.extend_from_slice(&indices[..quota]);
            start += count;
        }
        chosen.sort_unstable();
        Ok(chosen)
    }
}

/// The items of one committed run: its cutoffs with a model.
fn run_items(
    study: &str,
    preset_file: &Path,
    regime: &Regime,
    dir: &Path,
    run: &artifacts::RunArtifact,
) -> Vec<AuditItem> {
    let k = run.slices.len();
    let p = &run.provenance;
    (0..k)
        .filter(|&i| !regime.trained_slices(i).is_empty())
        .map(|i| {
            let needs = regime.cutoffs_to_train(&[i]);
            AuditItem {
                study: study.to_string(),
                preset: p.preset.name.clone(),
                preset_file: preset_file.to_path_buf(),
                model: p.model.clone(),
                seed: p.seed,
                cutoff: i,
                label: run.slices[i].clone(),
                dir: dir.to_path_buf(),
                row: (0..k).map(|j| run.grid.get(i, j)).collect(),
                estimate: run
                    .timing
                    .as_ref()
                    .map(|t| t.cutoffs_estimate(regime, k, &needs)),
                needs,
                times: run.timing.clone(),
                regime: *regime,
                threads: p.threads,
                device: p.device.clone(),
                host: run.timing.as_ref().and_then(|t| t.host.clone()),
            }
        })
        .collect()
}

/// The smallest fraction of wrong items that `n` passing draws catch with probability
/// [`CONFIDENCE`] ([`crate::analysis::fraction_caught`]).
pub fn fraction_caught(n: usize) -> f64 {
    crate::analysis::fraction_caught(n, CONFIDENCE)
}

/// The expected seconds of retraining `chosen`, the items of one run sharing the cutoffs
/// they need; `None` if a run recorded no wall times.
pub fn estimate(population: &Population, chosen: &[usize]) -> Option<f64> {
    let mut runs: BTreeMap<&Path, (&AuditItem, Vec<usize>)> = BTreeMap::new();
    for &c in chosen {
        let item = &population.items[c];
        let entry = runs.entry(&item.dir).or_insert((item, Vec::new()));
        entry.1.extend_from_slice(&item.needs);
    }
    runs.values_mut()
        .map(|(item, needs)| {
            needs.sort_unstable();
            needs.dedup();
            let times = item.times.as_ref()?;
            Some(times.cutoffs_estimate(&item.regime, item.row.len(), needs))
        })
        .sum()
}

/// How a draw was made, for the certificate.
#[derive(Clone, Debug, Serialize)]
pub struct Draw {
    /// `stratified` (by study, in proportion) or `fixed` (`--items`).
    pub how: &'static str,
    /// The draw's seed (`None` for a fixed draw).
    pub seed: Option<u64>,
    /// Where the seed came from: `--seed` or `fresh entropy`.
    pub seed_from: Option<&'static str>,
    /// Items drawn.
    pub sample: usize,
    /// Items to draw from.
    pub population: usize,
    /// Per study: its items and how many were drawn.
    pub studies: Vec<StudyDraw>,
}

/// One study's share of a draw.
#[derive(Clone, Debug, Serialize)]
pub struct StudyDraw {
    /// The study.
    pub study: String,
    /// Its items.
    pub items: usize,
    /// Drawn.
    pub drawn: usize,
}

impl Draw {
    /// The record of drawing `chosen` from `population`.
    pub fn new(
        population: &Population,
        chosen: &[usize],
        seed: Option<(u64, &'static str)>,
    ) -> Draw {
        Draw {
            how: if seed.is_some() {
                "stratified"
            } else {
                "fixed"
            },
            seed: seed.map(|s| s.0),
            seed_from: seed.map(|s| s.1),
            sample: chosen.len(),
            population: population.items.len(),
            studies: population
                .studies
                .iter()
                .map(|(study, items)| StudyDraw {
                    study: study.clone(),
                    items: *items,
                    drawn: chosen
                        .iter()
                        .filter(|&&c| &population.items[c].study == study)
                        .count(),
                })
                .collect(),
        }
    }
}

/// What retraining one item gave.
#[derive(Clone, Debug, Serialize)]
pub struct ItemResult {
    /// `preset/model/seed-N/CUTOFF`.
    pub item: String,
    /// Its study.
    pub study: String,
    /// `identical`, `within-tolerance` or `differs`.
    pub result: &'static str,
    /// Why bit-identity was not required, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The largest difference of a cell (0 when identical).
    pub largest_difference: f64,
    /// Cells compared.
    pub cells: usize,
    /// The committed and the retrained row, where they differ beyond the tolerance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<[Vec<Option<f64>>; 2]>,
    /// Expected and measured seconds (the items of one run share its training, whose time
    /// is split evenly among them).
    pub estimate_s: Option<f64>,
    /// Measured.
    pub wall_s: f64,
}

/// `audit.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Certificate {
    /// [`SCHEMA`].
    pub schema: u32,
    /// The studies file.
    pub studies_file: String,
    /// SHA-256 of the committed manifest (`checksums/SHA256SUMS` beside the studies'
    /// repository), when there is one.
    pub manifest_sha256: Option<String>,
    /// How the items were drawn.
    pub drawn: Draw,
    /// This machine ([`artifacts::host_kind`]).
    pub host: String,
    /// The libtorch threads of the retraining (`None`: each run's recorded count).
    pub threads: Option<u32>,
    /// Each item.
    pub items: Vec<ItemResult>,
    /// The smallest fraction of wrong rows this sample catches with 95 % probability.
    pub fraction_caught: f64,
    /// Every item identical or within tolerance.
    pub passed: bool,
    /// Seconds, all items.
    pub wall_s: f64,
}

/// The SHA-256 of the manifest `root/checksums/SHA256SUMS`, when it exists.
pub fn manifest_sha256(root: &Path) -> Result<Option<String>> {
    let path = root.join("checksums/SHA256SUMS");
    if !path.exists() {
        return Ok(None);
    }
    let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
    Ok(Some(sha256_hex(&bytes)))
}

/// Compares a retrained row with the committed one: the result, the largest difference
/// and why bit-identity was not required (`None` when it was).
pub fn compare(
    item: &AuditItem,
    row: &[Option<f64>],
    threads: u32,
    host: &str,
) -> (&'static str, f64, Option<String>) {
    let mut reasons = Vec::new();
    if threads != item.threads {
        reasons.push(format!(
            "{threads} libtorch threads, the run recorded {}",
            item.threads
        ));
    }
    match item.host.as_deref() {
        Some(recorded) if recorded != host => {
            reasons.push(format!("CPU {host}, the run finished on {recorded}"))
        }
        Some(_) => {}
        // Runs made before hosts were recorded: bit-identity cannot be promised.
        None => reasons.push("the run recorded no CPU kind".into()),
    }
    let why = (!reasons.is_empty()).then(|| reasons.join("; "));
    let same_shape = row.len() == item.row.len()
        && row
            .iter()
            .zip(&item.row)
            .all(|(a, b)| a.is_some() == b.is_some());
    if !same_shape {
        return ("differs", f64::INFINITY, why);
    }
    let largest = row
        .iter()
        .zip(&item.row)
        .filter_map(|(a, b)| Some((a.as_ref()? - b.as_ref()?).abs()))
        .fold(0.0, f64::max);
    let identical = row
        .iter()
        .zip(&item.row)
        .all(|(a, b)| a.map(f64::to_bits) == b.map(f64::to_bits));
    let result = match (identical, &why) {
        (true, _) => "identical",
        (false, Some(_)) if largest <= TOLERANCE => "within-tolerance",
        _ => "differs",
    };
    (result, largest, why)
}

/// Retrains `chosen` and compares each row (torch builds only).
#[cfg(feature = "torch")]
pub fn execute(
    population: &Population,
    chosen: &[usize],
    results: &Path,
    threads: Option<u32>,
    progress: bool,
    mut report: impl FnMut(&ItemResult) -> Result<()>,
) -> Result<Vec<ItemResult>> {
    use crate::run::{RunOptions, run_preset, scored_row};

    let host = artifacts::host_kind();
    // By run, in the draw's order (a run's rows are together in the population).
    let mut runs: Vec<Vec<&AuditItem>> = Vec::new();
    for &c in chosen {
        let item = &population.items[c];
        match runs.last_mut() {
            Some(run) if run[0].dir == item.dir => run.push(item),
            _ => runs.push(vec![item]),
        }
    }
    let staging = results.join(format!(".audit.tmp-{}", std::process::id()));
    let outcome = (|| {
        let mut out = Vec::new();
        for items in &runs {
            let first = items[0];
            let started = std::time::Instant::now();
            let loaded = Preset::load(&first.preset_file)?;
            let options = RunOptions {
                out: staging.clone(),
                models: vec![first.model.clone()],
                seeds: vec![first.seed],
                device: first.device.parse()?,
                threads: threads.unwrap_or(first.threads),
                progress,
                detectors: false,
                cutoffs: Some(items.iter().map(|i| i.cutoff).collect()),
            };
            let dirs = run_preset(&loaded, &options)?;
            let seconds = started.elapsed().as_secs_f64() / items.len() as f64;
            for item in items {
                let row = scored_row(&dirs[0], &item.label)?;
                let (result, largest, why) = compare(item, &row, options.threads, &host);
                let done = ItemResult {
                    item: item.id(),
                    study: item.study.clone(),
                    result,
                    why,
                    largest_difference: largest,
                    cells: row.iter().flatten().count(),
                    rows: (result == "differs").then(|| [item.row.clone(), row.clone()]),
                    estimate_s: item.estimate,
                    wall_s: seconds,
                };
                report(&done)?;
                out.push(done);
            }
            std::fs::remove_dir_all(&staging).map_err(|e| Error::io(&staging, e))?;
        }
        Ok(out)
    })();
    let _ = std::fs::remove_dir_all(&staging);
    outcome
}
