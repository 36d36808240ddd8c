//! `drift detect`: add the label-free drift detectors to a finished run folder.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::Result;

/// Arguments of `drift detect`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run folders (`<results>/<preset>/<model>/seed-<n>`), each made with its preset at
    /// the path its `run.json` records, relative to this folder.
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
    /// libtorch threads [default: the run's recorded count, which a retrained matrix needs
    /// to come out bit-identical].
    #[arg(long)]
    pub threads: Option<u32>,
    /// `cpu`, `cuda` or `cuda:N` [default: the run's recorded device].
    #[arg(long)]
    pub device: Option<String>,
    /// Recompute detectors a run already has.
    #[arg(long)]
    pub force: bool,
    /// No progress bars.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `drift detect`.
#[cfg(feature = "torch")]
pub fn run(args: Args) -> Result<ExitCode> {
    use std::io::IsTerminal;

    use crate::detect::{DetectOptions, Detected, detect};
    use crate::output::outln;

    let options = DetectOptions {
        threads: args.threads,
        device: args.device.as_deref().map(str::parse).transpose()?,
        force: args.force,
        progress: !args.quiet && std::io::stderr().is_terminal(),
    };
    for dir in &args.runs {
        let how: String = match detect(dir, &options)? {
            Detected::AlreadyThere => "already had detectors (--force recomputes them)".into(),
            Detected::FromCheckpoints => "detectors added from its checkpoints".into(),
            Detected::Retrained { loss_difference } if loss_difference > 0.0 => format!(
                "detectors added; no checkpoints were kept, so the run was trained again and \
                 gave the same matrix, but not bit-identical checkpoints: final training \
                 losses differ by up to {loss_difference:.1e} (relative) from the recorded \
                 ones, which health.json now holds (another CPU kind rounds differently)"
            ),
            Detected::Retrained { .. } => "detectors added; no checkpoints were kept, so the \
                                            run was trained again and gave the same matrix \
                                            and checkpoints"
                .into(),
        };
        outln!("{}: {how}", dir.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `drift detect`.
#[cfg(not(feature = "torch"))]
pub fn run(args: Args) -> Result<ExitCode> {
    Err(crate::Error::Invalid(format!(
        "cannot compute the detectors of {}: this drift was built without libtorch; build \
         it with `eval \"$(scripts/libtorch-env)\" && cargo build --release --features torch`",
        args.runs[0].display()
    )))
}
