//! The model registry: every model of the reference (protocol.md §4) by key, what it reads,
//! and, with the `torch` feature, how to build it.
//!
//! The metadata ([`registry`], [`info`], [`ModelConfig`]) is plain Rust, so presets can be
//! checked without libtorch. With `torch`, `build` turns a key into a `Model` under a
//! `tch::nn::Path` and `parameter_count` reports its trainable size.
//!
//! Shapes (`B` batch, `T` tokens, `D` token or embedding width):
//!
//! | input | tensors | models |
//! |---|---|---|
//! | `Input::Images` | `[B, C, H, W]` float | `mlp_*`, `cnn_*`, `resnet_*`, `vit_*` |
//! | `Input::Tokens` | states `[B, T, D]` float, mask `[B, T]` bool, true = real token | `ffn_*`, `textcnn_*`, `bigru_s`, `bilstm_*`, `tx_*` |
//! | `Input::Embeddings` | `[B, D]` float | `linear` |
//! | `Input::EncoderIds` | ids `[B, T]` int64, mask `[B, T]` bool | any text model or `linear` as the head of a fine-tuned encoder ([`Backbone`]) |
//!
//! Every model returns logits `[B, outputs]` (a raw value for regression, `outputs = 1`).
//! Token padding sits at the end of a row and never changes the output of a row.
//! Initialisation draws from PyTorch's default distributions (Linear, Conv and RNN weights
//! uniform in ±1/√fan_in, BatchNorm and LayerNorm weight 1, Xavier-uniform attention
//! projections), not tch's; the ViT and Transformer embeddings start from N(0, 0.02²).
//! Parameter names are the PyTorch `state_dict` keys of the equivalent `torch.nn` model
//! (`encoder.layers.0.self_attn.in_proj_weight`, `rnn.weight_hh_l0_reverse`), so weights
//! can be exchanged with it.
//!
//! Adding a model: write `src/models/<family>.rs` (a `Size` with per-size constants and a
//! model type with `new(path, &Size, &ModelConfig) -> Result<Self>` implementing `Model`),
//! then add one line to the `registry!` list below.
//!
//! ```
//! use drift::models::{self, InputKind};
//!
//! let cnn = models::info("cnn_s")?;
//! assert_eq!((cnn.family, cnn.input), ("cnn", InputKind::Image));
//! assert!(models::info("cnn_xl").is_err());
//! # Ok::<(), drift::Error>(())
//! ```

use crate::{Error, Result};

#[cfg(feature = "torch")]
mod cnn;
mod config;
#[cfg(feature = "torch")]
mod encoder_layer;
#[cfg(feature = "torch")]
mod ffn;
#[cfg(feature = "torch")]
mod fine_tuned;
#[cfg(feature = "torch")]
mod layers;
#[cfg(feature = "torch")]
mod linear_probe;
#[cfg(feature = "torch")]
mod mlp;
#[cfg(feature = "torch")]
mod model;
#[cfg(feature = "torch")]
mod resnet;
#[cfg(feature = "torch")]
mod rnn;
#[cfg(feature = "torch")]
mod textcnn;
#[cfg(feature = "torch")]
mod transformer;
#[cfg(feature = "torch")]
mod vit;

pub use config::{InputKind, InputShape, ModelConfig};
#[cfg(feature = "torch")]
pub use fine_tuned::{Backbone, ENCODER_DECAY, ENCODER_NO_DECAY, FineTuned};
#[cfg(feature = "torch")]
pub use model::{Input, Model};
#[cfg(feature = "torch")]
pub use rnn::{Cell as RnnCell, packed_recurrence};

/// One registry entry.
#[derive(Clone, Copy, Debug)]
pub struct ModelInfo {
    /// The key presets use, e.g. `cnn_s`.
    pub key: &'static str,
    /// The family the analysis groups by, e.g. `cnn`, `rnn`, `transformer`, `linear-probe`.
    pub family: &'static str,
    /// What the model reads.
    pub input: InputKind,
    /// The architecture in one line.
    pub summary: &'static str,
}

