//! `build-report`: renders every figure, table and the paper from the committed artifacts
//! and verifies each output against the manifest under `checksums/`. See
//! `drift::report` for the stages and `drift::report::manifest` for the files.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    match drift::report::run(&drift::report::Args::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
