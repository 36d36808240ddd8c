//! The paper build behind `build-report`: committed drift-matrix artifacts in, figures,
//! tables, a Typst paper and its PDF out, every output checked against the manifest under
//! `checksums/`.
//!
//! Stages, in order: load the studies' artifacts (checked by [`crate::artifacts`]), run
//! the analyses, render [`figures`], build tables, fill and compile the paper, and compare
//! every output with the [`manifest`]. Each output is an output job (`jobs`) written
//! under the output folders of [`layout`] (`figures/`, `report/build/`).
//!
//! This module is the driver (`Args`, `run`): it uses the modules below it and none of
//! them uses it.
//!
//! The figures, the manifest and the study loader build without the `paper` feature (the
//! notebooks use them); the tables, the paper and `build-report` need it.

pub mod claims;
#[cfg(feature = "paper")]
pub mod explain;
pub mod figures;
#[cfg(feature = "paper")]
pub mod jobs;
pub mod layout;
pub mod manifest;
#[cfg(feature = "paper")]
pub mod paper;
#[cfg(feature = "paper")]
pub mod proof;
#[cfg(feature = "paper")]
pub mod site;
pub mod study;
pub mod sweep;
#[cfg(feature = "paper")]
pub mod tables;

#[cfg(feature = "paper")]
use std::path::PathBuf;
#[cfg(feature = "paper")]
use std::process::ExitCode;

#[cfg(feature = "paper")]
use crate::Result;
#[cfg(feature = "paper")]
use crate::output::{errln, out};
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
    /// Only re-hash the outputs on disk, and the input files they were made from, against
    /// the manifest; build nothing.
    #[arg(long)]
    pub check: bool,
    /// Render every output, even those whose inputs are unchanged.
    #[arg(long)]
    pub force: bool,
    /// Accept a rebuilt table whose numbers (as written) each lie within this distance of
    /// the committed ones, the text around them unchanged. Every difference is listed
    /// with its class: byte-identical after canonicalisation (PDF metadata, SVG ids),
    /// within the tolerance, or a real change; only real changes fail the build.
    #[arg(long, default_value_t = 0.0, value_name = "T")]
    pub tolerance: f64,
    /// Print how PATH relates to the committed manifest and stop: for an output, the
    /// inputs it was made from; for an input (a result file, a preset, `src` for the code),
    /// every output it feeds. Builds nothing.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["update", "check"])]
    pub why: Option<String>,
    /// The repository root (default: the current folder).
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
}

