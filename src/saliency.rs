//! Gradient saliency of image checkpoints: which pixels a trained model's decision on a
//! slice rests on, and how that moves as the cutoff moves.
//!
//! For each chosen image `x` with label `y`, the map is `|d logit_y / d x|` (model in
//! evaluation mode), its maximum over channels, min-max normalised to `[0, 1]` (a
//! constant map becomes zeros); the saved map is the mean of these over the images.
//! The images are the first `count` rows (in data-set order) of the cell's evaluation set
//! under the ID/OOD rule, so a map is reproducible from the run alone.
//!
//! A map is saved as `<run folder>/saliency/<cutoff>-on-<slice>.json` (one line per map
//! row), and `saliency/SHA256SUMS` lists every map, so [`load`] detects a damaged file.
//! [`seed_means`] averages a study's maps over seeds for the report.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::checksum::{SUMS, Sums};
use crate::files::write_atomic;
use crate::{Error, Result};

/// The saliency artifact schema version.
pub const SCHEMA: u32 = 1;

/// One saliency map.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaliencyMap {
    /// Schema version ([`SCHEMA`]).
    pub schema: u32,
    /// Preset name.
    pub preset: String,
    /// Model key.
    pub model: String,
    /// Run seed.
    pub seed: u64,
    /// The checkpoint's cutoff slice.
    pub cutoff: String,
    /// The slice the images come from.
    pub slice: String,
    /// Data-set rows of the images.
    pub rows: Vec<usize>,
    /// SHA-256 of the checkpoint file.
    pub checkpoint_sha256: String,
    /// Mean normalised saliency, `height` rows of `width` values in `[0, 1]`.
    pub values: Vec<Vec<f64>>,
}

impl SaliencyMap {
    fn file_name(&self) -> String {
        format!("{}-on-{}.json", self.cutoff, self.slice)
    }

    fn to_text(&self) -> String {
        let rows: Vec<String> = self
            .values
            .iter()
            .map(|r| format!("    {}", line(r)))
            .collect();
        format!(
            "{{\n  \"schema\": {},\n  \"preset\": {},\n  \"model\": {},\n  \"seed\": {},\n  \
             \"cutoff\": {},\n  \"slice\": {},\n  \"rows\": {},\n  \"checkpoint_sha256\": {},\n  \
             \"values\": [\n{}\n  ]\n}}\n",
            self.schema,
            line(&self.preset),
            line(&self.model),
            self.seed,
            line(&self.cutoff),
            line(&self.slice),
            line(&self.rows),
            line(&self.checkpoint_sha256),
            rows.join(",\n")
        )
    }
}

/// JSON of a value on one line.
fn line<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("saliency values serialise")
}

/// Writes `map` into `<run_dir>/saliency/` and updates its `SHA256SUMS`; returns the
/// map's path.
pub fn save(run_dir: &Path, map: &SaliencyMap) -> Result<PathBuf> {
    if map
        .values
        .iter()
        .flatten()
        .any(|v| !(0.0..=1.0).contains(v))
    {
        return Err(Error::Invalid(format!(
            "saliency map {}: a value is not in [0, 1] (NaN?); nothing was written",
            map.file_name()
        )));
    }
    let dir = run_dir.join("saliency");
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let path = dir.join(map.file_name());
    let text = map.to_text();
    let sums_path = dir.join(SUMS);
    let mut sums = Sums::read_or_empty(&sums_path)?;
    // Drop the entry first so a crash between the two writes is seen as damage.
    sums.remove(&map.file_name());
    sums.write(&sums_path)?;
    write_atomic(&path, text.as_bytes())?;
    sums.add(map.file_name(), text.as_bytes());
    sums.write(&sums_path)?;
    Ok(path)
}

