//! Text to model input, the stage between the data and the models. The text models read token states `[T, D]` with a padding mask, a
//! linear head reads one embedding per row. Text becomes either the output of a frozen
//! encoder, computed once and cached ([`crate::encoders::cache`]), or token states by a bag
//! of embeddings: every token gets a fixed pseudo-random vector.
//!
//! `[data.options]` of any source or file that yields text:
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `text` | `"hashed"` | `"hashed"`: lower-cased words (runs of letters and digits); `"tokenizer"`: the ids of a Hugging Face `tokenizer.json` (e.g. the one in the MiniLM package); `"encoder"`: a frozen encoder's token states or pooled embeddings; `"raw"`: keep the text |
//! | `tokenizer` | none | path of the `tokenizer.json`, relative to the preset; needed by `"tokenizer"` |
//! | `text_dim` | 64 | width `D` of the token vectors (not with `"encoder"`: the encoder fixes it) |
//! | `max_tokens` | 128 | tokens kept per row (the first ones); padding fills the rest |
//! | `encoder` | required by `"encoder"` | an encoder of [`crate::encoders::ENCODERS`]: `"minilm"` (all-MiniLM-L6-v2, 384-d), `"mpnet"` (all-mpnet-base-v2, 768-d) or `"glove"` (GloVe 6B, 50-d), packaged (`drift data fetch NAME` first); `"local"`: a model folder of your own (BERT, RoBERTa, DistilBERT, ELECTRA, MPNet, DeBERTa-v2/v3 or ModernBERT). Transformers encode only in a build with the `torch` feature |
//! | `encoder_path` | required by `"local"` | the folder (relative to the preset) with `config.json`, `model.safetensors`, `tokenizer.json` and optionally `modules.json`; its identity is the SHA-256 of `model.safetensors` |
//! | `pooling` | `"mean"` | with `"encoder"`: `"mean"` over the real tokens or `"cls"` (the first token; not GloVe) |
//! | `input` | `"tokens"` | with `"encoder"`: `"tokens"` (token states, for `ffn`, `textcnn`, `bigru`, `tx`, ...) or `"pooled"` (one embedding per row, for `linear`) |
//!
//! With `text = "encoder"`, loading the data reads the cache of these texts and settings
//! (`<data cache>/encoded/<key>/`); when it is missing it is built first if this build can
//! run the encoder (GloVe always, MiniLM with the `torch` feature), else loading fails and
//! says to run `drift cache PRESET`. The data set's source identity
//! ([`crate::data::DataSource`]) then names the encoder, the settings and where the
//! cache was encoded in its version, and its SHA-256 is that of the cache key, the input
//! kind and that place, so runs with another encoder, `max_tokens`, pooling, input or
//! encoding never share checkpoints.
//!
//! A preset that fine-tunes its encoder (`[train.encoder]`) reads no cache: its texts
//! become the encoder's own token ids ([`load_encoder_ids`], [`Inputs::EncoderIds`]),
//! which the model runs through the encoder at every step ([`crate::models::Backbone`]).
//!
//! A token's vector depends only on the token (the word, or `id:<n>` for tokenizer ids):
//! `D` uniform values in `[-1, 1)` from a ChaCha20 stream keyed like the splits
//! (`drift-text-v1:0:<token>`), so it is the same in every data set and on every machine.
//! A row with no token gets one zero vector (models need at least one real token).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rand_core::Rng;

use crate::checksum::sha256_hex;
use crate::data::{self, DataOptions, DataSource, DataSpec, Dataset, Inputs, SourceOptions};
pub use crate::encoders::cache::Encoding;
use crate::encoders::cache::{self, Cache, CacheSpec, CachedInput, ENCODED_ON, encoded_identity};
use crate::encoders::{self, EmbeddingPooling, EncoderKind, EncoderSource, LOCAL};
use crate::slices::stream;
use crate::{Error, Result};

/// Whether `recorded`, the data identity a run recorded, is that of the data set a preset
/// with this cache `key` and `input` kind loads from `source`, wherever its cache was
/// encoded: what a run can be checked against when this machine has not built the cache.
pub fn is_encoded_identity(
    recorded: &DataSource,
    source: &DataSource,
    key: &str,
    input: &str,
) -> bool {
    let Some(computed_on) = recorded
        .version
        .rsplit_once(ENCODED_ON)
        .and_then(|(_, place)| place.strip_suffix(')'))
    else {
        return false;
    };
    recorded.name == source.name
        && recorded
            .version
            .starts_with(&format!("{} + ", source.version))
        && recorded.sha256 == sha256_hex(&encoded_identity(key, input, computed_on))
}

