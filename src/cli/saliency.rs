//! `drift saliency`: the gradient saliency map of one checkpoint on one slice.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::Result;
#[cfg(feature = "torch")]
use crate::output::outln;

/// Arguments of `drift saliency`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A run folder written by `drift run` (`<out>/<preset>/<model>/seed-<n>`).
    pub run_dir: PathBuf,
    /// Label of the checkpoint's cutoff slice, e.g. 1950.
    #[arg(long)]
    pub cutoff: String,
    /// Label of the slice whose images are explained, e.g. 2000.
    #[arg(long)]
    pub slice: String,
    /// How many images of the cell's evaluation set to average over (the first ones).
    #[arg(long, default_value_t = 16)]
    pub count: usize,
    /// The preset file, when it is no longer at the path recorded in run.json.
    #[arg(long)]
    pub preset: Option<PathBuf>,
}

/// Runs `drift saliency`.
#[cfg(feature = "torch")]
pub fn run(args: Args) -> Result<ExitCode> {
    let path = crate::saliency::saliency_for_run(&crate::saliency::Request {
        run_dir: args.run_dir,
        preset: args.preset,
        cutoff: args.cutoff,
        slice: args.slice,
        count: args.count,
    })?;
    outln!("{}", path.display())?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `drift saliency`.
#[cfg(not(feature = "torch"))]
pub fn run(args: Args) -> Result<ExitCode> {
    Err(crate::Error::Invalid(format!(
        "cannot compute saliency for {}: this drift was built without libtorch; build it \
         with `eval \"$(scripts/libtorch-env)\" && cargo build --release --features torch`",
        args.run_dir.display()
    )))
}