/// Loads a map, checking it against the folder's `SHA256SUMS`.
pub fn load(path: &Path) -> Result<SaliencyMap> {
    let fail = |message: String| Error::Artifact {
        path: path.to_path_buf(),
        message,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| fail("not a file name".into()))?;
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    Sums::read_or_empty(&dir.join(SUMS))?
        .verify(name, &bytes, SUMS)
        .map_err(fail)?;
    let map: SaliencyMap = serde_json::from_slice(&bytes).map_err(|e| fail(e.to_string()))?;
    if map.schema != SCHEMA {
        return Err(fail(format!("schema {} is not {SCHEMA}", map.schema)));
    }
    let width = map.values.first().map_or(0, Vec::len);
    if width == 0 || map.values.iter().any(|r| r.len() != width) {
        return Err(fail(
            "values: rows must be non-empty and of equal length".into(),
        ));
    }
    if map
        .values
        .iter()
        .flatten()
        .any(|v| !(0.0..=1.0).contains(v))
    {
        return Err(fail("values: every value must be in [0, 1]".into()));
    }
    Ok(map)
}

/// Saliency maps averaged over the seeds that have them, one per (model, cutoff, slice):
/// rows are models in the order of their first map, columns (cutoff, slice) pairs in slice
/// order.
#[derive(Clone, Debug, PartialEq)]
pub struct SaliencyMeans {
    /// Models with at least one map.
    pub rows: Vec<String>,
    /// `through <cutoff>, on <slice>`.
    pub columns: Vec<String>,
    /// `maps[row][column]`, the mean map or none.
    pub maps: Vec<Vec<Option<Vec<Vec<f64>>>>>,
    /// The number of seeds averaged, over all maps (smallest and largest).
    pub seeds: (usize, usize),
    /// The number of images behind each seed's map (smallest and largest).
    pub images: (usize, usize),
    /// `<model> <column>` of every map that is zero everywhere: a model whose logit does
    /// not change with the image.
    pub blind: Vec<String>,
}

/// The seed-mean saliency maps of `maps` (slices named by `labels`, oldest first), or none
/// without maps. Maps of one (model, cutoff, slice) must have the same size on every seed.
pub fn seed_means(maps: &[SaliencyMap], labels: &[String]) -> Result<Option<SaliencyMeans>> {
    use std::collections::BTreeMap;
    if maps.is_empty() {
        return Ok(None);
    }
    let position = |l: &str| labels.iter().position(|x| x == l).unwrap_or(usize::MAX);
    let mut rows: Vec<String> = Vec::new();
    let mut pairs: Vec<(usize, usize, String, String)> = Vec::new();
    let mut groups: BTreeMap<(&str, &str, &str), Vec<&SaliencyMap>> = BTreeMap::new();
    for m in maps {
        if !rows.contains(&m.model) {
            rows.push(m.model.clone());
        }
        let pair = (
            position(&m.cutoff),
            position(&m.slice),
            m.cutoff.clone(),
            m.slice.clone(),
        );
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
        groups
            .entry((&m.model, &m.cutoff, &m.slice))
            .or_default()
            .push(m);
    }
    pairs.sort();
    let mut seeds = (usize::MAX, 0);
    let mut images = (usize::MAX, 0);
    let mut means = Vec::new();
    for model in &rows {
        let mut row = Vec::new();
        for (_, _, cutoff, slice) in &pairs {
            let Some(group) = groups.get(&(model.as_str(), cutoff.as_str(), slice.as_str())) else {
                row.push(None);
                continue;
            };
            seeds = (seeds.0.min(group.len()), seeds.1.max(group.len()));
            let mut sum = group[0].values.clone();
            sum.iter_mut().flatten().for_each(|v| *v = 0.0);
            for m in group {
                images = (images.0.min(m.rows.len()), images.1.max(m.rows.len()));
                let same = m.values.len() == sum.len()
                    && m.values.iter().zip(&sum).all(|(a, b)| a.len() == b.len());
                if !same {
                    return Err(Error::Invalid(format!(
                        "saliency maps of {model} through {cutoff} on {slice} differ in \
                         size between seeds"
                    )));
                }
                for (acc, v) in sum.iter_mut().flatten().zip(m.values.iter().flatten()) {
                    *acc += v;
                }
            }
            let n = group.len() as f64;
            sum.iter_mut()
                .flatten()
                .for_each(|v| *v = (*v / n).clamp(0.0, 1.0));
            row.push(Some(sum));
        }
        means.push(row);
    }
    let columns: Vec<String> = pairs
        .iter()
        .map(|(_, _, c, s)| format!("through {c}, on {s}"))
        .collect();
    let mut blind = Vec::new();
    for (model, row) in rows.iter().zip(&means) {
        for (column, map) in columns.iter().zip(row) {
            if map
                .as_ref()
                .is_some_and(|m| m.iter().flatten().all(|&v| v == 0.0))
            {
                blind.push(format!("{model} {column}"));
            }
        }
    }
    Ok(Some(SaliencyMeans {
        rows,
        columns,
        maps: means,
        seeds,
        images,
        blind,
    }))
}

