//! The paper: Typst sources under the report root, filled from the analyses by minijinja
//! ([`render_template`]) and compiled to PDF in-process ([`compile_pdf`]).
//!
//! # Numbers come from the context, never from the keyboard
//!
//! The paper's `.typ` files are minijinja templates. Every value that comes from data (a
//! score, a model name, a slice label, a count) is passed in the template context and must
//! leave the template through one of two filters:
//!
//! - `typst_str`: any value as a quoted Typst string literal (`"..."`, with `\` and `"`
//!   escaped and control characters written as escapes). Use it for every string from
//!   data: it can never close the literal, start markup or run code. In code it is an
//!   expression (`#text({{ model | typst_str }})`); in markup embed it with `#`
//!   (`= #{{ title | typst_str }}`), since a bare literal in markup is shown with its
//!   quotes.
//! - `fixed(n)`: a number with exactly `n` decimals (`{{ decay | fixed(3) }}` → `0.042`),
//!   as Rust's `{:.n}` rounds it, never `-0.000`; it refuses anything that is not a finite
//!   number (a string holding a number included). Its output is digits, `.` and `-`, safe
//!   as markup in the middle of a line; where a negative value could start a line (a list
//!   item in markup) write `#{{ x | fixed(3) | typst_str }}`.
//!
//! A `;` right after an embedded expression (`#x;`) ends the expression and is not shown;
//! follow plain `fixed` output, not `#...`, with punctuation.
//!
//! Auto-escaping is off (minijinja knows no Typst escaping), and undefined values are
//! errors: a template that names a value the context lacks fails, naming the template,
//! the line and the variable.
//!
//! # Reproducible PDF
//!
//! [`compile_pdf`] compiles with a [`PaperWorld`] that reads only files under the report
//! root, uses only the fonts of `typst_assets::fonts()`, refuses every package and answers
//! `datetime.today()` with [`PAPER_DATE`]. The PDF carries the caller's document
//! identifier, the creation timestamp [`PAPER_DATE`] 00:00:00 UTC and no `/Creator` (so a
//! typst upgrade alone does not change the metadata), so the same sources give the same
//! bytes.

mod template;
mod world;

use std::path::Path;

use typst::diag::{Severity, SourceDiagnostic};
use typst::foundations::{Datetime, Smart};
use typst::layout::{Frame, FrameItem};
use typst::{World, WorldExt};
use typst_layout::PagedDocument;
use typst_pdf::{PdfOptions, Timestamp};

pub use template::{render_template, render_with_partials};
pub use world::PaperWorld;

use crate::{Error, Result};

/// The paper's fixed date (year, month, day): what `datetime.today()` returns inside the
/// paper and the PDF's creation date (at 00:00:00 UTC). A constant rather than the clock
/// or a file time, so that every build of the same sources is byte-identical (file times
/// change with every checkout). Change it deliberately, together with the manifest.
pub const PAPER_DATE: (i32, u8, u8) = (2026, 1, 1);

/// The fixed date as a Typst [`Datetime`] (a date without time).
pub fn paper_date() -> Datetime {
    let (y, m, d) = PAPER_DATE;
    Datetime::from_ymd(y, m, d).expect("PAPER_DATE is a valid date")
}

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
