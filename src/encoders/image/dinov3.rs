//! DINOv3 (Siméoni et al., 2025) as transformers' `DINOv3ViTModel` computes it, the seed
//! paper's DINOv3-S (`facebook/dinov3-vits16-pretrain-lvd1689m`): a patch embedding, a
//! class token and register tokens, no learned positions but rotary ones on the patch
//! tokens' queries and keys (patch centres in `[-1, 1]`, `rope_theta`; the class and
//! register tokens are not rotated), pre-LN blocks with layer scale and a plain or gated
//! feed-forward (`use_gated_mlp`, the larger models'), a final `norm`, and as the feature
//! the class token (`pooler_output`).

use tch::Tensor;

use super::config::ImageConfig;
use super::conv::{Conv2d, ConvSize, Padding};
use super::model::ImageModel;
use super::transformer::{
    Block, FeedForward, Projections, RopeGrid, RopeKind, layer_norm, linear, patch_grid,
};
use crate::encoders::hub::Params;
use crate::encoders::layers::{Activation, LayerNorm};

/// DINOv3 as transformers computes it.
#[derive(Debug)]
pub struct Dinov3 {
    patch: Conv2d,
    cls: Tensor,
    registers: Tensor,
    rope: RopeGrid,
    blocks: Vec<Block>,
    norm: LayerNorm,
    dim: i64,
}

/// Declares DINOv3 under `p` for inputs of `size` pixels.
pub fn declare(p: &Params, config: &ImageConfig, size: i64) -> Result<Dinov3, String> {
    let e = p / "embeddings";
    let patch_shape = e.shape_of("patch_embeddings.weight", 4)?;
    let (dim, k) = (patch_shape[0], patch_shape[2]);
    let side = patch_grid(size, &patch_shape)?;
    let registers = e.shape_of("register_tokens", 3)?[1];
    let heads = config.required("num_attention_heads")?;
    if heads < 1 || dim % (4 * heads) != 0 {
        return Err(format!(
            "num_attention_heads {heads}: width {dim} is not a multiple of four times it \
             (rotary positions take a quarter of a head per axis and sign)"
        ));
    }
    let eps = config.float("layer_norm_eps").unwrap_or(1e-5);
    let act = Activation::from_name(config.string("hidden_act").unwrap_or("gelu"))?;
    let mut blocks = Vec::new();
    while p.has(&format!("layer.{}.norm1.weight", blocks.len())) {
        let b = p / "layer" / blocks.len();
        let attn = &b / "attention";
        let mlp = &b / "mlp";
        let hidden = mlp.shape_of("up_proj.weight", 2)?[0];
        let feed_forward = if mlp.has("gate_proj.weight") {
            FeedForward::Gated {
                gate: linear(&(&mlp / "gate_proj"), dim)?,
                up: linear(&(&mlp / "up_proj"), dim)?,
                act,
                norm: None,
                down: linear(&(&mlp / "down_proj"), hidden)?,
            }
        } else {
            FeedForward::Plain {
                fc1: linear(&(&mlp / "up_proj"), dim)?,
                act,
                norm: None,
                fc2: linear(&(&mlp / "down_proj"), hidden)?,
            }
        };
        let scale = |name: &str| (&b / name).tensor("lambda1", &[dim]);
        blocks.push(Block {
            norm1: layer_norm(&(&b / "norm1"), dim, eps),
            projections: Projections::Separate {
                q: linear(&(&attn / "q_proj"), dim)?,
                k: linear(&(&attn / "k_proj"), dim)?,
                v: linear(&(&attn / "v_proj"), dim)?,
            },
            inner_norm: None,
            out: linear(&(&attn / "o_proj"), dim)?,
            ls1: Some(scale("layer_scale1")),
            norm2: layer_norm(&(&b / "norm2"), dim, eps),
            mlp: feed_forward,
            ls2: Some(scale("layer_scale2")),
            heads,
        });
    }
    if blocks.is_empty() {
        return Err("layer.0.norm1.weight: missing".into());
    }
    Ok(Dinov3 {
        patch: Conv2d::new(
            &e / "patch_embeddings",
            ConvSize::dense(3, dim, k, k),
            Padding::Symmetric(0),
            e.has("patch_embeddings.bias"),
        ),
        cls: e.tensor("cls_token", &[1, 1, dim]),
        registers: e.tensor("register_tokens", &[1, registers, dim]),
        rope: RopeGrid {
            height: side,
            width: side,
            head_dim: dim / heads,
            kind: RopeKind::Dinov3 {
                theta: config.float("rope_theta").unwrap_or(100.0),
            },
        },
        blocks,
        norm: layer_norm(&(p / "norm"), dim, eps),
        dim,
    })
}

impl ImageModel for Dinov3 {
    fn features(&self, pixels: &Tensor) -> Tensor {
        let b = pixels.size()[0];
        let x = self.patch.forward(pixels).flatten(2, 3).transpose(1, 2);
        let mut x = Tensor::cat(
            &[
                self.cls.expand([b, -1, -1], false),
                self.registers.expand([b, -1, -1], false),
                x,
            ],
            1,
        );
        let rope = self.rope.table(pixels.device());
        for block in &self.blocks {
            x = block.forward(&x, Some(&rope));
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