#[cfg(feature = "torch")]
pub use self::torch::*;

#[cfg(feature = "torch")]
mod torch {
    use std::path::{Path, PathBuf};

    use tch::{Kind, Tensor};

    use super::{SCHEMA, SaliencyMap};
    use crate::artifacts::{RunProvenance, load_run};
    use crate::data::Targets;
    use crate::device;
    use crate::models::{Input, Model};
    use crate::preset::Preset;
    use crate::run::model_config;
    use crate::train::checkpoint::{self, CheckpointId};
    use crate::train::{self, DataTensors, TrainJob};
    use crate::{Error, Result};

    /// The mean normalised saliency `[H, W]` of `images` `[N, C, H, W]` for their
    /// `labels` `[N]` (int64).
    pub fn gradient_saliency(model: &dyn Model, images: &Tensor, labels: &Tensor) -> Tensor {
        let x = images.detach().set_requires_grad(true);
        let logits = model.forward_t(&Input::Images(x.shallow_clone()), false);
        logits
            .gather(1, &labels.unsqueeze(1), false)
            .sum(Kind::Float)
            .backward();
        let grad = x.grad().abs().amax([1].as_slice(), false); // [N, H, W]
        let n = grad.size()[0];
        let flat = grad.reshape([n, -1]);
        let min = flat.amin([1].as_slice(), true);
        let range = flat.amax([1].as_slice(), true) - &min;
        // A constant map has no salient pixel: zeros, not a division by zero. The floor
        // must be an f32 (f64::MIN_POSITIVE rounds to 0 in f32 and gave 0/0 = NaN).
        let normalised = (flat - &min) / range.clamp_min(f64::from(f32::MIN_POSITIVE));
        normalised
            .mean_dim([0].as_slice(), false, Kind::Float)
            .reshape(grad.size()[1..].to_vec())
    }

    /// What to draw: a run, a cutoff and a slice.
    #[derive(Clone, Debug)]
    pub struct Request {
        /// The run folder.
        pub run_dir: PathBuf,
        /// The preset file (default: the path recorded in `run.json`).
        pub preset: Option<PathBuf>,
        /// Label of the checkpoint's cutoff.
        pub cutoff: String,
        /// Label of the slice the images come from.
        pub slice: String,
        /// How many images to average over.
        pub count: usize,
    }

