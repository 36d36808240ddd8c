//! A preset file: TOML read into raw types whose deserialisers say what each field
//! expects in plain words, then checked section by section, in file order, into a
//! [`Preset`] (so the first error is the first wrong field).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};

use super::spec::{LoadedPreset, ModelSpec, Preset, SCHEMA};
use crate::data::{DataOptions, DataSpec};
use crate::metrics::Metric;
use crate::slices::{Regime, Scheme, SlicingConfig, SplitConfig, Stratify, Timestamp, parse_vary};
use crate::train::{EncoderTraining, Loss, Optimizer, TrainConfig};
use crate::{Error, Result};

impl Preset {
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
    #[serde(default)]
    seen_classes: bool,
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
    encoder: Option<RawEncoderTraining>,
    channels_last: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEncoderTraining {
    learning_rate: Option<PositiveNumber>,
    weight_decay: Option<NonNegativeNumber>,
    warmup: Option<NonNegativeNumber>,
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
        let base = self.train.check(self.metric, &self.data.options)?;
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
            seen_classes: self.seen_classes,
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
    fn check(self, metric: Metric, options: &DataOptions) -> Result<TrainConfig, String> {
        if !self.loss.supports(metric) {
            return Err(format!(
                "metric: {metric} cannot be computed from a model trained with train.loss = {}",
                serde_json::to_value(self.loss).expect("a loss serialises")
            ));
        }
        let encoder = match &self.encoder {
            Some(raw) => Some(raw.check(self.optimizer, options)?),
            None => None,
        };
        Ok(TrainConfig {
            optimizer: self.optimizer,
            learning_rate: self.learning_rate.0,
            weight_decay: self.weight_decay.map_or(0.0, |w| w.0),
            grad_clip: self.grad_clip.map(|g| g.0),
            batch_size: self.batch_size.0,
            epochs: self.epochs.0,
            loss: self.loss,
            encoder,
            channels_last: self.channels_last.unwrap_or(false),
        })
    }
}

impl RawEncoderTraining {
    /// The fine-tuning settings, with their defaults; only under AdamW, and only for a
    /// transformer encoder of `text = "encoder"`.
    fn check(
        &self,
        optimizer: Optimizer,
        options: &DataOptions,
    ) -> Result<EncoderTraining, String> {
        if optimizer != Optimizer::Adamw {
            return Err(
                "train.encoder: fine-tuning an encoder trains it with AdamW; set \
                 train.optimizer = \"adamw\""
                    .into(),
            );
        }
        let text = options.get("text").and_then(|v| v.as_str());
        let encoder = options.get("encoder").and_then(|v| v.as_str());
        let Some(name) = encoder.filter(|_| text == Some("encoder")) else {
            return Err(
                "train.encoder: fine-tunes the encoder that data.options.text = \"encoder\" \
                 names, and this preset reads none"
                    .into(),
            );
        };
        if let Ok(row) = crate::encoders::entry(name)
            && row.kind != crate::encoders::EncoderKind::Transformer
        {
            return Err(format!(
                "train.encoder: {name} is {}, with nothing to fine-tune; only a text \
                 transformer is",
                row.kind.describe()
            ));
        }
        let warmup = self.warmup.map_or(0.1, |w| w.0);
        if warmup >= 1.0 {
            return Err(format!(
                "train.encoder.warmup: a fraction of the steps in [0, 1), got {warmup}"
            ));
        }
        Ok(EncoderTraining {
            learning_rate: self.learning_rate.map_or(2e-5, |v| v.0),
            weight_decay: self.weight_decay.map_or(0.01, |v| v.0),
            warmup,
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
