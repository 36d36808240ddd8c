use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    passive_openmp();
    match drift::cli::run(drift::cli::Cli::parse()) {
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

/// libgomp reads `OMP_WAIT_POLICY` when it is loaded, before `main`, and its spinning
/// workers made training several times slower on shared cores; so when the variable is
/// unset, run this binary again with it set to `passive`.
#[cfg(all(feature = "torch", unix))]
fn passive_openmp() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os("OMP_WAIT_POLICY").is_some() {
        return;
    }
    if let Ok(exe) = std::env::current_exe() {
        let error = std::process::Command::new(exe)
            .args(std::env::args_os().skip(1))
            .env("OMP_WAIT_POLICY", "passive")
            .exec();
        // `exec` returns only when it failed; go on with libgomp's default policy.
        eprintln!("warning: could not restart with OMP_WAIT_POLICY=passive: {error}");
    }
}

#[cfg(not(all(feature = "torch", unix)))]
fn passive_openmp() {}
