//! `drift summarize`: the analyses of one long-form drift-matrix CSV.

use std::path::PathBuf;
use std::process::ExitCode;

use super::cell;
use crate::analysis::{STREAM_K, Summary, summarize_with};
use crate::format;
use crate::metrics::{Direction, Metric};
use crate::{Result, matrix};

/// Output formats.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// One JSON object (keys `id`, `future`, `decay`, `forgetting`, and the four scores).
    Json,
    /// A table for people.
    Table,
}

/// Arguments of `drift summarize`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Long-form CSV with columns train_slice,eval_slice,value and optionally seed and
    /// metric. Slices are integers or labels (1978, 2017-H1, 2017-Q3, 1850s) and are put in
    /// timeline order; other labels keep their order of first appearance. A missing row or
    /// an empty value is an empty cell.
    pub matrix: PathBuf,
    /// The metric of the values (its direction orients decay).
    #[arg(long, value_enum)]
    pub metric: Metric,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,
    /// Wild-Time's Eval-Fix split: the slice whose model is scored on its held-out parts
    /// (slices up to it, as a cumulative regime trains) and on every later slice (default:
    /// the middle slice).
    #[arg(long, value_name = "LABEL")]
    pub eval_fix: Option<String>,
    /// Wild-Time's Eval-Stream horizon: each row's next K slices.
    #[arg(long, value_name = "K", default_value_t = STREAM_K as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub stream_k: u64,
}

/// Runs `drift summarize`.
pub fn run(args: Args) -> Result<ExitCode> {
    let matrix = matrix::read_long_csv(&args.matrix, args.metric)?;
    let eval_fix =
        match &args.eval_fix {
            None => None,
            Some(label) => Some(matrix.slices().iter().position(|s| s == label).ok_or_else(
                || {
                    crate::Error::Invalid(format!(
                        "--eval-fix {label}: {} has no slice {label} (it has {})",
                        args.matrix.display(),
                        matrix.slices().join(", ")
                    ))
                },
            )?),
        };
    let summary = summarize_with(&matrix, eval_fix, args.stream_k as usize);
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&summary).expect("a summary serialises")
        ),
        Format::Table => print!("{}", table(&summary)),
    }
    Ok(ExitCode::SUCCESS)
}

fn table(s: &Summary) -> String {
    let direction = match s.metric.direction() {
        Direction::HigherIsBetter => "higher is better",
        Direction::LowerIsBetter => "lower is better",
    };
    let seeds: Vec<String> = s.seeds.iter().map(u64::to_string).collect();
    let mut out = format!(
        "metric   {} ({direction})\nslices   {} ({} .. {})\nseeds    {}\n\nID       {}\nfuture   {}\ndecay    {}  (positive = worse on the future)\n",
        s.metric,
        s.slices.len(),
        s.slices.first().map_or("", String::as_str),
        s.slices.last().map_or("", String::as_str),
        seeds.join(" "),
        cell(s.id),
        cell(s.future),
        cell(s.decay),
    );
    out += "\nper cutoff\n";
    out += &format!(
        "  {:<12} {:>8} {:>8} {:>8}\n",
        "slice", "ID", "future", "decay"
    );
    for row in &s.per_cutoff {
        out += &format!(
            "  {:<12} {:>8} {:>8} {:>8}\n",
            row.slice,
            cell(row.row.scores.id),
            cell(row.row.scores.future),
            cell(row.row.scores.decay)
        );
    }
    out += "\nforgetting curve (mean over seeds of mean_i M[i][i+lag])\n  lag      mean      std\n";
    for p in &s.forgetting {
        out += &format!(
            "  {:>3} {:>9} {:>8}\n",
            p.lag,
            cell(Some(p.mean)),
            cell(p.std)
        );
    }
    out += "\nAgarwal & Nenkova (mean raw difference, positive = metric went up)\n";
    out += &format!(
        "  {:<27} {:>9} {:>8}  {:>4} {:>15} {:>15}\n",
        "score", "value", "p-value", "n", "min over seeds", "max over seeds"
    );
    for (name, t) in s.effects.named() {
        let p = t.p_value.map_or_else(|| "-".into(), format::p_value);
        let mark = if t.p_value.is_some_and(|p| p < 0.05) {
            "*"
        } else {
            " "
        };
        out += &format!(
            "  {name:<27} {:>9} {p:>8}{mark} {:>4} {:>15} {:>15}\n",
            cell(t.score),
            t.n,
            cell(t.min),
            cell(t.max)
        );
    }
    out += "  (* p < 0.05, two-sided Wilcoxon signed-rank test)\n";
    if let Some(f) = &s.eval_fix {
        out += &format!(
            "\nWild-Time Eval-Fix at {} (ID: mean of M[c][0..=c])\n  ID {}  OOD avg {}  OOD worst {}\n",
            s.slices[f.cutoff],
            cell(f.id),
            cell(f.ood_avg),
            cell(f.ood_worst)
        );
    }
    let e = &s.eval_stream;
    out += &format!(
        "Wild-Time Eval-Stream, K = {} ({} rows)\n  avg {}  worst {}  best {}\n",
        e.k,
        e.rows,
        cell(e.avg),
        cell(e.worst),
        cell(e.best)
    );
    out
}
