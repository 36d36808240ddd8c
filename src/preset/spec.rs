//! The checked preset ([`Preset`], one [`ModelSpec`] per model) and what follows from
//! it: each run seed's data options and split, its data, and the [`Plan`] of slices and
//! splits; and its content hash.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::data::{DataOptions, DataSpec, Dataset};
use crate::metrics::Metric;
use crate::slices::{
    Regime, SliceSplit, SlicingConfig, SplitConfig, Timeline, Varied, cap_slices, derived_seed,
    downsample_slices, is_only_init, slice_rows, split_slice,
};
use crate::train::TrainConfig;
use crate::{Error, Result};

/// The only schema version this crate reads.
pub const SCHEMA: u32 = 1;

/// One model of a preset with its resolved training settings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelSpec {
    /// Registry key, e.g. `cnn_s`.
    pub key: String,
    /// Family for averages (defaults to the registry's family of the key).
    pub family: String,
    /// The preset's `[train]` with this model's overrides applied.
    pub train: TrainConfig,
    /// A learned position embedding for a text Transformer (`tx_*`); off by default, as
    /// in the reference code. Left out of the canonical JSON when off.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub positional_embedding: bool,
}

/// A checked preset.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Preset {
    /// Schema version ([`SCHEMA`]).
    pub schema: u32,
    /// Name, also the artifact folder name.
    pub name: String,
    /// One-line description.
    pub description: Option<String>,
    /// The data.
    pub data: DataSpec,
    /// `[data.options]`: settings of the data source (e.g. a generator's drift knobs),
    /// checked by the source when it loads. Left out of the canonical JSON when empty.
    #[serde(skip_serializing_if = "DataOptions::is_empty")]
    pub data_options: DataOptions,
    /// How the timeline is cut.
    pub slicing: SlicingConfig,
    /// How each slice is split.
    pub split: SplitConfig,
    /// Down-sample every slice to the smallest one before splitting.
    pub downsample: bool,
    /// Cap every slice at this many rows before splitting (`split.max_rows`); left out of
    /// the canonical JSON when unset, so presets without it keep their hash.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_rows: Option<usize>,
    /// Which slices each cutoff trains on.
    pub regime: Regime,
    /// Training seeds.
    pub seeds: Vec<u64>,
    /// What the seeds vary ([`Varied`], canonical order, `init` always first); left out of
    /// the canonical JSON when only `init`, so presets that fix data and split keep the
    /// hash they had before `vary` existed.
    #[serde(skip_serializing_if = "is_only_init")]
    pub vary: Vec<Varied>,
    /// The metric of every cell.
    pub metric: Metric,
    /// Also score every cell on the rows whose class the cutoff's training rows contain
    /// (`matrix.json`'s `seen_classes`): single-label classification whose classes appear
    /// over time, such as outlets that start tweeting later. Left out of the canonical
    /// JSON when off, so presets without it keep their hash.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub seen_classes: bool,
    /// The models, in preset order.
    pub models: Vec<ModelSpec>,
}

/// A preset with where it came from and its content hash.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedPreset {
    /// The checked preset.
    pub preset: Preset,
    /// The file it was read from.
    pub path: PathBuf,
    /// SHA-256 (hex) of the canonical JSON of `preset`.
    pub sha256: String,
}

/// The timeline of a preset's data and each slice's split.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The slices.
    pub timeline: Timeline,
    /// One split per slice.
    pub splits: Vec<SliceSplit>,
}

impl Preset {
    /// What the seeds of this preset vary in fact: its `vary`, less `data` when its data is
    /// not drawn from a seed (corpora, files, the toy generators): what `run.json` records.
    pub fn varied(&self) -> Vec<Varied> {
        let seeded = match &self.data {
            DataSpec::Source(name) => crate::data::source(name).is_ok_and(|s| s.seeded),
            DataSpec::Path(_) => false,
        };
        self.vary
            .iter()
            .copied()
            .filter(|&v| v != Varied::Data || seeded)
            .collect()
    }

    /// Whether data or split differ between seeds (then each seed has its own, and its own
    /// baseline).
    pub fn varies_data_or_split(&self) -> bool {
        self.varied() != [Varied::Init]
    }

    /// The split of run seed `seed`: the preset's, with its seed derived from `seed` when
    /// the split varies ([`derived_seed`]).
    pub fn split_for(&self, seed: u64) -> SplitConfig {
        let mut split = self.split;
        if self.vary.contains(&Varied::Split) {
            split.seed = derived_seed(Varied::Split, self.split.seed, seed);
        }
        split
    }

    /// The `[data.options]` run seed `seed` loads with: the preset's, with the generator's
    /// `seed` (0 when unset) derived from `seed` when the data varies ([`derived_seed`]).
    pub fn data_options_for(&self, seed: u64) -> DataOptions {
        let mut options = self.data_options.clone();
        if self.varied().contains(&Varied::Data) {
            let base = options.get("seed").and_then(|v| v.as_u64()).unwrap_or(0);
            let derived = derived_seed(Varied::Data, base, seed);
            options.insert("seed".into(), derived.into());
        }
        options
    }

    /// Whether the preset trains its encoder with the heads (`[train.encoder]`).
    pub fn fine_tunes(&self) -> bool {
        self.models.iter().any(|m| m.train.encoder.is_some())
    }

    /// The data run seed `seed` trains on, as models read it (the encoder's own token ids
    /// when the preset fine-tunes it); `base` is the preset's folder.
    pub fn load_data(&self, base: &Path, seed: u64) -> Result<Dataset> {
        let options = self.data_options_for(seed);
        if self.fine_tunes() {
            crate::text::load_encoder_ids(&self.data, &options, base)
        } else {
            crate::text::load(&self.data, &options, base)
        }
    }

    /// Cuts, down-samples (when the preset says so) and splits `data` as the preset says
    /// for run seed `seed`, with [`Preset::split_for`] (the same for every seed when the
    /// split does not vary).
    pub fn plan(&self, data: &Dataset, seed: u64) -> Result<Plan> {
        let split = &self.split_for(seed);
        let mut timeline = slice_rows(&data.timestamps, &self.slicing)?;
        if timeline.slices.is_empty() {
            return Err(Error::Invalid(format!(
                "data {}: no slice has at least {} rows",
                data.source.name, self.slicing.min_rows
            )));
        }
        if let Some(anchor) = self.regime.anchor()
            && anchor + 1 >= timeline.slices.len()
        {
            return Err(Error::Invalid(format!(
                "regime.anchor: slice {anchor} leaves no later slice to self-label (data {} \
                 has {} slices)",
                data.source.name,
                timeline.slices.len()
            )));
        }
        if self.downsample {
            downsample_slices(&mut timeline.slices, split.seed);
        }
        if let Some(size) = self.max_rows {
            cap_slices(&mut timeline.slices, split.seed, size);
        }
        let splits = timeline
            .slices
            .iter()
            .map(|s| {
                let strata: Option<Vec<u32>> = data
                    .targets
                    .strata()
                    .map(|labels| s.rows.iter().map(|&r| labels[r]).collect());
                split_slice(&s.rows, strata.as_deref(), split, &s.label)
            })
            .collect();
        Ok(Plan { timeline, splits })
    }

    /// SHA-256 (hex) of the canonical JSON form.
    pub fn content_hash(&self) -> String {
        crate::checksum::sha256_hex(&serde_json::to_vec(self).expect("a preset serialises"))
    }
}
