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
mod table;
#[cfg(feature = "torch")]
pub mod text;
mod tokenizer;

pub use encoder::{EmbeddingPooling, Encoded, Encoder, EncoderId, local_version};
pub use table::{
    ENCODERS, EncoderEntry, EncoderKind, EncoderSource, GLOVE, GLOVE_DIM, LOCAL, MINILM,
    MINILM_DIM, MPNET, MPNET_DIM, entry, model_dir, names, package, package_id,
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
    let row = entry(name).map_err(crate::Error::Invalid)?;
    match (row.source, path) {
        (EncoderSource::Folder, None) => {
            return Err(crate::Error::Invalid(format!(
                "encoder {name} reads a folder of your own: give its path"
            )));
        }
        (EncoderSource::Package { .. }, Some(path)) => {
            return Err(crate::Error::Invalid(format!(
                "encoder {name} is packaged: a folder ({}) is only for {LOCAL}",
                path.display()
            )));
        }
        _ => {}
    }
    match row.kind {
        EncoderKind::StaticWords => Ok(Box::new(glove::Glove::from_package(cache)?)),
        #[cfg(feature = "torch")]
        EncoderKind::Transformer => {
            let encoder = match path {
                Some(dir) => text::TextEncoder::from_folder(dir)?,
                None => text::TextEncoder::from_package(name, cache)?,
            };
            let device = crate::device::resolve(device.parse()?)?;
            Ok(Box::new(encoder.to_device(device)?))
        }
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
