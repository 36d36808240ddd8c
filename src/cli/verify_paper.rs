//! `drift verify-paper`: check a paper's PDF against the proof it carries and, given a
//! checkout, against the repository that built it (see `drift::report::proof`).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::Result;
use crate::output::outln;
use crate::report::proof;

/// Arguments of `drift verify-paper`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The paper's PDF (report/build/paper.pdf, or a downloaded copy).
    pub pdf: PathBuf,
    /// A checkout of the repository that built it: also check that its manifest is the
    /// attached one, that its code is the code that built the paper, that its outputs on
    /// disk match its manifest, and that the PDF's bytes are the listed ones (or differ in
    /// metadata only, as after a publisher's re-stamp).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    /// Then retrain N rows drawn at random from the checkout's runs and compare them with
    /// its matrices (`drift audit --sample N`; needs `--repo` and a libtorch build).
    #[arg(long, requires = "repo", value_name = "N")]
    pub audit: Option<usize>,
    /// The audit's seed [default: fresh entropy].
    #[arg(long, requires = "audit")]
    pub seed: Option<u64>,
    /// The audit's budget in minutes (see `drift audit --budget`).
    #[arg(long, requires = "audit", default_value_t = 60.0)]
    pub budget: f64,
}

/// Runs `drift verify-paper`: one line per finding, exit status 1 if any does not hold.
pub fn run(args: Args) -> Result<ExitCode> {
    let findings = proof::verify(&args.pdf, args.repo.as_deref())?;
    let failed = findings.iter().filter(|f| !f.holds).count();
    for f in &findings {
        outln!("{} {}", if f.holds { "ok  " } else { "FAIL" }, f.says)?;
    }
    outln!(
        "{}: {} of {} checks hold",
        args.pdf.display(),
        findings.len() - failed,
        findings.len()
    )?;
    let audited = match (args.audit, &args.repo) {
        (Some(n), Some(repo)) => super::audit::run(super::audit::Args {
            studies: repo.join("report/studies.toml"),
            results: repo.join("results"),
            presets: None,
            sample: Some(n),
            seed: args.seed,
            items: Vec::new(),
            threads: None,
            budget: args.budget,
            plan: false,
            certificate: PathBuf::from("audit.json"),
            quiet: false,
        })?,
        _ => ExitCode::SUCCESS,
    };
    Ok(if failed == 0 && audited == ExitCode::SUCCESS {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