    /// Computes and saves the saliency map of a request; returns its path.
    pub fn saliency_for_run(request: &Request) -> Result<PathBuf> {
        let run = load_run(&request.run_dir)?;
        let p: &RunProvenance = &run.provenance;
        let preset_path = request
            .preset
            .clone()
            .unwrap_or_else(|| p.preset.path.clone().into());
        let loaded = Preset::load(&preset_path)?;
        if loaded.sha256 != p.preset.sha256 {
            return Err(Error::Invalid(format!(
                "{}: its content hash {} is not the {} the run was made with",
                preset_path.display(),
                loaded.sha256,
                p.preset.sha256
            )));
        }
        let base = preset_path.parent().unwrap_or(Path::new("."));
        // The run's own draw of the data and split, when its seed varied them.
        let data = loaded.preset.load_data(base, p.seed)?;
        if data.source.sha256 != p.data.sha256 {
            return Err(Error::Invalid(format!(
                "data {}: its hash {} is not the {} the run was made with",
                data.source.name, data.source.sha256, p.data.sha256
            )));
        }
        let Targets::Classes { labels, .. } = &data.targets else {
            return Err(Error::Invalid(format!(
                "saliency needs class labels, but data {} is {}",
                data.source.name,
                data.targets.task()
            )));
        };
        let plan = loaded.preset.plan(&data, p.seed)?;
        let labels_of = plan.timeline.labels();
        let find = |label: &str| {
            labels_of.iter().position(|l| l == label).ok_or_else(|| {
                Error::Invalid(format!(
                    "no slice {label:?} in this run (slices: {})",
                    labels_of.join(", ")
                ))
            })
        };
        let (i, j) = (find(&request.cutoff)?, find(&request.slice)?);
        let mut rows = loaded.preset.regime.eval_rows(&plan.splits, i, j);
        rows.truncate(request.count.max(1));
        if rows.is_empty() {
            return Err(Error::Invalid(format!(
                "cell ({}, {}) has no evaluation rows",
                request.cutoff, request.slice
            )));
        }

        // The checkpoint is loaded on the CPU: saliency is cheap and CPU results are the
        // reproducible ones.
        let spec = loaded
            .preset
            .models
            .iter()
            .find(|m| m.key == p.model)
            .ok_or_else(|| Error::Invalid(format!("model {} is not in the preset", p.model)))?;
        let config = crate::models::ModelConfig {
            positional_embedding: spec.positional_embedding,
            channels_last: spec.train.channels_last,
            ..model_config(&data)?
        };
        let id = CheckpointId::new(
            &p.preset.sha256,
            &p.data.sha256,
            &p.model,
            p.seed,
            &request.cutoff,
            &p.device,
            p.threads,
        );
        let job = TrainJob {
            model: &p.model,
            config: &config,
            train: &spec.train,
            rows: &[],
            training_seed: id.training_seed,
            device: tch::Device::Cpu,
            backbone: None,
        };
        device::set_threads(p.threads)?;
        let built = train::build(&job)?;
        let checkpoint_path = request
            .run_dir
            .join("checkpoints")
            .join(format!("{}.safetensors", request.cutoff));
        let checkpoint_sha256 = checkpoint::load(&built.vs, &id, &checkpoint_path)?.sha256;

        let tensors = DataTensors::new(&data)?;
        let Input::Images(images) = tensors.input(&rows, tch::Device::Cpu) else {
            return Err(Error::Invalid(format!(
                "saliency needs image data, but model {} reads {:?}",
                p.model,
                config.input.kind()
            )));
        };
        let targets: Vec<i64> = rows.iter().map(|&r| i64::from(labels[r])).collect();
        let map = gradient_saliency(built.model.as_ref(), &images, &Tensor::from_slice(&targets));
        let (h, w) = (map.size()[0], map.size()[1]);
        let flat = Vec::<f32>::try_from(map.reshape([-1]))
            .map_err(|e| Error::Invalid(format!("reading the saliency map: {e}")))?;
        let values = (0..h as usize)
            .map(|y| {
                (0..w as usize)
                    .map(|x| f64::from(flat[y * w as usize + x]))
                    .collect()
            })
            .collect();
        let map = SaliencyMap {
            schema: SCHEMA,
            preset: p.preset.name.clone(),
            model: p.model.clone(),
            seed: p.seed,
            cutoff: request.cutoff.clone(),
            slice: request.slice.clone(),
            rows,
            checkpoint_sha256,
            values,
        };
        super::save(&request.run_dir, &map)
    }
}
