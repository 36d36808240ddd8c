//! `drift run`: train and score every model and seed of a preset into drift-matrix
//! artifacts.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::Result;
use crate::output::outln;

/// Arguments of `drift run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The preset file.
    pub preset: PathBuf,
    /// Only these models of the preset (registry keys).
    #[arg(long, num_args = 1..)]
    pub models: Vec<String>,
    /// These seeds instead of the preset's.
    #[arg(long, num_args = 1..)]
    pub seeds: Vec<u64>,
    /// Root of the artifact folders; a run writes `<out>/<preset>/<model>/seed-<n>/`.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// `auto` (the first GPU if CUDA is usable, else the CPU), `cpu`, `cuda` or `cuda:N`.
    #[arg(long, default_value = "auto")]
    pub device: String,
    /// libtorch threads. Results are bit-identical only for the same count.
    #[arg(long, default_value_t = 1)]
    pub threads: u32,
    /// No progress bars.
    #[arg(long, short)]
    pub quiet: bool,
    /// Also compute the label-free drift detectors of every checkpoint on every later
    /// slice (representation, output and performance-estimate detectors) into
    /// `detectors.json` beside the matrix; `drift summarize RUN_DIR --detectors` backtests
    /// them. A rerun with the flag adds them to finished cutoffs from their checkpoints.
    #[arg(long, conflicts_with = "baseline_only")]
    pub detectors: bool,
    /// Write only the preset's counting baseline (which every run writes first) and stop;
    /// it needs no libtorch.
    #[arg(long, conflicts_with_all = ["models", "seeds"])]
    pub baseline_only: bool,
}

/// `--baseline-only`: the baseline's folders (one, or one per seed when the seeds vary the
/// data or split).
fn baseline_only(args: &Args) -> Result<ExitCode> {
    let loaded = crate::preset::Preset::load(&args.preset)?;
    for dir in crate::baseline::write_for_preset(&loaded, &args.out)? {
        outln!("{}", dir.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `drift run`.
#[cfg(feature = "torch")]
pub fn run(args: Args) -> Result<ExitCode> {
    use std::io::IsTerminal;

    if args.baseline_only {
        return baseline_only(&args);
    }
    let loaded = crate::preset::Preset::load(&args.preset)?;
    let options = crate::run::RunOptions {
        out: args.out,
        models: args.models,
        seeds: args.seeds,
        device: args.device.parse()?,
        threads: args.threads,
        progress: !args.quiet && std::io::stderr().is_terminal(),
        detectors: args.detectors,
        cutoffs: None,
    };
    for dir in crate::run::run_preset(&loaded, &options)? {
        outln!("{}", dir.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `drift run`.
#[cfg(not(feature = "torch"))]
pub fn run(args: Args) -> Result<ExitCode> {
    if args.baseline_only {
        return baseline_only(&args);
    }
    Err(crate::Error::Invalid(format!(
        "cannot run {}: this drift was built without libtorch; build it with \
         `eval \"$(scripts/libtorch-env)\" && cargo build --release --features torch`",
        args.preset.display()
    )))
}
