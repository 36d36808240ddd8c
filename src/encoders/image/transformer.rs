//! The pre-LN transformer block every Vision Transformer family computes (timm's ViT and
//! EVA02, transformers' CLIP, SigLIP, DINOv2 and DINOv3): `x + ls1 * attn(norm1(x))`, then
//! `x + ls2 * mlp(norm2(x))`. The families differ in what a block holds, not in how it
//! runs: fused or separate query, key and value projections, layer scale or none, a plain
//! or a gated (SwiGLU) feed-forward, a sub-LN inside it (EVA02's), and rotary positions on
//! the patch tokens (DINOv3's and EVA02's). Each family file declares its blocks under its
//! reference's names; this file runs them.

use tch::{Device, Kind, Tensor};

use crate::encoders::hub::Params;
use crate::encoders::layers::{Activation, LayerNorm, Linear};

/// How a block projects its queries, keys and values.
#[derive(Debug)]
pub enum Projections {
    /// One `[3 * dim, dim]` projection (timm's `qkv`).
    Fused(Linear),
    /// One `[3 * dim, dim]` weight without a bias of its own and biases of the queries and
    /// values only, the keys' zero (timm's EVA: `qkv`, `q_bias`, `v_bias`).
    FusedQv {
        /// `[3 * dim, dim]`.
        weight: Tensor,
        /// `[dim]`.
        q_bias: Tensor,
        /// `[dim]`.
        v_bias: Tensor,
    },
    /// Three (transformers' `q_proj`, `k_proj`, `v_proj`).
    Separate {
        /// Queries.
        q: Linear,
        /// Keys.
        k: Linear,
        /// Values.
        v: Linear,
    },
}

/// The block's feed-forward.
#[derive(Debug)]
pub enum FeedForward {
    /// `fc2(act(fc1(x)))`, with an optional LayerNorm on the hidden units.
    Plain {
        /// In.
        fc1: Linear,
        /// Activation.
        act: Activation,
        /// The hidden units' LayerNorm (timm's `scale_mlp`).
        norm: Option<LayerNorm>,
        /// Out.
        fc2: Linear,
    },
    /// `fc2(act(g) * u)` where `g, u` are the two halves of `fc1(x)` (timm's `GluMlp`
    /// with the gate first: EVA02's tiny and small).
    PackedGated {
        /// In, to twice the hidden units.
        fc1: Linear,
        /// Activation of the gate.
        act: Activation,
        /// Out.
        fc2: Linear,
    },
    /// `down(act(gate(x)) * up(x))`, with an optional LayerNorm before `down` (EVA02's
    /// sub-LN).
    Gated {
        /// The gate's projection.
        gate: Linear,
        /// The value's projection.
        up: Linear,
        /// Activation of the gate.
        act: Activation,
        /// The hidden units' LayerNorm.
        norm: Option<LayerNorm>,
        /// Out.
        down: Linear,
    },
}

/// Rotary position embeddings of the patch tokens: `x * cos + rotate(x) * sin` on the
/// queries and keys of the tokens after the class and register tokens.
#[derive(Debug)]
pub struct Rope {
    /// `[patches, head_dim]`.
    pub cos: Tensor,
    /// `[patches, head_dim]`.
    pub sin: Tensor,
    /// Whether `rotate` swaps the two halves (`[-x2, x1]`, transformers' and DINOv3's) or
    /// neighbouring pairs (`[-x1, x0, -x3, x2, ...]`, timm's EVA02).
    pub halves: bool,
}

/// Where rotary positions come from: the patch grid and the family's frequencies.
#[derive(Clone, Copy, Debug)]
pub struct RopeGrid {
    /// Patches down.
    pub height: i64,
    /// Patches across.
    pub width: i64,
    /// Width of one head.
    pub head_dim: i64,
    /// The family's scheme.
    pub kind: RopeKind,
}

/// The two rotary schemes, each as its reference computes it.
#[derive(Clone, Copy, Debug)]
pub enum RopeKind {
    /// transformers' DINOv3: patch centres in `[-1, 1]`, angles `2 pi c / theta^(4k /
    /// head_dim)`, the two halves of a head alike.
    Dinov3 {
        /// `rope_theta`.
        theta: f64,
    },
    /// timm's EVA02 (`RotaryEmbeddingCat`, `in_pixels=False`): patch indices rescaled onto
    /// the pretraining grid `reference`, angles `i / temperature^(k / bands)`, each angle
    /// on a neighbouring pair.
    Eva {
        /// `ref_feat_shape`.
        reference: [i64; 2],
        /// `rope_temperature`.
        temperature: f64,
    },
}

