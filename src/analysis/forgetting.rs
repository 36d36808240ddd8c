//! Forgetting curves: the mean score at each lag `l = j - i >= 0`.

use serde::Serialize;

use crate::matrix::{DriftMatrix, Grid, sample_std};

/// `F(l) = mean_i M_{i,i+l}` over filled cells, for every lag with at least one.
pub fn forgetting_curve(grid: &Grid) -> Vec<(usize, f64)> {
    (0..grid.k())
        .filter_map(|lag| {
            let values: Vec<f64> = (0..grid.k() - lag)
                .filter_map(|i| grid.get(i, i + lag))
                .collect();
            (!values.is_empty()).then(|| (lag, values.iter().sum::<f64>() / values.len() as f64))
        })
        .collect()
}

/// One lag of a forgetting curve over seeds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ForgettingPoint {
    /// `l = j - i`.
    pub lag: usize,
    /// Mean over seeds of each seed's `F(l)`.
    pub mean: f64,
    /// Sample standard deviation (ddof 1) over seeds; `None` for one seed.
    pub std: Option<f64>,
}

/// The forgetting curve computed per seed, then mean and standard deviation over the seeds
/// that have a value at that lag.
pub fn forgetting_over_seeds(matrix: &DriftMatrix) -> Vec<ForgettingPoint> {
    let curves: Vec<Vec<(usize, f64)>> = matrix.grids().iter().map(forgetting_curve).collect();
    (0..matrix.k())
        .filter_map(|lag| {
            let values: Vec<f64> = curves
                .iter()
                .filter_map(|c| c.iter().find(|(l, _)| *l == lag).map(|(_, v)| *v))
                .collect();
            (!values.is_empty()).then(|| ForgettingPoint {
                lag,
                mean: values.iter().sum::<f64>() / values.len() as f64,
                std: sample_std(&values),
            })
        })
        .collect()
}
