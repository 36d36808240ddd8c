//! ResNet (He et al., 2016) as timm's `resnet18`..`resnet152` compute it (ResNet-50
//! "v1.5": the stride on the 3x3 convolution): a 7x7 stride-2 stem and a 3x3 max pool,
//! four stages of basic or bottleneck blocks (strides 1, 2, 2, 2) with a 1x1 projection
//! shortcut where the shape changes, and the average over the map as the feature.
//!
//! Depths, widths and the block kind are read off the weights (`layer1.0.conv3` is there
//! for bottlenecks); timm's other stems (`resnet50d`'s deep stem, ...) are not read.

use tch::Tensor;

use super::conv::{BatchNorm, Conv2d, ConvSize, Padding, global_average};
use super::model::ImageModel;
use crate::encoders::hub::Params;
use crate::encoders::layers::Linear;

const EPS: f64 = 1e-5;

#[derive(Debug)]
struct ConvBn {
    conv: Conv2d,
    bn: BatchNorm,
}

impl ConvBn {
    fn new(conv: Params, bn: Params, size: ConvSize) -> ConvBn {
        ConvBn {
            conv: Conv2d::new(conv, size, Padding::Symmetric(size.kernel / 2), false),
            bn: BatchNorm::new(bn, size.outputs, EPS),
        }
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        self.bn.forward(&self.conv.forward(x))
    }
}

#[derive(Debug)]
struct Block {
    /// conv1/bn1, conv2/bn2 and, in a bottleneck, conv3/bn3.
    convs: Vec<ConvBn>,
    downsample: Option<ConvBn>,
}

impl Block {
    fn forward(&self, x: &Tensor) -> Tensor {
        let mut y = x.shallow_clone();
        let last = self.convs.len() - 1;
        for (i, c) in self.convs.iter().enumerate() {
            y = c.forward(&y);
            if i < last {
                y = y.relu();
            }
        }
        let shortcut = match &self.downsample {
            Some(d) => d.forward(x),
            None => x.shallow_clone(),
        };
        (y + shortcut).relu()
    }
}

/// A ResNet, as timm computes it.
#[derive(Debug)]
pub struct TimmResNet {
    stem: ConvBn,
    blocks: Vec<Block>,
    fc: Option<Linear>,
    features: i64,
}

/// Declares a ResNet under `p`, sized by its weights.
pub fn declare(p: &Params) -> Result<TimmResNet, String> {
    if p.has("conv1.0.weight") {
        return Err(
            "conv1.0.weight: a deep stem (timm's resnet*c/d/e/s variants), not read".into(),
        );
    }
    let stem_out = p.shape_of("conv1.weight", 4)?[0];
    let stem = ConvBn::new(p / "conv1", p / "bn1", ConvSize::dense(3, stem_out, 7, 2));
    let bottleneck = p.has("layer1.0.conv3.weight");
    let mut channels = stem_out;
    let mut blocks = Vec::new();
    for (stage, stride) in [(1usize, 1i64), (2, 2), (3, 2), (4, 2)] {
        let mut i = 0;
        while p.has(&format!("layer{stage}.{i}.conv1.weight")) {
            let b = p / format!("layer{stage}") / i;
            let stride = if i == 0 { stride } else { 1 };
            let width = b.shape_of("conv1.weight", 4)?[0];
            let mut convs = Vec::new();
            let out = if bottleneck {
                let out = b.shape_of("conv3.weight", 4)?[0];
                convs.push(ConvBn::new(
                    &b / "conv1",
                    &b / "bn1",
                    ConvSize::dense(channels, width, 1, 1),
                ));
                convs.push(ConvBn::new(
                    &b / "conv2",
                    &b / "bn2",
                    ConvSize::dense(width, width, 3, stride),
                ));
                convs.push(ConvBn::new(
                    &b / "conv3",
                    &b / "bn3",
                    ConvSize::dense(width, out, 1, 1),
                ));
                out
            } else {
                convs.push(ConvBn::new(
                    &b / "conv1",
                    &b / "bn1",
                    ConvSize::dense(channels, width, 3, stride),
                ));
                convs.push(ConvBn::new(
                    &b / "conv2",
                    &b / "bn2",
                    ConvSize::dense(width, width, 3, 1),
                ));
                width
            };
            let downsample = b.has("downsample.0.weight").then(|| {
                ConvBn::new(
                    &b / "downsample" / 0,
                    &b / "downsample" / 1,
                    ConvSize::dense(channels, out, 1, stride),
                )
            });
            if downsample.is_none() && (stride != 1 || channels != out) {
                return Err(format!(
                    "layer{stage}.{i}.downsample.0.weight: missing (the block changes the shape)"
                ));
            }
            blocks.push(Block { convs, downsample });
            channels = out;
            i += 1;
        }
        if i == 0 {
            return Err(format!("layer{stage}.0.conv1.weight: missing"));
        }
    }
    let fc = match p.shape("fc.weight") {
        Some(shape) if shape.len() == 2 => Some(Linear::new(p / "fc", channels, shape[0])),
        _ => None,
    };
    Ok(TimmResNet {
        stem,
        blocks,
        fc,
        features: channels,
    })
}

impl ImageModel for TimmResNet {
    fn features(&self, pixels: &Tensor) -> Tensor {
        let x = self.stem.forward(pixels).relu();
        let mut x = x.max_pool2d([3, 3], [2, 2], [1, 1], [1, 1], false);
        for block in &self.blocks {
            x = block.forward(&x);
        }
        global_average(&x)
    }

    fn dim(&self) -> i64 {
        self.features
    }

    fn classify(&self, features: &Tensor) -> Option<Tensor> {
        self.fc.as_ref().map(|fc| fc.forward(features))
    }
}
