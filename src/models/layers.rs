//! Layers with PyTorch's default initialisation, and the masked poolings of the text models.
//!
//! tch's own defaults (Kaiming uniform with ReLU gain, BatchNorm weight uniform in [0, 1))
//! differ from PyTorch's; these constructors start every layer where `torch.nn` does.

use tch::{Kind, Tensor, nn};

/// PyTorch's default bound for weights and biases of Linear, Conv and RNN layers.
pub fn uniform(fan_in: i64) -> nn::Init {
    let bound = 1.0 / (fan_in as f64).sqrt();
    nn::Init::Uniform {
        lo: -bound,
        up: bound,
    }
}

/// `nn.Linear(inputs, outputs)`: weight `[outputs, inputs]` and bias.
pub fn linear(path: nn::Path, inputs: i64, outputs: i64) -> nn::Linear {
    let init = uniform(inputs);
    nn::linear(
        path,
        inputs,
        outputs,
        nn::LinearConfig {
            ws_init: init,
            bs_init: Some(init),
            bias: true,
        },
    )
}

/// `nn.Conv1d`/`nn.Conv2d` settings: stride, padding, bias.
fn conv_config(
    inputs: i64,
    kernel: i64,
    dims: u32,
    stride: i64,
    padding: i64,
    bias: bool,
) -> nn::ConvConfig {
    let init = uniform(inputs * kernel.pow(dims));
    nn::ConvConfig {
        stride,
        padding,
        bias,
        ws_init: init,
        bs_init: init,
        ..Default::default()
    }
}

/// `nn.Conv2d(inputs, outputs, kernel, stride, padding, bias)`.
pub fn conv2d(
    path: nn::Path,
    inputs: i64,
    outputs: i64,
    kernel: i64,
    stride: i64,
    padding: i64,
    bias: bool,
) -> nn::Conv2D {
    let config = conv_config(inputs, kernel, 2, stride, padding, bias);
    nn::conv2d(path, inputs, outputs, kernel, config)
}

/// `nn.Conv1d(inputs, outputs, kernel)` with bias, no padding.
pub fn conv1d(path: nn::Path, inputs: i64, outputs: i64, kernel: i64) -> nn::Conv1D {
    let config = conv_config(inputs, kernel, 1, 1, 0, true);
    nn::conv1d(path, inputs, outputs, kernel, config)
}

/// `nn.BatchNorm2d(channels)`: weight 1, bias 0, running statistics as buffers.
pub fn batch_norm2d(path: nn::Path, channels: i64) -> nn::BatchNorm {
    let config = nn::BatchNormConfig {
        ws_init: nn::Init::Const(1.0),
        ..Default::default()
    };
    nn::batch_norm2d(path, channels, config)
}

/// `nn.LayerNorm(dim)` with eps 1e-5.
pub fn layer_norm(path: nn::Path, dim: i64) -> nn::LayerNorm {
    nn::layer_norm(path, vec![dim], Default::default())
}

/// Mean of `x [B, T, F]` over the real tokens of `mask [B, T]` -> `[B, F]`.
///
/// Padded positions are replaced rather than multiplied by zero, so that non-finite values
/// there cannot leak into the mean.
pub fn masked_mean(x: &Tensor, mask: &Tensor) -> Tensor {
    let kept = zero_padding(x, mask);
    let count = mask.sum_dim_intlist(1, true, x.kind());
    kept.sum_dim_intlist(1, false, x.kind()) / count
}

/// `x [B, T, F]` with the padded positions of `mask [B, T]` set to zero.
pub fn zero_padding(x: &Tensor, mask: &Tensor) -> Tensor {
    x.masked_fill(&mask.logical_not().unsqueeze(-1), 0.0)
}

/// Real-token counts of `mask [B, T]` as int64 `[B]`.
pub fn lengths(mask: &Tensor) -> Tensor {
    mask.sum_dim_intlist(1, false, Kind::Int64)
}

/// `x [B, C, H, W]` with channels-last strides (NHWC in memory), or unchanged when `on` is
/// false. libtorch's convolutions, batch norms and poolings keep the layout of their input.
pub fn channels_last(x: &Tensor, on: bool) -> Tensor {
    if on {
        x.permute([0, 2, 3, 1]).contiguous().permute([0, 3, 1, 2])
    } else {
        x.shallow_clone()
    }
}
