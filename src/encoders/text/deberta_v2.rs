//! DeBERTa-v2 and -v3 (`model_type = "deberta-v2"`), as `transformers`'
//! `DebertaV2Model` computes it: word embeddings (plus absolute positions when
//! `position_biased_input`, token types when `type_vocab_size > 0`, a projection when
//! `embedding_size` differs from the hidden width), normalised and zeroed at padding,
//! then post-LN layers ([`PostLnLayer`]) with **disentangled attention**: the content
//! scores `q·k / sqrt(3d)` plus content-to-position (`q` against the keys of the relative
//! positions) and position-to-content (`k` against their queries) scores, read from one
//! table of relative-position embeddings (`encoder.rel_embeddings`, normalised when
//! `norm_rel_ebd` says `layer_norm`) at the log-bucketed distance between the tokens.
//! DeBERTa-v3's settings: `relative_attention`, `position_buckets = 256`,
//! `pos_att_type = ["p2c", "c2p"]`, `share_att_key` (the positions are projected by the
//! layer's own query and key projections), no absolute positions, no token types.
//!
//! `ids [B, T]` -> `[B, T, hidden]`. Parameters: `embeddings.word_embeddings`,
//! `embeddings.{position,token_type}_embeddings` and `embeddings.embed_proj` when used,
//! `embeddings.LayerNorm`, `encoder.layer.{i}.attention.self.{query,key,value}_proj`
//! (and `pos_key_proj`, `pos_query_proj` without `share_att_key`), BERT's other layer
//! names, `encoder.rel_embeddings`, `encoder.LayerNorm`; a task model's checkpoint
//! prefixes them with `deberta.`. DeBERTa-v2's optional convolution after the first layer
//! (`conv_kernel_size > 0`, DeBERTa-v2-xlarge) is not supported and refused on load.

use serde::Deserialize;
use tch::{Kind, Tensor};

use crate::encoders::hub::Params;

use super::bert::{dropout_rate, gelu};
use super::blocks::{
    Activation, Embedding, LayerNames, LayerNorm, LayerSize, Linear, PostLnLayer, dropout, key_mask,
};
use super::model::{Family, TextModel, TokenBatch, check_heads, positive};

const NAMES: LayerNames = LayerNames {
    query: "attention.self.query_proj",
    key: "attention.self.key_proj",
    value: "attention.self.value_proj",
    attention_out: "attention.output.dense",
    attention_norm: "attention.output.LayerNorm",
    intermediate: "intermediate.dense",
    output: "output.dense",
    output_norm: "output.LayerNorm",
};

/// `pos_att_type`: a list, or the older `"p2c|c2p"` string.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum PosAttType {
    List(Vec<String>),
    Joined(String),
}

/// The fields of `config.json` the forward pass reads, with `DebertaV2Config`'s defaults.
#[derive(Clone, Debug, Deserialize)]
pub struct DebertaV2Config {
    vocab_size: i64,
    hidden_size: i64,
    num_hidden_layers: i64,
    num_attention_heads: i64,
    intermediate_size: i64,
    max_position_embeddings: i64,
    #[serde(default)]
    type_vocab_size: i64,
    #[serde(default)]
    embedding_size: Option<i64>,
    #[serde(default = "gelu")]
    hidden_act: String,
    #[serde(default = "eps")]
    layer_norm_eps: f64,
    #[serde(default = "dropout_rate")]
    hidden_dropout_prob: f64,
    #[serde(default = "dropout_rate")]
    attention_probs_dropout_prob: f64,
    #[serde(default)]
    relative_attention: bool,
    #[serde(default = "minus_one")]
    max_relative_positions: i64,
    #[serde(default = "minus_one")]
    position_buckets: i64,
    #[serde(default)]
    pos_att_type: Option<PosAttType>,
    #[serde(default)]
    share_att_key: bool,
    #[serde(default = "yes")]
    position_biased_input: bool,
    #[serde(default)]
    norm_rel_ebd: Option<String>,
    #[serde(default)]
    conv_kernel_size: i64,
    #[serde(default)]
    attention_head_size: Option<i64>,
}

