//! The drift matrix: K×K cells, rows = trained through slice `i`, columns = evaluated on
//! slice `j`, each cell empty or one value per seed; and its long-form CSV reader.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::csv_table::CsvTable;
use crate::metrics::{Direction, Metric};
use crate::{Error, Result};

/// One seed's K×K matrix, row-major; `None` is an empty cell.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Grid {
    k: usize,
    cells: Vec<Option<f64>>,
}

impl Grid {
    /// A K×K grid of empty cells.
    pub fn empty(k: usize) -> Self {
        Grid {
            k,
            cells: vec![None; k * k],
        }
    }

    /// A grid from rows (each of length K, K rows).
    pub fn from_rows(rows: &[Vec<Option<f64>>]) -> Result<Self> {
        let k = rows.len();
        if let Some((i, row)) = rows.iter().enumerate().find(|(_, r)| r.len() != k) {
            return Err(Error::Invalid(format!(
                "row {i} has {} cells, a {k}x{k} matrix needs {k}",
                row.len()
            )));
        }
        Ok(Grid {
            k,
            cells: rows.concat(),
        })
    }

    /// The number of slices K.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Cell `(i, j)`: the model trained through `i`, evaluated on `j`.
    pub fn get(&self, i: usize, j: usize) -> Option<f64> {
        self.cells[i * self.k + j]
    }

    /// Sets cell `(i, j)`.
    pub fn set(&mut self, i: usize, j: usize, value: Option<f64>) {
        self.cells[i * self.k + j] = value;
    }

    /// Sets row `i` to `row`'s cells, from the first column on.
    pub fn set_row(&mut self, i: usize, row: &[Option<f64>]) {
        for (j, &value) in row.iter().enumerate() {
            self.set(i, j, value);
        }
    }

    /// The rows, each K cells.
    pub fn rows(&self) -> impl Iterator<Item = &[Option<f64>]> {
        self.cells.chunks(self.k.max(1))
    }

    /// Filled cells as `(i, j, value)`, row by row.
    pub fn filled(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        self.cells
            .iter()
            .enumerate()
            .filter_map(|(n, v)| v.map(|v| (n / self.k, n % self.k, v)))
    }

    /// Applies `f` to every filled cell.
    pub fn map(&self, f: impl Fn(usize, usize, f64) -> Option<f64>) -> Grid {
        let mut out = Grid::empty(self.k);
        for (i, j, v) in self.filled() {
            out.set(i, j, f(i, j, v));
        }
        out
    }
}

/// A model's drift matrix over K slices, one [`Grid`] per seed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DriftMatrix {
    slices: Vec<String>,
    metric: Metric,
    seeds: Vec<u64>,
    grids: Vec<Grid>,
}

impl DriftMatrix {
    /// A matrix without seeds over the given slice labels (oldest first).
    pub fn new(slices: Vec<String>, metric: Metric) -> Self {
        DriftMatrix {
            slices,
            metric,
            seeds: Vec::new(),
            grids: Vec::new(),
        }
    }

    /// Adds one seed's grid; seeds are kept in ascending order and must be unique.
    pub fn add_seed(&mut self, seed: u64, grid: Grid) -> Result<()> {
        if grid.k() != self.slices.len() {
            return Err(Error::Invalid(format!(
                "seed {seed}: a {0}x{0} grid for {1} slices",
                grid.k(),
                self.slices.len()
            )));
        }
        match self.seeds.binary_search(&seed) {
            Ok(_) => Err(Error::Invalid(format!("seed {seed} appears twice"))),
            Err(at) => {
                self.seeds.insert(at, seed);
                self.grids.insert(at, grid);
                Ok(())
            }
        }
    }

    /// Slice labels, oldest first.
    pub fn slices(&self) -> &[String] {
        &self.slices
    }

    /// The number of slices K.
    pub fn k(&self) -> usize {
        self.slices.len()
    }

    /// The metric the cells hold.
    pub fn metric(&self) -> Metric {
        self.metric
    }

    /// Whether higher is better for this matrix's metric.
    pub fn direction(&self) -> Direction {
        self.metric.direction()
    }

