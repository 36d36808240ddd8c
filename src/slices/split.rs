//! The once-per-slice train/test split, and equal-size down-sampling of slices.
//!
//! # Algorithm (stable across platforms and crate versions)
//!
//! Each slice gets its own random stream, so adding or dropping one slice never changes
//! the split of another: a ChaCha20 generator (RFC 8439 block function, as implemented by
//! `rand_chacha`) keyed with `SHA-256("drift-split-v1:{seed}:{slice label}")`, of which
//! only `next_u64` is used. A uniform integer below `n` is drawn by rejection: draw `x`
//! until `x < n * floor((2^64 - 1) / n)`, return `x mod n`. A shuffle is Fisher-Yates
//! from the last position down (`swap(i, uniform(i + 1))`).
//!
//! With `n` rows, `n_train = floor(n * train_fraction + 1e-9)` clamped to `1..=n-1`, and
//! the rest is test; a slice with fewer than 3 rows goes wholly to train. The split is
//! stratified by label when [`Stratify::Auto`] and possible (at least 2 classes, each
//! with at least 2 rows, and both sides at least as large as the number of classes C):
//! each class first gets one test row, and the remaining `n_test - C` test rows are
//! apportioned by largest remainder in proportion to each class's `rows - 2` (ties to the
//! smaller label), which leaves every class at least one row on each side. The rows of
//! each class (classes in ascending label order, rows in ascending index order) are
//! shuffled with the slice's stream and the first ones become test. Otherwise all rows
//! (in ascending row order) are shuffled once and the first `n_test` become test. Both
//! sides are returned sorted. `scripts/split_reference.py` implements this text
//! independently in Python; `tests/split.rs` checks both agree.

use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use serde::Serialize;

use super::scheme::Slice;

/// Whether splits are stratified by label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stratify {
    /// Stratify when the slice allows it (protocol.md §1), else split unstratified.
    Auto,
    /// Never stratify (the reference's text tasks).
    Never,
}

/// How each slice is split.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SplitConfig {
    /// Fraction of each slice's rows used for training (default 0.7).
    pub train_fraction: f64,
    /// The split seed, shared by every model.
    pub seed: u64,
    /// Whether to stratify by label.
    pub stratify: Stratify,
}

impl Default for SplitConfig {
    fn default() -> Self {
        SplitConfig {
            train_fraction: 0.7,
            seed: 0,
            stratify: Stratify::Auto,
        }
    }
}

/// The train and test rows of one slice (data-set row indices, ascending).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SliceSplit {
    /// Rows used for training.
    pub train: Vec<usize>,
    /// Rows held out for in-distribution evaluation.
    pub test: Vec<usize>,
    /// Whether the split was stratified by label.
    pub stratified: bool,
}

/// The slice's own random stream, keyed by purpose, seed and label.
pub(crate) fn stream(purpose: &str, seed: u64, label: &str) -> ChaCha20Rng {
    use sha2::Digest;
    let key = sha2::Sha256::digest(format!("{purpose}:{seed}:{label}").as_bytes());
    ChaCha20Rng::from_seed(key.into())
}

/// A uniform integer in `0..n` by rejection sampling (`n > 0`).
pub(crate) fn uniform(rng: &mut ChaCha20Rng, n: u64) -> u64 {
    let zone = n * (u64::MAX / n);
    loop {
        let x = rng.next_u64();
        if x < zone {
            return x % n;
        }
    }
}

