//! CLIP's vision tower (Radford et al., 2021) as transformers' `CLIPVisionModel` computes
//! it, the seed paper's CLIP-B32 (`openai/clip-vit-base-patch32`): a patch embedding
//! without a bias, a class embedding, learned positions, a LayerNorm before the blocks
//! (`pre_layrnorm`, transformers' spelling), pre-LN blocks with quick GELU, and as the
//! feature the class token through `post_layernorm` (`pooler_output`), projected by
//! `visual_projection` when the folder holds it (a `CLIPVisionModelWithProjection` or a
//! whole `CLIPModel`: what its `get_image_features` returns).
//!
//! A whole model's weights sit under `vision_model.`; its text tower is not read. The
//! positions fix the input size (transformers does not interpolate them unless asked).
//! Its encoder layers are SigLIP's too ([`encoder_layers`]).

use tch::Tensor;

use super::config::ImageConfig;
use super::conv::{Conv2d, ConvSize, Padding};
use super::model::ImageModel;
use super::transformer::{
    Block, FeedForward, Projections, check_heads, layer_norm, linear, patch_grid,
};
use crate::encoders::hub::Params;
use crate::encoders::layers::{Activation, LayerNorm, Linear};

/// The tower's parameters: under `vision_model.` in a whole model, else at the root.
pub fn tower<'a>(p: &Params<'a>) -> Params<'a> {
    if p.has("vision_model.embeddings.patch_embedding.weight") {
        p / "vision_model"
    } else {
        p.clone()
    }
}

/// The blocks under `encoder.layers.<i>` of `p` (CLIP's and SigLIP's names), of width
/// `dim`, with the configuration's heads, activation and LayerNorm epsilon.
pub fn encoder_layers(
    p: &Params,
    dim: i64,
    config: &ImageConfig,
) -> Result<(Vec<Block>, f64), String> {
    let heads = config.required("num_attention_heads")?;
    check_heads(heads, dim)?;
    let act = Activation::from_name(config.string("hidden_act").unwrap_or("quick_gelu"))?;
    let eps = config.float("layer_norm_eps").unwrap_or(1e-5);
    let mut blocks = Vec::new();
    while p.has(&format!(
        "encoder.layers.{}.layer_norm1.weight",
        blocks.len()
    )) {
        let b = p / "encoder" / "layers" / blocks.len();
        let attn = &b / "self_attn";
        let fc1 = linear(&(&b / "mlp" / "fc1"), dim)?;
        let hidden = b.shape_of("mlp.fc1.weight", 2)?[0];
        blocks.push(Block {
            norm1: layer_norm(&(&b / "layer_norm1"), dim, eps),
            projections: Projections::Separate {
                q: linear(&(&attn / "q_proj"), dim)?,
                k: linear(&(&attn / "k_proj"), dim)?,
                v: linear(&(&attn / "v_proj"), dim)?,
            },
            inner_norm: None,
            out: linear(&(&attn / "out_proj"), dim)?,
            ls1: None,
            norm2: layer_norm(&(&b / "layer_norm2"), dim, eps),
            mlp: FeedForward::Plain {
                fc1,
                act,
                norm: None,
                fc2: linear(&(&b / "mlp" / "fc2"), hidden)?,
            },
            ls2: None,
            heads,
        });
    }
    if blocks.is_empty() {
        return Err(format!(
            "{}: missing",
            p.name("encoder.layers.0.layer_norm1.weight")
        ));
    }
    Ok((blocks, eps))
}

/// CLIP's vision tower.
#[derive(Debug)]
pub struct ClipVision {
    patch: Conv2d,
    class: Tensor,
    positions: Tensor,
    pre_norm: LayerNorm,
    blocks: Vec<Block>,
    post_norm: LayerNorm,
    projection: Option<Linear>,
    /// The tower's width.
    width: i64,
    /// The width of a feature: the projection's, else the tower's.
    dim: i64,
}

/// Declares CLIP's tower under `p` for inputs of `size` pixels.
pub fn declare(p: &Params, config: &ImageConfig, size: i64) -> Result<ClipVision, String> {
    let v = tower(p);
    let patch_shape = v.shape_of("embeddings.patch_embedding.weight", 4)?;
    let (dim, k) = (patch_shape[0], patch_shape[2]);
    let side = patch_grid(size, &patch_shape)?;
    let rows = side * side + 1;
    let found = v.shape_of("embeddings.position_embedding.weight", 2)?;
    if found[0] != rows {
        return Err(format!(
            "{}: {found:?}, expected {rows} positions (the class token and the patches of a \
             {size}-pixel input)",
            v.name("embeddings.position_embedding.weight")
        ));
    }
    let (blocks, eps) = encoder_layers(&v, dim, config)?;
    let (projection, feature_dim) = match p.has("visual_projection.weight") {
        true => {
            let out = p.shape_of("visual_projection.weight", 2)?[0];
            let projection = Linear::with_bias(p / "visual_projection", dim, out, false);
            (Some(projection), out)
        }
        false => (None, dim),
    };
    let embeddings = &v / "embeddings";
    Ok(ClipVision {
        patch: Conv2d::new(
            &embeddings / "patch_embedding",
            ConvSize::dense(3, dim, k, k),
            Padding::Symmetric(0),
            false,
        ),
        class: embeddings.tensor("class_embedding", &[dim]),
        positions: (&embeddings / "position_embedding").tensor("weight", &[rows, dim]),
        pre_norm: layer_norm(&(&v / "pre_layrnorm"), dim, eps),
        blocks,
        post_norm: layer_norm(&(&v / "post_layernorm"), dim, eps),
        projection,
        width: dim,
        dim: feature_dim,
    })
}

impl ImageModel for ClipVision {
    fn features(&self, pixels: &Tensor) -> Tensor {
        let b = pixels.size()[0];
        let x = self.patch.forward(pixels).flatten(2, 3).transpose(1, 2);
        let class = self
            .class
            .reshape([1, 1, self.width])
            .expand([b, 1, self.width], false);
        let x = Tensor::cat(&[class, x], 1) + &self.positions;
        let mut x = self.pre_norm.forward(&x);
        for block in &self.blocks {
            x = block.forward(&x, None);
        }
        let pooled = self.post_norm.forward(&x.select(1, 0));
        match &self.projection {
            Some(projection) => projection.forward(&pooled),
            None => pooled,
        }
    }

    fn dim(&self) -> i64 {
        self.dim
    }

    fn classify(&self, _: &Tensor) -> Option<Tensor> {
        None
    }
}
