//! The output jobs of the build: one [`OutputJob`] per output (figures, tables, the
//! gallery, the proof files, the filled Typst source, the PDF), each with the inputs it is
//! made from, run by [`run_jobs`] and then compared with the committed manifest. (The
//! outputs go under the output folders of [`crate::report::layout`], `figures/` and
//! `report/build/`; this folder holds the code that makes them.)
//!
//! Every output's inputs are the artifact files it reads plus `src` (the SHA-256 of every
//! file under `src/`, `report/` templates and `Cargo.lock`): the code that renders an
//! output decides its bytes, so a code change is an input change, never mistaken for
//! non-determinism. An output whose inputs and file are unchanged is not rendered again
//! unless forced.

mod figures;
mod hashed;
mod job;
mod paper;
mod run;
mod site;
mod tables;

pub use figures::figure_jobs;
pub use hashed::Hashed;
pub use job::OutputJob;
pub use paper::{paper_jobs, proof_jobs};
pub use run::{BuiltOutputs, run_jobs};
pub use site::site_jobs;
pub use tables::{paper_table_jobs, table_jobs};
