//! Presets: the TOML description of one experiment (data, slicing, split, regime, models,
//! seeds, optimiser and metric), checked into a typed [`Preset`] before any work starts.
//!
//! Every error names the file and the field path, e.g.
//! `presets/x.toml: models[2].epochs: expected a positive integer, got 0`. A preset's
//! content hash is the SHA-256 of its canonical JSON form (the checked [`Preset`]
//! serialised with fields in declaration order), so comments and layout do not change it.
//! See `presets/README.md` for every field.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};

use crate::data::{DataOptions, DataSpec, Dataset};
use crate::metrics::Metric;
use crate::slices::{
    Regime, Scheme, SliceSplit, SlicingConfig, SplitConfig, Stratify, Timeline, Timestamp, Varied,
    cap_slices, derived_seed, downsample_slices, is_only_init, parse_vary, slice_rows, split_slice,
};
use crate::train::{Loss, Optimizer, TrainConfig};
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

    /// The data run seed `seed` trains on, as models read it; `base` is the preset's folder.
    pub fn load_data(&self, base: &Path, seed: u64) -> Result<Dataset> {
        crate::text::load(&self.data, &self.data_options_for(seed), base)
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

    /// Reads and checks a preset file.
    pub fn load(path: &Path) -> Result<LoadedPreset> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let preset = Self::parse(&text).map_err(|message| Error::Preset {
            path: path.to_path_buf(),
            message,
        })?;
        let sha256 = preset.content_hash();
        Ok(LoadedPreset {
            preset,
            path: path.to_path_buf(),
            sha256,
        })
    }

    /// Parses and checks preset text; the error is `field.path: problem`.
    pub fn parse(text: &str) -> Result<Preset, String> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let message = e.message().trim_end().to_string();
            match e.span() {
                Some(span) => {
                    let line = text[..span.start].matches('\n').count() + 1;
                    format!("line {line}: {message}")
                }
                None => message,
            }
        })?;
        let raw: RawPreset =
            serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
                let path = e.path().to_string();
                let message = e.into_inner().message().trim_end().to_string();
                // serde names a missing field in its parent's message; name it in the path.
                let missing = message
                    .strip_prefix("missing field `")
                    .and_then(|m| m.strip_suffix('`'));
                match (path.as_str(), missing) {
                    (".", Some(field)) => format!("{field}: required, but missing"),
                    (_, Some(field)) => format!("{path}.{field}: required, but missing"),
                    (".", None) => message,
                    (_, None) => format!("{path}: {message}"),
                }
            })?;
        raw.check()
    }

    /// SHA-256 (hex) of the canonical JSON form.
    pub fn content_hash(&self) -> String {
        crate::checksum::sha256_hex(&serde_json::to_vec(self).expect("a preset serialises"))
    }
}

/// Every `*.toml` file directly in `dir`, sorted by name.
pub fn preset_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| Error::io(dir, e))?.path();
        if path.extension().is_some_and(|e| e == "toml") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

// ---- the file format -------------------------------------------------------------------

/// Reads any TOML value, then checks it with `check`, so the message says what was
/// expected in plain words rather than in serde's type names.
fn expect<'de, D, T>(
    d: D,
    what: &str,
    check: impl Fn(&toml::Value) -> Option<T>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    let value = toml::Value::deserialize(d)?;
    check(&value).ok_or_else(|| {
        let got = match &value {
            toml::Value::String(s) => format!("{s:?}"),
            toml::Value::Table(_) => "a table".into(),
            toml::Value::Array(_) => "an array".into(),
            other => other.to_string(),
        };
        serde::de::Error::custom(format!("expected {what}, got {got}"))
    })
}

macro_rules! checked_value {
    ($name:ident, $inner:ty, $what:literal, $check:expr) => {
        #[derive(Clone, Copy, Debug)]
        struct $name($inner);
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                expect(d, $what, $check).map($name)
            }
        }
    };
}

checked_value!(PositiveInt, u64, "a positive integer", |v| v
    .as_integer()
    .filter(|&i| i > 0)
    .map(|i| i as u64));
checked_value!(NonNegativeInt, u64, "a non-negative integer", |v| v
    .as_integer()
    .filter(|&i| i >= 0)
    .map(|i| i as u64));