    /// Seeds, ascending.
    pub fn seeds(&self) -> &[u64] {
        &self.seeds
    }

    /// The grid of each seed, in [`DriftMatrix::seeds`] order.
    pub fn grids(&self) -> &[Grid] {
        &self.grids
    }

    /// The matrix with row `i` of seed `s`'s grid emptied wherever `drop(s, i)` holds
    /// (e.g. the cutoffs whose checkpoint collapsed).
    pub fn without_rows(&self, drop: impl Fn(u64, usize) -> bool) -> DriftMatrix {
        let grids = self
            .seeds
            .iter()
            .zip(&self.grids)
            .map(|(&seed, grid)| grid.map(|i, _, v| (!drop(seed, i)).then_some(v)))
            .collect();
        DriftMatrix {
            grids,
            ..self.clone()
        }
    }

    /// Per-cell mean over the seeds that filled the cell.
    pub fn mean(&self) -> Grid {
        self.reduce(|values| Some(values.iter().sum::<f64>() / values.len() as f64))
    }

    /// Per-cell sample standard deviation (ddof 1); empty where fewer than 2 seeds filled it.
    pub fn std(&self) -> Grid {
        self.reduce(sample_std)
    }

    fn reduce(&self, f: impl Fn(&[f64]) -> Option<f64>) -> Grid {
        let k = self.k();
        let mut out = Grid::empty(k);
        for i in 0..k {
            for j in 0..k {
                let values: Vec<f64> = self.grids.iter().filter_map(|g| g.get(i, j)).collect();
                if !values.is_empty() {
                    out.set(i, j, f(&values));
                }
            }
        }
        out
    }
}

/// Sample standard deviation (ddof 1); `None` for fewer than 2 values.
pub fn sample_std(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    Some((values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0)).sqrt())
}

/// Orders slice labels along the timeline: all integers numerically; else all labels
/// this crate writes (`1978`, `2017-H1`, `2017-Q3`, `1850s`, `2014-03-05`) by their start;
/// else in order of first appearance in the file.
pub fn timeline_order(labels: &[String]) -> Vec<String> {
    let mut unique: Vec<String> = Vec::new();
    for l in labels {
        if !unique.contains(l) {
            unique.push(l.clone());
        }
    }
    // Each label keeps its own spelling ("01" stays "01"): the caller looks them up.
    fn sorted_by<K: Ord>(keys: Vec<K>, labels: Vec<String>) -> Vec<String> {
        let mut keyed: Vec<_> = keys.into_iter().zip(labels).collect();
        keyed.sort();
        keyed.into_iter().map(|(_, l)| l).collect()
    }
    if let Some(numbers) = unique.iter().map(|l| l.parse::<i64>().ok()).collect() {
        return sorted_by::<i64>(numbers, unique);
    }
    if let Some(starts) = unique
        .iter()
        .map(|l| crate::slices::parse_label(l))
        .collect()
    {
        return sorted_by::<crate::slices::Timestamp>(starts, unique);
    }
    unique
}

/// Reads a long-form drift-matrix CSV: columns `train_slice`, `eval_slice`, `value`, and
/// optionally `seed` (integers; seed 0 when absent) and `metric` (must equal `metric`), in
/// any order. An empty value, `nan` or `null` is an empty cell, as is any cell with no row.
/// Slices are put in timeline order by [`timeline_order`].
pub fn read_long_csv(path: &Path, metric: Metric) -> Result<DriftMatrix> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    parse_long_csv(file, path, metric)
}

