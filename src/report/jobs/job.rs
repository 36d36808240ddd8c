//! [`OutputJob`]: one output of the build, with the inputs it is made from and the
//! closure that renders its bytes.

use crate::report::manifest::InputHashes;
use crate::{Error, Result};

/// One output: where it goes, what it is made from, and how to make it.
pub struct OutputJob {
    /// Path relative to the root.
    pub path: String,
    /// Input path (or `src`) to SHA-256.
    pub inputs: InputHashes,
    render: Box<dyn Fn() -> Result<Vec<u8>> + Send + Sync>,
}

impl OutputJob {
    pub(super) fn new(
        path: String,
        inputs: InputHashes,
        render: impl Fn() -> Result<Vec<u8>> + Send + Sync + 'static,
    ) -> Self {
        OutputJob {
            path,
            inputs,
            render: Box::new(render),
        }
    }

    /// Renders the output's bytes.
    pub fn render(&self) -> Result<Vec<u8>> {
        (self.render)().map_err(|e| Error::Invalid(format!("{}: {e}", self.path)))
    }
}