/// How text becomes model input.
#[derive(Clone, Debug)]
pub enum TextInput {
    /// Keep the text.
    Raw,
    /// Words, hashed to vectors.
    Hashed {
        /// Vector width.
        dim: usize,
        /// Tokens kept per row.
        max_tokens: usize,
    },
    /// Tokenizer ids, hashed to vectors.
    Tokenizer {
        /// The tokenizer.
        tokenizer: Box<tokenizers::Tokenizer>,
        /// Vector width.
        dim: usize,
        /// Tokens kept per row.
        max_tokens: usize,
    },
    /// A frozen encoder's output, through its cache.
    Encoder(EncoderText),
}

/// The settings of `text = "encoder"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncoderText {
    /// `minilm`, `glove` or `local`.
    pub encoder: String,
    /// With `local`: the folder with `config.json`, `model.safetensors` and
    /// `tokenizer.json` (resolved against the preset's folder).
    pub path: Option<PathBuf>,
    /// Tokens kept per row.
    pub max_tokens: usize,
    /// Pooling of the embeddings.
    pub pooling: EmbeddingPooling,
    /// Token states or pooled embeddings.
    pub input: CachedInput,
}

impl TextInput {
    /// Reads the text options; `base` resolves a relative tokenizer path.
    pub fn from_options(opts: &SourceOptions, base: &Path) -> Result<Self> {
        // The encoder options are read only with text = "encoder", so that the options
        // the other kinds read (and name in errors) stay as they were.
        if opts.peek("text") == Some("encoder") {
            return EncoderText::from_options(opts, base).map(TextInput::Encoder);
        }
        // "encoder" is read above; it is listed so that a bad value's error names it.
        let kind = opts.choice("text", "hashed", &["hashed", "tokenizer", "raw", "encoder"])?;
        let dim = opts.integer("text_dim", 64, 1, 4096)? as usize;
        let max_tokens = opts.integer("max_tokens", 128, 1, 65536)? as usize;
        let path = opts.string("tokenizer")?;
        Ok(match kind {
            "raw" => TextInput::Raw,
            "hashed" => TextInput::Hashed { dim, max_tokens },
            _ => {
                let path = base.join(path.ok_or_else(|| {
                    Error::Invalid(
                        "data.options.tokenizer: text = \"tokenizer\" needs the path of a \
                         tokenizer.json"
                            .into(),
                    )
                })?);
                let tokenizer = std::fs::read(&path)
                    .map_err(|e| e.to_string())
                    .and_then(|bytes| crate::encoders::parse_tokenizer(&bytes))
                    .map_err(|e| {
                        Error::Invalid(format!(
                            "{}: not a readable tokenizer.json: {e}",
                            path.display()
                        ))
                    })?;
                TextInput::Tokenizer {
                    tokenizer: Box::new(tokenizer),
                    dim,
                    max_tokens,
                }
            }
        })
    }
}