/// Declares the registry: `key, family, input kind, summary => model type, size;` per model.
/// The type and size are only read with the `torch` feature.
macro_rules! registry {
    ($(
        $key:literal, $family:literal, $input:ident, $summary:literal => $model:ty, $size:expr;
    )*) => {
        const REGISTRY: &[ModelInfo] = &[$(ModelInfo {
            key: $key,
            family: $family,
            input: InputKind::$input,
            summary: $summary,
        }),*];

        #[cfg(feature = "torch")]
        const BUILDERS: &[torch::Builder] = &[$(|path, config| {
            Ok(Box::new(<$model>::new(path, &$size, config)?))
        }),*];
    };
}

registry! {
    "mlp_s", "mlp", Image, "Flatten -> Linear+ReLU (32) -> Linear" => mlp::Mlp, mlp::S;
    "mlp_m", "mlp", Image, "Flatten -> Linear+ReLU (128,128) -> Linear" => mlp::Mlp, mlp::M;
    "mlp_l", "mlp", Image, "Flatten -> Linear+ReLU (512,512,512) -> Linear" => mlp::Mlp, mlp::L;
    "cnn_s", "cnn", Image,
        "Conv3x3+BN+ReLU+MaxPool blocks (32,64,128), global average pool -> Linear"
        => cnn::Cnn, cnn::S;
    "cnn_m", "cnn", Image,
        "Conv3x3+BN+ReLU+MaxPool blocks (48,96,192,192), global average pool -> Linear"
        => cnn::Cnn, cnn::M;
    "cnn_l", "cnn", Image,
        "Conv3x3+BN+ReLU+MaxPool blocks (64,128,256,256,512), global average pool -> Linear"
        => cnn::Cnn, cnn::L;
    "resnet_s", "resnet", Image,
        "Conv3x3 stem, BasicBlock stages (18,36,72) x (1,1,1), average pool -> Linear"
        => resnet::ResNet, resnet::S;
    "resnet_m", "resnet", Image,
        "Conv3x3 stem, BasicBlock stages (32,64,128) x (2,2,1), average pool -> Linear"
        => resnet::ResNet, resnet::M;
    "resnet_l", "resnet", Image,
        "Conv3x3 stem, BasicBlock stages (56,112,224) x (2,2,2), average pool -> Linear"
        => resnet::ResNet, resnet::L;
    "vit_s", "vit", Image,
        "ViT patch 4, dim 64, 2 post-LN layers, 4 heads, MLP 2x, LayerNorm(CLS) -> Linear"
        => vit::Vit, vit::S;
    "vit_m", "vit", Image,
        "ViT patch 4, dim 128, 4 post-LN layers, 4 heads, MLP 2x, LayerNorm(CLS) -> Linear"
        => vit::Vit, vit::M;
    "vit_l", "vit", Image,
        "ViT patch 4, dim 192, 6 post-LN layers, 6 heads, MLP 3x, LayerNorm(CLS) -> Linear"
        => vit::Vit, vit::L;
    "ffn_s", "ffn", Tokens, "Masked mean -> Linear+ReLU+Dropout (128) -> Linear"
        => ffn::Ffn, ffn::S;
    "ffn_m", "ffn", Tokens, "Masked mean -> Linear+ReLU+Dropout (512) -> Linear"
        => ffn::Ffn, ffn::M;
    "ffn_l", "ffn", Tokens, "Masked mean -> Linear+ReLU+Dropout (2048) -> Linear"
        => ffn::Ffn, ffn::L;
    "textcnn_s", "textcnn", Tokens,
        "Conv1d 16 filters x kernels (3,4), ReLU, max over time -> Linear+ReLU (64) -> Linear"
        => textcnn::TextCnn, textcnn::S;
    "textcnn_m", "textcnn", Tokens,
        "Conv1d 48 filters x kernels (3,4,5), ReLU, max over time -> Linear+ReLU (128) -> Linear"
        => textcnn::TextCnn, textcnn::M;
    "textcnn_l", "textcnn", Tokens,
        "Conv1d 192 filters x kernels (3,4,5), ReLU, max over time -> Linear+ReLU (256) -> Linear"
        => textcnn::TextCnn, textcnn::L;
    "bigru_s", "rnn", Tokens,
        "Linear+ReLU (64) -> BiGRU 64 by mask length -> masked mean -> Dropout -> Linear"
        => rnn::Rnn, rnn::BIGRU_S;
    "bilstm_m", "rnn", Tokens,
        "Linear+ReLU (160) -> BiLSTM 160 by mask length -> masked mean -> Dropout -> Linear"
        => rnn::Rnn, rnn::BILSTM_M;
    "bilstm_attn_l", "rnn", Tokens,
        "Linear+ReLU (224) -> 2-layer BiLSTM 224 by mask length -> attention pool, Dropout -> Linear"
        => rnn::Rnn, rnn::BILSTM_ATTN_L;
    "tx_s", "transformer", Tokens,
        "Linear (64) -> 1 post-LN encoder layer, 4 heads, FF 128 -> masked mean -> Linear"
        => transformer::TextTransformer, transformer::S;
    "tx_m", "transformer", Tokens,
        "Linear (112) -> 4 post-LN encoder layers, 4 heads, FF 224 -> masked mean -> Linear"
        => transformer::TextTransformer, transformer::M;
    "tx_l", "transformer", Tokens,
        "Linear (192) -> 5 post-LN encoder layers, 6 heads, FF 512 -> masked mean -> Linear"
        => transformer::TextTransformer, transformer::L;
    "linear", "linear-probe", Embedding, "Linear head on a frozen encoder's pooled embedding"
        => linear_probe::LinearProbe, ();
}