fn eps() -> f64 {
    1e-7
}
fn minus_one() -> i64 {
    -1
}
fn yes() -> bool {
    true
}

impl Family for DebertaV2Config {
    type Model = DebertaV2;

    /// The sizes are positive and the heads divide the width; the attention types are
    /// `c2p` and `p2c`; no convolution layer.
    fn check(&self) -> std::result::Result<(), String> {
        positive(&[
            ("vocab_size", self.vocab_size),
            ("hidden_size", self.hidden_size),
            ("num_hidden_layers", self.num_hidden_layers),
            ("num_attention_heads", self.num_attention_heads),
            ("intermediate_size", self.intermediate_size),
            ("max_position_embeddings", self.max_position_embeddings),
            ("embedding_size", self.embedding()),
        ])?;
        check_heads(self.hidden_size, self.num_attention_heads)?;
        if let Some(size) = self.attention_head_size
            && size * self.num_attention_heads != self.hidden_size
        {
            return Err(format!(
                "attention_head_size {size}: only hidden_size / num_attention_heads is supported"
            ));
        }
        Activation::from_name(&self.hidden_act)?;
        if let Some(kind) = self
            .att_types()
            .iter()
            .find(|t| !matches!(t.as_str(), "c2p" | "p2c"))
        {
            return Err(format!(
                "pos_att_type {kind:?} is not supported (supported: c2p, p2c)"
            ));
        }
        if self.conv_kernel_size > 0 {
            return Err(format!(
                "conv_kernel_size {}: DeBERTa-v2's convolution layer is not supported",
                self.conv_kernel_size
            ));
        }
        if self.type_vocab_size < 0 {
            return Err("type_vocab_size must not be negative".into());
        }
        Ok(())
    }

    /// Width of the hidden states.
    fn hidden(&self) -> i64 {
        self.hidden_size
    }

    /// The longest input, special tokens included: `max_position_embeddings` (the
    /// relative positions are bucketed, but the hub's tokenizers stop there).
    fn max_positions(&self) -> i64 {
        self.max_position_embeddings
    }

    /// The model under `p`.
    fn vocab(&self) -> i64 {
        self.vocab_size
    }

    fn model(&self, p: &Params) -> DebertaV2 {
        DebertaV2::new(p, self)
    }
}

impl DebertaV2Config {
    fn embedding(&self) -> i64 {
        self.embedding_size.unwrap_or(self.hidden_size)
    }

    fn att_types(&self) -> Vec<String> {
        match &self.pos_att_type {
            None => Vec::new(),
            Some(PosAttType::List(list)) => list.iter().map(|t| t.to_lowercase()).collect(),
            Some(PosAttType::Joined(joined)) => joined
                .to_lowercase()
                .split('|')
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
                .collect(),
        }
    }

    /// The largest relative distance: `max_relative_positions`, else the absolute ones.
    fn max_relative(&self) -> i64 {
        if self.max_relative_positions < 1 {
            self.max_position_embeddings
        } else {
            self.max_relative_positions
        }
    }

    /// Half the rows of the relative-position table (`pos_ebd_size`).
    fn span(&self) -> i64 {
        if self.position_buckets > 0 {
            self.position_buckets
        } else {
            self.max_relative()
        }
    }
}

/// The relative-position part of one layer's attention.
#[derive(Debug)]
struct Relative {
    /// `pos_key_proj` and `pos_query_proj` (without `share_att_key`).
    key: Option<Linear>,
    query: Option<Linear>,
}

/// A DeBERTa-v2 (or -v3) encoder.
#[derive(Debug)]
pub struct DebertaV2 {
    word: Embedding,
    position: Option<Embedding>,
    token_type: Option<Embedding>,
    project: Option<Linear>,
    norm: LayerNorm,
    layers: Vec<(PostLnLayer, Relative)>,
    /// `encoder.rel_embeddings` and its normalisation (with `relative_attention`).
    rel_embeddings: Option<(Embedding, Option<LayerNorm>)>,
    c2p: bool,
    p2c: bool,
    span: i64,
    buckets: i64,
    max_relative: i64,
    dropout: f64,
    attention_dropout: f64,
}

