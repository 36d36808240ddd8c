//! What an image folder's configuration says, read into one [`ImageConfig`] whichever
//! reference wrote it:
//!
//! - timm's `save_for_hf`: `config.json` with `architecture`, `model_args`, `global_pool`
//!   and `pretrained_cfg` (input size, interpolation, `crop_pct`, mean, std);
//! - transformers' `save_pretrained`: `config.json` with `model_type` (a whole CLIP or
//!   SigLIP model nests its tower's settings under `vision_config`) and the image
//!   processor's `preprocessor_config.json` (`size` as `shortest_edge` or `height` /
//!   `width`, `crop_size`, `do_center_crop`, `resample` as PIL's code, `image_mean`,
//!   `image_std`).

use serde::Deserialize;
use serde_json::{Map, Value};

use super::preprocess::{Interpolation, Preprocess, Resize};

/// Which reference laid the folder out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// timm: weights under timm's names.
    Timm,
    /// transformers: weights under the model's names, `vision_model.` first in a whole
    /// CLIP or SigLIP model.
    Transformers,
}

/// An image model's configuration, from either layout.
#[derive(Clone, Debug)]
pub struct ImageConfig {
    /// timm's model name (`vit_small_patch16_224`, ...) or transformers' `model_type`
    /// (`clip_vision_model`, `dinov2`, ...).
    pub architecture: String,
    /// Which reference wrote it.
    pub layout: Layout,
    /// The feature pooling (`token`, `avg`, ...), when timm's `global_pool` gives one.
    pub global_pool: Option<String>,
    /// timm's `model_args`, or transformers' (vision) configuration.
    pub args: Map<String, Value>,
    /// How the model's inputs are prepared.
    pub preprocess: Preprocess,
}

/// timm's `config.json`, the fields drift reads.
#[derive(Deserialize)]
struct TimmConfig {
    architecture: String,
    #[serde(default)]
    global_pool: Option<String>,
    #[serde(default)]
    model_args: Map<String, Value>,
    pretrained_cfg: PretrainedCfg,
}

/// timm's `pretrained_cfg`, the fields of preprocessing.
#[derive(Deserialize)]
struct PretrainedCfg {
    input_size: [i64; 3],
    interpolation: String,
    crop_pct: f64,
    mean: [f64; 3],
    std: [f64; 3],
}

/// transformers' `preprocessor_config.json`, the fields drift reads.
#[derive(Deserialize)]
struct Processor {
    #[serde(default = "yes")]
    do_resize: bool,
    size: Option<Size>,
    #[serde(default)]
    do_center_crop: bool,
    crop_size: Option<Size>,
    #[serde(default = "bicubic_code")]
    resample: i64,
    #[serde(default = "yes")]
    do_rescale: bool,
    rescale_factor: Option<f64>,
    #[serde(default = "yes")]
    do_normalize: bool,
    image_mean: Option<[f64; 3]>,
    image_std: Option<[f64; 3]>,
}

fn yes() -> bool {
    true
}

fn bicubic_code() -> i64 {
    3
}

/// A processor's `size` or `crop_size`: a number, `{"shortest_edge": n}` or `{"height":
/// h, "width": w}`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Size {
    Side(i64),
    Edges {
        shortest_edge: Option<i64>,
        height: Option<i64>,
        width: Option<i64>,
    },
}

impl Size {
    /// The resize it asks for, or why it is not read.
    fn resize(&self, field: &str) -> Result<Resize, String> {
        match *self {
            Size::Side(n) => Ok(Resize::Square(n)),
            Size::Edges {
                shortest_edge: Some(n),
                height: None,
                width: None,
            } => Ok(Resize::ShorterSide(n)),
            Size::Edges {
                shortest_edge: None,
                height: Some(h),
                width: Some(w),
            } if h == w => Ok(Resize::Square(h)),
            _ => Err(format!(
                "{field}: only a square (height = width) or a shortest_edge is read"
            )),
        }
    }
}

