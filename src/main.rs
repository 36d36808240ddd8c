use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    match drift::cli::run(drift::cli::Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
