//! Frozen pretrained encoders: text in, token states and pooled embeddings out, computed
//! once per data set and cached ([`cache`]), so that every model and checkpoint of a
//! preset reads the same states and evaluation never runs the encoder again.
//!
//! Which encoders there are, where each comes from and how it opens is one table,
//! [`ENCODERS`] ([`table`], with "Adding an encoder"). The packaged ones are the real
//! encoders, fetched with `drift data fetch NAME` like the corpora ([`crate::packages`]);
//! `local` reads a folder in the Hugging Face hub's layout, of any architecture
//! [`text`] knows.

pub mod cache;
mod encoder;
pub mod glove;
#[cfg(feature = "torch")]
pub mod hub;
#[cfg(feature = "torch")]
pub mod image;
#[cfg(feature = "torch")]
pub mod layers;
mod table;
#[cfg(feature = "torch")]
pub mod text;
mod tokenizer;

pub use encoder::{EmbeddingPooling, Encoded, Encoder, EncoderId, local_version};
pub use table::{
    EFFICIENTNET_LITE_DIM, ENCODERS, EncoderEntry, EncoderKind, EncoderSource, GLOVE, GLOVE_DIM,
    LOCAL, MINILM, MINILM_DIM, MPNET, MPNET_DIM, entry, model_dir, names, package, package_id,
    text_encoders, text_names,
};
pub use tokenizer::parse_tokenizer;

use crate::Result;

/// Opens the encoder `name` of [`ENCODERS`]: a packaged one from the data cache `cache`
/// (where `drift data fetch` put it), `local` from the folder `path`; a transformer on
/// `device` (`cpu`, `auto`, `cuda`, `cuda:N`; it needs the `torch` feature), static word
/// vectors on the CPU.
pub fn open(
    name: &str,
    path: Option<&std::path::Path>,
    cache: &std::path::Path,
    device: &str,
) -> Result<Box<dyn Encoder>> {
    let row = source_entry(name, path)?;
    match row.kind {
        EncoderKind::StaticWords => Ok(Box::new(glove::Glove::from_package(cache)?)),
        #[cfg(feature = "torch")]
        EncoderKind::Transformer => {
            let encoder = text::TextEncoder::new(text::Pretrained::open(name, path, cache)?)?;
            let device = crate::device::resolve(device.parse()?)?;
            Ok(Box::new(encoder.to_device(device)?))
        }
        EncoderKind::Image => Err(crate::Error::Invalid(format!(
            "encoder {name} encodes images, not texts: give it to an image data set"
        ))),
        #[cfg(not(feature = "torch"))]
        EncoderKind::Transformer => {
            let _ = device;
            Err(crate::Error::Invalid(format!(
                "encoder {name} runs on libtorch: build drift with the `torch` feature \
                 (`cargo run --release --features torch -- ...`)"
            )))
        }
    }
}

/// The transformer encoder `name` of [`ENCODERS`] with its weights, to be fine-tuned
/// (`[train.encoder]` of a preset): a packaged one from `cache`, `local` from the folder
/// `path`.
#[cfg(feature = "torch")]
pub fn pretrained(
    name: &str,
    path: Option<&std::path::Path>,
    cache: &std::path::Path,
) -> Result<text::Pretrained> {
    let row = source_entry(name, path)?;
    if row.kind != EncoderKind::Transformer {
        return Err(crate::Error::Invalid(format!(
            "encoder {name} is {}: only a text transformer is fine-tuned",
            row.kind.describe()
        )));
    }
    text::Pretrained::open(name, path, cache)
}

/// The row of `name`, when `path` is given exactly for a folder encoder.
fn source_entry(name: &str, path: Option<&std::path::Path>) -> Result<&'static EncoderEntry> {
    let row = entry(name).map_err(crate::Error::Invalid)?;
    match (row.source, path) {
        (EncoderSource::Folder, None) => Err(crate::Error::Invalid(format!(
            "encoder {name} reads a folder of your own: give its path"
        ))),
        (EncoderSource::Package { .. }, Some(path)) => Err(crate::Error::Invalid(format!(
            "encoder {name} is packaged: a folder ({}) is only for {LOCAL}",
            path.display()
        ))),
        _ => Ok(row),
    }
}
