//! `drift shift`: a two-sample test of distribution shift on two `.npy` samples.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::summarize::OutputFormat;
use crate::output::outln;
use crate::shift::{self, Sample};
use crate::{Error, Result};

/// Which test.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Test {
    /// Unbiased MMD^2, Gaussian kernel with the median-distance bandwidth, permutation
    /// p-value.
    Mmd,
    /// Kolmogorov-Smirnov per dimension (scipy's ks_2samp): the largest statistic, the
    /// smallest p-value times the dimensions (at most 1).
    Ks,
    /// Classifier two-sample test: cross-validated ROC AUC of a logistic regression telling
    /// the samples apart (5 stratified folds), Mann-Whitney p-value.
    C2st,
}

/// Arguments of `drift shift`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The first sample: float32 `.npy`, `[rows, dims]`.
    pub a: PathBuf,
    /// The second sample, of the same `dims`.
    pub b: PathBuf,
    /// The test.
    #[arg(long, value_enum, default_value = "mmd")]
    pub test: Test,
    /// Shuffles of the pooled rows for the permutation p-value (mmd only).
    #[arg(long, default_value_t = 1000)]
    pub permutations: usize,
    /// Seed of the shuffles (mmd only; ks and c2st draw nothing).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// JSON (keys `test`, `statistic`, `p_value`, `rows_a`, `rows_b`, `dims`, and the
    /// test's own: mmd's `bandwidth`, `permutations`, `seed`; ks's `dimension`, `exact`;
    /// c2st's `folds`) or a table.
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutputFormat,
}

fn read(path: &Path) -> Result<(usize, usize, Vec<f32>)> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    crate::npy::read_f32_2d(&bytes).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))
}

/// Runs `drift shift`.
pub fn run(args: Args) -> Result<ExitCode> {
    let (rows_a, dims_a, a) = read(&args.a)?;
    let (rows_b, dims_b, b) = read(&args.b)?;
    if dims_a != dims_b {
        return Err(Error::Invalid(format!(
            "{} has {dims_a} dimensions and {} has {dims_b}: the samples must have the same",
            args.a.display(),
            args.b.display()
        )));
    }
    let a = Sample {
        values: &a,
        dims: dims_a,
    };
    let b = Sample {
        values: &b,
        dims: dims_b,
    };
    // The test's own fields beside statistic and p-value, as (JSON key, value, table text).
    let (name, result, extra): (_, _, Vec<(&str, serde_json::Value, String)>) = match args.test {
        Test::Mmd => {
            let mmd = shift::mmd(a, b, args.permutations, args.seed)?;
            let b = mmd.bandwidth;
            (
                "mmd",
                mmd.test,
                vec![
                    ("bandwidth", b.into(), format!("{b:.6e}")),
                    (
                        "permutations",
                        args.permutations.into(),
                        args.permutations.to_string(),
                    ),
                    ("seed", args.seed.into(), args.seed.to_string()),
                ],
            )
        }
        Test::Ks => {
            let ks = shift::ks(a, b)?;
            let exact = if ks.exact {
                "exact"
            } else {
                "asymptotic (a sample has over 10,000 rows)"
            };
            (
                "ks",
                ks.test,
                vec![
                    ("dimension", ks.dimension.into(), ks.dimension.to_string()),
                    ("exact", ks.exact.into(), exact.to_string()),
                ],
            )
        }
        Test::C2st => (
            "c2st",
            shift::c2st(a, b)?,
            vec![("folds", shift::FOLDS.into(), shift::FOLDS.to_string())],
        ),
    };
    match args.format {
        OutputFormat::Json => {
            let mut json = serde_json::json!({
                "test": name,
                "statistic": result.statistic,
                "p_value": result.p_value,
                "rows_a": rows_a,
                "rows_b": rows_b,
                "dims": dims_a,
            });
            for (key, value, _) in &extra {
                json[*key] = value.clone();
            }
            outln!(
                "{}",
                serde_json::to_string_pretty(&json).expect("JSON serialises")
            )?;
        }
        OutputFormat::Table => {
            outln!("test       {name}")?;
            outln!("samples    {rows_a} and {rows_b} rows of {dims_a} dimensions")?;
            outln!("statistic  {:.6e}", result.statistic)?;
            outln!("p-value    {:.4e}", result.p_value)?;
            for (key, _, text) in &extra {
                outln!("{key:<10} {text}")?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
