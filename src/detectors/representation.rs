//! The fixed representation the representation detectors compare: a frozen encoder's
//! embedding as it is, token states averaged over the real tokens, images averaged over
//! blocks down to at most 8 x 8 per channel.

use crate::data::{Dataset, Inputs, States};
use crate::shift::Sample;

/// Blocks per side of an image's representation.
const IMAGE_BLOCKS: usize = 8;

/// A fixed-width vector per data row (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Representation {
    /// Width.
    pub dims: usize,
    /// `rows * dims` values.
    pub values: Vec<f32>,
}

impl Representation {
    /// Whether `data`'s input has one ([`Representation::of`] is not `None`), without
    /// building it.
    pub fn exists(data: &Dataset) -> bool {
        !matches!(data.inputs, Inputs::EncoderIds { .. } | Inputs::Text(_))
    }

    /// The representation of `data`'s input; `None` for token ids of a fine-tuned encoder
    /// and raw text.
    pub fn of(data: &Dataset) -> Option<Representation> {
        let rows = data.rows();
        match &data.inputs {
            Inputs::Embeddings { dim, values } => Some(Representation {
                dims: *dim,
                values: values.clone(),
            }),
            Inputs::Tokens {
                tokens,
                dim,
                states,
                lengths,
            } => {
                let at =
                    move |r: usize, t: usize| (r * tokens + t) * dim..(r * tokens + t + 1) * dim;
                Some(mean_of_tokens(
                    rows,
                    *dim,
                    lengths,
                    |r, t, out| match states {
                        States::F32(v) => out.copy_from_slice(&v[at(r, t)]),
                        // `half`'s slice conversion uses the CPU's F16C instructions where present.
                        States::F16(v) => {
                            use half::slice::HalfFloatSliceExt;
                            v[at(r, t)].convert_to_f32_slice(out);
                        }
                    },
                ))
            }
            Inputs::TokenIds {
                tokens,
                dim,
                ids,
                lengths,
                table,
            } => Some(mean_of_tokens(rows, *dim, lengths, |r, t, out| {
                let id = ids[r * tokens + t] as usize;
                out.copy_from_slice(&table[id * dim..(id + 1) * dim]);
            })),
            Inputs::Images {
                channels,
                height,
                width,
                pixels,
            } => Some(pooled_images(rows, *channels, *height, *width, pixels)),
            Inputs::EncoderIds { .. } | Inputs::Text(_) => None,
        }
    }

    pub(super) fn sample<'a>(&self, rows: &[usize], buffer: &'a mut Vec<f32>) -> Sample<'a> {
        buffer.clear();
        for &r in rows {
            buffer.extend_from_slice(&self.values[r * self.dims..(r + 1) * self.dims]);
        }
        Sample {
            values: buffer,
            dims: self.dims,
        }
    }
}

/// The mean of each row's first `lengths[r]` token vectors, `token(r, t, out)` writing
/// token `t` of row `r` into `out` (`dim` wide); summed in `f64`, in token order.
fn mean_of_tokens(
    rows: usize,
    dim: usize,
    lengths: &[u32],
    token: impl Fn(usize, usize, &mut [f32]),
) -> Representation {
    let mut values = vec![0f32; rows * dim];
    let (mut sums, mut state) = (vec![0f64; dim], vec![0f32; dim]);
    for r in 0..rows {
        let n = lengths[r] as usize;
        sums.fill(0.0);
        for t in 0..n {
            token(r, t, &mut state);
            for (sum, v) in sums.iter_mut().zip(&state) {
                *sum += f64::from(*v);
            }
        }
        for (v, sum) in values[r * dim..(r + 1) * dim].iter_mut().zip(&sums) {
            *v = (sum / n.max(1) as f64) as f32;
        }
    }
    Representation { dims: dim, values }
}

fn pooled_images(
    rows: usize,
    channels: usize,
    height: usize,
    width: usize,
    pixels: &[f32],
) -> Representation {
    let (bh, bw) = (height.div_ceil(IMAGE_BLOCKS), width.div_ceil(IMAGE_BLOCKS));
    let (oh, ow) = (height.div_ceil(bh), width.div_ceil(bw));
    let dims = channels * oh * ow;
    let mut values = Vec::with_capacity(rows * dims);
    for r in 0..rows {
        let image = &pixels[r * channels * height * width..(r + 1) * channels * height * width];
        for c in 0..channels {
            for by in 0..oh {
                for bx in 0..ow {
                    let (mut sum, mut count) = (0f64, 0usize);
                    for y in by * bh..((by + 1) * bh).min(height) {
                        for x in bx * bw..((bx + 1) * bw).min(width) {
                            sum += f64::from(image[(c * height + y) * width + x]);
                            count += 1;
                        }
                    }
                    values.push((sum / count as f64) as f32);
                }
            }
        }
    }
    Representation { dims, values }
}
