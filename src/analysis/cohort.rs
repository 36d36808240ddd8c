//! The cohort mean of several models' drift matrices and each model's deviation from it.

use serde::Serialize;

use crate::matrix::{DriftMatrix, Grid};
use crate::{Error, Result};

/// The cohort: which models entered, which did not and why, and the mean matrix.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cohort {
    /// Models that entered, in input order.
    pub members: Vec<String>,
    /// Models left out, with the reason.
    pub excluded: Vec<(String, String)>,
    /// `M̄_ij`: the mean over members of their seed-mean cells, defined only at cells every
    /// member fills.
    pub mean: Grid,
    /// The same of each expected seed's grids on their own (a replication's cohort), in
    /// seed order.
    pub per_seed: Vec<(u64, Grid)>,
}

/// Builds the cohort of `models` (name, matrix). Only models with every seed in
/// `expected_seeds` enter; all matrices must share slices and metric.
pub fn cohort(models: &[(&str, &DriftMatrix)], expected_seeds: &[u64]) -> Result<Cohort> {
    let Some((first_name, first)) = models.first() else {
        return Err(Error::Invalid("a cohort needs at least one model".into()));
    };
    for (name, m) in models {
        if m.slices() != first.slices() || m.metric() != first.metric() {
            return Err(Error::Invalid(format!(
                "model {name}: its slices or metric differ from model {first_name}'s"
            )));
        }
    }
    let mut members = Vec::new();
    let mut excluded = Vec::new();
    let mut means = Vec::new();
    let mut entered: Vec<&DriftMatrix> = Vec::new();
    for (name, m) in models {
        let missing: Vec<String> = expected_seeds
            .iter()
            .filter(|s| !m.seeds().contains(s))
            .map(u64::to_string)
            .collect();
        if missing.is_empty() {
            members.push(name.to_string());
            means.push(m.mean());
            entered.push(m);
        } else {
            excluded.push((
                name.to_string(),
                format!("missing seeds {}", missing.join(", ")),
            ));
        }
    }
    let per_seed = expected_seeds
        .iter()
        .map(|&seed| {
            let grids: Vec<&Grid> = entered
                .iter()
                .map(|m| {
                    let at = m.seeds().iter().position(|&s| s == seed);
                    &m.grids()[at.expect("members have every expected seed")]
                })
                .collect();
            (seed, mean_where_all_fill(&grids, first.k()))
        })
        .collect();
    let means: Vec<&Grid> = means.iter().collect();
    Ok(Cohort {
        members,
        excluded,
        mean: mean_where_all_fill(&means, first.k()),
        per_seed,
    })
}

/// The per-cell mean of `grids`, defined only where every one of them fills the cell
/// (empty without grids).
fn mean_where_all_fill(grids: &[&Grid], k: usize) -> Grid {
    let mut mean = Grid::empty(k);
    if !grids.is_empty() {
        for i in 0..k {
            for j in 0..k {
                let values: Option<Vec<f64>> = grids.iter().map(|g| g.get(i, j)).collect();
                if let Some(values) = values {
                    mean.set(i, j, Some(values.iter().sum::<f64>() / values.len() as f64));
                }
            }
        }
    }
    mean
}

/// `Δ_ij = M_ij - M̄_ij` where both are filled.
pub fn deviation(model: &Grid, cohort_mean: &Grid) -> Grid {
    model.map(|i, j, v| cohort_mean.get(i, j).map(|c| v - c))
}