impl DebertaV2 {
    /// The model under `p`.
    pub fn new(p: &Params, config: &DebertaV2Config) -> DebertaV2 {
        let (h, e) = (config.hidden_size, config.embedding());
        let emb = p / "embeddings";
        let encoder = p / "encoder";
        let types = config.att_types();
        let (c2p, p2c) = (
            types.iter().any(|t| t == "c2p"),
            types.iter().any(|t| t == "p2c"),
        );
        let size = LayerSize {
            hidden: h,
            heads: config.num_attention_heads,
            intermediate: config.intermediate_size,
            eps: config.layer_norm_eps,
            activation: Activation::from_name(&config.hidden_act).expect("checked"),
            dropout: config.hidden_dropout_prob,
        };
        let relative = config.relative_attention;
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let at = &encoder / "layer" / i;
                let own = relative && !config.share_att_key;
                let attn = &at / "attention" / "self";
                let rel = Relative {
                    key: (own && c2p).then(|| Linear::new(&attn / "pos_key_proj", h, h)),
                    query: (own && p2c).then(|| Linear::new(&attn / "pos_query_proj", h, h)),
                };
                (PostLnLayer::new(&at, &NAMES, size), rel)
            })
            .collect();
        let norm_rel = config
            .norm_rel_ebd
            .as_deref()
            .unwrap_or("none")
            .to_lowercase()
            .split('|')
            .any(|t| t.trim() == "layer_norm");
        DebertaV2 {
            word: Embedding::new(&emb / "word_embeddings", config.vocab_size, e),
            position: config.position_biased_input.then(|| {
                Embedding::new(
                    &emb / "position_embeddings",
                    config.max_position_embeddings,
                    e,
                )
            }),
            token_type: (config.type_vocab_size > 0)
                .then(|| Embedding::new(&emb / "token_type_embeddings", config.type_vocab_size, e)),
            project: (e != h).then(|| Linear::with_bias(&emb / "embed_proj", e, h, false)),
            norm: LayerNorm::new(&emb / "LayerNorm", h, config.layer_norm_eps),
            layers,
            rel_embeddings: relative.then(|| {
                (
                    Embedding::new(&encoder / "rel_embeddings", 2 * config.span(), h),
                    norm_rel
                        .then(|| LayerNorm::new(&encoder / "LayerNorm", h, config.layer_norm_eps)),
                )
            }),
            c2p,
            p2c,
            span: config.span(),
            buckets: config.position_buckets,
            max_relative: config.max_relative(),
            dropout: config.hidden_dropout_prob,
            attention_dropout: config.attention_probs_dropout_prob,
        }
    }

    fn embed(&self, inputs: &TokenBatch, train: bool) -> Tensor {
        let width = inputs.ids.size()[1];
        let device = inputs.ids.device();
        let mut x = self.word.forward(&inputs.ids);
        if let Some(position) = &self.position {
            // Out of place (`&x +`), as everywhere here: an in-place add could overwrite
            // what autograd needs when the encoder is fine-tuned.
            x = &x
                + position
                    .forward(&Tensor::arange(width, (Kind::Int64, device)))
                    .unsqueeze(0);
        }
        if let Some(token_type) = &self.token_type {
            x = &x + token_type.table().get(0);
        }
        if let Some(project) = &self.project {
            x = project.forward(&x);
        }
        let x = self.norm.forward(&x) * inputs.mask.unsqueeze(-1).to_kind(Kind::Float);
        dropout(x, self.dropout, train)
    }

    /// The attention context of one layer from its heads `q`, `k`, `v` `[B, heads, T, d]`.
    fn attend(
        &self,
        layer: &PostLnLayer,
        relative: &Relative,
        rel: Option<&(Tensor, Tensor)>,
        keep: &Tensor,
        (q, k, v): (&Tensor, &Tensor, &Tensor),
        train: bool,
    ) -> Tensor {
        let d = q.size()[3];
        let factor = 1 + i64::from(self.c2p) + i64::from(self.p2c);
        // As `scaled_size_sqrt`: the square root of a float32.
        let scale = f64::from(((d * factor) as f32).sqrt());
        let mut scores = q.matmul(&(k.transpose(-1, -2) / scale));
        if let Some((table, positions)) = rel {
            let span = self.span;
            let mut bias: Option<Tensor> = None;
            if self.c2p {
                let project = relative.key.as_ref().unwrap_or(&layer.key);
                let pos_key = layer.heads(project, table);
                let index = (positions + span).clamp(0, 2 * span - 1).expand(
                    [q.size()[0], q.size()[1], q.size()[2], positions.size()[1]],
                    false,
                );
                let c2p = q
                    .matmul(&pos_key.transpose(-1, -2))
                    .gather(-1, &index, false);
                bias = Some(c2p / scale);
            }
            if self.p2c {
                let project = relative.query.as_ref().unwrap_or(&layer.query);
                let pos_query = layer.heads(project, table);
                let width = k.size()[2];
                let index = (-positions + span)
                    .clamp(0, 2 * span - 1)
                    .expand([q.size()[0], q.size()[1], width, width], false);
                let p2c = k
                    .matmul(&pos_query.transpose(-1, -2))
                    .gather(-1, &index, false)
                    .transpose(-1, -2)
                    / scale;
                bias = Some(match bias {
                    Some(c2p) => c2p + p2c,
                    None => p2c,
                });
            }
            if let Some(bias) = bias {
                scores = &scores + bias;
            }
        }
        let probs = scores
            .masked_fill(&keep.logical_not(), f64::from(f32::MIN))
            .softmax(-1, Kind::Float);
        dropout(probs, self.attention_dropout, train).matmul(v)
    }
}

