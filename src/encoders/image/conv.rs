//! The layers the convolutional image families share, each declaring its parameters under
//! timm's names: [`Conv2d`] (with TensorFlow's "same" padding for the `tf_` models),
//! [`BatchNorm`] in evaluation (running statistics), and [`LayerNorm2d`] over the channels
//! of a `[B, C, H, W]` map.

use tch::Tensor;

use crate::encoders::hub::Params;

/// How a convolution pads its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// The same number of zeros on every side.
    Symmetric(i64),
    /// TensorFlow's "same": the output is `ceil(input / stride)` wide, the odd zero on the
    /// bottom and right; computed from each input's size, as timm's `Conv2dSame` does.
    Same,
}

impl Padding {
    /// How timm pads a `kernel` x `kernel` convolution of `stride`: "same" for the `tf_`
    /// models (`tf_same`), else `((stride - 1) + (kernel - 1)) / 2` on every side. A
    /// stride-1 "same" convolution of an odd kernel is symmetric, as timm makes it.
    pub fn timm(kernel: i64, stride: i64, tf_same: bool) -> Padding {
        if tf_same && !(stride == 1 && (kernel - 1) % 2 == 0) {
            Padding::Same
        } else {
            Padding::Symmetric(((stride - 1) + (kernel - 1)) / 2)
        }
    }
}

/// A 2-d convolution, parameters `weight` `[out, in / groups, k, k]` and an optional
/// `bias` `[out]`.
#[derive(Debug)]
pub struct Conv2d {
    weight: Tensor,
    bias: Option<Tensor>,
    stride: i64,
    padding: Padding,
    groups: i64,
}

/// The sizes of a [`Conv2d`].
#[derive(Clone, Copy, Debug)]
pub struct ConvSize {
    /// Input channels.
    pub inputs: i64,
    /// Output channels.
    pub outputs: i64,
    /// Kernel height and width.
    pub kernel: i64,
    /// Stride.
    pub stride: i64,
    /// Groups (`inputs` for a depthwise convolution).
    pub groups: i64,
}

impl ConvSize {
    /// A dense convolution.
    pub fn dense(inputs: i64, outputs: i64, kernel: i64, stride: i64) -> ConvSize {
        ConvSize {
            inputs,
            outputs,
            kernel,
            stride,
            groups: 1,
        }
    }

    /// A depthwise convolution of `channels`.
    pub fn depthwise(channels: i64, kernel: i64, stride: i64) -> ConvSize {
        ConvSize {
            inputs: channels,
            outputs: channels,
            kernel,
            stride,
            groups: channels,
        }
    }
}

impl Conv2d {
    /// The convolution of `size`, padded as `padding`, with a bias when `bias`.
    pub fn new(p: Params, size: ConvSize, padding: Padding, bias: bool) -> Conv2d {
        let k = size.kernel;
        Conv2d {
            weight: p.tensor("weight", &[size.outputs, size.inputs / size.groups, k, k]),
            bias: bias.then(|| p.tensor("bias", &[size.outputs])),
            stride: size.stride,
            padding,
            groups: size.groups,
        }
    }

    /// Applies it to `x` `[B, C, H, W]`.
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let k = self.weight.size()[2];
        let (x, pad) = match self.padding {
            Padding::Symmetric(p) => (x.shallow_clone(), p),
            Padding::Same => {
                let size = x.size();
                let extra = |input: i64| {
                    let out = (input + self.stride - 1) / self.stride;
                    ((out - 1) * self.stride + k - input).max(0)
                };
                let (h, w) = (extra(size[2]), extra(size[3]));
                (x.constant_pad_nd([w / 2, w - w / 2, h / 2, h - h / 2]), 0)
            }
        };
        x.conv2d(
            &self.weight,
            self.bias.as_ref(),
            [self.stride, self.stride],
            [pad, pad],
            [1, 1],
            self.groups,
        )
    }
}

/// Batch normalisation with its running statistics (evaluation), parameters `weight`,
/// `bias`, `running_mean` and `running_var` `[channels]`.
#[derive(Debug)]
pub struct BatchNorm {
    weight: Tensor,
    bias: Tensor,
    mean: Tensor,
    var: Tensor,
    eps: f64,
}

impl BatchNorm {
    /// Over `channels`, with `eps` (timm: 1e-5, its `tf_` models 1e-3).
    pub fn new(p: Params, channels: i64, eps: f64) -> BatchNorm {
        BatchNorm {
            weight: p.tensor("weight", &[channels]),
            bias: p.tensor("bias", &[channels]),
            mean: p.tensor("running_mean", &[channels]),
            var: p.tensor("running_var", &[channels]),
            eps,
        }
    }

    /// Normalises `x` `[B, C, H, W]`.
    pub fn forward(&self, x: &Tensor) -> Tensor {
        x.batch_norm(
            Some(&self.weight),
            Some(&self.bias),
            Some(&self.mean),
            Some(&self.var),
            false,
            0.0,
            self.eps,
            false,
        )
    }
}

/// Layer normalisation over the channels of `[B, C, H, W]` (timm's `LayerNorm2d`),
/// parameters `weight` and `bias` `[channels]`.
#[derive(Debug)]
pub struct LayerNorm2d {
    weight: Tensor,
    bias: Tensor,
    channels: i64,
    eps: f64,
}

impl LayerNorm2d {
    /// Over `channels`, with `eps`.
    pub fn new(p: Params, channels: i64, eps: f64) -> LayerNorm2d {
        LayerNorm2d {
            weight: p.tensor("weight", &[channels]),
            bias: p.tensor("bias", &[channels]),
            channels,
            eps,
        }
    }

    /// Normalises `x` `[B, C, H, W]` over `C`.
    pub fn forward(&self, x: &Tensor) -> Tensor {
        x.permute([0, 2, 3, 1])
            .layer_norm(
                [self.channels],
                Some(&self.weight),
                Some(&self.bias),
                self.eps,
                false,
            )
            .permute([0, 3, 1, 2])
    }
}

/// The mean over the spatial dimensions of `[B, C, H, W]`: `[B, C]`.
pub fn global_average(x: &Tensor) -> Tensor {
    x.mean_dim([2i64, 3].as_slice(), false, tch::Kind::Float)
}
