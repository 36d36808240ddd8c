//! EfficientNet-Lite (Tan & Le, 2019; the Lite variants of the TensorFlow Model Garden),
//! as timm's `tf_efficientnet_lite0`..`4` and `efficientnet_lite0` compute it: a 3x3
//! stem, seven stages of MobileNet blocks (a depthwise-separable one, then inverted
//! residuals) with ReLU6 and no squeeze-excitation, a 1x1 head convolution to 1,280
//! channels, and the average over the map as the feature.
//!
//! The depths and widths are read off the weights (every variant and channel multiplier
//! loads the same way); what the weights do not say comes from the family: the stages'
//! strides (1, 2, 2, 2, 1, 2, 1), and for the `tf_` models TensorFlow's "same" padding and
//! batch-norm epsilon 1e-3 (else symmetric padding and 1e-5).
//!
//! The packaged `efficientnet-lite0` holds efficientnet_pytorch's state dict (`_conv_stem`,
//! `_blocks.N._depthwise_conv`, ...): [`timm_names`] maps it onto timm's names.

use tch::Tensor;

use super::conv::{BatchNorm, Conv2d, ConvSize, Padding, global_average};
use super::model::ImageModel;
use crate::encoders::hub::Params;
use crate::encoders::layers::Linear;

/// The stride of each stage's first block.
const STAGE_STRIDES: [i64; 7] = [1, 2, 2, 2, 1, 2, 1];

#[derive(Debug)]
enum Block {
    /// Depthwise, then pointwise (the first stage's, expansion 1).
    Separable {
        dw: Conv2d,
        bn1: BatchNorm,
        pw: Conv2d,
        bn2: BatchNorm,
        skip: bool,
    },
    /// Pointwise expansion, depthwise, pointwise projection.
    Inverted {
        pw: Conv2d,
        bn1: BatchNorm,
        dw: Conv2d,
        bn2: BatchNorm,
        pwl: Conv2d,
        bn3: BatchNorm,
        skip: bool,
    },
}

fn relu6(x: Tensor) -> Tensor {
    x.clamp(0.0, 6.0)
}

impl Block {
    fn forward(&self, x: &Tensor) -> Tensor {
        let (y, skip) = match self {
            Block::Separable {
                dw,
                bn1,
                pw,
                bn2,
                skip,
            } => {
                let y = relu6(bn1.forward(&dw.forward(x)));
                (bn2.forward(&pw.forward(&y)), *skip)
            }
            Block::Inverted {
                pw,
                bn1,
                dw,
                bn2,
                pwl,
                bn3,
                skip,
            } => {
                let y = relu6(bn1.forward(&pw.forward(x)));
                let y = relu6(bn2.forward(&dw.forward(&y)));
                (bn3.forward(&pwl.forward(&y)), *skip)
            }
        };
        if skip { y + x } else { y }
    }
}

/// An EfficientNet-Lite.
#[derive(Debug)]
pub struct EfficientNetLite {
    stem: Conv2d,
    bn1: BatchNorm,
    blocks: Vec<Block>,
    head: Conv2d,
    bn2: BatchNorm,
    classifier: Option<Linear>,
    features: i64,
}

/// Declares the model of timm's `architecture` under `p`, sized by its weights.
pub fn declare(p: &Params, architecture: &str) -> Result<EfficientNetLite, String> {
    let tf = architecture.starts_with("tf_");
    let eps = if tf { 1e-3 } else { 1e-5 };
    let conv = |p: Params, size: ConvSize| {
        Conv2d::new(p, size, Padding::timm(size.kernel, size.stride, tf), false)
    };
    let stem_shape = p.shape_of("conv_stem.weight", 4)?;
    let (stem_out, stem_k) = (stem_shape[0], stem_shape[2]);
    let stem = conv(p / "conv_stem", ConvSize::dense(3, stem_out, stem_k, 2));
    let bn1 = BatchNorm::new(p / "bn1", stem_out, eps);
    if p.has("blocks.0.0.se.conv_reduce.weight") || p.has("blocks.1.0.se.conv_reduce.weight") {
        return Err(format!(
            "{architecture}: the weights have squeeze-excitation (an EfficientNet, not an \
             EfficientNet-Lite)"
        ));
    }
    let mut blocks = Vec::new();
    let mut channels = stem_out;
    for (stage, &stride) in STAGE_STRIDES.iter().enumerate() {
        let mut i = 0;
        loop {
            let b = p / "blocks" / stage / i;
            if !b.has("conv_dw.weight") {
                break;
            }
            let stride = if i == 0 { stride } else { 1 };
            let dw_shape = b.shape_of("conv_dw.weight", 4)?;
            let (mid, k) = (dw_shape[0], dw_shape[2]);
            let (block, out) = if b.has("conv_pwl.weight") {
                let out = b.shape_of("conv_pwl.weight", 4)?[0];
                let block = Block::Inverted {
                    pw: conv(&b / "conv_pw", ConvSize::dense(channels, mid, 1, 1)),
                    bn1: BatchNorm::new(&b / "bn1", mid, eps),
                    dw: conv(&b / "conv_dw", ConvSize::depthwise(mid, k, stride)),
                    bn2: BatchNorm::new(&b / "bn2", mid, eps),
                    pwl: conv(&b / "conv_pwl", ConvSize::dense(mid, out, 1, 1)),
                    bn3: BatchNorm::new(&b / "bn3", out, eps),
                    skip: stride == 1 && channels == out,
                };
                (block, out)
            } else {
                let out = b.shape_of("conv_pw.weight", 4)?[0];
                let block = Block::Separable {
                    dw: conv(&b / "conv_dw", ConvSize::depthwise(channels, k, stride)),
                    bn1: BatchNorm::new(&b / "bn1", channels, eps),
                    pw: conv(&b / "conv_pw", ConvSize::dense(channels, out, 1, 1)),
                    bn2: BatchNorm::new(&b / "bn2", out, eps),
                    skip: stride == 1 && channels == out,
                };
                (block, out)
            };
            blocks.push(block);
            channels = out;
            i += 1;
        }
        if i == 0 {
            return Err(format!(
                "blocks.{stage}.0.conv_dw.weight: missing (stage {stage} has no blocks)"
            ));
        }
    }
    if p.has("blocks.7.0.conv_dw.weight") {
        return Err("blocks.7: an eighth stage (EfficientNet-Lite has seven)".into());
    }
    let features = p.shape_of("conv_head.weight", 4)?[0];
    let head = conv(p / "conv_head", ConvSize::dense(channels, features, 1, 1));
    let bn2 = BatchNorm::new(p / "bn2", features, eps);
    let classifier = match p.shape("classifier.weight") {
        Some(shape) if shape.len() == 2 => Some(Linear::new(p / "classifier", features, shape[0])),
        _ => None,
    };
    Ok(EfficientNetLite {
        stem,
        bn1,
        blocks,
        head,
        bn2,
        classifier,
        features,
    })
}