/// The bucketed relative position `i - j` of every query `i` and key `j` of a width-`width`
/// batch `[T, T]`, as `build_relative_position` computes it (with
/// `make_log_bucket_position` when `buckets` and `max_relative` are positive: exact within
/// half the buckets, logarithmic beyond, in float32 as the reference computes it).
fn relative_positions(width: i64, buckets: i64, max_relative: i64, device: tch::Device) -> Tensor {
    let at = Tensor::arange(width, (Kind::Int64, device));
    let relative = at.unsqueeze(1) - at.unsqueeze(0);
    if buckets <= 0 || max_relative <= 0 {
        return relative;
    }
    let mid = buckets / 2;
    let sign = relative.sign();
    let near = relative.lt(mid).logical_and(&relative.gt(-mid));
    let abs = Tensor::full_like(&relative, mid - 1).where_self(&near, &relative.abs());
    let denominator = Tensor::from(((max_relative - 1) as f64 / mid as f64) as f32)
        .to_device(device)
        .log();
    let log = ((abs.to_kind(Kind::Float) / mid as f64).log() / denominator * (mid - 1) as f64)
        .ceil()
        + mid as f64;
    relative
        .to_kind(Kind::Float)
        .where_self(&abs.le(mid), &(log * sign))
        .to_kind(Kind::Int64)
}

impl TextModel for DebertaV2 {
    fn forward_t(&self, inputs: &TokenBatch, train: bool) -> Tensor {
        let mut x = self.embed(inputs, train);
        let width = inputs.ids.size()[1];
        let keep = key_mask(&inputs.mask);
        let rel = self.rel_embeddings.as_ref().map(|(table, norm)| {
            let table = table.table().shallow_clone();
            let table = match norm {
                Some(norm) => norm.forward(&table),
                None => table,
            };
            let table = dropout(table, self.dropout, train).unsqueeze(0);
            let positions =
                relative_positions(width, self.buckets, self.max_relative, inputs.ids.device());
            (table, positions)
        });
        for (layer, relative) in &self.layers {
            x = layer.forward_t(&x, train, |q, k, v| {
                self.attend(layer, relative, rel.as_ref(), &keep, (q, k, v), train)
            });
        }
        x
    }
}