impl RopeGrid {
    /// The cosines and sines of every patch, on `device`.
    pub fn table(&self, device: Device) -> Rope {
        let opts = (Kind::Float, device);
        let (h, w) = (self.height, self.width);
        let (axis_h, axis_w, bands, halves) = match self.kind {
            RopeKind::Dinov3 { theta } => {
                let centres = |n: i64| {
                    (Tensor::arange_start_step(0.5, n as f64, 1.0, opts) / n as f64) * 2.0 - 1.0
                };
                let exponents =
                    Tensor::arange_start_step(0.0, 1.0, 4.0 / self.head_dim as f64, opts);
                let inv = Tensor::from(theta)
                    .to_device(device)
                    .pow(&exponents)
                    .reciprocal();
                (
                    centres(h),
                    centres(w),
                    inv * (2.0 * std::f64::consts::PI),
                    true,
                )
            }
            RopeKind::Eva {
                reference,
                temperature,
            } => {
                let n_bands = self.head_dim / 4;
                let index = |n: i64, r: i64| Tensor::arange(n, opts) / n as f64 * r as f64;
                let exponents = Tensor::arange(n_bands, opts) / n_bands as f64;
                let inv = Tensor::from(temperature)
                    .to_device(device)
                    .pow(&exponents)
                    .reciprocal();
                (index(h, reference[0]), index(w, reference[1]), inv, false)
            }
        };
        let grid = Tensor::stack(&Tensor::meshgrid_indexing(&[axis_h, axis_w], "ij"), -1)
            .reshape([h * w, 2, 1]);
        // [patches, 2, bands] -> [patches, 2 * bands], then to a head's width.
        let angles = (grid * bands.reshape([1, 1, -1])).flatten(1, 2);
        let angles = if halves {
            angles.tile([1, 2])
        } else {
            angles.repeat_interleave_self_int(2, -1, None)
        };
        Rope {
            cos: angles.cos(),
            sin: angles.sin(),
            halves,
        }
    }
}

impl Rope {
    fn rotate(&self, x: &Tensor) -> Tensor {
        let d = x.size()[x.dim() - 1];
        if self.halves {
            let (x1, x2) = (x.narrow(-1, 0, d / 2), x.narrow(-1, d / 2, d / 2));
            Tensor::cat(&[-x2, x1], -1)
        } else {
            let pairs = x.unflatten(-1, [d / 2, 2]);
            let (even, odd) = (pairs.select(-1, 0), pairs.select(-1, 1));
            Tensor::stack(&[-odd, even], -1).flatten(-2, -1)
        }
    }

    /// `x` `[B, heads, tokens, head_dim]` with the last `patches` tokens rotated.
    fn apply(&self, x: &Tensor) -> Tensor {
        let tokens = x.size()[2];
        let patches = self.cos.size()[0];
        let prefix = x.narrow(2, 0, tokens - patches);
        let p = x.narrow(2, tokens - patches, patches);
        let rotated = &p * &self.cos + self.rotate(&p) * &self.sin;
        Tensor::cat(&[prefix, rotated], 2)
    }
}

/// One pre-LN block.
#[derive(Debug)]
pub struct Block {
    /// Before attention.
    pub norm1: LayerNorm,
    /// Queries, keys and values.
    pub projections: Projections,
    /// A LayerNorm over the attention's output before `out` (EVA's `scale_attn_inner`).
    pub inner_norm: Option<LayerNorm>,
    /// The attention's output projection.
    pub out: Linear,
    /// Layer scale of the attention branch.
    pub ls1: Option<Tensor>,
    /// Before the feed-forward.
    pub norm2: LayerNorm,
    /// The feed-forward.
    pub mlp: FeedForward,
    /// Layer scale of the feed-forward branch.
    pub ls2: Option<Tensor>,
    /// Attention heads.
    pub heads: i64,
}

fn scale(x: Tensor, gamma: &Option<Tensor>) -> Tensor {
    match gamma {
        Some(g) => x * g,
        None => x,
    }
}

