//! ConvNeXt (Liu et al., 2022) as timm's `convnext_*` computes it: a 4x4 stride-4 patch
//! stem with a channel LayerNorm, four stages (a LayerNorm and 2x2 stride-2 convolution
//! between them) of blocks `x + gamma * MLP(LN(dwconv7x7(x)))`, then the average over
//! the map, LayerNorm-ed, as the feature (timm's `NormMlpClassifierHead` before its
//! classifier).
//!
//! Depths and widths are read off the weights.

use tch::Tensor;

use super::conv::{Conv2d, ConvSize, LayerNorm2d, Padding, global_average};
use super::model::ImageModel;
use crate::encoders::hub::Params;
use crate::encoders::layers::{LayerNorm, Linear};

const EPS: f64 = 1e-6;

#[derive(Debug)]
struct Block {
    dw: Conv2d,
    norm: LayerNorm,
    fc1: Linear,
    fc2: Linear,
    gamma: Option<Tensor>,
}

impl Block {
    fn forward(&self, x: &Tensor) -> Tensor {
        let y = self.dw.forward(x).permute([0, 2, 3, 1]);
        let y = self
            .fc2
            .forward(&self.fc1.forward(&self.norm.forward(&y)).gelu("none"));
        let y = y.permute([0, 3, 1, 2]);
        let y = match &self.gamma {
            Some(g) => y * g.reshape([1, -1, 1, 1]),
            None => y,
        };
        y + x
    }
}

#[derive(Debug)]
struct Stage {
    downsample: Option<(LayerNorm2d, Conv2d)>,
    blocks: Vec<Block>,
}

/// A ConvNeXt.
#[derive(Debug)]
pub struct ConvNext {
    stem: (Conv2d, LayerNorm2d),
    stages: Vec<Stage>,
    head_norm: LayerNorm,
    fc: Option<Linear>,
    features: i64,
}

/// Declares a ConvNeXt under `p`, sized by its weights.
pub fn declare(p: &Params) -> Result<ConvNext, String> {
    let stem_shape = p.shape_of("stem.0.weight", 4)?;
    let (mut channels, patch) = (stem_shape[0], stem_shape[2]);
    let stem = (
        Conv2d::new(
            p / "stem" / 0,
            ConvSize::dense(3, channels, patch, patch),
            Padding::Symmetric(0),
            true,
        ),
        LayerNorm2d::new(p / "stem" / 1, channels, EPS),
    );
    let mut stages = Vec::new();
    for s in 0..4 {
        let sp = p / "stages" / s;
        let downsample = match sp.shape("downsample.1.weight") {
            Some(shape) if shape.len() == 4 => {
                let out = shape[0];
                let down = (
                    LayerNorm2d::new(&sp / "downsample" / 0, channels, EPS),
                    Conv2d::new(
                        &sp / "downsample" / 1,
                        ConvSize::dense(channels, out, shape[2], shape[2]),
                        Padding::Symmetric(0),
                        true,
                    ),
                );
                channels = out;
                Some(down)
            }
            _ if s > 0 => {
                return Err(format!("stages.{s}.downsample.1.weight: missing"));
            }
            _ => None,
        };
        let mut blocks = Vec::new();
        let mut j = 0;
        while sp.has(&format!("blocks.{j}.conv_dw.weight")) {
            let b = &sp / "blocks" / j;
            let hidden = match b.shape("mlp.fc1.weight") {
                Some(shape) if shape.len() == 2 => shape[0],
                _ => return Err(format!("stages.{s}.blocks.{j}.mlp.fc1.weight: missing")),
            };
            let kernel = b.shape_of("conv_dw.weight", 4)?[2];
            blocks.push(Block {
                dw: Conv2d::new(
                    &b / "conv_dw",
                    ConvSize::depthwise(channels, kernel, 1),
                    Padding::Symmetric(kernel / 2),
                    true,
                ),
                norm: LayerNorm::new(&b / "norm", channels, EPS),
                fc1: Linear::new(&b / "mlp" / "fc1", channels, hidden),
                fc2: Linear::new(&b / "mlp" / "fc2", hidden, channels),
                gamma: b.has("gamma").then(|| b.tensor("gamma", &[channels])),
            });
            j += 1;
        }
        if j == 0 {
            return Err(format!("stages.{s}.blocks.0.conv_dw.weight: missing"));
        }
        stages.push(Stage { downsample, blocks });
    }
    if p.has("head.pre_logits.fc.weight") {
        return Err("head.pre_logits.fc.weight: a hidden head layer, not read".into());
    }
    let head_norm = LayerNorm::new(p / "head" / "norm", channels, EPS);
    let fc = match p.shape("head.fc.weight") {
        Some(shape) if shape.len() == 2 => Some(Linear::new(p / "head" / "fc", channels, shape[0])),
        _ => None,
    };
    Ok(ConvNext {
        stem,
        stages,
        head_norm,
        fc,
        features: channels,
    })
}

impl ImageModel for ConvNext {
    fn features(&self, pixels: &Tensor) -> Tensor {
        let mut x = self.stem.1.forward(&self.stem.0.forward(pixels));
        for stage in &self.stages {
            if let Some((norm, conv)) = &stage.downsample {
                x = conv.forward(&norm.forward(&x));
            }
            for block in &stage.blocks {
                x = block.forward(&x);
            }
        }
        self.head_norm.forward(&global_average(&x))
    }

    fn dim(&self) -> i64 {
        self.features
    }

    fn classify(&self, features: &Tensor) -> Option<Tensor> {
        self.fc.as_ref().map(|fc| fc.forward(features))
    }
}
