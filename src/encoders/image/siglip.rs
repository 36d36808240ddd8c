//! SigLIP's vision tower (Zhai et al., 2023) as transformers' `SiglipVisionModel` computes
//! it, the seed paper's SigLIP-B (`google/siglip-base-patch16-224`): a patch embedding, learned
//! positions over the patches (no class token), CLIP's pre-LN blocks
//! ([`super::clip::encoder_layers`]) with the tanh GELU, `post_layernorm`, and as the
//! feature (`pooler_output`) the attention-pooling head: one learned query (`probe`)
//! attends over the patches (`torch.nn.MultiheadAttention`, packed `in_proj`), then a
//! residual feed-forward after a LayerNorm.
//!
//! A whole `SiglipModel`'s weights sit under `vision_model.`; its text tower is not read.

use tch::Tensor;

use super::clip::{encoder_layers, tower};
use super::config::ImageConfig;
use super::conv::{Conv2d, ConvSize, Padding};
use super::model::ImageModel;
use super::transformer::{Block, attend, layer_norm, linear, patch_grid};
use crate::encoders::hub::Params;
use crate::encoders::layers::{Activation, LayerNorm, Linear};

/// The attention-pooling head.
#[derive(Debug)]
struct PoolingHead {
    probe: Tensor,
    in_weight: Tensor,
    in_bias: Tensor,
    out: Linear,
    norm: LayerNorm,
    fc1: Linear,
    act: Activation,
    fc2: Linear,
    heads: i64,
}

impl PoolingHead {
    fn forward(&self, x: &Tensor) -> Tensor {
        let (b, n, d) = x.size3().expect("[B, N, D]");
        let hd = d / self.heads;
        let w = self.in_weight.chunk(3, 0);
        let bias = self.in_bias.chunk(3, 0);
        let probe = self.probe.expand([b, 1, d], false);
        let q = probe
            .linear(&w[0], Some(&bias[0]))
            .reshape([b, 1, self.heads, hd])
            .transpose(1, 2);
        let split = |t: Tensor| t.reshape([b, n, self.heads, hd]).transpose(1, 2);
        let k = split(x.linear(&w[1], Some(&bias[1])));
        let v = split(x.linear(&w[2], Some(&bias[2])));
        let y = attend(&q, &k, &v).transpose(1, 2).reshape([b, 1, d]);
        let y = self.out.forward(&y);
        let h = self
            .fc2
            .forward(&self.act.forward(&self.fc1.forward(&self.norm.forward(&y))));
        (y + h).select(1, 0)
    }
}

/// SigLIP's vision tower.
#[derive(Debug)]
pub struct SiglipVision {
    patch: Conv2d,
    positions: Tensor,
    blocks: Vec<Block>,
    post_norm: LayerNorm,
    head: PoolingHead,
    dim: i64,
}

/// Declares SigLIP's tower under `p` for inputs of `size` pixels.
pub fn declare(p: &Params, config: &ImageConfig, size: i64) -> Result<SiglipVision, String> {
    let v = tower(p);
    let patch_shape = v.shape_of("embeddings.patch_embedding.weight", 4)?;
    let (dim, k) = (patch_shape[0], patch_shape[2]);
    let side = patch_grid(size, &patch_shape)?;
    let rows = side * side;
    let found = v.shape_of("embeddings.position_embedding.weight", 2)?;
    if found[0] != rows {
        return Err(format!(
            "{}: {found:?}, expected {rows} positions (the patches of a {size}-pixel input)",
            v.name("embeddings.position_embedding.weight")
        ));
    }
    if !v.has("head.probe") {
        return Err(format!(
            "{}: missing: a SigLIP tower without its attention-pooling head \
             (vision_use_head = false) has no pooler_output",
            v.name("head.probe")
        ));
    }
    let (blocks, eps) = encoder_layers(&v, dim, config)?;
    let h = &v / "head";
    let hidden = h.shape_of("mlp.fc1.weight", 2)?[0];
    let head = PoolingHead {
        probe: h.tensor("probe", &[1, 1, dim]),
        in_weight: (&h / "attention").tensor("in_proj_weight", &[3 * dim, dim]),
        in_bias: (&h / "attention").tensor("in_proj_bias", &[3 * dim]),
        out: linear(&(&h / "attention" / "out_proj"), dim)?,
        norm: layer_norm(&(&h / "layernorm"), dim, eps),
        fc1: linear(&(&h / "mlp" / "fc1"), dim)?,
        act: Activation::from_name(config.string("hidden_act").unwrap_or("gelu_pytorch_tanh"))?,
        fc2: linear(&(&h / "mlp" / "fc2"), hidden)?,
        heads: config.required("num_attention_heads")?,
    };
    let embeddings = &v / "embeddings";
    Ok(SiglipVision {
        patch: Conv2d::new(
            &embeddings / "patch_embedding",
            ConvSize::dense(3, dim, k, k),
            Padding::Symmetric(0),
            embeddings.has("patch_embedding.bias"),
        ),
        positions: (&embeddings / "position_embedding").tensor("weight", &[rows, dim]),
        blocks,
        post_norm: layer_norm(&(&v / "post_layernorm"), dim, eps),
        head,
        dim,
    })
}

impl ImageModel for SiglipVision {
    fn features(&self, pixels: &Tensor) -> Tensor {
        let x = self.patch.forward(pixels).flatten(2, 3).transpose(1, 2);
        let mut x = x + &self.positions;
        for block in &self.blocks {
            x = block.forward(&x, None);
        }
        self.head.forward(&self.post_norm.forward(&x))
    }

    fn dim(&self) -> i64 {
        self.dim
    }

    fn classify(&self, _: &Tensor) -> Option<Tensor> {
        None
    }
}