impl Block {
    fn attention(&self, x: &Tensor, rope: Option<&Rope>) -> Tensor {
        let (b, n, d) = x.size3().expect("[B, N, D]");
        let heads = |t: Tensor| {
            t.reshape([b, n, self.heads, d / self.heads])
                .transpose(1, 2)
        };
        let split = |qkv: Tensor| {
            let qkv = qkv
                .reshape([b, n, 3, self.heads, d / self.heads])
                .permute([2, 0, 3, 1, 4]);
            (qkv.get(0), qkv.get(1), qkv.get(2))
        };
        let (q, k, v) = match &self.projections {
            Projections::Fused(qkv) => split(qkv.forward(x)),
            Projections::FusedQv {
                weight,
                q_bias,
                v_bias,
            } => {
                let bias = Tensor::cat(&[q_bias, &q_bias.zeros_like(), v_bias], 0);
                split(x.linear(weight, Some(&bias)))
            }
            Projections::Separate { q, k, v } => (
                heads(q.forward(x)),
                heads(k.forward(x)),
                heads(v.forward(x)),
            ),
        };
        let (q, k) = match rope {
            Some(rope) => (rope.apply(&q), rope.apply(&k)),
            None => (q, k),
        };
        let y = attend(&q, &k, &v).transpose(1, 2).reshape([b, n, d]);
        let y = match &self.inner_norm {
            Some(norm) => norm.forward(&y),
            None => y,
        };
        self.out.forward(&y)
    }

    fn feed_forward(&self, x: &Tensor) -> Tensor {
        let norm = |h: Tensor, n: &Option<LayerNorm>| match n {
            Some(n) => n.forward(&h),
            None => h,
        };
        match &self.mlp {
            FeedForward::Plain {
                fc1,
                act,
                norm: n,
                fc2,
            } => fc2.forward(&norm(act.forward(&fc1.forward(x)), n)),
            FeedForward::PackedGated { fc1, act, fc2 } => {
                let halves = fc1.forward(x).chunk(2, -1);
                fc2.forward(&(act.forward(&halves[0]) * &halves[1]))
            }
            FeedForward::Gated {
                gate,
                up,
                act,
                norm: n,
                down,
            } => down.forward(&norm(act.forward(&gate.forward(x)) * up.forward(x), n)),
        }
    }

    /// The block on `x` `[B, tokens, dim]`, with rotary positions on its patch tokens when
    /// `rope` is given.
    pub fn forward(&self, x: &Tensor, rope: Option<&Rope>) -> Tensor {
        let x = x + scale(self.attention(&self.norm1.forward(x), rope), &self.ls1);
        let y = self.feed_forward(&self.norm2.forward(&x));
        &x + scale(y, &self.ls2)
    }
}

/// The linear layer `p` (`weight` `[outputs, inputs]`, `bias` when the file holds one),
/// sized by its weight; errors name the weight.
pub fn linear(p: &Params, inputs: i64) -> Result<Linear, String> {
    let shape = p.shape_of("weight", 2)?;
    if shape[1] != inputs {
        return Err(format!(
            "{}: {shape:?}, expected {inputs} inputs",
            p.name("weight")
        ));
    }
    Ok(Linear::with_bias(
        p.clone(),
        inputs,
        shape[0],
        p.has("bias"),
    ))
}

/// The LayerNorm `p` of width `dim` (`bias` when the file holds one).
pub fn layer_norm(p: &Params, dim: i64, eps: f64) -> LayerNorm {
    LayerNorm::with_bias(p.clone(), dim, eps, p.has("bias"))
}

/// Softmax attention of `q` over `k`, `v` (`[B, heads, tokens, head_dim]`), scaled by
/// `1 / sqrt(head_dim)`, without a mask: libtorch's fused kernel, which the references call.
pub fn attend(q: &Tensor, k: &Tensor, v: &Tensor) -> Tensor {
    Tensor::scaled_dot_product_attention(q, k, v, None::<&Tensor>, 0.0, false, None, false)
}

/// The side of the patch grid of a `size`-pixel input for a patch embedding of
/// `patch_shape` (`[dim, 3, patch, patch]`), or why they do not fit.
pub fn patch_grid(size: i64, patch_shape: &[i64]) -> Result<i64, String> {
    let patch = patch_shape[2];
    if size % patch != 0 {
        return Err(format!(
            "input size {size} is not a multiple of the {patch}-pixel patches"
        ));
    }
    Ok(size / patch)
}

/// Checks that `heads` (`num_attention_heads`) split a width of `dim`.
pub fn check_heads(heads: i64, dim: i64) -> Result<(), String> {
    if heads < 1 || dim % heads != 0 {
        return Err(format!(
            "num_attention_heads {heads}: width {dim} is not a multiple of it"
        ));
    }
    Ok(())
}
