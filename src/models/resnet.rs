//! Small ResNets of BasicBlocks (He et al. 2016), laid out like torchvision's.
//!
//! Stem Conv3x3 (no bias) + BN + ReLU to the first stage's width, at full resolution. Each
//! stage stacks BasicBlocks (`relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x))`, 3x3
//! convs without bias); the first block of a stage that changes the width has stride 2 and
//! a 1x1 conv (no bias) + BN shortcut, every other shortcut is the identity. Then global
//! average pooling and one Linear: `[B, C, H, W]` -> `[B, c_last]` -> `[B, outputs]`.
//!
//! Parameters: `conv1`, `bn1`, `layer{s}.{b}.{conv1,bn1,conv2,bn2,downsample.0,downsample.1}`
//! (stages counted from 1), `fc`.

use tch::{Tensor, nn, nn::Module, nn::ModuleT};

use super::config::ModelConfig;
use super::layers;
use super::model::{Input, Model};
use crate::Result;

/// Stage widths and depths of a ResNet.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    /// `(channels, blocks)` per stage; the stem has the first stage's channels.
    pub stages: &'static [(i64, usize)],
}

/// `resnet_s`: 97,940 parameters at 3x32x32 -> 2.
pub const S: Size = Size {
    stages: &[(18, 1), (36, 1), (72, 1)],
};
/// `resnet_m`: 400,162 parameters.
pub const M: Size = Size {
    stages: &[(32, 2), (64, 2), (128, 1)],
};
/// `resnet_l`: 2,125,818 parameters.
pub const L: Size = Size {
    stages: &[(56, 2), (112, 2), (224, 2)],
};

#[derive(Debug)]
struct BasicBlock {
    conv1: nn::Conv2D,
    bn1: nn::BatchNorm,
    conv2: nn::Conv2D,
    bn2: nn::BatchNorm,
    downsample: Option<(nn::Conv2D, nn::BatchNorm)>,
}

impl BasicBlock {
    fn new(path: nn::Path, inputs: i64, channels: i64) -> Self {
        let stride = if inputs == channels { 1 } else { 2 };
        let downsample = (inputs != channels).then(|| {
            let down = &path / "downsample";
            (
                layers::conv2d(&down / 0, inputs, channels, 1, stride, 0, false),
                layers::batch_norm2d(&down / 1, channels),
            )
        });
        BasicBlock {
            conv1: layers::conv2d(&path / "conv1", inputs, channels, 3, stride, 1, false),
            bn1: layers::batch_norm2d(&path / "bn1", channels),
            conv2: layers::conv2d(&path / "conv2", channels, channels, 3, 1, 1, false),
            bn2: layers::batch_norm2d(&path / "bn2", channels),
            downsample,
        }
    }

    fn forward_t(&self, x: &Tensor, train: bool) -> Tensor {
        let y = self.bn1.forward_t(&self.conv1.forward(x), train).relu();
        let y = self.bn2.forward_t(&self.conv2.forward(&y), train);
        let shortcut = match &self.downsample {
            Some((conv, bn)) => bn.forward_t(&conv.forward(x), train),
            None => x.shallow_clone(),
        };
        (y + shortcut).relu()
    }
}

/// A ResNet for small images.
#[derive(Debug)]
pub struct ResNet {
    conv1: nn::Conv2D,
    bn1: nn::BatchNorm,
    blocks: Vec<BasicBlock>,
    fc: nn::Linear,
    /// [`ModelConfig::channels_last`].
    channels_last: bool,
}

impl ResNet {
    /// Creates the ResNet under `path`.
    pub fn new(path: &nn::Path, size: &Size, config: &ModelConfig) -> Result<Self> {
        let (image_channels, _, _) = config.image_shape();
        let mut inputs = size.stages[0].0;
        let conv1 = layers::conv2d(path / "conv1", image_channels, inputs, 3, 1, 1, false);
        let bn1 = layers::batch_norm2d(path / "bn1", inputs);
        let mut blocks = Vec::new();
        for (s, &(channels, depth)) in size.stages.iter().enumerate() {
            let stage = path / format!("layer{}", s + 1);
            for b in 0..depth {
                blocks.push(BasicBlock::new(&stage / b, inputs, channels));
                inputs = channels;
            }
        }
        let fc = layers::linear(path / "fc", inputs, config.outputs);
        Ok(ResNet {
            conv1,
            bn1,
            blocks,
            fc,
            channels_last: config.channels_last,
        })
    }
}

impl Model for ResNet {
    fn forward_t(&self, input: &Input, train: bool) -> Tensor {
        let x = self
            .conv1
            .forward(&layers::channels_last(input.images(), self.channels_last));
        let x = self.bn1.forward_t(&x, train).relu();
        let x = self
            .blocks
            .iter()
            .fold(x, |x, block| block.forward_t(&x, train));
        self.fc
            .forward(&x.mean_dim([2i64, 3].as_slice(), false, x.kind()))
    }
}
