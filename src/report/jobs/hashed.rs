//! [`Hashed`]: every input of the build hashed once, from which each job takes the
//! inputs it is made from.

use std::path::Path;

use crate::Result;
use crate::report::layout::{MODELS, code_hash};
use crate::report::manifest::{self, InputHashes};
use crate::report::study::LoadedStudy;

/// Every input of the build, hashed once: each study's files (artifacts and presets), the
/// model listing and the code ([`code_hash`]). Jobs take their inputs from here.
pub struct Hashed {
    studies: Vec<InputHashes>,
    models: InputHashes,
    code: String,
}

impl Hashed {
    /// Hashes the inputs of `studies` under `root`.
    pub fn new(root: &Path, studies: &[LoadedStudy]) -> Result<Self> {
        Ok(Hashed {
            studies: studies
                .iter()
                .map(|s| manifest::hash_files(root, &s.inputs))
                .collect::<Result<_>>()?,
            models: manifest::hash_files(root, &[MODELS])?,
            code: code_hash(root)?,
        })
    }

    /// The SHA-256 of the code.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The inputs of an output made from the studies at `at` (their files and the code).
    pub fn of(&self, at: impl IntoIterator<Item = usize>) -> InputHashes {
        let mut inputs = InputHashes::new();
        for i in at {
            inputs.extend(self.studies[i].iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        inputs.insert("src".into(), self.code.clone());
        inputs
    }

    /// As [`Hashed::of`], plus the model listing.
    pub fn with_models(&self, at: impl IntoIterator<Item = usize>) -> InputHashes {
        let mut inputs = self.of(at);
        inputs.extend(self.models.iter().map(|(k, v)| (k.clone(), v.clone())));
        inputs
    }

    /// Every input: all studies, the model listing and the code.
    pub fn all(&self) -> InputHashes {
        self.with_models(0..self.studies.len())
    }
}
