//! The Vision Transformer (Dosovitskiy et al., 2021) as timm's `vit_*` models compute it,
//! which covers the seed paper's ViT-S/16 (ImageNet-21k), MAE-B and DINOv2-S: a patch
//! embedding, a class token, optional register tokens (`vit_*_reg4_dinov2`), learned
//! positions (over the class and register tokens too, or over the patches only when timm
//! says `no_embed_class`, as read off the table's length), pre-LN blocks with optional
//! layer scale (`ls1`, `ls2`: DINOv2's), a final LayerNorm, and as the feature the class
//! token (`global_pool = "token"`) or the mean over the patches (`"avg"`, then `fc_norm`).
//!
//! Width, depth, patch size, registers and layer scale are read off the weights; the
//! number of heads is not in them, so it comes from `model_args.num_heads` in
//! `config.json`, else from the architecture's name (`tiny` 3, `small` 6, `base` 12,
//! `large` and `huge` 16, `giant` 24).

use tch::{Kind, Tensor};

use super::conv::{Conv2d, ConvSize, Padding};
use super::model::ImageModel;
use super::transformer::{Block, FeedForward, Projections, RopeGrid, RopeKind, linear};
use crate::encoders::hub::Params;
use crate::encoders::layers::{Activation, LayerNorm, Linear};

const EPS: f64 = 1e-6;

/// How the feature is read off the last states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pool {
    /// The class token.
    Token,
    /// The mean over the patch tokens, then `fc_norm`.
    Average,
}

/// A Vision Transformer, as timm computes it.
#[derive(Debug)]
pub struct TimmVit {
    patch: Conv2d,
    cls: Tensor,
    registers: Option<Tensor>,
    positions: Tensor,
    /// Whether the positions cover the patches only (timm's `no_embed_class`).
    patches_only: bool,
    norm_pre: Option<LayerNorm>,
    blocks: Vec<Block>,
    norm: Option<LayerNorm>,
    fc_norm: Option<LayerNorm>,
    pool: Pool,
    head: Option<Linear>,
    rope: Option<RopeGrid>,
    dim: i64,
}

/// The heads of timm's ViT `architecture` by its size word, when `model_args` does not
/// give them.
pub fn heads_by_name(architecture: &str) -> Option<i64> {
    let size = architecture.split('_').nth(1)?;
    Some(match size {
        "tiny" => 3,
        "small" => 6,
        "base" => 12,
        "large" | "huge" => 16,
        "giant" => 24,
        _ => return None,
    })
}

/// Declares a ViT under `p` with `heads` attention heads and the feature `pool`, for inputs
/// of `height` x `width` pixels, sized by its weights.
pub fn declare(
    p: &Params,
    heads: i64,
    pool: Pool,
    height: i64,
    width: i64,
) -> Result<TimmVit, String> {
    declare_with(p, pool, [height, width], heads, None, |b, dim| {
        block(b, dim, heads)
    })
}

/// One of timm's ViT blocks under `b`.
fn block(b: &Params, dim: i64, heads: i64) -> Result<Block, String> {
    let gamma = |name: &str| {
        b.has(&format!("{name}.gamma"))
            .then(|| (b / name).tensor("gamma", &[dim]))
    };
    let fc1 = linear(&(b / "mlp" / "fc1"), dim)?;
    let hidden = b.shape_of("mlp.fc1.weight", 2)?[0];
    Ok(Block {
        norm1: LayerNorm::new(b / "norm1", dim, EPS),
        projections: Projections::Fused(Linear::with_bias(
            b / "attn" / "qkv",
            dim,
            3 * dim,
            b.has("attn.qkv.bias"),
        )),
        inner_norm: None,
        out: Linear::new(b / "attn" / "proj", dim, dim),
        ls1: gamma("ls1"),
        norm2: LayerNorm::new(b / "norm2", dim, EPS),
        mlp: FeedForward::Plain {
            fc1,
            act: Activation::Gelu,
            norm: None,
            fc2: Linear::new(b / "mlp" / "fc2", hidden, dim),
        },
        ls2: gamma("ls2"),
        heads,
    })
}