/// [`read_long_csv`] from any reader; `path` names the source in errors.
pub fn parse_long_csv(
    reader: impl std::io::Read,
    path: &Path,
    metric: Metric,
) -> Result<DriftMatrix> {
    let table = CsvTable::read(reader, path)?;
    let err = |line: u64, message: String| table.error(line, message);
    let (Some(c_train), Some(c_eval), Some(c_value)) = (
        table.column("train_slice"),
        table.column("eval_slice"),
        table.column("value"),
    ) else {
        return Err(err(
            1,
            format!(
                "header must name train_slice, eval_slice and value (found {})",
                table.header.join(",")
            ),
        ));
    };
    let c_seed = table.column("seed");
    let c_metric = table.column("metric");

    let mut entries: Vec<(u64, String, String, Option<f64>, u64)> = Vec::new();
    for (line, record) in &table.rows {
        let line = *line;
        let field = |c: usize| record[c].as_str();
        if let Some(c) = c_metric
            && field(c) != metric.name()
        {
            return Err(err(
                line,
                format!("metric: {:?} but --metric is {metric}", field(c)),
            ));
        }
        let seed = match c_seed {
            None => 0,
            Some(c) => field(c).parse::<u64>().map_err(|_| {
                err(
                    line,
                    format!("seed: expected a non-negative integer, got {:?}", field(c)),
                )
            })?,
        };
        let value = match field(c_value) {
            "" | "nan" | "NaN" | "null" => None,
            text => match text.parse::<f64>() {
                Ok(v) if v.is_finite() => Some(v),
                _ => return Err(err(line, format!("value: expected a number, got {text:?}"))),
            },
        };
        for (name, c) in [("train_slice", c_train), ("eval_slice", c_eval)] {
            if field(c).is_empty() {
                return Err(err(line, format!("{name}: empty")));
            }
        }
        entries.push((
            seed,
            field(c_train).into(),
            field(c_eval).into(),
            value,
            line,
        ));
    }
    if entries.is_empty() {
        return Err(err(1, "no data rows".into()));
    }

    let all_labels: Vec<String> = entries
        .iter()
        .flat_map(|(_, t, e, _, _)| [t.clone(), e.clone()])
        .collect();
    let slices = timeline_order(&all_labels);
    let index: BTreeMap<&str, usize> = slices
        .iter()
        .enumerate()
        .map(|(n, l)| (l.as_str(), n))
        .collect();
    let k = slices.len();
    let mut grids: BTreeMap<u64, Grid> = BTreeMap::new();
    let mut seen: BTreeMap<(u64, usize, usize), u64> = BTreeMap::new();
    for (seed, train, eval, value, line) in &entries {
        let (i, j) = (index[train.as_str()], index[eval.as_str()]);
        if let Some(first) = seen.insert((*seed, i, j), *line) {
            return Err(err(
                *line,
                format!(
                    "cell train_slice={train}, eval_slice={eval}, seed={seed} repeats line {first}"
                ),
            ));
        }
        grids
            .entry(*seed)
            .or_insert_with(|| Grid::empty(k))
            .set(i, j, *value);
    }
    let mut matrix = DriftMatrix::new(slices, metric);
    for (seed, grid) in grids {
        matrix.add_seed(seed, grid)?;
    }
    Ok(matrix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_labels_along_the_timeline() {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            timeline_order(&s(&["10", "9", "28"])),
            s(&["9", "10", "28"])
        );
        assert_eq!(
            timeline_order(&s(&["2018-H1", "2017-H2", "2017-H1"])),
            s(&["2017-H1", "2017-H2", "2018-H1"])
        );
        assert_eq!(timeline_order(&s(&["b", "a", "b"])), s(&["b", "a"]));
    }

    #[test]
    fn mean_and_std_over_seeds() {
        let mut m = DriftMatrix::new(vec!["a".into(), "b".into()], Metric::Accuracy);
        m.add_seed(
            1,
            Grid::from_rows(&[vec![Some(1.0), None], vec![None, Some(2.0)]]).unwrap(),
        )
        .unwrap();
        m.add_seed(
            0,
            Grid::from_rows(&[vec![Some(3.0), None], vec![None, None]]).unwrap(),
        )
        .unwrap();
        assert_eq!(m.seeds(), &[0, 1]);
        assert_eq!(m.mean().get(0, 0), Some(2.0));
        assert_eq!(m.mean().get(1, 1), Some(2.0));
        assert_eq!(m.mean().get(0, 1), None);
        assert_eq!(m.std().get(0, 0), Some(2f64.sqrt()));
        assert_eq!(m.std().get(1, 1), None);
        assert!(m.add_seed(1, Grid::empty(2)).is_err());
    }
}
