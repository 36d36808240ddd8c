//! Bidirectional recurrent encoders on token states: Linear+ReLU projection, a GRU or LSTM
//! run over each row's real tokens only, masked mean or attention pooling, Dropout, Linear.
//!
//! `[B, T, D]` -> `[B, T, h]` -> RNN `[B, T, 2h]` -> pooled `[B, 2h]` -> `[B, outputs]`.
//! Attention pooling scores each position with Linear(2h, 1), takes a softmax over the real
//! tokens and sums the outputs with those weights.
//!
//! Rows are packed by their mask lengths (sorted by length, as PyTorch's
//! `pack_padded_sequence(enforce_sorted=False)` does), so the backward direction starts at
//! each row's last real token and padding reaches neither direction. Training on the CPU
//! runs the recurrence in [`packed_recurrence`]: libtorch's own, op for op, with a backward
//! pass that costs rows instead of steps x rows (bit-identical; 1.8x to 3x faster steps).
//! Weights carry PyTorch's names (`rnn.weight_ih_l0`, `rnn.bias_hh_l1_reverse`, …) and
//! initialisation. Parameters: `proj`, `rnn.*`, `attention` (attention pooling only), `head`.

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
        // drift's recurrence only pays where a backward pass follows (and libtorch's calls
        // cuDNN on CUDA); both give the same bits.
        let out = if x.device() == Device::Cpu && x.requires_grad() {
            let sizes = Vec::<i64>::try_from(&batch_sizes).expect("batch sizes are int64");
            packed_recurrence(self.size.cell, &data, &sizes, &self.weights)
        } else {
            self.libtorch_packed(&data, &batch_sizes, batch, train)
        };
        let (padded, _) =
            Tensor::internal_pad_packed_sequence(&out, &batch_sizes, true, 0.0, tokens);
        padded.index_select(0, &order.argsort(0, false))
    }

    /// libtorch's own packed RNN (cuDNN on CUDA).
    fn libtorch_packed(
        &self,
        data: &Tensor,
        batch_sizes: &Tensor,
        batch: i64,
        train: bool,
    ) -> Tensor {
        let h0 = Tensor::zeros(
            [2 * self.size.layers, batch, self.size.hidden],
            (data.kind(), data.device()),
        );
        let (layers, biases, bidirectional, between_layers) = (self.size.layers, true, true, 0.0);
        match self.size.cell {
            Cell::Gru => {
                let (out, _) = Tensor::gru_data(
                    data,
                    batch_sizes,
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
                    data,
                    batch_sizes,
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
        }
    }
}

/// A bidirectional GRU or LSTM over packed rows, from zero states, without dropout between
/// layers: `data [N, input]` packed with `batch_sizes` (decreasing, summing to N) ->
/// `[N, 2h]`, the forward then the backward direction's outputs. `weights` are per layer,
/// per direction `w_ih, w_hh, b_ih, b_hh`, as for `Tensor::gru_data`.
///
/// The same operations, in the same order, as libtorch's CPU implementation of
/// `gru_data` / `lstm_data` (ATen's `PackedLayer` and `ReversedPackedLayer` with its
/// `GRUCell` / `LSTMCell`), so outputs and gradients are bit-identical to it
/// (`models::the_packed_recurrence_matches_libtorch_bit_for_bit`), with one change: each step
/// reads its rows of the input projection from one split of it, where ATen narrows it per
/// step. Autograd's backward of a narrow writes a zero tensor the size of the whole
/// projection and adds it to the others, so ATen's backward costs steps x rows x gates:
/// about 60 % of a `bigru_s` training step went to filling and adding those zeros. A
/// split's backward is one concatenation.
pub fn packed_recurrence(
    cell: Cell,
    data: &Tensor,
    batch_sizes: &[i64],
    weights: &[Tensor],
) -> Tensor {
    let mut input = data.shallow_clone();
    for layer in weights.chunks(8) {
        let forward = direction(cell, &input, batch_sizes, &layer[..4], false);
        let backward = direction(cell, &input, batch_sizes, &layer[4..], true);
        input = Tensor::cat(&[forward, backward], -1);
    }
    input
}

/// A recurrent state: the hidden state, and an LSTM's cell state.
struct State {
    h: Tensor,
    c: Option<Tensor>,
}

impl State {
    fn map(&self, f: impl Fn(&Tensor) -> Tensor) -> State {
        State {
            h: f(&self.h),
            c: self.c.as_ref().map(&f),
        }
    }
}

/// One direction of one layer: ATen's `PackedLayer` (forward) or `ReversedPackedLayer`.
fn direction(
    cell: Cell,
    input: &Tensor,
    batch_sizes: &[i64],
    w: &[Tensor],
    reverse: bool,
) -> Tensor {
    let (w_ih, w_hh, b_ih, b_hh) = (&w[0], &w[1], &w[2], &w[3]);
    let steps = input
        .linear(w_ih, Some(b_ih))
        .split_with_sizes(batch_sizes, 0);
    let zeros = Tensor::zeros(
        [batch_sizes[0], w_hh.size()[1]],
        (input.kind(), input.device()),
    );
    let initial = State {
        h: zeros.shallow_clone(),
        c: (cell == Cell::Lstm).then(|| zeros.shallow_clone()),
    };
    let step = |x: &Tensor, state: &State| match cell {
        Cell::Gru => State {
            h: gru_cell(x, &state.h, w_hh, b_hh),
            c: None,
        },
        Cell::Lstm => {
            let c = state.c.as_ref().expect("an LSTM state has a cell state");
            let (h, c) = lstm_cell(x, &state.h, c, w_hh, b_hh);
            State { h, c: Some(c) }
        }
    };
    let mut outputs = Vec::with_capacity(steps.len());
    if reverse {
        // Starts with the rows still running at the last step and adds the rows that
        // start (from their ends) as it moves back.
        let mut last = *batch_sizes.last().expect("at least one step");
        let mut state = initial.map(|t| t.narrow(0, 0, last));
        for (x, &size) in steps.iter().zip(batch_sizes).rev() {
            if size > last {
                let more = initial.map(|t| t.narrow(0, last, size - last));
                state = State {
                    h: Tensor::cat(&[&state.h, &more.h], 0),
                    c: state
                        .c
                        .as_ref()
                        .zip(more.c.as_ref())
                        .map(|(a, b)| Tensor::cat(&[a, b], 0)),
                };
            }
            last = size;
            state = step(x, &state);
            outputs.push(state.h.shallow_clone());
        }
        outputs.reverse();
    } else {
        // Drops the rows that have ended as it moves on.
        let mut last = batch_sizes[0];
        let mut state = initial;
        for (x, &size) in steps.iter().zip(batch_sizes) {
            if size < last {
                state = state.map(|t| t.narrow(0, 0, size));
            }
            last = size;
            state = step(x, &state);
            outputs.push(state.h.shallow_clone());
        }
    }
    Tensor::cat(&outputs, 0)
}

/// ATen's CPU `GRUCell` on a precomputed input projection `x [b, 3h]`.
fn gru_cell(x: &Tensor, hidden: &Tensor, w_hh: &Tensor, b_hh: &Tensor) -> Tensor {
    let i = x.unsafe_chunk(3, 1);
    let mut g = hidden.linear(w_hh, Some(b_hh)).unsafe_chunk(3, 1);
    let reset = g[0].g_add_(&i[0]).sigmoid_();
    let input = g[1].g_add_(&i[1]).sigmoid_();
    let new = (&i[2] + g[2].g_mul_(&reset)).tanh_();
    (hidden - &new).g_mul_(&input).g_add_(&new)
}

/// ATen's CPU `LSTMCell` on a precomputed input projection `x [b, 4h]`: `(h, c)`.
fn lstm_cell(x: &Tensor, h: &Tensor, c: &Tensor, w_hh: &Tensor, b_hh: &Tensor) -> (Tensor, Tensor) {
    let mut gates = h.linear(w_hh, Some(b_hh)).g_add_(x).unsafe_chunk(4, 1);
    let input = gates[0].sigmoid_();
    let forget = gates[1].sigmoid_();
    let cell = gates[2].tanh_();
    let output = gates[3].sigmoid_();
    let cy = (forget * c).g_add_(&(input * cell));
    let hy = output * cy.tanh();
    (hy, cy)
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