impl ImageModel for EfficientNetLite {
    fn features(&self, pixels: &Tensor) -> Tensor {
        let mut x = relu6(self.bn1.forward(&self.stem.forward(pixels)));
        for block in &self.blocks {
            x = block.forward(&x);
        }
        let x = relu6(self.bn2.forward(&self.head.forward(&x)));
        global_average(&x)
    }

    fn dim(&self) -> i64 {
        self.features
    }

    fn classify(&self, features: &Tensor) -> Option<Tensor> {
        self.classifier.as_ref().map(|c| c.forward(features))
    }
}

/// timm's name for each tensor of efficientnet_pytorch's EfficientNet-Lite state dict, in
/// the file's order (`names`, with the `shapes` of the tensors), or the first name that is
/// not one. (`num_batches_tracked` counters are not weights: leave them out.)
///
/// efficientnet_pytorch numbers its blocks straight through (`_blocks.0` .. `_blocks.15`
/// for Lite0) where timm numbers them within their stage (`blocks.0.0`, `blocks.1.0`,
/// `blocks.1.1`, ...): a new stage starts at each block whose projection changes the width,
/// as every stage of the Lite models does (checked against timm's own order by the parity
/// test).
pub fn timm_names(names: &[&str], shapes: &[Vec<i64>]) -> Result<Vec<String>, String> {
    let block = |name: &str| -> Result<Option<(usize, String)>, String> {
        let Some(rest) = name.strip_prefix("_blocks.") else {
            return Ok(None);
        };
        let (n, field) = rest
            .split_once('.')
            .ok_or_else(|| format!("{name}: not a block tensor"))?;
        let n = n
            .parse()
            .map_err(|_| format!("{name}: block number {n:?}"))?;
        Ok(Some((n, field.to_string())))
    };
    // Each block's output width, in block order.
    let mut widths = std::collections::BTreeMap::new();
    for (name, shape) in names.iter().zip(shapes) {
        if let Some((n, field)) = block(name)?
            && field == "_project_conv.weight"
        {
            widths.insert(n, shape.first().copied().unwrap_or(0));
        }
    }
    // (stage, index in stage) of each block.
    let mut place: Vec<(usize, usize)> = Vec::new();
    let mut previous = None;
    for (expected, (&n, &width)) in widths.iter().enumerate() {
        if n != expected {
            return Err(format!("_blocks.{expected}._project_conv.weight: missing"));
        }
        let next = match (place.last(), previous) {
            (Some(&(stage, index)), Some(w)) if w == width => (stage, index + 1),
            (Some(&(stage, _)), _) => (stage + 1, 0),
            (None, _) => (0, 0),
        };
        place.push(next);
        previous = Some(width);
    }
    names
        .iter()
        .map(|name| {
            let (prefix, field) = match block(name)? {
                Some((n, field)) => {
                    let &(stage, index) = place
                        .get(n)
                        .ok_or_else(|| format!("{name}: block {n} has no projection"))?;
                    (Some((n, stage, index)), field)
                }
                None => (None, name.to_string()),
            };
            let (module, tail) = field
                .split_once('.')
                .ok_or_else(|| format!("{name}: no field"))?;
            let module = match prefix {
                Some((n, stage, index)) => {
                    let expanded = names
                        .iter()
                        .any(|m| *m == format!("_blocks.{n}._expand_conv.weight"));
                    let module = match (module, expanded) {
                        ("_expand_conv", true) => "conv_pw",
                        ("_bn0", true) => "bn1",
                        ("_depthwise_conv", _) => "conv_dw",
                        ("_bn1", true) => "bn2",
                        ("_bn1", false) => "bn1",
                        ("_project_conv", true) => "conv_pwl",
                        ("_project_conv", false) => "conv_pw",
                        ("_bn2", true) => "bn3",
                        ("_bn2", false) => "bn2",
                        _ => {
                            return Err(format!(
                                "{name}: not a tensor of an EfficientNet-Lite block"
                            ));
                        }
                    };
                    format!("blocks.{stage}.{index}.{module}")
                }
                None => match module {
                    "_conv_stem" => "conv_stem",
                    "_bn0" => "bn1",
                    "_conv_head" => "conv_head",
                    "_bn1" => "bn2",
                    "_fc" => "classifier",
                    _ => return Err(format!("{name}: not a tensor of EfficientNet-Lite")),
                }
                .to_string(),
            };
            Ok(format!("{module}.{tail}"))
        })
        .collect()
}
