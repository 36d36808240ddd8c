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
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
