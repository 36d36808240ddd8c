//! The table of image architectures drift reads ([`ARCHITECTURES`]): for each family, the
//! folder layout and names that pick it, the smallest input it computes on, and how its
//! model is declared from the folder's configuration.

use super::config::{ImageConfig, Layout};
use super::model::ImageModel;
use super::{clip, convnext, dinov2, dinov3, efficientnet_lite, eva, resnet, siglip, vit};
use crate::encoders::hub::Params;

/// One row of [`ARCHITECTURES`].
pub struct ImageArchitecture {
    /// The family, as papers name it.
    pub family: &'static str,
    /// Which reference's folders it reads.
    pub layout: Layout,
    /// The names it reads (timm's `architecture`, transformers' `model_type`), as a pattern
    /// for messages.
    pub names: &'static str,
    /// The smallest input it computes on (convolutions without padding shrink the map).
    pub min_size: i64,
    matches: fn(&str) -> bool,
    declare: Declare,
}

/// Declares a family's model under the parameters, from its configuration.
type Declare = fn(&Params, &ImageConfig) -> Result<Box<dyn ImageModel>, String>;

impl ImageArchitecture {
    /// The family's model under `p`, sized by its weights and `config`.
    pub fn declare(&self, p: &Params, config: &ImageConfig) -> Result<Box<dyn ImageModel>, String> {
        (self.declare)(p, config)
    }
}

fn is_resnet(name: &str) -> bool {
    name.strip_prefix("resnet")
        .is_some_and(|depth| !depth.is_empty() && depth.bytes().all(|b| b.is_ascii_digit()))
}

fn is_efficientnet_lite(name: &str) -> bool {
    let base = name.strip_prefix("tf_").unwrap_or(name);
    base.strip_prefix("efficientnet_lite")
        .is_some_and(|n| n.len() == 1 && n.as_bytes()[0].is_ascii_digit())
}

/// A timm ViT's heads: `model_args.num_heads`, else the name's size word.
fn timm_heads(config: &ImageConfig) -> Result<i64, String> {
    config
        .int("num_heads")
        .or_else(|| vit::heads_by_name(&config.architecture))
        .ok_or_else(|| {
            format!(
                "{}: the number of heads is not in model_args.num_heads nor in the name",
                config.architecture
            )
        })
}

/// A timm ViT's pooling, `default` when `global_pool` does not say.
fn timm_pool(config: &ImageConfig, default: &str) -> Result<vit::Pool, String> {
    match config.global_pool.as_deref().unwrap_or(default) {
        "token" => Ok(vit::Pool::Token),
        "avg" => Ok(vit::Pool::Average),
        other => Err(format!(
            "global_pool {other:?} is not supported for a {} (supported: token, avg)",
            config.architecture
        )),
    }
}

fn declare_vit(p: &Params, config: &ImageConfig) -> Result<Box<dyn ImageModel>, String> {
    let size = config.preprocess.size;
    let (heads, pool) = (timm_heads(config)?, timm_pool(config, "token")?);
    Ok(Box::new(vit::declare(p, heads, pool, size, size)?))
}

fn declare_eva(p: &Params, config: &ImageConfig) -> Result<Box<dyn ImageModel>, String> {
    // timm's `eva02_*` entry points all set `ref_feat_shape=(16, 16)` (224 / 14).
    let reference = match config.args.get("ref_feat_shape") {
        None => [16, 16],
        Some(value) => match serde_json::from_value::<[i64; 2]>(value.clone()) {
            Ok(shape) if shape.iter().all(|&s| s > 0) => shape,
            _ => return Err(format!("model_args.ref_feat_shape {value}: not two sizes")),
        },
    };
    let temperature = config.float("rope_temperature").unwrap_or(10_000.0);
    let (heads, pool) = (timm_heads(config)?, timm_pool(config, "avg")?);
    let size = config.preprocess.size;
    eva::declare(p, heads, pool, size, reference, temperature)
}

fn declare_convnext(p: &Params, _: &ImageConfig) -> Result<Box<dyn ImageModel>, String> {
    Ok(Box::new(convnext::declare(p)?))
}