checked_value!(PositiveNumber, f64, "a positive number", |v| number(v)
    .filter(|&x| x > 0.0 && x.is_finite()));
checked_value!(NonNegativeNumber, f64, "a non-negative number", |v| number(
    v
)
.filter(|&x| x >= 0.0 && x.is_finite()));
checked_value!(Fraction, f64, "a number strictly between 0 and 1", |v| {
    number(v).filter(|&x| x > 0.0 && x < 1.0)
});
checked_value!(
    Date,
    Timestamp,
    "a date: a year such as 1905 or a string \"YYYY\", \"YYYY-MM\" or \"YYYY-MM-DD\"",
    |v| match v {
        toml::Value::Integer(y) => i32::try_from(*y)
            .ok()
            .and_then(|y| Timestamp::from_year(y).ok()),
        toml::Value::String(s) => Timestamp::parse(s).ok(),
        _ => None,
    }
);

fn number(v: &toml::Value) -> Option<f64> {
    v.as_float().or_else(|| v.as_integer().map(|i| i as f64))
}

/// The longest name: a folder name is at most 255 bytes on common file systems, and a
/// name is joined with others in file names (`<cutoff>-on-<slice>.json`, figure names).
pub const MAX_NAME: usize = 100;

/// A name used as a folder or registry key: lower-case letters, digits, `_` and `-`,
/// starting with a letter or digit, at most [`MAX_NAME`] bytes.
fn identifier(v: &toml::Value) -> Option<String> {
    let s = v.as_str()?;
    let ok = s.len() <= MAX_NAME
        && s.bytes()
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    ok.then(|| s.to_string())
}

