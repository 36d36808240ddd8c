//! Bidirectional recurrent encoders on token states: Linear+ReLU projection, a GRU or LSTM
//! run over each row's real tokens only, masked mean or attention pooling, Dropout, Linear.
//!
//! `[B, T, D]` -> `[B, T, h]` -> RNN `[B, T, 2h]` -> pooled `[B, 2h]` -> `[B, outputs]`.
//! Attention pooling scores each position with Linear(2h, 1), takes a softmax over the real
//! tokens and sums the outputs with those weights.
//!
//! Rows are packed by their mask lengths (sorted by length, as PyTorch's
//! `pack_padded_sequence(enforce_sorted=False)` does), so the backward direction starts at
//! each row's last real token and padding reaches neither direction. Weights carry PyTorch's
//! names (`rnn.weight_ih_l0`, `rnn.bias_hh_l1_reverse`, …) and initialisation. Parameters:
//! `proj`, `rnn.*`, `attention` (attention pooling only), `head`.

use tch::{Device, Tensor, nn, nn::Module};

use super::config::ModelConfig;
use super::layers;
use super::model::{Input, Model};
use crate::Result;

/// The recurrent cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// Gated recurrent unit: 3 gates.
    Gru,
    /// Long short-term memory: 4 gates and a cell state.
    Lstm,
}

/// How the outputs over time become one vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RnnPooling {
    /// Mean over the real tokens.
    Mean,
    /// Softmax-weighted sum over the real tokens, scored by Linear(2h, 1).
    Attention,
}

/// Cell, width, depth and pooling of a recurrent encoder.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    /// GRU or LSTM.
    pub cell: Cell,
    /// Projection width and hidden width per direction (equal in the reference).
    pub hidden: i64,
    /// Stacked bidirectional layers.
    pub layers: i64,
    /// Pooling over time.
    pub pooling: RnnPooling,
}

/// `bigru_s`: 100,039 parameters at 768 -> 7.
pub const BIGRU_S: Size = Size {
    cell: Cell::Gru,
    hidden: 64,
    layers: 1,
    pooling: RnnPooling::Mean,
};
/// `bilstm_m`: 537,447 parameters.
pub const BILSTM_M: Size = Size {
    cell: Cell::Lstm,
    hidden: 160,
    layers: 1,
    pooling: RnnPooling::Mean,
};
/// `bilstm_attn_l`: 2,190,056 parameters.
pub const BILSTM_ATTN_L: Size = Size {
    cell: Cell::Lstm,
    hidden: 224,
    layers: 2,
    pooling: RnnPooling::Attention,
};

/// A projected bidirectional GRU/LSTM with pooling.
#[derive(Debug)]
pub struct Rnn {
    proj: nn::Linear,
    /// Per layer, per direction: `w_ih, w_hh, b_ih, b_hh`, the order of PyTorch's
    /// `_flat_weights`.
    weights: Vec<Tensor>,
    attention: Option<nn::Linear>,
    head: nn::Linear,
    size: Size,
    dropout: f64,
}

impl Rnn {
    /// Creates the encoder under `path`.
    pub fn new(path: &nn::Path, size: &Size, config: &ModelConfig) -> Result<Self> {
        let h = size.hidden;
        let gates = match size.cell {
            Cell::Gru => 3 * h,
            Cell::Lstm => 4 * h,
        };
        let rnn = path / "rnn";
        // PyTorch draws every RNN weight and bias from ±1/√hidden.
        let init = layers::uniform(h);
        let mut weights = Vec::new();
        for layer in 0..size.layers {
            let inputs = if layer == 0 { h } else { 2 * h };
            for suffix in ["", "_reverse"] {
                let shapes = [
                    ("weight_ih", vec![gates, inputs]),
                    ("weight_hh", vec![gates, h]),
                    ("bias_ih", vec![gates]),
                    ("bias_hh", vec![gates]),
                ];
                for (name, shape) in shapes {
                    weights.push(rnn.var(&format!("{name}_l{layer}{suffix}"), &shape, init));
                }
            }
        }
        if path.device().is_cuda() && tch::Cuda::cudnn_is_available() {
            // As PyTorch's flatten_parameters: rebinds the weights to views of one buffer
            // (which they keep alive), else cuDNN copies them into one on every call.
            let mode = match size.cell {
                Cell::Gru => 3,
                Cell::Lstm => 2,
            };
            let _buffer = tch::no_grad(|| {
                Tensor::internal_cudnn_rnn_flatten_weight(
                    &weights,
                    4,
                    h,
                    mode,
                    h,
                    0,
                    size.layers,
                    true,
                    true,
                )
            });
        }
        let attention = (size.pooling == RnnPooling::Attention)
            .then(|| layers::linear(path / "attention", 2 * h, 1));
        Ok(Rnn {
            proj: layers::linear(path / "proj", config.feature_dim(), h),
            weights,
            attention,
            head: layers::linear(path / "head", 2 * h, config.outputs),
            size: *size,
            dropout: config.dropout,
        })
    }

    /// Runs the RNN over the real tokens of each row: `[B, T, h]` -> `[B, T, 2h]`, zero at
    /// padded positions.
    fn run_packed(&self, x: &Tensor, mask: &Tensor, train: bool) -> Tensor {
        let (batch, tokens, _) = x.size3().expect("projected states are [B, T, h]");
        // Packing wants lengths on the CPU, in decreasing order.
        let (lengths, order) = layers::lengths(mask).to_device(Device::Cpu).sort(0, true);
        let order = order.to_device(x.device());
        let (data, batch_sizes) = x
            .index_select(0, &order)
            .internal_pack_padded_sequence(&lengths, true);
        let h0 = Tensor::zeros(
            [2 * self.size.layers, batch, self.size.hidden],
            (x.kind(), x.device()),
        );
        let (layers, biases, bidirectional, between_layers) = (self.size.layers, true, true, 0.0);
        let out = match self.size.cell {
            Cell::Gru => {
                let (out, _) = Tensor::gru_data(
                    &data,
                    &batch_sizes,
                    &h0,
                    &self.weights,
                    biases,
                    layers,
                    between_layers,
                    train,
                    bidirectional,
                );
                out
            }
            Cell::Lstm => {
                let (out, _, _) = Tensor::lstm_data(
                    &data,
                    &batch_sizes,
                    &[h0.shallow_clone(), h0],
                    &self.weights,
                    biases,
                    layers,
                    between_layers,
                    train,
                    bidirectional,
                );
                out
            }
        };
        let (padded, _) =
            Tensor::internal_pad_packed_sequence(&out, &batch_sizes, true, 0.0, tokens);
        padded.index_select(0, &order.argsort(0, false))
    }
}

impl Model for Rnn {
    fn forward_t(&self, input: &Input, train: bool) -> Tensor {
        let (states, mask) = input.tokens();
        let x = self.proj.forward(states).relu();
        let out = self.run_packed(&x, mask, train);
        let pooled = match &self.attention {
            None => layers::masked_mean(&out, mask),
            Some(attention) => {
                let scores = attention
                    .forward(&out)
                    .squeeze_dim(-1)
                    .masked_fill(&mask.logical_not(), f64::NEG_INFINITY);
                let weights = scores.softmax(1, out.kind()).unsqueeze(-1);
                (weights * &out).sum_dim_intlist(1, false, out.kind())
            }
        };
        self.head.forward(&pooled.dropout(self.dropout, train))
    }
}