/// Declares a timm ViT whose blocks `block(blocks.<i>, width)` declares (EVA02's differ),
/// with rotary positions of `rope` (patch grid and head width filled in here) when given.
pub fn declare_with(
    p: &Params,
    pool: Pool,
    [height, width]: [i64; 2],
    heads: i64,
    rope: Option<RopeKind>,
    block: impl Fn(&Params, i64) -> Result<Block, String>,
) -> Result<TimmVit, String> {
    let patch_shape = p.shape_of("patch_embed.proj.weight", 4)?;
    let (dim, size) = (patch_shape[0], patch_shape[2]);
    if height % size != 0 || width % size != 0 {
        return Err(format!(
            "input size {height}x{width} is not a multiple of the {size}-pixel patches"
        ));
    }
    let patches = (height / size) * (width / size);
    if heads < 1 || dim % heads != 0 {
        return Err(format!(
            "width {dim} is not a multiple of {heads} attention heads"
        ));
    }
    let patch = Conv2d::new(
        p / "patch_embed" / "proj",
        ConvSize::dense(3, dim, size, size),
        Padding::Symmetric(0),
        true,
    );
    let cls = p.tensor("cls_token", &[1, 1, dim]);
    let registers = match p.shape("reg_token") {
        Some(s) if s.len() == 3 => Some(p.tensor("reg_token", &[1, s[1], dim])),
        _ => None,
    };
    let prefix = 1 + registers.as_ref().map_or(0, |r| r.size()[1]);
    let positions_len = match p.shape("pos_embed") {
        Some(s) if s.len() == 3 => s[1],
        _ => return Err("pos_embed: missing".into()),
    };
    let positions = p.tensor("pos_embed", &[1, positions_len, dim]);
    let patches_only = if positions_len == patches {
        true
    } else if positions_len == patches + prefix {
        false
    } else {
        return Err(format!(
            "pos_embed: {positions_len} positions, expected {patches} (the patches of the \
             input size) or {} (with the class and register tokens)",
            patches + prefix
        ));
    };
    let norm_pre = p
        .has("norm_pre.weight")
        .then(|| LayerNorm::new(p / "norm_pre", dim, EPS));
    let mut blocks = Vec::new();
    while p.has(&format!("blocks.{}.norm1.weight", blocks.len())) {
        blocks.push(block(&(p / "blocks" / blocks.len()), dim)?);
    }
    if blocks.is_empty() {
        return Err("blocks.0.norm1.weight: missing".into());
    }
    let fc_norm = p
        .has("fc_norm.weight")
        .then(|| LayerNorm::new(p / "fc_norm", dim, EPS));
    let norm = p
        .has("norm.weight")
        .then(|| LayerNorm::new(p / "norm", dim, EPS));
    let head = match p.shape("head.weight") {
        Some(s) if s.len() == 2 => Some(Linear::new(p / "head", dim, s[0])),
        _ => None,
    };
    Ok(TimmVit {
        patch,
        cls,
        registers,
        positions,
        patches_only,
        norm_pre,
        blocks,
        norm,
        fc_norm,
        pool,
        head,
        rope: rope.map(|kind| RopeGrid {
            height: height / size,
            width: width / size,
            head_dim: dim / heads,
            kind,
        }),
        dim,
    })
}

impl TimmVit {
    /// The tokens before the patches: the class token and the registers.
    fn prefix(&self) -> i64 {
        1 + self.registers.as_ref().map_or(0, |r| r.size()[1])
    }
}

impl ImageModel for TimmVit {
    fn features(&self, pixels: &Tensor) -> Tensor {
        let b = pixels.size()[0];
        let x = self.patch.forward(pixels).flatten(2, 3).transpose(1, 2);
        let mut prefix = vec![self.cls.expand([b, -1, -1], false)];
        if let Some(r) = &self.registers {
            prefix.push(r.expand([b, -1, -1], false));
        }
        let x = if self.patches_only {
            let x = x + &self.positions;
            prefix.push(x);
            Tensor::cat(&prefix, 1)
        } else {
            prefix.push(x);
            Tensor::cat(&prefix, 1) + &self.positions
        };
        let mut x = match &self.norm_pre {
            Some(n) => n.forward(&x),
            None => x,
        };
        let rope = self.rope.map(|r| r.table(pixels.device()));
        for block in &self.blocks {
            x = block.forward(&x, rope.as_ref());
        }
        let x = match &self.norm {
            Some(n) => n.forward(&x),
            None => x,
        };
        let pooled = match self.pool {
            Pool::Token => x.select(1, 0),
            Pool::Average => x
                .narrow(1, self.prefix(), x.size()[1] - self.prefix())
                .mean_dim(1, false, Kind::Float),
        };
        match &self.fc_norm {
            Some(n) => n.forward(&pooled),
            None => pooled,
        }
    }

    fn dim(&self) -> i64 {
        self.dim
    }

    fn classify(&self, features: &Tensor) -> Option<Tensor> {
        self.head.as_ref().map(|h| h.forward(features))
    }
}
