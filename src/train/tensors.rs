//! A data set as libtorch tensors on the CPU, from which batches are gathered by row
//! index and moved to the training device.
//!
//! The inputs are not copied: the tensors read the data set's own memory (a token-state
//! corpus can take gigabytes, and a copy doubled a run's peak), which is why
//! [`DataTensors`] borrows the [`Dataset`]. Batches are always gathered into new tensors,
//! so libtorch never writes that memory. Half-precision token states widen to f32 per
//! batch (exactly).
//!
//! Token batches are cut to their longest row: the text models mask padding, so the
//! outputs do not depend on it (`tests/models.rs` checks), and short batches run faster.

use std::marker::PhantomData;

use tch::{Device, Kind, Tensor};

use crate::data::{Dataset, Inputs, States, Targets};
use crate::models::Input;
use crate::{Error, Result};

/// The inputs and targets of every row of a borrowed data set.
#[derive(Debug)]
pub struct DataTensors<'a> {
    inputs: Stored,
    targets: Tensor,
    lengths: Vec<u32>,
    /// The tensors of `inputs` read the data set's memory.
    data: PhantomData<&'a Dataset>,
}

#[derive(Debug)]
enum Stored {
    Images(Tensor),
    /// States `[N, T, D]` (f32 or f16).
    Tokens {
        states: Tensor,
        mask: Tensor,
    },
    /// Ids `[N, T]` into a table `[V, D]`, looked up per batch.
    TokenIds {
        ids: Tensor,
        table: Tensor,
        mask: Tensor,
    },
    Embeddings(Tensor),
    /// A pretrained encoder's ids `[N, T]`.
    EncoderIds {
        ids: Tensor,
        mask: Tensor,
    },
}

impl<'a> DataTensors<'a> {
    /// Views `data`'s inputs as tensors (float32, or float16 for half-precision token
    /// states) and copies its targets: class labels int64, multi-label flags and values
    /// float32.
    pub fn new(data: &'a Dataset) -> Result<Self> {
        let n = data.rows() as i64;
        let mut lengths = Vec::new();
        let inputs = match &data.inputs {
            Inputs::Images {
                channels,
                height,
                width,
                pixels,
            } => Stored::Images(view(
                pixels,
                &[n, *channels as i64, *height as i64, *width as i64],
            )?),
            Inputs::Tokens {
                tokens,
                dim,
                states,
                lengths: lens,
            } => {
                lengths = lens.clone();
                let shape = [n, *tokens as i64, *dim as i64];
                Stored::Tokens {
                    states: match states {
                        States::F32(v) => view(v, &shape)?,
                        States::F16(v) => view(v, &shape)?,
                    },
                    mask: mask(*tokens, lens),
                }
            }
            Inputs::TokenIds {
                tokens,
                dim,
                ids,
                lengths: lens,
                table,
            } => {
                lengths = lens.clone();
                let ids: Vec<i64> = ids.iter().map(|&id| i64::from(id)).collect();
                Stored::TokenIds {
                    ids: Tensor::from_slice(&ids).reshape([n, *tokens as i64]),
                    table: view(table, &[(table.len() / (*dim).max(1)) as i64, *dim as i64])?,
                    mask: mask(*tokens, lens),
                }
            }
            Inputs::Embeddings { dim, values } => {
                Stored::Embeddings(view(values, &[n, *dim as i64])?)
            }
            Inputs::EncoderIds {
                tokens,
                ids,
                lengths: lens,
            } => {
                lengths = lens.clone();
                let ids: Vec<i64> = ids.iter().map(|&id| i64::from(id)).collect();
                Stored::EncoderIds {
                    ids: Tensor::from_slice(&ids).reshape([n, *tokens as i64]),
                    mask: mask(*tokens, lens),
                }
            }
            Inputs::Text(_) => {
                return Err(Error::Invalid(format!(
                    "data {}: raw text has no tensor form; turn it into token states first",
                    data.source.name
                )));
            }
        };
        Ok(DataTensors {
            inputs,
            targets: targets_tensor(&data.targets, n),
            lengths,
            data: PhantomData,
        })
    }

