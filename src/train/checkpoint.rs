//! Checkpoints as safetensors files: every variable of a model's `VarStore` (parameters
//! and BatchNorm running statistics) as little-endian float32, named by its path, plus one
//! metadata entry `drift` holding the JSON `{"id": CheckpointId, "final_loss": f64}`: the
//! final training loss is kept with the weights, so a run that stops between training and
//! scoring resumes with the same health record.
//!
//! The safetensors crate orders tensors by name and a single metadata entry has only one
//! order, so identical weights give identical bytes (libtorch's own `.ot` format does
//! not). The id is checked on load: a checkpoint is never reused for another preset,
//! data set, model, seed, cutoff or thread count.

use std::collections::HashMap;
use std::path::Path;

use safetensors::{Dtype, SafeTensors, tensor::TensorView};
use serde::{Deserialize, Serialize};
use tch::{Kind, Tensor, nn::VarStore};

use crate::checksum::sha256_hex;
use crate::files::write_atomic;
use crate::{Error, Result};

const METADATA_KEY: &str = "drift";

/// The `drift` metadata entry.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Metadata {
    id: CheckpointId,
    final_loss: f64,
}

/// What a checkpoint was trained for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointId {
    /// Preset content hash.
    pub preset_sha256: String,
    /// Data content hash.
    pub data_sha256: String,
    /// Model key.
    pub model: String,
    /// Run seed.
    pub seed: u64,
    /// Label of the cutoff slice.
    pub cutoff: String,
    /// The per-cutoff training seed derived from the three above.
    pub training_seed: u32,
    /// `cpu` or `cuda:N`.
    pub device: String,
    /// libtorch thread count.
    pub threads: u32,
}

impl CheckpointId {
    /// The id of a cutoff's checkpoint; the training seed is derived as
    /// [`crate::train::training_seed`] says.
    pub fn new(
        preset_sha256: &str,
        data_sha256: &str,
        model: &str,
        seed: u64,
        cutoff: &str,
        device: &str,
        threads: u32,
    ) -> Self {
        CheckpointId {
            preset_sha256: preset_sha256.into(),
            data_sha256: data_sha256.into(),
            model: model.into(),
            seed,
            cutoff: cutoff.into(),
            training_seed: super::seeds::training_seed(seed, model, cutoff),
            device: device.into(),
            threads,
        }
    }
}

fn error(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::Artifact {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

/// Writes `vs` and its final training loss to `path` atomically and returns the file's
/// SHA-256.
pub fn save(vs: &VarStore, id: &CheckpointId, final_loss: f64, path: &Path) -> Result<String> {
    save_after(vs, id, final_loss, path, |_| Ok(()))
}

/// [`save`], calling `before(sha256)` with the file's SHA-256 before the file is written:
/// what must exist whenever the checkpoint does (its training history) is written there.
pub fn save_after(
    vs: &VarStore,
    id: &CheckpointId,
    final_loss: f64,
    path: &Path,
    before: impl FnOnce(&str) -> Result<()>,
) -> Result<String> {
    let mut variables: Vec<(String, Tensor)> = vs.variables().into_iter().collect();
    variables.sort_by(|a, b| a.0.cmp(&b.0));
    let mut buffers = Vec::with_capacity(variables.len());
    for (name, tensor) in &variables {
        let t = tensor
            .to_device(tch::Device::Cpu)
            .to_kind(Kind::Float)
            .contiguous();
        let values = Vec::<f32>::try_from(t.reshape([-1]))
            .map_err(|e| error(path, format!("{name}: {e}")))?;
        let shape: Vec<usize> = t.size().iter().map(|&d| d as usize).collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        buffers.push((name.clone(), shape, bytes));
    }
    let views = buffers
        .iter()
        .map(|(name, shape, bytes)| {
            TensorView::new(Dtype::F32, shape.clone(), bytes).map(|v| (name.as_str(), v))
        })
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| error(path, e))?;
    // One entry: safetensors writes its metadata map in HashMap order, so two entries
    // would make the bytes vary from run to run.
    let entry = Metadata {
        id: id.clone(),
        final_loss,
    };
    let metadata = HashMap::from([(
        METADATA_KEY.to_string(),
        serde_json::to_string(&entry).expect("checkpoint metadata serialises"),
    )]);
    let bytes = safetensors::serialize(views, Some(metadata)).map_err(|e| error(path, e))?;
    let sha256 = sha256_hex(&bytes);
    before(&sha256)?;
    write_atomic(path, &bytes)?;
    Ok(sha256)
}

/// Reads the `drift` metadata of the checkpoint bytes read from `path`.
fn read_metadata(bytes: &[u8], path: &Path) -> Result<Metadata> {
    let (_, metadata) = SafeTensors::read_metadata(bytes)
        .map_err(|e| error(path, format!("not a readable safetensors file: {e}")))?;
    let json = metadata
        .metadata()
        .as_ref()
        .and_then(|m| m.get(METADATA_KEY))
        .ok_or_else(|| error(path, "no drift metadata: not a drift checkpoint"))?;
    serde_json::from_str(json).map_err(|e| {
        error(
            path,
            format!(
                "drift metadata: {e} (a checkpoint of an older drift has no final loss; \
                 delete it to retrain)"
            ),
        )
    })
}

/// A loaded checkpoint's file hash and final training loss.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    /// SHA-256 of the file.
    pub sha256: String,
    /// The final training loss saved with the weights.
    pub final_loss: f64,
}

/// Loads the checkpoint at `path` into `vs`, after checking that it was made for `id` and
/// holds exactly the variables of `vs` with their shapes.
pub fn load(vs: &VarStore, id: &CheckpointId, path: &Path) -> Result<Loaded> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let Metadata {
        id: found,
        final_loss,
    } = read_metadata(&bytes, path)?;
    if &found != id {
        return Err(error(
            path,
            format!(
                "made for {}, not for {}",
                serde_json::to_string(&found).expect("ids serialise"),
                serde_json::to_string(id).expect("ids serialise")
            ),
        ));
    }
    let file = SafeTensors::deserialize(&bytes)
        .map_err(|e| error(path, format!("not a readable safetensors file: {e}")))?;
    let mut variables = vs.variables();
    if file.len() != variables.len() {
        return Err(error(
            path,
            format!(
                "{} tensors, but the model has {}",
                file.len(),
                variables.len()
            ),
        ));
    }
    tch::no_grad(|| -> Result<()> {
        for (name, view) in file.tensors() {
            let target = variables
                .get_mut(&name)
                .ok_or_else(|| error(path, format!("{name}: not a variable of the model")))?;
            let shape: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
            if view.dtype() != Dtype::F32 || shape != target.size() {
                return Err(error(
                    path,
                    format!(
                        "{name}: {:?} {shape:?}, but the model has F32 {:?}",
                        view.dtype(),
                        target.size()
                    ),
                ));
            }
            let values: Vec<f32> = view
                .data()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("chunks of 4")))
                .collect();
            let source = Tensor::from_slice(&values)
                .reshape(&shape)
                .to_kind(target.kind())
                .to_device(target.device());
            target.copy_(&source);
        }
        Ok(())
    })?;
    Ok(Loaded {
        sha256: sha256_hex(&bytes),
        final_loss,
    })
}