/// Lower-cased runs of letters and digits.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// The vector of `token`: `dim` uniform values in `[-1, 1)`.
pub fn token_vector(token: &str, dim: usize) -> Vec<f32> {
    let mut rng = stream("drift-text-v1", 0, token);
    (0..dim)
        .map(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
        .collect()
}

/// Turns a data set's text into model input as `input` says; other inputs pass through.
/// The vocabulary lists tokens in order of first appearance (index 0 is padding), so the
/// result depends only on the texts and the options.
pub fn apply(data: Dataset, input: &TextInput) -> Result<Dataset> {
    let Inputs::Text(texts) = &data.inputs else {
        return Ok(data);
    };
    let (dim, max_tokens) = match input {
        TextInput::Raw => return Ok(data),
        TextInput::Encoder(settings) => {
            return encode(data, settings, &Encoding::default()).map(|(data, ..)| data);
        }
        TextInput::Hashed { dim, max_tokens }
        | TextInput::Tokenizer {
            dim, max_tokens, ..
        } => (*dim, *max_tokens),
    };
    let mut vocabulary: HashMap<String, u32> = HashMap::new();
    let mut table = vec![0f32; dim];
    let mut ids = vec![0u32; texts.len() * max_tokens];
    let mut lengths = Vec::with_capacity(texts.len());
    for (r, text) in texts.iter().enumerate() {
        let tokens: Vec<String> = match input {
            TextInput::Tokenizer { tokenizer, .. } => tokenizer
                .encode(text.as_str(), false)
                .map_err(|e| Error::Invalid(format!("tokenizing row {r}: {e}")))?
                .get_ids()
                .iter()
                .take(max_tokens)
                .map(|id| format!("id:{id}"))
                .collect(),
            _ => words(text).take(max_tokens).collect(),
        };
        for (t, token) in tokens.into_iter().enumerate() {
            let next = vocabulary.len() as u32 + 1;
            ids[r * max_tokens + t] = *vocabulary.entry(token).or_insert_with_key(|token| {
                table.extend(token_vector(token, dim));
                next
            });
        }
        let n = ids[r * max_tokens..(r + 1) * max_tokens]
            .iter()
            .take_while(|&&id| id != 0)
            .count();
        lengths.push(n.max(1) as u32);
    }
    Ok(Dataset {
        inputs: Inputs::TokenIds {
            tokens: max_tokens,
            dim,
            ids,
            lengths,
            table,
        },
        ..data
    })
}

/// Loads the data a preset names and turns its text, if any, into model input as the
/// text options say: what training, evaluation and saliency read. `base` is the preset's
/// folder (relative data and tokenizer paths). An option neither the source nor the text
/// stage knows is an error, and the data set is checked.
pub fn load(spec: &DataSpec, options: &DataOptions, base: &Path) -> Result<Dataset> {
    load_as(spec, options, base, false)
}

/// Loads like [`load`], but a preset that fine-tunes its encoder (`[train.encoder]`)
/// reads the texts as the encoder's own token ids ([`Inputs::EncoderIds`], through
/// [`encoder_ids`]): no cache is read or built.
pub fn load_encoder_ids(spec: &DataSpec, options: &DataOptions, base: &Path) -> Result<Dataset> {
    load_as(spec, options, base, true)
}

fn load_as(spec: &DataSpec, options: &DataOptions, base: &Path, ids: bool) -> Result<Dataset> {
    let who = data::describe(spec, base);
    let opts = SourceOptions::new(&who, options);
    let mut dataset = data::read(spec, &opts, base)?;
    if matches!(dataset.inputs, Inputs::Text(_)) {
        dataset = match (TextInput::from_options(&opts, base)?, ids) {
            (TextInput::Encoder(settings), true) => {
                encoder_ids(dataset, &settings, &crate::packages::cache_dir())?
            }
            (_, true) => {
                return Err(Error::Invalid(format!(
                    "{who}: a fine-tuned encoder reads text = \"encoder\""
                )));
            }
            (input, false) => apply(dataset, &input)?,
        };
    } else if ids {
        return Err(Error::Invalid(format!(
            "{who}: a fine-tuned encoder reads text, and this source yields none"
        )));
    } else if matches!(dataset.inputs, Inputs::Images { .. })
        && let Some(settings) = crate::image::EncoderImages::from_options(&opts, base)?
    {
        dataset = crate::image::encode(dataset, &settings, &Encoding::default())?.0;
    }
    opts.finish()?;
    dataset.check()?;
    Ok(dataset)
}

/// The text options that [`TextInput::Encoder`] reads; left out to load the raw texts.
const ENCODER_OPTIONS: [&str; 6] = [
    "text",
    "encoder",
    "encoder_path",
    "max_tokens",
    "pooling",
    "input",
];

/// For data options with `text = "encoder"`: the encoder settings, and the source's own
/// options (the text options left out, so [`data::load`] gives the raw texts the cache is
/// built from); `None` for any other text input. `who` names the preset in errors.
pub fn encoder_input(
    who: &str,
    options: &DataOptions,
    base: &Path,
) -> Result<Option<(EncoderText, DataOptions)>> {
    let opts = SourceOptions::new(who, options);
    let TextInput::Encoder(settings) = TextInput::from_options(&opts, base)? else {
        return Ok(None);
    };
    let mut raw = options.clone();
    for key in ENCODER_OPTIONS {
        raw.remove(key);
    }
    Ok(Some((settings, raw)))
}

impl EncoderText {
    /// Reads `encoder`, `encoder_path`, `max_tokens`, `pooling` and `input` (with
    /// `text = "encoder"`); `base` resolves a relative `encoder_path`.
    pub fn from_options(opts: &SourceOptions, base: &Path) -> Result<Self> {
        opts.choice("text", "encoder", &["encoder"])?;
        for key in ["text_dim", "tokenizer"] {
            if opts.given(key) {
                // Read it so that the error below is the one reported.
                let _ = opts.string(key);
                return Err(Error::Invalid(format!(
                    "data.options.{key}: not used with text = \"encoder\" (the encoder fixes \
                     its tokens and their width); leave it out"
                )));
            }
        }
        if !opts.given("encoder") {
            return Err(Error::Invalid(format!(
                "data.options.encoder: text = \"encoder\" needs an encoder ({})",
                encoders::text_names()
            )));
        }
        // Image encoders are read by image sources, not here.
        let names: Vec<&str> = encoders::text_encoders().map(|e| e.name).collect();
        let encoder = opts.choice("encoder", names[0], &names)?;
        let row = encoders::entry(encoder).map_err(Error::Invalid)?;
        let path = match (row.source, opts.string("encoder_path")?) {
            (EncoderSource::Folder, Some(path)) => Some(base.join(path)),
            (EncoderSource::Folder, None) => {
                return Err(Error::Invalid(format!(
                    "data.options.encoder_path: encoder = \"{encoder}\" needs the folder of a \
                     model (config.json, model.safetensors, tokenizer.json)"
                )));
            }
            (_, Some(_)) => {
                return Err(Error::Invalid(format!(
                    "data.options.encoder_path: only with encoder = \"{LOCAL}\""
                )));
            }
            (_, None) => None,
        };
        let max_tokens = opts.integer("max_tokens", 128, 1, 65536)? as usize;
        let pooling = match opts.choice("pooling", "mean", &["mean", "cls"])? {
            "cls" => EmbeddingPooling::Cls,
            _ => EmbeddingPooling::Mean,
        };
        if pooling == EmbeddingPooling::Cls && row.kind == EncoderKind::StaticWords {
            return Err(Error::Invalid(format!(
                "data.options.pooling: \"cls\" needs a [CLS] token, which {encoder}'s static \
                 word vectors do not have; use \"mean\""
            )));
        }
        let input = match opts.choice("input", "tokens", &["tokens", "pooled"])? {
            "pooled" => CachedInput::Pooled,
            _ => CachedInput::Tokens,
        };
        Ok(EncoderText {
            encoder: encoder.to_string(),
            path,
            max_tokens,
            pooling,
            input,
        })
    }

    /// The spec of the cache of `texts` from `source` with these settings.
    pub fn spec(&self, source: &DataSource, texts: &[String]) -> Result<CacheSpec> {
        let id = match &self.path {
            Some(dir) if self.encoder == LOCAL => local_id(dir)?,
            _ => encoders::package_id(&self.encoder).ok_or_else(|| {
                Error::Invalid(format!(
                    "data.options.encoder: {:?} is not a packaged encoder ({})",
                    self.encoder,
                    encoders::names()
                ))
            })?,
        };
        Ok(CacheSpec::new(
            source,
            texts,
            id,
            self.max_tokens,
            self.pooling,
        ))
    }
}

/// The identity a model folder's encoder reports (`encoders::text`'s
/// `TextEncoder::from_folder`), computed without libtorch so that its cache can be found:
/// name `local`, the folder as package, version [`encoders::local_version`] of its
/// `model_type`, the SHA-256 of `model.safetensors` and the width of the hidden states
/// from `config.json` (`hidden_size`, DistilBERT's `dim`).
pub fn local_id(dir: &Path) -> Result<encoders::EncoderId> {
    let read = |file: &str| {
        let path = dir.join(file);
        std::fs::read(&path).map_err(|e| Error::io(path, e))
    };
    let name = dir.join("config.json").display().to_string();
    let config: serde_json::Value = serde_json::from_slice(&read("config.json")?)
        .map_err(|e| Error::Invalid(format!("{name}: {e}")))?;
    let model_type = (config.get("model_type").and_then(|t| t.as_str())).ok_or_else(|| {
        Error::Invalid(format!("{name}: no model_type (it names the architecture)"))
    })?;
    let width = if model_type == "distilbert" {
        "dim"
    } else {
        "hidden_size"
    };
    let dim = (config.get(width).and_then(|d| d.as_u64()))
        .ok_or_else(|| Error::Invalid(format!("{name}: no integer {width}")))?;
    Ok(encoders::EncoderId {
        name: LOCAL.into(),
        package: dir.display().to_string(),
        version: encoders::local_version(model_type),
        sha256: sha256_hex(&read("model.safetensors")?),
        dim: dim as usize,
    })
}

/// Turns the texts of `data` into the token ids of the encoder `settings` names, as its
/// tokenizer gives them (special tokens included, at most `max_tokens`), for a model that
/// fine-tunes it; its packages are read from `packages`. The data set's identity names the
/// encoder and `max_tokens` in its version, and its SHA-256 is that of the source's, the
/// encoder's and `max_tokens`.
pub fn encoder_ids(data: Dataset, settings: &EncoderText, packages: &Path) -> Result<Dataset> {
    let Inputs::Text(texts) = &data.inputs else {
        return Err(Error::Invalid(format!(
            "data {}: text = \"encoder\" needs a source that yields text",
            data.source.name
        )));
    };
    #[cfg(feature = "torch")]
    {
        let pretrained =
            encoders::pretrained(&settings.encoder, settings.path.as_deref(), packages)?;
        let rows = pretrained.profile().tokenize(texts, settings.max_tokens)?;
        let tokens = settings.max_tokens;
        let mut ids = vec![0u32; rows.len() * tokens];
        for (r, row) in rows.iter().enumerate() {
            ids[r * tokens..][..row.len()].copy_from_slice(row);
        }
        let id = pretrained.profile().id();
        let source = DataSource::of_bytes(
            data.source.name.clone(),
            format!(
                "{} + {} {} ({tokens} token ids, fine-tuned)",
                data.source.version, id.name, id.version
            ),
            format!(
                "{}\n{}\n{tokens}\nencoder-ids",
                data.source.sha256, id.sha256
            )
            .as_bytes(),
        );
        Ok(Dataset {
            source,
            inputs: Inputs::EncoderIds {
                tokens,
                lengths: rows.iter().map(|r| r.len() as u32).collect(),
                ids,
            },
            ..data
        })
    }
    #[cfg(not(feature = "torch"))]
    {
        let _ = (texts, packages);
        Err(Error::Invalid(format!(
            "data {}: fine-tuning {} ([train.encoder]) runs on libtorch: build drift with the \
             `torch` feature (`cargo run --release --features torch -- ...`)",
            data.source.name, settings.encoder
        )))
    }
}

/// Turns the texts of `data` into the cached output of the encoder `settings` name: opens
/// the cache under `how.root`, building it first when it is missing (or `how.force`).
/// Returns the data set, its cache, and whether the cache was built now.
pub fn encode(
    data: Dataset,
    settings: &EncoderText,
    how: &Encoding,
) -> Result<(Dataset, Cache, bool)> {
    let Inputs::Text(texts) = &data.inputs else {
        return Err(Error::Invalid(format!(
            "data {}: text = \"encoder\" needs a source that yields text",
            data.source.name
        )));
    };
    let spec = settings.spec(&data.source, texts)?;
    let (cache, built) = cache::open_or_build(
        &how.root,
        &spec,
        texts,
        || {
            let kind = encoders::entry(&settings.encoder)
                .map_err(Error::Invalid)?
                .kind;
            if cfg!(not(feature = "torch")) && kind == EncoderKind::Transformer {
                return Err(Error::Invalid(format!(
                    "data {}: the {} cache of these texts (key {}) is not built, and this \
                     drift cannot run it (no `torch` feature): run `drift cache PRESET` with a \
                     build that has it (`cargo run --release --features torch -- cache \
                     PRESET`)",
                    data.source.name,
                    settings.encoder,
                    spec.key()
                )));
            }
            encoders::open(
                &settings.encoder,
                settings.path.as_deref(),
                &how.packages,
                &how.device,
            )
        },
        how.force,
        how.progress,
    )?;
    let inputs = cache.inputs(settings.input)?;
    let version = format!(
        "{} + {} {} ({} tokens, {} pooling, {} input{ENCODED_ON}{})",
        data.source.version,
        spec.encoder.name,
        spec.encoder.version,
        settings.max_tokens,
        settings.pooling.name(),
        settings.input.name(),
        cache.manifest.computed_on
    );
    let source = DataSource::of_bytes(
        data.source.name.clone(),
        version,
        &encoded_identity(
            cache.key(),
            settings.input.name(),
            &cache.manifest.computed_on,
        ),
    );
    Ok((
        Dataset {
            source,
            inputs,
            ..data
        },
        cache,
        built,
    ))
}
