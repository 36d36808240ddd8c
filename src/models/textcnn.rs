//! TextCNNs (Kim 2014) on token states: one Conv1d over time per kernel size, ReLU, max over
//! time, concatenation, Linear+ReLU projection, Dropout, Linear.
//!
//! `[B, T, D]` -> `[B, D, T]` -> per kernel `k`: Conv1d(D, F, k) `[B, F, T-k+1]` -> max over
//! the windows that lie inside the real tokens `[B, F]` -> concat `[B, F·K]` -> `[B, p]` ->
//! `[B, outputs]`.
//!
//! A row shorter than a kernel is zero-padded to the kernel's width and keeps its single
//! window, as if the row had been convolved alone. Padded states are zeroed first, so they
//! cannot reach that window. Parameters: `convs.{i}`, `proj`, `head`.

use tch::{Kind, Tensor, nn, nn::Module};

use super::config::ModelConfig;
use super::layers;
use super::model::{Input, Model};
use crate::Result;

/// Filters, kernels and projection width of a TextCNN.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    /// Filters per kernel size.
    pub filters: i64,
    /// Kernel sizes over time.
    pub kernels: &'static [i64],
    /// Width of the projection before the head.
    pub projection: i64,
}

/// `textcnn_s`: 88,615 parameters at 768 -> 7.
pub const S: Size = Size {
    filters: 16,
    kernels: &[3, 4],
    projection: 64,
};
/// `textcnn_m`: 461,975 parameters.
pub const M: Size = Size {
    filters: 48,
    kernels: &[3, 4, 5],
    projection: 128,
};
/// `textcnn_l`: 1,919,559 parameters.
pub const L: Size = Size {
    filters: 192,
    kernels: &[3, 4, 5],
    projection: 256,
};

/// Convolutions over time with max pooling.
#[derive(Debug)]
pub struct TextCnn {
    convs: Vec<(i64, nn::Conv1D)>,
    proj: nn::Linear,
    head: nn::Linear,
    dropout: f64,
}

impl TextCnn {
    /// Creates the TextCNN under `path`.
    pub fn new(path: &nn::Path, size: &Size, config: &ModelConfig) -> Result<Self> {
        let dim = config.feature_dim();
        let convs = size
            .kernels
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, layers::conv1d(path / "convs" / i, dim, size.filters, k)))
            .collect();
        let pooled = size.filters * size.kernels.len() as i64;
        Ok(TextCnn {
            convs,
            proj: layers::linear(path / "proj", pooled, size.projection),
            head: layers::linear(path / "head", size.projection, config.outputs),
            dropout: config.dropout,
        })
    }
}

impl Model for TextCnn {
    fn forward_t(&self, input: &Input, train: bool) -> Tensor {
        let (states, mask) = input.tokens();
        let tokens = states.size()[1];
        let widest = self.convs.iter().map(|&(k, _)| k).max().unwrap_or(1);
        let x = layers::zero_padding(states, mask)
            .transpose(1, 2)
            .constant_pad_nd([0, (widest - tokens).max(0)]);
        let lengths = layers::lengths(mask).unsqueeze(1);
        let pooled: Vec<Tensor> = self
            .convs
            .iter()
            .map(|(k, conv)| {
                let y = conv.forward(&x).relu();
                let windows = y.size()[2];
                // Window t covers tokens t..t+k; the first window always counts.
                let start = Tensor::arange(windows, (Kind::Int64, y.device())).unsqueeze(0);
                let inside = start.le_tensor(&(&lengths - *k).clamp_min(0));
                y.masked_fill(&inside.logical_not().unsqueeze(1), f64::NEG_INFINITY)
                    .amax([2], false)
            })
            .collect();
        let x = Tensor::cat(&pooled, 1);
        let x = self.proj.forward(&x).relu().dropout(self.dropout, train);
        self.head.forward(&x)
    }
}