pub(crate) fn shuffle(rng: &mut ChaCha20Rng, items: &mut [usize]) {
    for i in (1..items.len()).rev() {
        let j = uniform(rng, i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

/// Splits one slice. `labels`, when given, holds the class of each row in `rows` order and
/// enables stratification.
pub fn split_slice(
    rows: &[usize],
    labels: Option<&[u32]>,
    config: &SplitConfig,
    slice_label: &str,
) -> SliceSplit {
    let n = rows.len();
    if n < 3 {
        let mut train = rows.to_vec();
        train.sort_unstable();
        return SliceSplit {
            train,
            test: Vec::new(),
            stratified: false,
        };
    }
    let n_train = ((n as f64 * config.train_fraction + 1e-9).floor() as usize).clamp(1, n - 1);
    let n_test = n - n_train;
    let mut rng = stream("drift-split-v1", config.seed, slice_label);

    let classes = match (config.stratify, labels) {
        (Stratify::Auto, Some(labels)) => stratifiable(rows, labels, n_train, n_test),
        _ => None,
    };
    let (mut train, mut test) = (Vec::with_capacity(n_train), Vec::with_capacity(n_test));
    let stratified = classes.is_some();
    match classes {
        Some(classes) => {
            let quotas = test_quotas(&classes, n_test);
            for (mut members, quota) in classes.into_iter().zip(quotas) {
                shuffle(&mut rng, &mut members);
                test.extend_from_slice(&members[..quota]);
                train.extend_from_slice(&members[quota..]);
            }
        }
        None => {
            let mut all = rows.to_vec();
            all.sort_unstable();
            shuffle(&mut rng, &mut all);
            test.extend_from_slice(&all[..n_test]);
            train.extend_from_slice(&all[n_test..]);
        }
    }
    train.sort_unstable();
    test.sort_unstable();
    SliceSplit {
        train,
        test,
        stratified,
    }
}

/// The rows of each class (ascending label, ascending row), when stratification is possible.
fn stratifiable(
    rows: &[usize],
    labels: &[u32],
    n_train: usize,
    n_test: usize,
) -> Option<Vec<Vec<usize>>> {
    assert_eq!(rows.len(), labels.len(), "one label per row");
    let mut by_class = std::collections::BTreeMap::<u32, Vec<usize>>::new();
    for (&row, &label) in rows.iter().zip(labels) {
        by_class.entry(label).or_default().push(row);
    }
    let c = by_class.len();
    let ok = c >= 2 && by_class.values().all(|m| m.len() >= 2) && n_train >= c && n_test >= c;
    ok.then(|| {
        by_class
            .into_values()
            .map(|mut m| {
                m.sort_unstable();
                m
            })
            .collect()
    })
}

/// Test rows per class: one each, then the rest by largest remainder over `rows - 2`.
fn test_quotas(classes: &[Vec<usize>], n_test: usize) -> Vec<usize> {
    let extra = (n_test - classes.len()) as u128;
    let capacity: Vec<u128> = classes.iter().map(|m| m.len() as u128 - 2).collect();
    let total: u128 = capacity.iter().sum();
    let mut quotas: Vec<usize> = vec![1; classes.len()];
    if total == 0 {
        return quotas;
    }
    let mut remainders = Vec::with_capacity(classes.len());
    let mut given = 0;
    for (k, &cap) in capacity.iter().enumerate() {
        let numerator = extra * cap;
        quotas[k] += (numerator / total) as usize;
        given += numerator / total;
        remainders.push((numerator % total, k));
    }
    // Largest remainder first; equal remainders go to the smaller label.
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, k) in remainders.iter().take((extra - given) as usize) {
        quotas[k] += 1;
    }
    quotas
}

/// Equal-size slices (Agarwal & Nenkova): every slice is down-sampled, before splitting,
/// to the row count of the smallest slice, as [`cap_slices`] does.
pub fn downsample_slices(slices: &mut [Slice], seed: u64) {
    if let Some(size) = slices.iter().map(|s| s.rows.len()).min() {
        cap_slices(slices, seed, size);
    }
}

/// Caps every slice at `size` rows before splitting (`split.max_rows`): a larger slice
/// keeps the first `size` rows of a shuffle by its own stream
/// `SHA-256("drift-downsample-v1:{seed}:{label}")`, sorted ascending; a slice at or
/// under `size` keeps every row.
pub fn cap_slices(slices: &mut [Slice], seed: u64, size: usize) {
    for slice in slices.iter_mut().filter(|s| s.rows.len() > size) {
        let mut rng = stream("drift-downsample-v1", seed, &slice.label);
        shuffle(&mut rng, &mut slice.rows);
        slice.rows.truncate(size);
        slice.rows.sort_unstable();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_give_each_class_a_row_on_both_sides() {
        let classes = vec![vec![0; 2], vec![0; 10], vec![0; 30]];
        let q = test_quotas(&classes, 13);
        assert_eq!(q.iter().sum::<usize>(), 13);
        assert_eq!(q[0], 1);
        for (m, q) in classes.iter().zip(&q) {
            assert!(*q >= 1 && *q < m.len());
        }
    }

    #[test]
    fn uniform_stays_in_range() {
        let mut rng = stream("t", 0, "x");
        for n in 1..50 {
            assert!(uniform(&mut rng, n) < n);
        }
    }
}