/// Runs `build-report`.
#[cfg(feature = "paper")]
pub fn run(args: &Args) -> Result<ExitCode> {
    let root = &args.root;
    let stage = |name: &str| errln!("build-report: {name}");
    if let Some(path) = &args.why {
        let committed = Manifest::read(root)?;
        let path = path.trim_start_matches("./");
        return match committed.why(path) {
            Some(chain) => {
                out!("{chain}")?;
                Ok(ExitCode::SUCCESS)
            }
            None => Err(crate::Error::Invalid(format!(
                "{path}: neither an output nor an input in {}",
                manifest::SUMS
            ))),
        };
    }
    // Nothing is read from or written to outside the tree through a symbolic link.
    for dir in [layout::RESULTS, manifest::DIR]
        .into_iter()
        .chain(layout::OUTPUT_DIRS)
    {
        crate::files::inside(root, &root.join(dir))?;
    }
    // A build killed mid-write leaves `.<name>.tmp-<pid>` files beside its outputs; a
    // build clears them (`--check` writes nothing).
    if !args.check {
        for dir in layout::OUTPUT_DIRS.into_iter().chain([manifest::DIR]) {
            crate::files::remove_dead_temporaries(&root.join(dir))?;
        }
    }
    if args.check {
        stage("checking outputs on disk against checksums/");
        let committed = Manifest::read(root)?;
        let mut differences = manifest::check(root, &committed, &layout::OUTPUT_DIRS)?;
        differences.extend(manifest::check_input_files(root, &committed)?);
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
        manifest::check(root, &committed, &layout::OUTPUT_DIRS)?
    };
    stage("loading studies");
    // No run may rewrite its folder while the build reads it (released at the end).
    let _runs = crate::artifacts::hold_runs(&root.join(layout::RESULTS))?;
    let specs = study::read_specs(&root.join(layout::STUDIES))?;
    let studies = study::load(root, layout::RESULTS, &specs)?;
    stage("checking the findings' claims");
    let outcomes = claims::evaluate(&claims::read(&root.join(claims::CLAIMS))?, &studies)?;
    claims::require(&outcomes)?;
    let hashed = jobs::Hashed::new(root, &studies)?;
    let sweeps = sweep::sweeps(&studies)?;
    stage("planning figures and tables");
    let mut jobs = jobs::figure_jobs(&studies, &sweeps, &hashed)?;
    let (table_jobs, tables, html) = jobs::table_jobs(root, &studies, &hashed)?;
    jobs.extend(table_jobs);
    jobs.extend(jobs::site_jobs(&studies, html, &hashed));
    jobs.extend(jobs::paper_table_jobs(
        &studies, &sweeps, &outcomes, &hashed,
    )?);
    let mut built = jobs::BuiltOutputs::default();
    stage(&format!("rendering {} figures and tables", jobs.len()));
    jobs::run_jobs(root, &jobs, &committed, args.force, &mut built)?;
    let all_inputs = hashed.all();
    // The proof the PDF attaches lists every output rendered so far: all but the paper's.
    let proof = proof::build(
        root,
        layout::RESULTS,
        &studies,
        &built.manifest,
        &all_inputs,
    )?;
    let mut context = paper::paper_context(root, &studies, &sweeps, &tables, &outcomes)?;
    context["provenance"] = paper::provenance_context(&proof.provenance);
    // The proof files, the source, then the PDF compiled from them.
    let mut paper = jobs::proof_jobs(proof, &all_inputs);
    paper.extend(jobs::paper_jobs(root, context, all_inputs)?);
    stage("filling and compiling the paper");
    for job in paper.chunks(1) {
        jobs::run_jobs(root, job, &committed, args.force, &mut built)?;
    }
    errln!(
        "build-report: {} rendered, {} unchanged",
        built.rendered.len(),
        built.kept.len()
    );
    let mut differences = before;
    differences.extend(manifest::strays(
        root,
        &layout::OUTPUT_DIRS,
        &built.manifest,
    )?);
    if args.update {
        for d in &differences {
            errln!("{d}");
        }
        built.manifest.write(root)?;
        errln!(
            "build-report: wrote checksums/ ({} outputs)",
            built.manifest.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    differences.extend(manifest::verify(&committed, &built.manifest));
    let classes = differences
        .iter()
        .filter_map(|d| {
            let old = built.previous.get(&d.path)?;
            let new = std::fs::read(root.join(&d.path)).ok()?;
            Some((
                d.path.clone(),
                explain::classify(&d.path, old, &new, args.tolerance),
            ))
        })
        .collect();
    Ok(report_explained(&differences, &classes, &built.manifest))
}

/// Lists every difference with its class, then, per changed input, the outputs it feeds.
/// Fails unless every difference is an accepted one ([`explain::Class::accepted`]).
#[cfg(feature = "paper")]
fn report_explained(
    differences: &[manifest::Difference],
    classes: &std::collections::BTreeMap<String, explain::Class>,
    built: &Manifest,
) -> ExitCode {
    if differences.is_empty() {
        return report_differences(differences, built.len());
    }
    let mut accepted = 0;
    for d in differences {
        match classes.get(&d.path) {
            Some(class) => {
                accepted += usize::from(class.accepted());
                errln!("{d}; {class}");
            }
            None => errln!("{d}"),
        }
    }
    let mut inputs: Vec<&str> = differences
        .iter()
        .flat_map(|d| d.changed_inputs())
        .collect();
    inputs.sort_unstable();
    inputs.dedup();
    for input in inputs {
        let feeds = built.feeds(input);
        let shown: Vec<&str> = feeds.iter().take(5).copied().collect();
        let more = feeds.len().saturating_sub(shown.len());
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        errln!(
            "input {input} changed: it feeds {} outputs ({}{more}; build-report --why {input} lists them)",
            feeds.len(),
            shown.join(", ")
        );
    }
    let n = differences.len();
    let plural = if n == 1 { "" } else { "s" };
    if accepted == n {
        errln!(
            "build-report: {n} difference{plural} from checksums/, all accepted (identical after canonicalisation or within the tolerance)"
        );
        ExitCode::SUCCESS
    } else {
        errln!(
            "build-report: {n} difference{plural} from checksums/ ({accepted} accepted, {} not)",
            n - accepted
        );
        ExitCode::FAILURE
    }
}

#[cfg(feature = "paper")]
fn report_differences(differences: &[manifest::Difference], outputs: usize) -> ExitCode {
    if differences.is_empty() {
        errln!("build-report: all {outputs} outputs match checksums/");
        ExitCode::SUCCESS
    } else {
        for d in differences {
            errln!("{d}");
        }
        let n = differences.len();
        let plural = if n == 1 { "" } else { "s" };
        errln!("build-report: {n} difference{plural} from checksums/");
        ExitCode::FAILURE
    }
}
