//! The paper build behind `build-report`: committed drift-matrix artifacts in, figures,
//! tables, a Typst paper and its PDF out, every output checked against the manifest under
//! `checksums/`.
//!
//! Stages, in order: load the studies' artifacts (checked by [`crate::artifacts`]), run
//! the analyses, render [`figures`], build tables, fill and compile the paper, and compare
//! every output with the [`manifest`].
//!
//! The figures, the manifest and the study loader build without the `paper` feature (the
//! notebooks use them); the tables, the paper and `build-report` need it.

#[cfg(feature = "paper")]
pub mod build;
pub mod claims;
pub mod figures;
pub mod manifest;
#[cfg(feature = "paper")]
pub mod paper;
pub mod study;
#[cfg(feature = "paper")]
pub mod tables;

#[cfg(feature = "paper")]
use std::path::PathBuf;
#[cfg(feature = "paper")]
use std::process::ExitCode;

#[cfg(feature = "paper")]
use crate::Result;
#[cfg(feature = "paper")]
use manifest::Manifest;

/// Build the paper from the committed artifacts and verify it against the manifest.
///
/// By default every output is rebuilt (an output whose inputs and file are unchanged is
/// kept as it is) and compared with `checksums/`: any output that differs, is missing or
/// is new is listed with the reason, and the exit status is 1.
#[cfg(feature = "paper")]
#[derive(Debug, clap::Parser)]
#[command(name = "build-report", version, about, long_about)]
pub struct Args {
    /// Rewrite the manifest from this build instead of verifying against it.
    #[arg(long, conflicts_with = "check")]
    pub update: bool,
    /// Only re-hash the outputs on disk against the manifest; build nothing.
    #[arg(long)]
    pub check: bool,
    /// Render every output, even those whose inputs are unchanged.
    #[arg(long)]
    pub force: bool,
    /// The repository root (default: the current folder).
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
}

/// Runs `build-report`.
#[cfg(feature = "paper")]
pub fn run(args: &Args) -> Result<ExitCode> {
    let root = &args.root;
    let stage = |name: &str| eprintln!("build-report: {name}");
    if args.check {
        stage("checking outputs on disk against checksums/");
        let committed = Manifest::read(root)?;
        let differences = manifest::check(root, &committed, &build::OUTPUT_DIRS)?;
        return Ok(report_differences(&differences, committed.len()));
    }
    let committed = match Manifest::read(root) {
        Ok(m) => m,
        Err(_) if args.update => Manifest::new(),
        Err(e) => return Err(e),
    };
    // A byte flipped in a committed output must fail, not be quietly rendered again.
    let before = if args.update {
        Vec::new()
    } else {
        manifest::check(root, &committed, &build::OUTPUT_DIRS)?
    };
    stage("loading studies");
    let specs = study::read_specs(&root.join(build::STUDIES))?;
    let studies = study::load(root, build::RESULTS, &specs)?;
    stage("checking the findings' claims");
    let outcomes = claims::evaluate(&claims::read(&root.join(claims::CLAIMS))?, &studies)?;
    claims::require(&outcomes)?;
    let code = build::code_hash(root)?;
    stage("planning figures and tables");
    let mut jobs = build::figure_jobs(root, &studies, &code)?;
    let (table_jobs, tables) = build::table_jobs(root, &studies, &code)?;
    jobs.extend(table_jobs);
    jobs.extend(build::paper_table_jobs(root, &studies, &outcomes, &code)?);
    let mut built = build::Built::default();
    stage(&format!("rendering {} figures and tables", jobs.len()));
    build::run_jobs(root, &jobs, &committed, args.force, &mut built)?;
    let mut all_inputs = manifest::Inputs::new();
    for study in &studies {
        all_inputs.extend(manifest::hash_files(root, &study.inputs)?);
    }
    all_inputs.extend(manifest::hash_files(root, &[build::MODELS])?);
    all_inputs.insert("src".into(), code.clone());
    let mut context = build::paper_context(root, &studies, &tables, &outcomes)?;
    context["provenance"] = build::provenance_context(&studies, &built.manifest);
    // The source first, then the PDF compiled from it and the files written before.
    let paper = build::paper_jobs(root, context, all_inputs)?;
    stage("filling and compiling the paper");
    for job in paper.chunks(1) {
        build::run_jobs(root, job, &committed, args.force, &mut built)?;
    }
    eprintln!(
        "build-report: {} rendered, {} unchanged",
        built.rendered.len(),
        built.kept.len()
    );
    let mut differences = before;
    differences.extend(manifest::strays(
        root,
        &build::OUTPUT_DIRS,
        &built.manifest,
    )?);
    if args.update {
        for d in &differences {
            eprintln!("{d}");
        }
        built.manifest.write(root)?;
        eprintln!(
            "build-report: wrote checksums/ ({} outputs)",
            built.manifest.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    differences.extend(manifest::verify(&committed, &built.manifest));
    Ok(report_differences(&differences, built.manifest.len()))
}

#[cfg(feature = "paper")]
fn report_differences(differences: &[manifest::Difference], outputs: usize) -> ExitCode {
    if differences.is_empty() {
        eprintln!("build-report: all {outputs} outputs match checksums/");
        ExitCode::SUCCESS
    } else {
        for d in differences {
            eprintln!("{d}");
        }
        let n = differences.len();
        let plural = if n == 1 { "" } else { "s" };
        eprintln!("build-report: {n} difference{plural} from checksums/");
        ExitCode::FAILURE
    }
}