/// Every model, in a fixed order (image models, then text, then linear).
pub fn registry() -> &'static [ModelInfo] {
    REGISTRY
}

/// Looks a key up; an unknown key is an [`Error::Invalid`] that lists the known ones.
pub fn info(key: &str) -> Result<&'static ModelInfo> {
    position(key).map(|i| &REGISTRY[i])
}

fn position(key: &str) -> Result<usize> {
    REGISTRY.iter().position(|m| m.key == key).ok_or_else(|| {
        let known: Vec<_> = REGISTRY.iter().map(|m| m.key).collect();
        Error::Invalid(format!(
            "unknown model \"{key}\" (expected one of {})",
            known.join(", ")
        ))
    })
}

#[cfg(feature = "torch")]
pub use self::torch::{build, build_fine_tuned, parameter_count};

#[cfg(feature = "torch")]
mod torch {
    use tch::{Device, Tensor, nn};

    use super::{BUILDERS, Backbone, FineTuned, Model, ModelConfig, REGISTRY, position};
    use crate::{Error, Result};

    pub(super) type Builder = fn(&nn::Path, &ModelConfig) -> Result<Box<dyn Model>>;

    /// Builds `key` under `path` for `config`.
    ///
    /// Fails with [`Error::Invalid`] when the key is unknown, the config's input kind is not
    /// what the model reads, or the sizes do not fit the architecture (e.g. a ViT on images
    /// whose sides are not multiples of the patch size).
    pub fn build(key: &str, path: &nn::Path, config: &ModelConfig) -> Result<Box<dyn Model>> {
        let index = position(key)?;
        let want = REGISTRY[index].input;
        let got = config.input.kind();
        if want != got {
            return Err(Error::Invalid(format!(
                "model {key} reads {}, but the data gives {}",
                want.noun(),
                got.noun()
            )));
        }
        config.check()?;
        BUILDERS[index](path, config).map_err(|e| match e {
            Error::Invalid(message) => Error::Invalid(format!("model {key}: {message}")),
            other => other,
        })
    }

    /// Builds `key` under `path` as the head of `backbone`'s encoder, trained with it
    /// ([`FineTuned`]); `config` is the head's ([`Backbone::head_config`]).
    pub fn build_fine_tuned(
        key: &str,
        path: &nn::Path,
        config: &ModelConfig,
        backbone: &Backbone,
    ) -> Result<Box<dyn Model>> {
        let head = build(key, path, config)?;
        Ok(Box::new(FineTuned::new(path, backbone, head)?))
    }

    /// Trainable parameter count of `key` for `config` (BatchNorm running statistics are
    /// buffers and do not count).
    ///
    /// Builds the model on the CPU in a throwaway `VarStore`, which draws from libtorch's
    /// global generator: count before seeding the run.
    pub fn parameter_count(key: &str, config: &ModelConfig) -> Result<i64> {
        let store = nn::VarStore::new(Device::Cpu);
        build(key, &store.root(), config)?;
        let count: usize = store.trainable_variables().iter().map(Tensor::numel).sum();
        Ok(count as i64)
    }
}
