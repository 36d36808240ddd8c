//! The presets a studies file names, each loaded once with its data: the data identity
//! its runs must have recorded and the state of the encoder cache it reads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::item::State;
use crate::baseline::Baseline;
use crate::data::DataSource;
use crate::preset::{LoadedPreset, Preset};
use crate::report::study::StudySpec;
use crate::slices::Varied;
use crate::{Error, Result};

/// The data identity a preset's runs must record, with its baseline and number of
/// cutoffs; an error text when it cannot be known yet.
pub(super) type DataIdentity = std::result::Result<(Expected, Baseline, usize), String>;

/// The data identity a preset's runs must have recorded.
pub(super) enum Expected {
    /// The data set's, as it loads here.
    Known(DataSource),
    /// An encoder preset whose cache this machine has not built: the identity of the
    /// cache `key` and `input` kind of the texts of `source`, wherever it was encoded
    /// ([`crate::text::is_encoded_identity`]), so that a fresh checkout can check the
    /// committed runs without running the encoder.
    Encoded {
        source: DataSource,
        key: String,
        input: &'static str,
    },
}

/// What loading a preset's data found.
struct Inspected {
    /// The key and state of its encoder cache, when it reads one.
    cache: Option<(String, State)>,
    data: DataIdentity,
    /// Each seed's own data identity, when the seeds vary the data (else empty).
    per_seed: BTreeMap<u64, DataSource>,
}

/// Loads a preset's data (without building an encoder cache) for the identity its runs
/// must record.
fn inspect(loaded: &LoadedPreset, file: &Path) -> Result<Inspected> {
    let preset = &loaded.preset;
    let base = loaded.path.parent().unwrap_or(Path::new("."));
    let who = file.display().to_string();
    let mut cache = None;
    // A preset that fine-tunes its encoder reads token ids, never a cache.
    let cached = match preset.fine_tunes() {
        true => None,
        false => crate::text::encoder_input(&who, &preset.data_options, base)?,
    };
    if let Some((settings, raw)) = cached {
        let texts = crate::data::load(&preset.data, &raw, base)?;
        let crate::data::Inputs::Text(list) = &texts.inputs else {
            return Err(Error::Invalid(format!(
                "{who}: text = \"encoder\" needs a source that yields text"
            )));
        };
        let spec = settings.spec(&texts.source, list)?;
        let built = crate::encoders::cache::Cache::open(&crate::encoders::cache::root(), &spec);
        let state = match built {
            Ok(Some(_)) => State::Done,
            Ok(None) => State::Missing(format!("{} cache not built", settings.encoder)),
            Err(e) => State::Stale(e.to_string()),
        };
        let done = state == State::Done;
        cache = Some((spec.key(), state));
        if !done {
            let cutoffs = preset.plan(&texts, preset.seeds[0])?.timeline.slices.len();
            return Ok(Inspected {
                per_seed: BTreeMap::new(),
                cache,
                data: Ok((
                    Expected::Encoded {
                        source: texts.source.clone(),
                        key: spec.key(),
                        input: settings.input.name(),
                    },
                    Baseline::for_targets(&texts.targets),
                    cutoffs,
                )),
            });
        }
    }
    let data = preset.load_data(base, preset.seeds[0])?;
    let cutoffs = preset.plan(&data, preset.seeds[0])?.timeline.slices.len();
    let mut per_seed = BTreeMap::new();
    if preset.varied().contains(&Varied::Data) {
        for &seed in &preset.seeds {
            per_seed.insert(seed, preset.load_data(base, seed)?.source);
        }
    }
    Ok(Inspected {
        per_seed,
        cache,
        data: Ok((
            Expected::Known(data.source.clone()),
            Baseline::for_targets(&data.targets),
            cutoffs,
        )),
    })
}

/// A preset of the studies, loaded once.
pub(super) struct PresetInfo {
    /// The preset and its content hash.
    pub(super) loaded: LoadedPreset,
    /// The preset file as runs are given it.
    pub(super) file: PathBuf,
    /// The data identity its runs must record.
    pub(super) data: DataIdentity,
    /// Its encoder cache's key and state, when it reads one.
    pub(super) cache: Option<(String, State)>,
    /// Each seed's own data identity, when the seeds vary the data (else empty).
    pub(super) per_seed: BTreeMap<u64, DataSource>,
    /// A study that names it asks for drift detectors.
    pub(super) detectors: bool,
}

/// Loads every preset the studies name (each once, in the order first named) and, one
/// preset per core, its data: loading the data is most of the planning.
pub(super) fn load_presets(
    studies: &Path,
    presets: &Path,
    specs: &[StudySpec],
) -> Result<Vec<PresetInfo>> {
    let mut listed: Vec<(LoadedPreset, PathBuf)> = Vec::new();
    for spec in specs {
        for name in &spec.presets {
            if listed.iter().any(|(l, _)| l.preset.name == *name) {
                continue;
            }
            let file = presets.join(format!("{name}.toml"));
            let loaded = Preset::load(&file).map_err(|e| {
                Error::Invalid(format!(
                    "{}: study {:?} names preset {name:?}: {e}",
                    studies.display(),
                    spec.name
                ))
            })?;
            if loaded.preset.name != *name {
                return Err(Error::Invalid(format!(
                    "{}: is named {:?}, but study {:?} lists it as {name:?}",
                    file.display(),
                    loaded.preset.name,
                    spec.name
                )));
            }
            listed.push((loaded, file));
        }
    }
    let inspected: Vec<Inspected> = listed
        .par_iter()
        .map(|(loaded, file)| inspect(loaded, file))
        .collect::<Result<_>>()?;
    Ok(listed
        .into_iter()
        .zip(inspected)
        .map(|((loaded, file), found)| PresetInfo {
            data: found.data,
            file,
            cache: found.cache,
            per_seed: found.per_seed,
            detectors: specs
                .iter()
                .any(|s| s.detectors && s.presets.contains(&loaded.preset.name)),
            loaded,
        })
        .collect())
}