#[derive(Clone, Debug)]
struct Identifier(String);
impl<'de> Deserialize<'de> for Identifier {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        expect(
            d,
            "a name of at most 100 lower-case letters, digits, '_' and '-'",
            identifier,
        )
        .map(Identifier)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPreset {
    schema: NonNegativeInt,
    name: Identifier,
    description: Option<String>,
    seeds: Vec<NonNegativeInt>,
    vary: Option<Vec<String>>,
    metric: Metric,
    data: RawData,
    slicing: RawSlicing,
    #[serde(default)]
    split: RawSplit,
    regime: RawRegime,
    train: RawTrain,
    models: Vec<RawModel>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawData {
    source: Option<Identifier>,
    path: Option<String>,
    #[serde(default)]
    options: DataOptions,
}

#[derive(Deserialize, PartialEq, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum SchemeName {
    Yearly,
    HalfYearly,
    Quarterly,
    Decade,
    Edges,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSlicing {
    scheme: SchemeName,
    edges: Option<Vec<Date>>,
    start: Option<Date>,
    end: Option<Date>,
    min_rows: Option<PositiveInt>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSplit {
    train_fraction: Option<Fraction>,
    seed: Option<NonNegativeInt>,
    stratify: Option<StratifyName>,
    #[serde(default)]
    downsample: bool,
    max_rows: Option<PositiveInt>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum StratifyName {
    Auto,
    Never,
}

#[derive(Deserialize, PartialEq, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum RegimeName {
    Cumulative,
    Single,
    Window,
    Finetune,
    FinetuneCumulative,
    SelfLabel,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRegime {
    kind: RegimeName,
    window: Option<PositiveInt>,
    /// Self-label: the anchor slice, 0 for the first (the default).
    anchor: Option<NonNegativeInt>,
    /// Self-label: label every slice after the anchor, not only the row's own.
    accumulate: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrain {
    optimizer: Optimizer,
    learning_rate: PositiveNumber,
    weight_decay: Option<NonNegativeNumber>,
    grad_clip: Option<PositiveNumber>,
    batch_size: PositiveInt,
    epochs: PositiveInt,
    loss: Loss,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    key: Identifier,
    family: Option<Identifier>,
    learning_rate: Option<PositiveNumber>,
    weight_decay: Option<NonNegativeNumber>,
    batch_size: Option<PositiveInt>,
    epochs: Option<PositiveInt>,
    positional_embedding: Option<bool>,
}

impl RawPreset {
    /// The checks that span fields, after every field has the right type, one section of
    /// the file after another (so the first error is the first wrong field in file order).
    fn check(self) -> Result<Preset, String> {
        if self.schema.0 != u64::from(SCHEMA) {
            return Err(format!(
                "schema: this version of drift reads schema {SCHEMA}, not {}",
                self.schema.0
            ));
        }
        let data = self.data.spec()?;
        let slicing = self.slicing.check()?;
        let split = self.split.config();
        let regime = self.regime.check()?;
        let seeds = check_seeds(&self.seeds)?;
        let vary = parse_vary(self.vary.as_deref())?;
        let base = self.train.check(self.metric)?;
        let models = check_models(self.models, &base)?;
        Ok(Preset {
            schema: SCHEMA,
            name: self.name.0,
            description: self.description,
            data,
            data_options: self.data.options,
            slicing,
            split,
            downsample: self.split.downsample,
            max_rows: self.split.max_rows.map(|n| n.0 as usize),
            regime,
            seeds,
            vary,
            metric: self.metric,
            models,
        })
    }
}

impl RawData {
    /// Exactly one of `source` (a known source) and `path` (not empty).
    fn spec(&self) -> Result<DataSpec, String> {
        match (&self.source, &self.path) {
            (Some(source), None) => {
                crate::data::source(&source.0).map_err(|e| format!("data.source: {e}"))?;
                Ok(DataSpec::Source(source.0.clone()))
            }
            (None, Some(path)) if !path.is_empty() => Ok(DataSpec::Path(path.into())),
            (None, Some(_)) => Err("data.path: must not be empty".into()),
            _ => Err("data: give exactly one of source and path".into()),
        }
    }
}

impl RawSlicing {
    /// The scheme with its edges (only for `edges`, increasing), and `end` after `start`.
    fn check(self) -> Result<SlicingConfig, String> {
        let scheme = match (self.scheme, self.edges) {
            (SchemeName::Edges, Some(edges)) => {
                let edges: Vec<Timestamp> = edges.into_iter().map(|d| d.0).collect();
                if edges.is_empty() {
                    return Err("slicing.edges: needs at least one edge".into());
                }
                if let Some(k) = (1..edges.len()).find(|&k| edges[k] <= edges[k - 1]) {
                    return Err(format!(
                        "slicing.edges[{k}]: {} is not after {}: edges must increase",
                        edges[k],
                        edges[k - 1]
                    ));
                }
                Scheme::Edges(edges)
            }
            (SchemeName::Edges, None) => {
                return Err("slicing.edges: required when slicing.scheme = \"edges\"".into());
            }
            (_, Some(_)) => {
                return Err("slicing.edges: only allowed when slicing.scheme = \"edges\"".into());
            }
            (SchemeName::Yearly, None) => Scheme::Yearly,
            (SchemeName::HalfYearly, None) => Scheme::HalfYearly,
            (SchemeName::Quarterly, None) => Scheme::Quarterly,
            (SchemeName::Decade, None) => Scheme::Decade,
        };
        if let (Some(start), Some(end)) = (self.start, self.end)
            && end.0 <= start.0
        {
            return Err(format!(
                "slicing.end: {} is not after slicing.start {}",
                end.0, start.0
            ));
        }
        Ok(SlicingConfig {
            scheme,
            start: self.start.map(|d| d.0),
            end: self.end.map(|d| d.0),
            min_rows: self.min_rows.map_or(1, |n| n.0 as usize),
        })
    }
}

impl RawSplit {
    /// The split, with the defaults for what the preset leaves out.
    fn config(&self) -> SplitConfig {
        let defaults = SplitConfig::default();
        SplitConfig {
            train_fraction: self.train_fraction.map_or(defaults.train_fraction, |f| f.0),
            seed: self.seed.map_or(defaults.seed, |s| s.0),
            stratify: match self.stratify {
                None => defaults.stratify,
                Some(StratifyName::Auto) => Stratify::Auto,
                Some(StratifyName::Never) => Stratify::Never,
            },
        }
    }
}

impl RawRegime {
    /// The regime, each option given only to the kind that has it.
    fn check(&self) -> Result<Regime, String> {
        if self.kind != RegimeName::SelfLabel {
            for (field, set) in [
                ("anchor", self.anchor.is_some()),
                ("accumulate", self.accumulate.is_some()),
            ] {
                if set {
                    return Err(format!(
                        "regime.{field}: only allowed when regime.kind = \"self-label\""
                    ));
                }
            }
        }
        Ok(match (self.kind, self.window) {
            (RegimeName::Window, Some(w)) => Regime::Window(w.0 as usize),
            (RegimeName::Window, None) => {
                return Err("regime.window: required when regime.kind = \"window\"".into());
            }
            (_, Some(_)) => {
                return Err("regime.window: only allowed when regime.kind = \"window\"".into());
            }
            (RegimeName::Cumulative, None) => Regime::Cumulative,
            (RegimeName::Single, None) => Regime::Single,
            (RegimeName::Finetune, None) => Regime::Finetune,
            (RegimeName::FinetuneCumulative, None) => Regime::FinetuneCumulative,
            (RegimeName::SelfLabel, None) => Regime::SelfLabel {
                anchor: self.anchor.map_or(0, |a| a.0 as usize),
                accumulate: self.accumulate.unwrap_or(false),
            },
        })
    }
}

/// At least one seed, none twice.
fn check_seeds(seeds: &[NonNegativeInt]) -> Result<Vec<u64>, String> {
    if seeds.is_empty() {
        return Err("seeds: needs at least one seed".into());
    }
    let seeds: Vec<u64> = seeds.iter().map(|s| s.0).collect();
    if let Some(k) = (1..seeds.len()).find(|&k| seeds[..k].contains(&seeds[k])) {
        return Err(format!("seeds[{k}]: seed {} appears twice", seeds[k]));
    }
    Ok(seeds)
}

impl RawTrain {
    /// The training settings every model starts from; the loss must yield what `metric`
    /// reads.
    fn check(self, metric: Metric) -> Result<TrainConfig, String> {
        if !self.loss.supports(metric) {
            return Err(format!(
                "metric: {metric} cannot be computed from a model trained with train.loss = {}",
                serde_json::to_value(self.loss).expect("a loss serialises")
            ));
        }
        Ok(TrainConfig {
            optimizer: self.optimizer,
            learning_rate: self.learning_rate.0,
            weight_decay: self.weight_decay.map_or(0.0, |w| w.0),
            grad_clip: self.grad_clip.map(|g| g.0),
            batch_size: self.batch_size.0,
            epochs: self.epochs.0,
            loss: self.loss,
        })
    }
}

/// At least one model, none twice, each a registry key with `base` and its overrides.
fn check_models(raw: Vec<RawModel>, base: &TrainConfig) -> Result<Vec<ModelSpec>, String> {
    if raw.is_empty() {
        return Err("models: needs at least one [[models]] entry".into());
    }
    let mut models: Vec<ModelSpec> = Vec::new();
    for (k, m) in raw.into_iter().enumerate() {
        if models.iter().any(|other| other.key == m.key.0) {
            return Err(format!("models[{k}].key: model {} appears twice", m.key.0));
        }
        models.push(m.check(k, base)?);
    }
    Ok(models)
}

impl RawModel {
    /// Model `k` of the preset: its family, its positional embedding (text Transformers
    /// only) and `base` with its overrides.
    fn check(self, k: usize, base: &TrainConfig) -> Result<ModelSpec, String> {
        let info = crate::models::info(&self.key.0).map_err(|e| format!("models[{k}].key: {e}"))?;
        let family = self.family.map_or_else(|| info.family.to_string(), |f| f.0);
        let positional_embedding = self.positional_embedding.unwrap_or(false);
        if positional_embedding && info.family != "transformer" {
            return Err(format!(
                "models[{k}].positional_embedding: only the text Transformers (tx_*) \
                 have one, not {}",
                self.key.0
            ));
        }
        let mut train = base.clone();
        if let Some(v) = self.learning_rate {
            train.learning_rate = v.0;
        }
        if let Some(v) = self.weight_decay {
            train.weight_decay = v.0;
        }
        if let Some(v) = self.batch_size {
            train.batch_size = v.0;
        }
        if let Some(v) = self.epochs {
            train.epochs = v.0;
        }
        Ok(ModelSpec {
            key: self.key.0,
            family,
            train,
            positional_embedding,
        })
    }
}
