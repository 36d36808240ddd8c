//! The paper's jobs: the proof files, the filled Typst source, and the PDF compiled
//! from it.

use std::path::Path;

use super::job::OutputJob;
use crate::report::layout::{
    PAPER_PDF, PAPER_SOURCE, PAPER_TEMPLATE, SUPPLEMENT_PDF, SUPPLEMENT_SOURCE, SUPPLEMENT_TEMPLATE,
};
use crate::report::manifest::InputHashes;
use crate::report::paper;
use crate::report::proof::ProofFiles;
use crate::{Error, Result};

/// The jobs that write the proof files ([`crate::report::proof`]), made from the same inputs as
/// the paper.
pub fn proof_jobs(proof: ProofFiles, inputs: &InputHashes) -> Vec<OutputJob> {
    proof
        .files
        .into_iter()
        .map(|(path, bytes)| OutputJob::new(path.into(), inputs.clone(), move || Ok(bytes.clone())))
        .collect()
}

/// The paper jobs: for the paper and then its supplement, the filled Typst source and its
/// PDF (compiled from the files on disk, so they run after every figure and table job).
/// Both documents read one context and the same partials (`report/paper-*.typ`).
pub fn paper_jobs(
    root: &Path,
    context: serde_json::Value,
    inputs: InputHashes,
) -> Result<Vec<OutputJob>> {
    // The templates' partials: every `report/paper-*.typ`, included by path.
    let mut partials = Vec::new();
    let dir = root.join("report");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| Error::io(&dir, e))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("paper-") && n.ends_with(".typ"))
        .collect();
    names.sort();
    for n in names {
        let path = dir.join(&n);
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        partials.push((format!("report/{n}"), text));
    }
    let code = inputs.get("src").cloned().unwrap_or_default();
    let mut jobs = Vec::new();
    for (template_name, source_path, pdf_path, ident) in [
        (PAPER_TEMPLATE, PAPER_SOURCE, PAPER_PDF, "drift-paper"),
        (
            SUPPLEMENT_TEMPLATE,
            SUPPLEMENT_SOURCE,
            SUPPLEMENT_PDF,
            "drift-supplement",
        ),
    ] {
        let template_path = root.join(template_name);
        let template =
            std::fs::read_to_string(&template_path).map_err(|e| Error::io(&template_path, e))?;
        let source = paper::render_with_partials(&template, template_name, &context, &partials)?;
        let root_owned = root.to_path_buf();
        let ident = format!("{ident}-{code}");
        jobs.push(OutputJob::new(
            source_path.into(),
            inputs.clone(),
            move || Ok(source.clone().into_bytes()),
        ));
        jobs.push(OutputJob::new(pdf_path.into(), inputs.clone(), move || {
            let compiled = paper::compile_pdf(&root_owned, source_path, &ident)?;
            if let Some(w) = compiled.warnings.first() {
                return Err(Error::Invalid(format!(
                    "{source_path} compiled with warnings: {w}"
                )));
            }
            Ok(compiled.pdf)
        }));
    }
    Ok(jobs)
}
