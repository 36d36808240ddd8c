//! Plain CNNs: per block Conv3x3 (padding 1, bias) + BatchNorm2d + ReLU + MaxPool2d(2), then
//! global average pooling and one Linear.
//!
//! `[B, C, H, W]` -> `[B, c_n, H / 2^n, W / 2^n]` after `n` blocks -> mean over space
//! `[B, c_n]` -> `[B, outputs]`. Parameters: `blocks.{i}.conv`, `blocks.{i}.bn`, `head`.

use tch::{Tensor, nn, nn::Module, nn::ModuleT};

use super::config::ModelConfig;
use super::layers;
use super::model::{Input, Model};
use crate::{Error, Result};

/// Output channels of each block of a CNN.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    /// One block per entry.
    pub channels: &'static [i64],
}

/// `cnn_s`: 93,954 parameters at 3x32x32 -> 2.
pub const S: Size = Size {
    channels: &[32, 64, 128],
};
/// `cnn_m`: 542,402 parameters.
pub const M: Size = Size {
    channels: &[48, 96, 192, 192],
};
/// `cnn_l`: 2,144,514 parameters.
pub const L: Size = Size {
    channels: &[64, 128, 256, 256, 512],
};

#[derive(Debug)]
struct Block {
    conv: nn::Conv2D,
    bn: nn::BatchNorm,
}

/// A stack of conv blocks with a linear head.
#[derive(Debug)]
pub struct Cnn {
    blocks: Vec<Block>,
    head: nn::Linear,
    /// [`ModelConfig::channels_last`].
    channels_last: bool,
}

impl Cnn {
    /// Creates the CNN under `path`; every pooling must leave at least one pixel.
    pub fn new(path: &nn::Path, size: &Size, config: &ModelConfig) -> Result<Self> {
        let (mut inputs, height, width) = config.image_shape();
        let smallest = 1i64 << size.channels.len();
        if height.min(width) < smallest {
            return Err(Error::Invalid(format!(
                "{} poolings need images of at least {smallest}x{smallest}, got {height}x{width}",
                size.channels.len()
            )));
        }
        let mut blocks = Vec::new();
        for (i, &channels) in size.channels.iter().enumerate() {
            let block = path / "blocks" / i;
            blocks.push(Block {
                conv: layers::conv2d(&block / "conv", inputs, channels, 3, 1, 1, true),
                bn: layers::batch_norm2d(&block / "bn", channels),
            });
            inputs = channels;
        }
        let head = layers::linear(path / "head", inputs, config.outputs);
        Ok(Cnn {
            blocks,
            head,
            channels_last: config.channels_last,
        })
    }
}

impl Model for Cnn {
    fn forward_t(&self, input: &Input, train: bool) -> Tensor {
        let x = self.blocks.iter().fold(
            layers::channels_last(input.images(), self.channels_last),
            |x, b| {
                b.bn.forward_t(&b.conv.forward(&x), train)
                    .relu()
                    .max_pool2d_default(2)
            },
        );
        self.head
            .forward(&x.mean_dim([2i64, 3].as_slice(), false, x.kind()))
    }
}
