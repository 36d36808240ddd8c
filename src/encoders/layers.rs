//! The layers every pretrained encoder shares, text and image alike, each declaring its
//! parameters under the reference implementation's names: [`Linear`], [`LayerNorm`],
//! [`Embedding`] and the activations.
//!
//! Written by hand rather than with `tch::nn`'s modules because the frozen forward pass
//! must stay op for op what it was (`x.linear(w, b)`, not `nn::Linear`'s matmul and add),
//! so that encoder caches built before keep their bytes.

use tch::Tensor;

use super::hub::Params;

/// `x W^T + b`, parameters `weight` `[outputs, inputs]` and `bias` `[outputs]` (when it
/// has one).
#[derive(Debug)]
pub struct Linear {
    weight: Tensor,
    bias: Option<Tensor>,
}

impl Linear {
    /// With a bias.
    pub fn new(p: Params, inputs: i64, outputs: i64) -> Linear {
        Linear::with_bias(p, inputs, outputs, true)
    }

    /// With a bias when `bias`.
    pub fn with_bias(p: Params, inputs: i64, outputs: i64, bias: bool) -> Linear {
        Linear {
            weight: p.tensor("weight", &[outputs, inputs]),
            bias: bias.then(|| p.tensor("bias", &[outputs])),
        }
    }

    /// Applies it to the last dimension of `x`.
    pub fn forward(&self, x: &Tensor) -> Tensor {
        x.linear(&self.weight, self.bias.as_ref())
    }
}

/// Layer normalisation over the last dimension, parameters `weight` and (when it has
/// one) `bias`.
#[derive(Debug)]
pub struct LayerNorm {
    weight: Tensor,
    bias: Option<Tensor>,
    dim: i64,
    eps: f64,
}

impl LayerNorm {
    /// With a bias.
    pub fn new(p: Params, dim: i64, eps: f64) -> LayerNorm {
        LayerNorm::with_bias(p, dim, eps, true)
    }

    /// With a bias when `bias`.
    pub fn with_bias(p: Params, dim: i64, eps: f64, bias: bool) -> LayerNorm {
        LayerNorm {
            weight: p.tensor("weight", &[dim]),
            bias: bias.then(|| p.tensor("bias", &[dim])),
            dim,
            eps,
        }
    }

    /// Normalises `x`.
    pub fn forward(&self, x: &Tensor) -> Tensor {
        x.layer_norm(
            [self.dim],
            Some(&self.weight),
            self.bias.as_ref(),
            self.eps,
            false,
        )
    }
}

/// A lookup table, parameter `weight` `[rows, dim]`.
#[derive(Debug)]
pub struct Embedding {
    weight: Tensor,
}

impl Embedding {
    /// `rows` vectors of width `dim`.
    pub fn new(p: Params, rows: i64, dim: i64) -> Embedding {
        Embedding {
            weight: p.tensor("weight", &[rows, dim]),
        }
    }

    /// The rows `ids` name.
    pub fn forward(&self, ids: &Tensor) -> Tensor {
        Tensor::embedding(&self.weight, ids, -1, false, false)
    }

    /// The whole table.
    pub fn table(&self) -> &Tensor {
        &self.weight
    }
}

/// The activations of the families' feed-forward blocks, by their `transformers` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// `gelu`: the exact (erf) GELU.
    Gelu,
    /// `gelu_new`, `gelu_pytorch_tanh`: the tanh approximation.
    GeluTanh,
    /// `relu`.
    Relu,
    /// `silu` / `swish`.
    Silu,
    /// `quick_gelu`: `x * sigmoid(1.702 x)`, CLIP's.
    QuickGelu,
}

impl Activation {
    /// The activation `transformers` calls `name`, or an error listing the supported ones.
    pub fn from_name(name: &str) -> std::result::Result<Activation, String> {
        Ok(match name {
            "gelu" => Activation::Gelu,
            "gelu_new" | "gelu_pytorch_tanh" => Activation::GeluTanh,
            "relu" => Activation::Relu,
            "silu" | "swish" => Activation::Silu,
            "quick_gelu" => Activation::QuickGelu,
            other => {
                return Err(format!(
                    "activation {other:?} is not supported (supported: gelu, gelu_new, \
                     gelu_pytorch_tanh, quick_gelu, relu, silu, swish)"
                ));
            }
        })
    }

    /// Applies it.
    pub fn forward(self, x: &Tensor) -> Tensor {
        match self {
            Activation::Gelu => x.gelu("none"),
            Activation::GeluTanh => x.gelu("tanh"),
            Activation::Relu => x.relu(),
            Activation::Silu => x.silu(),
            Activation::QuickGelu => x * (x * 1.702).sigmoid(),
        }
    }
}
