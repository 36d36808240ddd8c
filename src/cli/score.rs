//! `drift score`: one metric from a predictions CSV, for checking numbers by hand.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::Result;
use crate::csv_table::CsvTable;
use crate::metrics::{Metric, Predictions, Reads};
use crate::output::outln;

/// Arguments of `drift score`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The metric to compute.
    #[arg(long, value_enum)]
    pub metric: Metric,
    /// CSV with columns label,score or label_<c>,score_<c> per class.
    pub predictions: PathBuf,
}

/// Runs `drift score`.
pub fn run(args: Args) -> Result<ExitCode> {
    let value = score_file(&args.predictions, args.metric)?;
    outln!("{}", serde_json::json!({ "value": value }))?;
    Ok(ExitCode::SUCCESS)
}

/// Computes `metric` from a predictions CSV file.
pub fn score_file(path: &Path, metric: Metric) -> Result<Option<f64>> {
    let table = CsvTable::open(path)?;
    let err = |line: u64, message: String| table.error(line, message);
    if table.rows.is_empty() && table.header.iter().all(String::is_empty) {
        // A file without even a header: no predictions.
        return Ok(None);
    }
    let column = |name: &str| table.column(name);
    let numbers = |c: usize| {
        table.parse(c, "a finite number", |t| {
            t.parse::<f64>().ok().filter(|v| v.is_finite())
        })
    };
    let classes = |c: usize| {
        table.parse(c, "a class id (a non-negative integer)", |t| {
            t.parse::<u32>().ok()
        })
    };
    let binary = |c: usize| {
        table.parse(c, "0 or 1", |t| match t {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        })
    };

    if let (Some(l), Some(s)) = (column("label"), column("score")) {
        return match metric.reads() {
            Reads::Values => {
                let (targets, predicted) = (numbers(l)?, numbers(s)?);
                metric.compute(&Predictions::Values {
                    targets: &targets,
                    predicted: &predicted,
                })
            }
            Reads::Scores => {
                let (labels, scores) = (binary(l)?, numbers(s)?);
                metric.compute(&Predictions::Scores {
                    labels: &labels,
                    scores: &scores,
                })
            }
            Reads::Classes => {
                let (labels, predicted) = (classes(l)?, classes(s)?);
                metric.compute(&Predictions::Classes {
                    labels: &labels,
                    predicted: &predicted,
                })
            }
        };
    }

    let label_columns: Vec<(usize, &str)> = table
        .header
        .iter()
        .enumerate()
        .filter_map(|(c, h)| h.strip_prefix("label_").map(|class| (c, class)))
        .collect();
    if label_columns.is_empty() {
        return Err(err(
            1,
            format!(
                "expected columns label,score or label_<c>,score_<c>, found {}",
                table.header.join(",")
            ),
        ));
    }
    if metric.reads() != Reads::Scores {
        let scoring: Vec<&str> = Metric::ALL
            .iter()
            .filter(|m| m.reads() == Reads::Scores)
            .map(|m| m.name())
            .collect();
        return Err(err(
            1,
            format!(
                "label_<c>,score_<c> columns are multi-label data, which only {} uses, not {metric}",
                scoring.join(", ")
            ),
        ));
    }
    let mut pairs = Vec::new();
    for &(c, class) in &label_columns {
        let s = column(&format!("score_{class}"))
            .ok_or_else(|| err(1, format!("label_{class} has no score_{class} column")))?;
        pairs.push((binary(c)?, numbers(s)?));
    }
    let n_classes = pairs.len();
    let rows = table.rows.len();
    let mut labels = Vec::with_capacity(rows * n_classes);
    let mut scores = Vec::with_capacity(rows * n_classes);
    for r in 0..rows {
        for (l, s) in &pairs {
            labels.push(l[r]);
            scores.push(s[r]);
        }
    }
    metric.compute(&Predictions::MultiLabel {
        classes: n_classes,
        labels: &labels,
        scores: &scores,
    })
}
