//! EVA02 (Fang et al., 2024) as timm's `eva02_*` models compute it, the seed paper's
//! EVA02-B (`eva02_base_patch14_224.mim_in22k`): a ViT (timm's [`super::vit`] embedding,
//! class token and pooling) whose blocks add rotary positions to the patch tokens (timm's
//! `RotaryEmbeddingCat` over the patch grid rescaled onto `ref_feat_shape`), a SwiGLU
//! feed-forward with a LayerNorm on its hidden units (the sub-LN, `scale_mlp`), and
//! layer scale `gamma_1`, `gamma_2` when trained with it.
//!
//! The feed-forward is SwiGLU as two projections (`fc1_g`, `fc1_x`, with the sub-LN `norm`:
//! base and large) or one packed `fc1` (tiny and small), or a plain GELU MLP.
//! Queries, keys and values are three projections (`q_proj`, `k_proj` without a bias,
//! `v_proj`: the base and large models) or one `qkv` with `q_bias` and `v_bias` (the tiny
//! and small). `ref_feat_shape` and `rope_temperature` come from `model_args`, else
//! timm's values for every `eva02_*` model (16 x 16, 10,000); the heads as for a ViT. The
//! feature is the mean of the patch tokens through `fc_norm` (`global_pool = "avg"`, timm's
//! default for EVA) or the class token (`"token"`).

use super::model::ImageModel;
use super::transformer::{Block, FeedForward, Projections, RopeKind, layer_norm, linear};
use super::vit::{self, Pool};
use crate::encoders::hub::Params;
use crate::encoders::layers::{Activation, LayerNorm};

const EPS: f64 = 1e-6;

/// Declares an EVA02 under `p` with `heads` heads, the feature `pool`, for inputs of
/// `size` pixels, the rotary grid rescaled onto `reference` with `temperature`.
pub fn declare(
    p: &Params,
    heads: i64,
    pool: Pool,
    size: i64,
    reference: [i64; 2],
    temperature: f64,
) -> Result<Box<dyn ImageModel>, String> {
    let rope = RopeKind::Eva {
        reference,
        temperature,
    };
    let model = vit::declare_with(p, pool, [size, size], heads, Some(rope), |b, dim| {
        block(b, dim, heads)
    })?;
    Ok(Box::new(model))
}

/// One of timm's `EvaBlock`s under `b`.
fn block(b: &Params, dim: i64, heads: i64) -> Result<Block, String> {
    let attn = b / "attn";
    let projections = if attn.has("qkv.weight") {
        if !attn.has("q_bias") {
            return Err(format!(
                "{}: a fused qkv without q_bias and v_bias is not an EVA02's",
                attn.name("qkv.weight")
            ));
        }
        Projections::FusedQv {
            weight: (&attn / "qkv").tensor("weight", &[3 * dim, dim]),
            q_bias: attn.tensor("q_bias", &[dim]),
            v_bias: attn.tensor("v_bias", &[dim]),
        }
    } else {
        Projections::Separate {
            q: linear(&(&attn / "q_proj"), dim)?,
            k: linear(&(&attn / "k_proj"), dim)?,
            v: linear(&(&attn / "v_proj"), dim)?,
        }
    };
    let gamma = |name: &str| b.has(name).then(|| b.tensor(name, &[dim]));
    let mlp = b / "mlp";
    let hidden_norm = |hidden: i64| {
        mlp.has("norm.weight")
            .then(|| LayerNorm::new(&mlp / "norm", hidden, EPS))
    };
    let feed_forward = if mlp.has("fc1_g.weight") {
        let hidden = mlp.shape_of("fc1_g.weight", 2)?[0];
        FeedForward::Gated {
            gate: linear(&(&mlp / "fc1_g"), dim)?,
            up: linear(&(&mlp / "fc1_x"), dim)?,
            act: Activation::Silu,
            norm: hidden_norm(hidden),
            down: linear(&(&mlp / "fc2"), hidden)?,
        }
    } else if mlp.shape_of("fc1.weight", 2)?[0] == 2 * mlp.shape_of("fc2.weight", 2)?[1] {
        // GluMlp: one packed projection to the gate and the value.
        let hidden = mlp.shape_of("fc2.weight", 2)?[1];
        if mlp.has("norm.weight") {
            return Err(format!(
                "{}: a packed SwiGLU with a sub-LN is not timm's",
                mlp.name("norm.weight")
            ));
        }
        FeedForward::PackedGated {
            fc1: linear(&(&mlp / "fc1"), dim)?,
            act: Activation::Silu,
            fc2: linear(&(&mlp / "fc2"), hidden)?,
        }
    } else {
        let hidden = mlp.shape_of("fc1.weight", 2)?[0];
        FeedForward::Plain {
            fc1: linear(&(&mlp / "fc1"), dim)?,
            act: Activation::Gelu,
            norm: hidden_norm(hidden),
            fc2: linear(&(&mlp / "fc2"), hidden)?,
        }
    };
    Ok(Block {
        norm1: LayerNorm::new(b / "norm1", dim, EPS),
        projections,
        inner_norm: attn
            .has("norm.weight")
            .then(|| layer_norm(&(&attn / "norm"), dim, EPS)),
        out: linear(&(&attn / "proj"), dim)?,
        ls1: gamma("gamma_1"),
        norm2: LayerNorm::new(b / "norm2", dim, EPS),
        mlp: feed_forward,
        ls2: gamma("gamma_2"),
        heads,
    })
}
