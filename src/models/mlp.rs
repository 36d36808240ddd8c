//! MLPs on flattened images: `[B, C, H, W]` -> flatten `C*H*W` -> (Linear+ReLU) per hidden
//! width -> Linear -> `[B, outputs]`.
//!
//! Parameters: `layers.{i}.{weight,bias}`, `head.{weight,bias}`.

use tch::{Tensor, nn, nn::Module};

use super::config::ModelConfig;
use super::layers;
use super::model::{Input, Model};
use crate::Result;

/// Hidden widths of an MLP.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    /// One Linear+ReLU per entry.
    pub hidden: &'static [i64],
}

/// `mlp_s`: 98,402 parameters at 3x32x32 -> 2.
pub const S: Size = Size { hidden: &[32] };
/// `mlp_m`: 410,114 parameters.
pub const M: Size = Size {
    hidden: &[128, 128],
};
/// `mlp_l`: 2,099,714 parameters.
pub const L: Size = Size {
    hidden: &[512, 512, 512],
};

/// A multi-layer perceptron on raw pixels.
#[derive(Debug)]
pub struct Mlp {
    layers: Vec<nn::Linear>,
    head: nn::Linear,
}

impl Mlp {
    /// Creates the MLP under `path`.
    pub fn new(path: &nn::Path, size: &Size, config: &ModelConfig) -> Result<Self> {
        let (channels, height, width) = config.image_shape();
        let mut inputs = channels * height * width;
        let mut hidden_layers = Vec::new();
        for (i, &hidden) in size.hidden.iter().enumerate() {
            hidden_layers.push(layers::linear(path / "layers" / i, inputs, hidden));
            inputs = hidden;
        }
        let head = layers::linear(path / "head", inputs, config.outputs);
        Ok(Mlp {
            layers: hidden_layers,
            head,
        })
    }
}

impl Model for Mlp {
    fn forward_t(&self, input: &Input, _train: bool) -> Tensor {
        let x = input.images().flatten(1, -1);
        let x = self
            .layers
            .iter()
            .fold(x, |x, layer| layer.forward(&x).relu());
        self.head.forward(&x)
    }
}
