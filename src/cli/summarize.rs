//! `drift summarize`: the analyses of one long-form drift-matrix CSV.

use std::path::PathBuf;
use std::process::ExitCode;

use super::cell;
use crate::analysis::{Summary, summarize};
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
}

/// Runs `drift summarize`.
pub fn run(args: Args) -> Result<ExitCode> {
    let matrix = matrix::read_long_csv(&args.matrix, args.metric)?;
    let summary = summarize(&matrix);
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
    out
}
