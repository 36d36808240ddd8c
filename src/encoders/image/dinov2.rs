//! DINOv2 (Oquab et al., 2024) as transformers' `Dinov2Model` computes it, the seed
//! paper's DINOv2-S as the hub serves it (`facebook/dinov2-small`): a patch embedding, a
//! class token, learned positions trained at 518 pixels and resized bicubically to the
//! input's patch grid (transformers' `interpolate_pos_encoding`: the class position kept,
//! the patch positions `F.interpolate(mode="bicubic", align_corners=False)` to the new
//! grid), pre-LN blocks with layer scale, a final `layernorm`, and as the feature the class
//! token (`pooler_output`). timm's DINOv2 (`vit_*_dinov2`) is a [`super::vit`] folder.

use tch::{Kind, Tensor};

use super::config::ImageConfig;
use super::conv::{Conv2d, ConvSize, Padding};
use super::model::ImageModel;
use super::transformer::{
    Block, FeedForward, Projections, check_heads, layer_norm, linear, patch_grid,
};
use crate::encoders::hub::Params;
use crate::encoders::layers::{Activation, LayerNorm};

/// DINOv2 as transformers computes it.
#[derive(Debug)]
pub struct Dinov2 {
    patch: Conv2d,
    cls: Tensor,
    positions: Tensor,
    /// The side of the trained position grid.
    trained_side: i64,
    /// The side of the input's patch grid.
    side: i64,
    blocks: Vec<Block>,
    norm: LayerNorm,
    dim: i64,
}

/// Declares transformers' DINOv2 under `p` for inputs of `size` pixels.
pub fn declare(p: &Params, config: &ImageConfig, size: i64) -> Result<Dinov2, String> {
    if config.args.get("use_swiglu_ffn").and_then(|v| v.as_bool()) == Some(true) {
        return Err("use_swiglu_ffn: the SwiGLU feed-forward (DINOv2-g) is not supported".into());
    }
    let e = p / "embeddings";
    let patch_shape = e.shape_of("patch_embeddings.projection.weight", 4)?;
    let (dim, k) = (patch_shape[0], patch_shape[2]);
    let side = patch_grid(size, &patch_shape)?;
    let rows = e.shape_of("position_embeddings", 3)?[1];
    let trained_side = ((rows - 1) as f64).sqrt().round() as i64;
    if trained_side * trained_side + 1 != rows {
        return Err(format!(
            "{}: {rows} positions are not a class token and a square grid",
            e.name("position_embeddings")
        ));
    }
    let heads = config.required("num_attention_heads")?;
    check_heads(heads, dim)?;
    let eps = config.float("layer_norm_eps").unwrap_or(1e-6);
    let act = Activation::from_name(config.string("hidden_act").unwrap_or("gelu"))?;
    let mut blocks = Vec::new();
    while p.has(&format!("encoder.layer.{}.norm1.weight", blocks.len())) {
        let b = p / "encoder" / "layer" / blocks.len();
        let attn = &b / "attention" / "attention";
        let hidden = b.shape_of("mlp.fc1.weight", 2)?[0];
        let scale = |name: &str| (&b / name).tensor("lambda1", &[dim]);
        blocks.push(Block {
            norm1: layer_norm(&(&b / "norm1"), dim, eps),
            projections: Projections::Separate {
                q: linear(&(&attn / "query"), dim)?,
                k: linear(&(&attn / "key"), dim)?,
                v: linear(&(&attn / "value"), dim)?,
            },
            inner_norm: None,
            out: linear(&(&b / "attention" / "output" / "dense"), dim)?,
            ls1: Some(scale("layer_scale1")),
            norm2: layer_norm(&(&b / "norm2"), dim, eps),
            mlp: FeedForward::Plain {
                fc1: linear(&(&b / "mlp" / "fc1"), dim)?,
                act,
                norm: None,
                fc2: linear(&(&b / "mlp" / "fc2"), hidden)?,
            },
            ls2: Some(scale("layer_scale2")),
            heads,
        });
    }
    if blocks.is_empty() {
        return Err("encoder.layer.0.norm1.weight: missing".into());
    }
    Ok(Dinov2 {
        patch: Conv2d::new(
            &e / "patch_embeddings" / "projection",
            ConvSize::dense(3, dim, k, k),
            Padding::Symmetric(0),
            true,
        ),
        cls: e.tensor("cls_token", &[1, 1, dim]),
        positions: e.tensor("position_embeddings", &[1, rows, dim]),
        trained_side,
        side,
        blocks,
        norm: layer_norm(&(p / "layernorm"), dim, eps),
        dim,
    })
}

impl Dinov2 {
    /// The positions of the input's grid.
    fn positions(&self) -> Tensor {
        if self.side == self.trained_side {
            return self.positions.shallow_clone();
        }
        let (s, d) = (self.trained_side, self.dim);
        let class = self.positions.narrow(1, 0, 1);
        let grid = self
            .positions
            .narrow(1, 1, s * s)
            .reshape([1, s, s, d])
            .permute([0, 3, 1, 2]);
        let resized = grid
            .to_kind(Kind::Float)
            .upsample_bicubic2d([self.side, self.side], false, None, None)
            .permute([0, 2, 3, 1])
            .reshape([1, -1, d]);
        Tensor::cat(&[class, resized], 1)
    }
}

impl ImageModel for Dinov2 {
    fn features(&self, pixels: &Tensor) -> Tensor {
        let b = pixels.size()[0];
        let x = self.patch.forward(pixels).flatten(2, 3).transpose(1, 2);
        let x = Tensor::cat(&[self.cls.expand([b, 1, self.dim], false), x], 1);
        let mut x = x + self.positions();
        for block in &self.blocks {
            x = block.forward(&x, None);
        }
        self.norm.forward(&x).select(1, 0)
    }

    fn dim(&self) -> i64 {
        self.dim
    }

    fn classify(&self, _: &Tensor) -> Option<Tensor> {
        None
    }
}
