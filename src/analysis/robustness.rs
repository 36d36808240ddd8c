//! In-distribution, future and decay scores of a drift matrix, overall and per cutoff,
//! and their family averages (protocol.md §3).

use serde::Serialize;

use crate::matrix::Grid;
use crate::metrics::Direction;

/// ID, future and decay of one grid.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Robustness {
    /// Mean of the filled diagonal cells `M_ii`.
    pub id: Option<f64>,
    /// Mean of the filled cells above the diagonal `M_ij`, `j > i`.
    pub future: Option<f64>,
    /// `id - future` (higher is better) or `future - id` (lower is better): positive
    /// always means worse on the future.
    pub decay: Option<f64>,
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// Decay oriented so that positive means worse on the future.
pub fn decay(id: Option<f64>, future: Option<f64>, direction: Direction) -> Option<f64> {
    let (id, future) = (id?, future?);
    Some(match direction {
        Direction::HigherIsBetter => id - future,
        Direction::LowerIsBetter => future - id,
    })
}

impl Robustness {
    fn new(id: Option<f64>, future: Option<f64>, direction: Direction) -> Self {
        Robustness {
            id,
            future,
            decay: decay(id, future, direction),
        }
    }
}

/// `ID(M) = mean_i M_ii`, `Fut(M) = mean_{j>i} M_ij` over filled cells, and their decay.
pub fn robustness(grid: &Grid, direction: Direction) -> Robustness {
    let id = mean(grid.filled().filter(|&(i, j, _)| i == j).map(|c| c.2));
    let future = mean(grid.filled().filter(|&(i, j, _)| j > i).map(|c| c.2));
    Robustness::new(id, future, direction)
}

/// The three definitions of decay a claim can name, of one grid. They answer different
/// questions and can order models differently: the pooled decay weights every cell alike
/// (and its ID includes the last cutoff, which has no future), the row-matched one
/// compares each cutoff only with its own future, and the retention is relative, so a
/// model that starts lower is not credited for having less to lose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct DecayDefinitions {
    /// [`Robustness::decay`]: the pooled ID minus the pooled future.
    pub pooled: Option<f64>,
    /// Per cutoff with a future, its diagonal minus the mean of its later cells (oriented
    /// like `pooled`), averaged over those cutoffs.
    pub row_matched: Option<f64>,
    /// The share of the ID score kept on the future: future / ID for higher-is-better
    /// metrics, ID / future for errors; 1 keeps everything, lower is worse.
    pub retention: Option<f64>,
}

/// The [`DecayDefinitions`] of one grid.
pub fn decay_definitions(grid: &Grid, direction: Direction) -> DecayDefinitions {
    definitions(grid, &robustness(grid, direction), direction)
}

/// The definitions of `grid`, whose [`robustness`] is `pooled`.
fn definitions(grid: &Grid, pooled: &Robustness, direction: Direction) -> DecayDefinitions {
    let row_matched = mean(
        per_cutoff(grid, direction)
            .iter()
            .filter_map(|r| r.scores.decay),
    );
    let retention = pooled.id.zip(pooled.future).and_then(|(id, future)| {
        let (kept, of) = match direction {
            Direction::HigherIsBetter => (future, id),
            Direction::LowerIsBetter => (id, future),
        };
        (of != 0.0).then(|| kept / of)
    });
    DecayDefinitions {
        pooled: pooled.decay,
        row_matched,
        retention,
    }
}

/// ID / future / decay and the decay definitions of one seed's grid: the values the
/// claims' tests compare across seeds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SeedScores {
    /// The seed.
    pub seed: u64,
    /// [`robustness`] of its grid.
    pub overall: Robustness,
    /// [`decay_definitions`] of its grid.
    pub decay: DecayDefinitions,
}

/// The [`SeedScores`] of each `(seed, grid)`.
pub fn seed_scores<'a>(
    grids: impl IntoIterator<Item = (u64, &'a Grid)>,
    direction: Direction,
) -> Vec<SeedScores> {
    grids
        .into_iter()
        .map(|(seed, grid)| {
            let overall = robustness(grid, direction);
            SeedScores {
                seed,
                decay: definitions(grid, &overall, direction),
                overall,
            }
        })
        .collect()
}

