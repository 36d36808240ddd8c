//! Data sets as the rest of the pipeline sees them: rows with a timestamp, an input and a
//! target, plus the identity of the source (name, version, SHA-256) that provenance
//! records.
//!
//! Inputs are kept as flat `f32` buffers (row-major, one row after another) so that
//! everything up to training runs without libtorch; the training stage turns them into
//! tensors. A preset names its data with `source = "<name>"` (a generator or a corpus
//! known to [`load`]) or `path = "<file or folder>"`, and passes `[data.options]` to it
//! ([`Options`]).

pub mod corpora;
pub mod formats;
pub mod options;
pub mod synthetic;
pub mod text;
mod toy;

use std::path::{Path, PathBuf};

pub use options::Options;
pub use toy::{TOY_IMAGES, TOY_TOKENS};

use crate::artifacts::DataSource;
use crate::metrics::Metric;
use crate::preset::{DataOptions, DataSpec, Loss};
use crate::slices::Timestamp;
use crate::{Error, Result};

/// What is predicted; picks the loss and the default metric.
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
    /// The loss of the reference for this task.
    pub fn default_loss(self) -> Loss {
        match self {
            Task::Classification => Loss::CrossEntropy,
            Task::MultiLabel => Loss::WeightedBce,
            Task::Regression => Loss::WeightedMse,
        }
    }

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
    /// Cached encoder token states, `rows * tokens * dim` values; row `r` has
    /// `lengths[r]` real tokens followed by padding (zeros).
    Tokens {
        /// Tokens per row, padded.
        tokens: usize,
        /// State width.
        dim: usize,
        /// The states.
        states: Vec<f32>,
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
    /// of [`Inputs::Tokens`] for large corpora ([`text`]).
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
    /// Raw text, one string per row; models read it once it is turned into token states
    /// or embeddings.
    Text(Vec<String>),
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
            Inputs::TokenIds { tokens, ids, .. } => (ids.len(), *tokens),
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

/// What kind of thing a named source is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    /// Generated in Rust from a seed and options; nothing to fetch.
    Generator,
    /// A real corpus inside a registry package, fetched once by `drift data fetch`.
    Corpus,
}

/// A named data source.
#[derive(Clone, Copy, Debug)]
pub struct SourceInfo {
    /// The name presets use.
    pub name: &'static str,
    /// Generator or corpus.
    pub kind: SourceKind,
    /// One line on what it is.
    pub summary: &'static str,
    /// Licence and attribution.
    pub licence: &'static str,
}

/// Every named source, in a fixed order.
pub fn sources() -> Vec<SourceInfo> {
    let generator = |name, summary| SourceInfo {
        name,
        kind: SourceKind::Generator,
        summary,
        licence: "generated by drift (no third-party data)",
    };
    let mut all = vec![
        generator(
            TOY_IMAGES,
            "seeded 3x32x32 two-class images, 2000-2005, with covariate and concept drift",
        ),
        generator(
            TOY_TOKENS,
            "seeded token-state sequences, 2000-2005, three labels whose cue rotates",
        ),
        generator(
            synthetic::PORTRAITS,
            "seeded 3x32x32 face-like two-class images, 1905-2013 by default, with \
             covariate, label and concept drift knobs",
        ),
        generator(
            synthetic::TEXT,
            "seeded token states whose class words rotate, 7-label multi-label or 1-5 \
             rating, with covariate, label and concept drift knobs",
        ),
    ];
    all.extend(corpora::CORPORA.iter().map(|c| SourceInfo {
        name: c.name,
        kind: SourceKind::Corpus,
        summary: c.summary,
        licence: c.licence,
    }));
    all
}

/// Where fetched corpora live: `$DRIFT_DATA`, else `~/.cache/drift/data`.
pub fn cache_dir() -> PathBuf {
    match std::env::var_os("DRIFT_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => std::env::var_os("HOME")
            .map_or_else(|| PathBuf::from("."), PathBuf::from)
            .join(".cache/drift/data"),
    }
}

/// Loads the data a preset names with its options; `base` is the preset's folder, against
/// which a relative `path` (and a tokenizer path) is resolved. Text becomes model input as
/// the text options say ([`text`]).
pub fn load(spec: &DataSpec, options: &DataOptions, base: &Path) -> Result<Dataset> {
    let who = match spec {
        DataSpec::Source(name) => name.clone(),
        DataSpec::Path(path) => base.join(path).display().to_string(),
    };
    let opts = Options::new(&who, options);
    let data = match spec {
        DataSpec::Source(name) => named(name, &opts)?,
        DataSpec::Path(path) => formats::load(&base.join(path), &opts)?,
    };
    let data = if matches!(data.inputs, Inputs::Text(_)) {
        text::apply(data, &text::TextInput::from_options(&opts, base)?)?
    } else {
        data
    };
    opts.finish()?;
    data.check()?;
    Ok(data)
}

fn named(name: &str, opts: &Options) -> Result<Dataset> {
    Ok(match name {
        TOY_IMAGES => toy::images(),
        TOY_TOKENS => toy::tokens(),
        synthetic::PORTRAITS => synthetic::portraits(opts)?,
        synthetic::TEXT => synthetic::text(opts)?,
        corpora::SOTU => corpora::sotu::load(&cache_dir(), opts)?,
        corpora::HEALTHTWEETS => corpora::healthtweets::load(&cache_dir(), opts)?,
        corpora::EMOJI => corpora::emoji::load(&cache_dir(), opts)?,
        _ => {
            let known: Vec<&str> = sources().iter().map(|s| s.name).collect();
            return Err(Error::Invalid(format!(
                "unknown data source {name:?} (known: {})",
                known.join(", ")
            )));
        }
    })
}
