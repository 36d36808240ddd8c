//! The encoders that ship inside registry packages: their names, their widths and their
//! identity, known without opening them (a cache is looked up by it).

use super::encoder::EncoderId;
use crate::packages::{self, Holds, Package};

/// Name of the MiniLM encoder.
pub const MINILM: &str = "minilm";
/// Name of the GloVe encoder.
pub const GLOVE: &str = "glove";

/// Width of MiniLM's token states and embeddings.
pub const MINILM_DIM: usize = 384;
/// Width of a GloVe vector.
pub const GLOVE_DIM: usize = 50;

/// The package of the encoder called `name`, if there is one.
pub fn package(name: &str) -> Option<&'static Package> {
    packages::find(name, Holds::Encoder)
}

/// The identity of the packaged encoder `name` (`minilm` or `glove`), known without opening
/// it: caches are looked up by it, so a finished cache loads even in a build that cannot
/// run the encoder (MiniLM without the `torch` feature). Building a cache checks that the
/// opened encoder reports exactly this identity.
pub fn package_id(name: &str) -> Option<EncoderId> {
    let dim = match name {
        MINILM => MINILM_DIM,
        GLOVE => GLOVE_DIM,
        _ => return None,
    };
    package(name).map(|p| EncoderId {
        name: p.name.into(),
        package: p.package.into(),
        version: p.version.into(),
        sha256: p.sha256.into(),
        dim,
    })
}