/// The figures of one cutoff (row) `i`: `M_ii`, `mean_{j>i} M_ij` and their decay.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CutoffRow {
    /// The row index `i` (0-based).
    pub cutoff: usize,
    /// ID, future and decay of this row.
    #[serde(flatten)]
    pub scores: Robustness,
}

/// One [`CutoffRow`] per row of the grid.
pub fn per_cutoff(grid: &Grid, direction: Direction) -> Vec<CutoffRow> {
    (0..grid.k())
        .map(|i| {
            let id = grid.get(i, i);
            let future = mean((i + 1..grid.k()).filter_map(|j| grid.get(i, j)));
            CutoffRow {
                cutoff: i,
                scores: Robustness::new(id, future, direction),
            }
        })
        .collect()
}

/// `count` cutoffs evenly spread over `0..=k-2` (the last slice has no future):
/// `round(t (k-2) / (count-1))` for `t = 0..count`, halves rounded up, duplicates
/// removed. With K = 26 and 4 cutoffs: 0, 8, 16, 24 (arXiv 2000/2008/2016/2024).
pub fn spread_cutoffs(k: usize, count: usize) -> Vec<usize> {
    if k < 2 || count == 0 {
        return Vec::new();
    }
    let last = k - 2;
    if count == 1 || last == 0 {
        return vec![0];
    }
    let mut out: Vec<usize> = (0..count)
        .map(|t| (2 * t * last + (count - 1)) / (2 * (count - 1)))
        .collect();
    out.dedup();
    out
}

/// The per-cutoff figures of one model, tagged with its family.
#[derive(Clone, Debug)]
pub struct ModelCutoffs<'a> {
    /// Model key.
    pub model: &'a str,
    /// Family the model belongs to.
    pub family: &'a str,
    /// Its per-cutoff rows ([`per_cutoff`]).
    pub rows: &'a [CutoffRow],
}

/// Family averages at one cutoff, or over all selected cutoffs when `cutoff` is `None`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FamilyRow {
    /// The family.
    pub family: String,
    /// The cutoff, or `None` for the mean over the selected cutoffs.
    pub cutoff: Option<usize>,
    /// Mean over the family's models of their ID / future / decay (each over the models
    /// where it is defined).
    #[serde(flatten)]
    pub scores: Robustness,
    /// How many models the family has.
    pub models: usize,
}

/// Family averages of the per-cutoff figures at `cutoffs`, families in first-seen order;
/// for each family one row per cutoff, then one row over all of them.
pub fn family_averages(models: &[ModelCutoffs], cutoffs: &[usize]) -> Vec<FamilyRow> {
    let mut families: Vec<&str> = Vec::new();
    for m in models {
        if !families.contains(&m.family) {
            families.push(m.family);
        }
    }
    let mut out = Vec::new();
    for family in families {
        let members: Vec<&ModelCutoffs> = models.iter().filter(|m| m.family == family).collect();
        let rows_at = |c: usize| members.iter().filter_map(move |m| m.rows.get(c));
        let average = |rows: Vec<&CutoffRow>| Robustness {
            id: mean(rows.iter().filter_map(|r| r.scores.id)),
            future: mean(rows.iter().filter_map(|r| r.scores.future)),
            decay: mean(rows.iter().filter_map(|r| r.scores.decay)),
        };
        for &c in cutoffs {
            out.push(FamilyRow {
                family: family.to_string(),
                cutoff: Some(c),
                scores: average(rows_at(c).collect()),
                models: members.len(),
            });
        }
        out.push(FamilyRow {
            family: family.to_string(),
            cutoff: None,
            scores: average(cutoffs.iter().flat_map(|&c| rows_at(c)).collect()),
            models: members.len(),
        });
    }
    out
}

/// The family of a model key by convention: the key without its size suffix
/// (`cnn_s` -> `cnn`, `bilstm_attn_l` -> `bilstm_attn`); keys without one are their own family.
pub fn default_family(model: &str) -> &str {
    ["_s", "_m", "_l"]
        .iter()
        .find_map(|suffix| model.strip_suffix(suffix))
        .unwrap_or(model)
}
