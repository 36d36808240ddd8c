//! The paper's jobs: the proof files, the filled Typst source, and the PDF compiled
//! from it.

use std::path::Path;

use super::job::OutputJob;
use crate::report::layout::{PAPER_PDF, PAPER_SOURCE, PAPER_TEMPLATE};
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

/// The paper jobs: the filled Typst source, then its PDF (compiled from the files on disk,
/// so it runs after every figure and table job).
pub fn paper_jobs(
    root: &Path,
    context: serde_json::Value,
    inputs: InputHashes,
) -> Result<Vec<OutputJob>> {
    let template_path = root.join(PAPER_TEMPLATE);
    let template =
        std::fs::read_to_string(&template_path).map_err(|e| Error::io(&template_path, e))?;
    // The template's partials: every other `report/paper-*.typ`, included by path.
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
    let source = paper::render_with_partials(&template, PAPER_TEMPLATE, &context, &partials)?;
    let root_owned = root.to_path_buf();
    let ident = format!(
        "drift-paper-{}",
        &inputs.get("src").cloned().unwrap_or_default()
    );
    Ok(vec![
        OutputJob::new(PAPER_SOURCE.into(), inputs.clone(), move || {
            Ok(source.clone().into_bytes())
        }),
        OutputJob::new(PAPER_PDF.into(), inputs, move || {
            let compiled = paper::compile_pdf(&root_owned, PAPER_SOURCE, &ident)?;
            if let Some(w) = compiled.warnings.first() {
                return Err(Error::Invalid(format!(
                    "the paper compiled with warnings: {w}"
                )));
            }
            Ok(compiled.pdf)
        }),
    ])
}
