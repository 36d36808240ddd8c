//! What a preset's models need before any training: the input shapes its data calls
//! for, the encoder it fine-tunes (opened once for all its runs), and a check that every
//! model reads that input and its loss fits the targets.

use std::path::Path;

use crate::data::{Dataset, Inputs};
use crate::models::{self, InputShape, ModelConfig};
use crate::preset::{LoadedPreset, ModelSpec};
use crate::train::loss::LossFn;
use crate::{Error, Result};

/// The model shapes `data` calls for (without a position embedding; see
/// [`ModelSpec::positional_embedding`]).
pub fn model_config(data: &Dataset) -> Result<ModelConfig> {
    let input = match &data.inputs {
        Inputs::Images {
            channels,
            height,
            width,
            ..
        } => InputShape::Image {
            channels: *channels as i64,
            height: *height as i64,
            width: *width as i64,
        },
        Inputs::Tokens { tokens, dim, .. } | Inputs::TokenIds { tokens, dim, .. } => {
            InputShape::Tokens {
                dim: *dim as i64,
                max_tokens: *tokens as i64,
            }
        }
        Inputs::Embeddings { dim, .. } => InputShape::Embedding { dim: *dim as i64 },
        Inputs::EncoderIds { tokens, .. } => InputShape::EncoderIds {
            max_tokens: *tokens as i64,
        },
        Inputs::Text(_) => {
            return Err(Error::Invalid(format!(
                "data {} gives raw text, but models read images, token states or \
                 embeddings; set data.options.text = \"hashed\" or \"tokenizer\" to turn it \
                 into token states",
                data.source.name
            )));
        }
    };
    Ok(ModelConfig {
        input,
        outputs: data.targets.outputs() as i64,
        dropout: 0.1,
        positional_embedding: false,
        channels_last: false,
    })
}

/// The encoder a preset fine-tunes (`[train.encoder]`), opened once for all its runs.
pub(super) fn backbone(loaded: &LoadedPreset) -> Result<Option<models::Backbone>> {
    let preset = &loaded.preset;
    if !preset.fine_tunes() {
        return Ok(None);
    }
    let base = loaded.path.parent().unwrap_or(Path::new("."));
    let who = loaded.path.display().to_string();
    let (settings, _) =
        crate::text::encoder_input(&who, &preset.data_options, base)?.ok_or_else(|| {
            Error::Invalid(format!(
                "{who}: train.encoder needs data.options.text = \"encoder\""
            ))
        })?;
    let pretrained = crate::encoders::pretrained(
        &settings.encoder,
        settings.path.as_deref(),
        &crate::packages::cache_dir(),
    )?;
    Ok(Some(models::Backbone::new(
        pretrained,
        settings.pooling,
        settings.input,
    )))
}

/// Every model reads the input `data` gives, and its loss fits its targets.
pub(super) fn check_models(
    specs: &[&ModelSpec],
    data: &Dataset,
    config: &ModelConfig,
) -> Result<()> {
    for spec in specs {
        let info = models::info(&spec.key)?;
        if info.input != config.input.kind() {
            return Err(Error::Invalid(format!(
                "model {} reads {:?} input, but data {} gives {:?}",
                spec.key,
                info.input,
                data.source.name,
                config.input.kind()
            )));
        }
        LossFn::new(spec.train.loss, &data.targets, &[], tch::Device::Cpu)?;
    }
    Ok(())
}