    /// The same inputs (shared, not copied) with other targets, e.g. labels a model
    /// predicted for self-labelling.
    pub fn with_targets(&self, targets: &Targets) -> DataTensors<'a> {
        let inputs = match &self.inputs {
            Stored::Images(t) => Stored::Images(t.shallow_clone()),
            Stored::Tokens { states, mask } => Stored::Tokens {
                states: states.shallow_clone(),
                mask: mask.shallow_clone(),
            },
            Stored::TokenIds { ids, table, mask } => Stored::TokenIds {
                ids: ids.shallow_clone(),
                table: table.shallow_clone(),
                mask: mask.shallow_clone(),
            },
            Stored::Embeddings(t) => Stored::Embeddings(t.shallow_clone()),
            Stored::EncoderIds { ids, mask } => Stored::EncoderIds {
                ids: ids.shallow_clone(),
                mask: mask.shallow_clone(),
            },
        };
        DataTensors {
            inputs,
            targets: targets_tensor(targets, self.targets.size()[0]),
            lengths: self.lengths.clone(),
            data: PhantomData,
        }
    }

    /// The model input of `rows`, on `device`, in float32.
    pub fn input(&self, rows: &[usize], device: Device) -> Input {
        let index = index(rows);
        let take = |t: &Tensor| t.index_select(0, &index).to_device(device);
        match &self.inputs {
            Stored::Images(t) => Input::Images(take(t)),
            Stored::Embeddings(t) => Input::Embeddings(take(t)),
            Stored::Tokens { states, mask } => {
                let longest = self.longest(rows);
                Input::Tokens {
                    // A no-op for f32 states; f16 widens exactly.
                    states: take(&states.narrow(1, 0, longest)).to_kind(Kind::Float),
                    mask: take(&mask.narrow(1, 0, longest)),
                }
            }
            Stored::EncoderIds { ids, mask } => {
                let longest = self.longest(rows);
                Input::EncoderIds {
                    ids: take(&ids.narrow(1, 0, longest)),
                    mask: take(&mask.narrow(1, 0, longest)),
                }
            }
            Stored::TokenIds { ids, table, mask } => {
                let longest = self.longest(rows);
                let ids = ids.index_select(0, &index).narrow(1, 0, longest);
                let states = table.index_select(0, &ids.reshape([-1])).reshape([
                    rows.len() as i64,
                    longest,
                    -1,
                ]);
                Input::Tokens {
                    states: states.to_device(device),
                    mask: take(&mask.narrow(1, 0, longest)),
                }
            }
        }
    }

    /// `rows` with the longest token rows first (ties in the given order); other inputs
    /// keep the given order.
    pub fn by_length(&self, rows: &[usize]) -> Vec<usize> {
        let mut order = rows.to_vec();
        if !self.lengths.is_empty() {
            order.sort_by_key(|&r| std::cmp::Reverse(self.lengths[r]));
        }
        order
    }

    fn longest(&self, rows: &[usize]) -> i64 {
        rows.iter().map(|&r| self.lengths[r]).max().unwrap_or(1) as i64
    }

    /// The targets of `rows`, on `device`.
    pub fn targets(&self, rows: &[usize], device: Device) -> Tensor {
        self.targets.index_select(0, &index(rows)).to_device(device)
    }
}

/// Class labels as int64, multi-label flags `[n, classes]` and values as float32.
fn targets_tensor(targets: &Targets, n: i64) -> Tensor {
    match targets {
        Targets::Classes { labels, .. } => {
            let labels: Vec<i64> = labels.iter().map(|&l| l as i64).collect();
            Tensor::from_slice(&labels)
        }
        Targets::MultiLabel { classes, labels } => {
            let flags: Vec<f32> = labels.iter().map(|&b| f32::from(u8::from(b))).collect();
            Tensor::from_slice(&flags).reshape([n, *classes as i64])
        }
        Targets::Values(values) => Tensor::from_slice(values).to_kind(Kind::Float),
    }
}

/// A CPU tensor of `shape` over `values`, without a copy; an error unless the shape holds
/// exactly the values (a data set whose inputs do not fill whole rows).
fn view<T: tch::kind::Element>(values: &[T], shape: &[i64]) -> Result<Tensor> {
    if shape.iter().product::<i64>() != values.len() as i64 {
        return Err(Error::Invalid(format!(
            "{} input values do not fill a tensor of shape {shape:?}",
            values.len()
        )));
    }
    let mut strides = vec![1i64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    // SAFETY: the values outlive the tensor, which lives in a `DataTensors<'a>` that
    // borrows the data set holding them (never moved out: its methods only gather batches
    // by `index_select` into new tensors, so nothing writes through it either).
    Ok(unsafe {
        Tensor::from_blob(
            values.as_ptr().cast(),
            shape,
            &strides,
            T::KIND,
            Device::Cpu,
        )
    })
}

/// `[N, T]` bool, true for the first `lengths[r]` positions of row `r`.
fn mask(tokens: usize, lengths: &[u32]) -> Tensor {
    let positions = Tensor::arange(tokens as i64, (Kind::Int64, Device::Cpu)).unsqueeze(0);
    let lengths: Vec<i64> = lengths.iter().map(|&l| i64::from(l)).collect();
    positions.lt_tensor(&Tensor::from_slice(&lengths).unsqueeze(1))
}

/// Row indices as an int64 tensor.
pub fn index(rows: &[usize]) -> Tensor {
    let rows: Vec<i64> = rows.iter().map(|&r| r as i64).collect();
    Tensor::from_slice(&rows)
}
