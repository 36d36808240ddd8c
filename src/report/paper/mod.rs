//! The paper: Typst sources under the report root, filled from the analyses by minijinja
//! ([`render_template`]) and compiled to PDF in-process ([`compile_pdf`]).
//! The context the templates read, every value the paper quotes, is built next to them
//! ([`paper_context`], [`provenance_context`]), one function per section.
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

mod compile;
mod context;
mod date;
mod template;
mod world;

pub use compile::{Compiled, compile_pdf};
pub use context::{paper_context, provenance_context};
pub use date::{PAPER_DATE, paper_date};
pub use template::{render_template, render_with_partials};
pub use world::PaperWorld;
