//! Compiling the filled paper to PDF in a [`PaperWorld`], with its diagnostics rendered
//! as `file:line:column: severity: message`.

use std::path::Path;

use typst::diag::{Severity, SourceDiagnostic};
use typst::foundations::{Datetime, Smart};
use typst::layout::{Frame, FrameItem};
use typst::{World, WorldExt};
use typst_layout::PagedDocument;
use typst_pdf::{PdfOptions, Timestamp};

use super::date::PAPER_DATE;
use super::world::PaperWorld;
use crate::{Error, Result};

/// A compiled paper.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The PDF bytes.
    pub pdf: Vec<u8>,
    /// The number of pages.
    pub pages: usize,
    /// The number of images placed in the laid-out document (every `#image(..)`, figures
    /// included), counted on the pages before export.
    pub images: usize,
    /// Typst's warnings, rendered like errors (`file:line:column: warning: message`).
    pub warnings: Vec<String>,
}

/// Compiles `main` (a path relative to `root`, e.g. `paper.typ`) with a [`PaperWorld`] on
/// `root` and exports it as PDF with document identifier `ident`.
///
/// Errors list every Typst error as `file:line:column: error: message` (with hints), the
/// file relative to the root.
pub fn compile_pdf(root: &Path, main: &str, ident: &str) -> Result<Compiled> {
    let world = PaperWorld::new(root, main)?;
    let warned = typst::compile::<PagedDocument>(&world);
    let warnings: Vec<String> = warned
        .warnings
        .iter()
        .map(|d| render_diagnostic(&world, d))
        .collect();
    let document = warned
        .output
        .map_err(|errors| compile_error(&world, "compile", &errors))?;
    let (y, m, d) = PAPER_DATE;
    let timestamp = Datetime::from_ymd_hms(y, m, d, 0, 0, 0).expect("PAPER_DATE is valid");
    let options = PdfOptions {
        ident: Smart::Custom(ident.to_string()),
        creator: Smart::Custom(None),
        timestamp: Some(Timestamp::new_utc(timestamp)),
        ..PdfOptions::default()
    };
    let pdf =
        typst_pdf::pdf(&document, &options).map_err(|e| compile_error(&world, "export", &e))?;
    Ok(Compiled {
        pdf,
        pages: document.pages().len(),
        images: document
            .pages()
            .iter()
            .map(|p| count_images(&p.frame))
            .sum(),
        warnings,
    })
}

fn count_images(frame: &Frame) -> usize {
    frame
        .items()
        .map(|(_, item)| match item {
            FrameItem::Image(..) => 1,
            FrameItem::Group(group) => count_images(&group.frame),
            _ => 0,
        })
        .sum()
}

fn compile_error(world: &PaperWorld, stage: &str, errors: &[SourceDiagnostic]) -> Error {
    let lines: Vec<String> = errors.iter().map(|d| render_diagnostic(world, d)).collect();
    Error::Invalid(format!(
        "typst {stage} of {} failed:\n{}",
        world.root().join(world.main_path()).display(),
        lines.join("\n")
    ))
}

/// `file:line:column: severity: message`, then one `  hint: ..` line per hint. The file is
/// relative to the report root; positions are 1-based.
fn render_diagnostic(world: &PaperWorld, diag: &SourceDiagnostic) -> String {
    let severity = match diag.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let place = diag
        .span
        .id()
        .map(|id| {
            let file = id.vpath().get_without_slash().to_string();
            let position = world.range(diag.span).and_then(|range| {
                let source = world.source(id).ok()?;
                source.lines().byte_to_line_column(range.start)
            });
            match position {
                Some((line, column)) => format!("{file}:{}:{}: ", line + 1, column + 1),
                None => format!("{file}: "),
            }
        })
        .unwrap_or_default();
    let mut out = format!("{place}{severity}: {}", diag.message);
    for hint in &diag.hints {
        out.push_str(&format!("\n  hint: {}", hint.v));
    }
    out
}
