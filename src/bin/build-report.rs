//! `build-report`: renders every figure, table and the paper from the committed artifacts
//! and verifies each output against the manifest under `checksums/`. See
//! `drift::report` for the stages and `drift::report::manifest` for the files.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    match drift::report::run(&drift::report::Args::parse()) {
        Ok(code) => code,
        // The reader of a pipe has all it wanted: end quietly, as ripgrep does.
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            // Best effort: with stderr closed there is no one left to tell.
            let _ = writeln!(std::io::stderr(), "error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
