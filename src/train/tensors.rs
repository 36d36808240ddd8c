//! A data set as libtorch tensors on the CPU, from which batches are gathered by row
//! index and moved to the training device.
//!
//! Token batches are cut to their longest row: the text models mask padding, so the
//! outputs do not depend on it (`tests/models.rs` checks), and short batches run faster.

use tch::{Device, Kind, Tensor};

use crate::data::{Dataset, Inputs, Targets};
use crate::models::Input;
use crate::{Error, Result};

/// The inputs and targets of every row.
#[derive(Debug)]
pub struct DataTensors {
    inputs: Stored,
    targets: Tensor,
    lengths: Vec<u32>,
}

#[derive(Debug)]
enum Stored {
    Images(Tensor),
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
}

impl DataTensors {
    /// Copies `data` into tensors: inputs float32, class labels int64, multi-label flags
    /// and values float32.
    pub fn new(data: &Dataset) -> Result<Self> {
        let n = data.rows() as i64;
        let mut lengths = Vec::new();
        let inputs = match &data.inputs {
            Inputs::Images {
                channels,
                height,
                width,
                pixels,
            } => Stored::Images(Tensor::from_slice(pixels).reshape([
                n,
                *channels as i64,
                *height as i64,
                *width as i64,
            ])),
            Inputs::Tokens {
                tokens,
                dim,
                states,
                lengths: lens,
            } => {
                lengths = lens.clone();
                Stored::Tokens {
                    states: Tensor::from_slice(states).reshape([n, *tokens as i64, *dim as i64]),
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
                    table: Tensor::from_slice(table).reshape([-1, *dim as i64]),
                    mask: mask(*tokens, lens),
                }
            }
            Inputs::Embeddings { dim, values } => {
                Stored::Embeddings(Tensor::from_slice(values).reshape([n, *dim as i64]))
            }
            Inputs::Text(_) => {
                return Err(Error::Invalid(format!(
                    "data {}: raw text has no tensor form; turn it into token states first",
                    data.source.name
                )));
            }
        };
        let targets = match &data.targets {
            Targets::Classes { labels, .. } => {
                let labels: Vec<i64> = labels.iter().map(|&l| l as i64).collect();
                Tensor::from_slice(&labels)
            }
            Targets::MultiLabel { classes, labels } => {
                let flags: Vec<f32> = labels.iter().map(|&b| f32::from(u8::from(b))).collect();
                Tensor::from_slice(&flags).reshape([n, *classes as i64])
            }
            Targets::Values(values) => Tensor::from_slice(values).to_kind(Kind::Float),
        };
        Ok(DataTensors {
            inputs,
            targets,
            lengths,
        })
    }

    /// The model input of `rows`, on `device`.
    pub fn input(&self, rows: &[usize], device: Device) -> Input {
        let index = index(rows);
        let take = |t: &Tensor| t.index_select(0, &index).to_device(device);
        match &self.inputs {
            Stored::Images(t) => Input::Images(take(t)),
            Stored::Embeddings(t) => Input::Embeddings(take(t)),
            Stored::Tokens { states, mask } => {
                let longest = self.longest(rows);
                Input::Tokens {
                    states: take(&states.narrow(1, 0, longest)),
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

    fn longest(&self, rows: &[usize]) -> i64 {
        rows.iter().map(|&r| self.lengths[r]).max().unwrap_or(1) as i64
    }

    /// The targets of `rows`, on `device`.
    pub fn targets(&self, rows: &[usize], device: Device) -> Tensor {
        self.targets.index_select(0, &index(rows)).to_device(device)
    }
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
