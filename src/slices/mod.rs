//! Time and slices: timestamps, slicing schemes, the once-per-slice train/test split and
//! the training regimes (protocol.md §1).
//!
//! A data set is rows `(x, y, t)`. [`slice_rows`] cuts the timeline into K disjoint
//! intervals under a [`Scheme`], drops slices with too few rows (and says which),
//! [`split_slice`] splits each slice once into train and test, and a [`Regime`] turns the
//! splits into the training set of each cutoff and the evaluation set of each cell.
//! [`Varied`] says what a replication's seed varies, and [`derived_seed`] how.

mod regime;
mod replication;
mod scheme;
mod split;
mod timestamp;

pub use regime::{EvalPart, Regime};
pub use replication::{Varied, derived_seed, is_only_init, only_init, parse_vary};
pub(crate) use scheme::parse_label;
pub use scheme::{DroppedSlice, Scheme, Slice, SlicingConfig, Timeline, slice_rows};
pub use split::{SliceSplit, SplitConfig, Stratify, cap_slices, downsample_slices, split_slice};
pub(crate) use split::{shuffle, stream, uniform};
pub use timestamp::Timestamp;
