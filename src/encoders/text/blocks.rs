//! The blocks the text families share, each declaring its parameters under the hub's
//! names: the shared layers ([`crate::encoders::layers`], re-exported here) and the post-LN
//! encoder layer ([`PostLnLayer`]) of BERT and the families derived from it (RoBERTa,
//! ELECTRA, DistilBERT, MPNet and DeBERTa, which differ in its parameter names and in how
//! attention scores are formed).
//!
//! Written by hand rather than with `tch::nn`'s modules because the frozen forward pass
//! must stay op for op what it was (`x.linear(w, b)`, not `nn::Linear`'s matmul and add),
//! so that encoder caches built before keep their bytes.

use tch::{Kind, Tensor};

use crate::encoders::hub::Params;
pub use crate::encoders::layers::{Activation, Embedding, LayerNorm, Linear};

/// The names of a post-LN layer's parameters under its layer's path, as each family's
/// reference implementation calls them.
pub struct LayerNames {
    /// Query, key and value projections.
    pub query: &'static str,
    /// Key projection.
    pub key: &'static str,
    /// Value projection.
    pub value: &'static str,
    /// The projection of the attention's output.
    pub attention_out: &'static str,
    /// The normalisation after attention.
    pub attention_norm: &'static str,
    /// The feed-forward block's first projection.
    pub intermediate: &'static str,
    /// Its second projection.
    pub output: &'static str,
    /// The normalisation after it.
    pub output_norm: &'static str,
}

/// BERT's names (also RoBERTa's and ELECTRA's).
pub const BERT_NAMES: LayerNames = LayerNames {
    query: "attention.self.query",
    key: "attention.self.key",
    value: "attention.self.value",
    attention_out: "attention.output.dense",
    attention_norm: "attention.output.LayerNorm",
    intermediate: "intermediate.dense",
    output: "output.dense",
    output_norm: "output.LayerNorm",
};

/// The sizes of a post-LN layer.
#[derive(Clone, Copy, Debug)]
pub struct LayerSize {
    /// Width of the hidden states.
    pub hidden: i64,
    /// Attention heads.
    pub heads: i64,
    /// Width of the feed-forward block.
    pub intermediate: i64,
    /// Layer-norm epsilon.
    pub eps: f64,
    /// The feed-forward activation.
    pub activation: Activation,
    /// Dropout after the attention's and the feed-forward's output projections, in
    /// training.
    pub dropout: f64,
}

/// One post-LN Transformer layer: `x = LN(x + O(attention(x)))`, `x = LN(x + W2 act(W1
/// x))`, with the attention itself given by the caller (a family's scores differ).
#[derive(Debug)]
pub struct PostLnLayer {
    /// Query projection.
    pub query: Linear,
    /// Key projection.
    pub key: Linear,
    /// Value projection.
    pub value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
    size: LayerSize,
}

impl PostLnLayer {
    /// The layer under `p`, its parameters named as `names` says.
    pub fn new(p: &Params, names: &LayerNames, size: LayerSize) -> PostLnLayer {
        let at = |name: &str| name.split('.').fold(p.clone(), |path, part| path / part);
        let h = size.hidden;
        PostLnLayer {
            query: Linear::new(at(names.query), h, h),
            key: Linear::new(at(names.key), h, h),
            value: Linear::new(at(names.value), h, h),
            attention_out: Linear::new(at(names.attention_out), h, h),
            attention_norm: LayerNorm::new(at(names.attention_norm), h, size.eps),
            intermediate: Linear::new(at(names.intermediate), h, size.intermediate),
            output: Linear::new(at(names.output), size.intermediate, h),
            output_norm: LayerNorm::new(at(names.output_norm), h, size.eps),
            size,
        }
    }

    /// The heads of `x` `[B, T, H]` projected by `projection`: `[B, heads, T, H / heads]`.
    pub fn heads(&self, projection: &Linear, x: &Tensor) -> Tensor {
        let (rows, width) = (x.size()[0], x.size()[1]);
        let heads = self.size.heads;
        projection
            .forward(x)
            .view([rows, width, heads, self.size.hidden / heads])
            .transpose(1, 2)
    }

    /// The layer on `x` `[B, T, H]`, with `attend(q, k, v)` giving the attention's context
    /// `[B, heads, T, H / heads]` from the heads of the queries, keys and values.
    pub fn forward_t(
        &self,
        x: &Tensor,
        train: bool,
        attend: impl Fn(&Tensor, &Tensor, &Tensor) -> Tensor,
    ) -> Tensor {
        let (rows, width) = (x.size()[0], x.size()[1]);
        let q = self.heads(&self.query, x);
        let k = self.heads(&self.key, x);
        let v = self.heads(&self.value, x);
        let context = attend(&q, &k, &v)
            .transpose(1, 2)
            .reshape([rows, width, self.size.hidden]);
        let attended = dropout(
            self.attention_out.forward(&context),
            self.size.dropout,
            train,
        );
        let x = self.attention_norm.forward(&(attended + x));
        let inner = self.size.activation.forward(&self.intermediate.forward(&x));
        let out = dropout(self.output.forward(&inner), self.size.dropout, train);
        self.output_norm.forward(&(out + &x))
    }
}

/// Scaled dot-product attention of the heads `q`, `k`, `v` `[B, heads, T, d]` with `mask`
/// (boolean: keys to attend to; or float: added to the scores), attention dropout `p` in
/// training.
pub fn attention(q: &Tensor, k: &Tensor, v: &Tensor, mask: &Tensor, p: f64, train: bool) -> Tensor {
    Tensor::scaled_dot_product_attention(
        q,
        k,
        v,
        Some(mask),
        if train { p } else { 0.0 },
        false,
        None,
        false,
    )
}

/// `[B, 1, 1, T]`: the keys each query may attend to (the real tokens of its row), from
/// `mask` `[B, T]` (boolean).
pub fn key_mask(mask: &Tensor) -> Tensor {
    let (rows, width) = (mask.size()[0], mask.size()[1]);
    mask.view([rows, 1, 1, width])
}

/// `mask` `[B, T]` (boolean) as `0` for real keys and `-inf` for padding, `[B, 1, 1, T]`:
/// the additive form, for scores that carry a bias of their own.
pub fn additive_key_mask(mask: &Tensor) -> Tensor {
    let keep = key_mask(mask);
    Tensor::zeros(keep.size(), (Kind::Float, mask.device()))
        .masked_fill(&keep.logical_not(), f64::NEG_INFINITY)
}

/// Positions counted from `padding_idx + 1` over the real tokens of each row, padding at
/// `padding_idx`: what RoBERTa's and MPNet's `create_position_ids_from_input_ids` gives for
/// right-padded rows.
pub fn positions_after_padding(mask: &Tensor, padding_idx: i64) -> Tensor {
    let real = mask.to_kind(Kind::Int64);
    real.cumsum(1, Kind::Int64) * &real + padding_idx
}

/// Dropout `p` in training; outside it `x` itself (no op at all, so that the frozen pass
/// is what it always was).
pub fn dropout(x: Tensor, p: f64, train: bool) -> Tensor {
    if train && p > 0.0 {
        x.dropout(p, true)
    } else {
        x
    }
}