fn declare_resnet(p: &Params, _: &ImageConfig) -> Result<Box<dyn ImageModel>, String> {
    Ok(Box::new(resnet::declare(p)?))
}

fn declare_efficientnet_lite(
    p: &Params,
    config: &ImageConfig,
) -> Result<Box<dyn ImageModel>, String> {
    Ok(Box::new(efficientnet_lite::declare(
        p,
        &config.architecture,
    )?))
}

fn declare_clip(p: &Params, config: &ImageConfig) -> Result<Box<dyn ImageModel>, String> {
    Ok(Box::new(clip::declare(p, config, config.preprocess.size)?))
}

fn declare_siglip(p: &Params, config: &ImageConfig) -> Result<Box<dyn ImageModel>, String> {
    Ok(Box::new(siglip::declare(
        p,
        config,
        config.preprocess.size,
    )?))
}

fn declare_dinov2(p: &Params, config: &ImageConfig) -> Result<Box<dyn ImageModel>, String> {
    Ok(Box::new(dinov2::declare(
        p,
        config,
        config.preprocess.size,
    )?))
}

fn declare_dinov3(p: &Params, config: &ImageConfig) -> Result<Box<dyn ImageModel>, String> {
    Ok(Box::new(dinov3::declare(
        p,
        config,
        config.preprocess.size,
    )?))
}

/// Every image architecture drift reads.
pub const ARCHITECTURES: &[ImageArchitecture] = &[
    ImageArchitecture {
        family: "ViT",
        layout: Layout::Timm,
        min_size: 1,
        names: "vit_*",
        matches: |name| name.starts_with("vit_"),
        declare: declare_vit,
    },
    ImageArchitecture {
        family: "EVA02",
        layout: Layout::Timm,
        min_size: 1,
        names: "eva02_*",
        matches: |name| name.starts_with("eva02_"),
        declare: declare_eva,
    },
    ImageArchitecture {
        family: "ConvNeXt",
        layout: Layout::Timm,
        min_size: 32,
        names: "convnext_*",
        matches: |name| name.starts_with("convnext_"),
        declare: declare_convnext,
    },
    ImageArchitecture {
        family: "ResNet",
        layout: Layout::Timm,
        min_size: 1,
        names: "resnet<depth>",
        matches: is_resnet,
        declare: declare_resnet,
    },
    ImageArchitecture {
        family: "EfficientNet-Lite",
        layout: Layout::Timm,
        min_size: 1,
        names: "tf_efficientnet_lite<n>, efficientnet_lite<n>",
        matches: is_efficientnet_lite,
        declare: declare_efficientnet_lite,
    },
    ImageArchitecture {
        family: "CLIP",
        layout: Layout::Transformers,
        min_size: 1,
        names: "clip, clip_vision_model",
        matches: |name| matches!(name, "clip" | "clip_vision_model"),
        declare: declare_clip,
    },
    ImageArchitecture {
        family: "SigLIP",
        layout: Layout::Transformers,
        min_size: 1,
        names: "siglip, siglip_vision_model",
        matches: |name| matches!(name, "siglip" | "siglip_vision_model"),
        declare: declare_siglip,
    },
    ImageArchitecture {
        family: "DINOv2",
        layout: Layout::Transformers,
        min_size: 1,
        names: "dinov2",
        matches: |name| name == "dinov2",
        declare: declare_dinov2,
    },
    ImageArchitecture {
        family: "DINOv3",
        layout: Layout::Transformers,
        min_size: 1,
        names: "dinov3_vit",
        matches: |name| name == "dinov3_vit",
        declare: declare_dinov3,
    },
];

/// The row of `name` in `layout`, or an error listing the supported ones.
pub fn architecture(name: &str, layout: Layout) -> Result<&'static ImageArchitecture, String> {
    let rows = || ARCHITECTURES.iter().filter(|a| a.layout == layout);
    rows().find(|a| (a.matches)(name)).ok_or_else(|| {
        let (field, known) = match layout {
            Layout::Timm => ("architecture", rows().map(|a| a.names).collect::<Vec<_>>()),
            Layout::Transformers => ("model_type", rows().map(|a| a.names).collect()),
        };
        format!(
            "{field} {name:?} is not supported (supported: {})",
            known.join(", ")
        )
    })
}