impl ImageConfig {
    /// timm's `config.json` `bytes`, checked.
    pub fn timm(bytes: &[u8]) -> Result<ImageConfig, String> {
        let config: TimmConfig = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        let cfg = &config.pretrained_cfg;
        let [channels, h, w] = cfg.input_size;
        if channels != 3 || h != w {
            return Err(format!(
                "pretrained_cfg.input_size {:?}: only square three-channel inputs are read",
                cfg.input_size
            ));
        }
        if !(cfg.crop_pct > 0.0 && cfg.crop_pct <= 1.0) {
            return Err(format!(
                "pretrained_cfg.crop_pct {} is outside (0, 1]",
                cfg.crop_pct
            ));
        }
        let preprocess = Preprocess {
            size: h,
            // timm's evaluation transform: `floor(size / crop_pct)`, then the crop.
            resize: Resize::ShorterSide((h as f64 / cfg.crop_pct).floor() as i64),
            interpolation: Interpolation::from_name(&cfg.interpolation)
                .map_err(|e| format!("pretrained_cfg.{e}"))?,
            mean: cfg.mean,
            std: cfg.std,
        };
        preprocess
            .check()
            .map_err(|e| format!("pretrained_cfg: {e}"))?;
        Ok(ImageConfig {
            architecture: config.architecture,
            layout: Layout::Timm,
            global_pool: config.global_pool,
            args: config.model_args,
            preprocess,
        })
    }

    /// transformers' `config.json` `config` and `preprocessor_config.json` `processor`,
    /// checked; errors say which file (`config: ...`, `preprocessor: ...`).
    pub fn transformers(config: &[u8], processor: &[u8]) -> Result<ImageConfig, String> {
        let config: Map<String, Value> =
            serde_json::from_slice(config).map_err(|e| format!("config: {e}"))?;
        let model_type = match config.get("model_type") {
            Some(Value::String(t)) => t.clone(),
            _ => return Err("config: model_type: missing".into()),
        };
        // A whole CLIP or SigLIP model: its tower's settings.
        let args = match config.get("vision_config") {
            Some(Value::Object(vision)) => vision.clone(),
            Some(_) => return Err("config: vision_config: not an object".into()),
            None => config,
        };
        let processor: Processor =
            serde_json::from_slice(processor).map_err(|e| format!("preprocessor: {e}"))?;
        let preprocess = processor
            .preprocess()
            .map_err(|e| format!("preprocessor: {e}"))?;
        Ok(ImageConfig {
            architecture: model_type,
            layout: Layout::Transformers,
            global_pool: None,
            args,
            preprocess,
        })
    }

    /// `args.<key>` as an integer.
    pub fn int(&self, key: &str) -> Option<i64> {
        self.args.get(key)?.as_i64()
    }

    /// `args.<key>` as a number.
    pub fn float(&self, key: &str) -> Option<f64> {
        self.args.get(key)?.as_f64()
    }

    /// `args.<key>` as a string.
    pub fn string(&self, key: &str) -> Option<&str> {
        self.args.get(key)?.as_str()
    }

    /// `args.<key>` as an integer, or an error naming it.
    pub fn required(&self, key: &str) -> Result<i64, String> {
        self.int(key)
            .ok_or_else(|| format!("{key}: missing or not an integer"))
    }
}

impl Processor {
    fn preprocess(&self) -> Result<Preprocess, String> {
        if !self.do_resize {
            return Err("do_resize false: images of one size are not assumed".into());
        }
        let resize = self.size.as_ref().ok_or("size: missing")?.resize("size")?;
        let size = match (&self.crop_size, self.do_center_crop) {
            (Some(crop), true) => match crop.resize("crop_size")? {
                Resize::Square(side) => side,
                Resize::ShorterSide(_) => {
                    return Err("crop_size: a crop is a height and a width".into());
                }
            },
            (None, true) => return Err("do_center_crop without crop_size".into()),
            (_, false) => match resize {
                Resize::Square(side) => side,
                Resize::ShorterSide(_) => {
                    return Err(
                        "size: a shortest_edge without a centre crop gives inputs of many \
                         sizes"
                            .into(),
                    );
                }
            },
        };
        let interpolation = match self.resample {
            2 => Interpolation::Bilinear,
            3 => Interpolation::Bicubic,
            other => {
                return Err(format!(
                    "resample {other} is not supported (supported: 2 bilinear, 3 bicubic)"
                ));
            }
        };
        let rescaled = self
            .rescale_factor
            .is_none_or(|f| (f - 1.0 / 255.0).abs() < 1e-9);
        if !self.do_rescale || !rescaled {
            return Err("only the rescale of 8-bit pixels by 1/255 is read".into());
        }
        let (mean, std) = if self.do_normalize {
            (
                self.image_mean.ok_or("image_mean: missing")?,
                self.image_std.ok_or("image_std: missing")?,
            )
        } else {
            ([0.0; 3], [1.0; 3])
        };
        let preprocess = Preprocess {
            size,
            resize,
            interpolation,
            mean,
            std,
        };
        preprocess.check()?;
        Ok(preprocess)
    }
}
