//! What the benches that time drift against a Python peer share: the OpenMP wait policy
//! both sides run under, the median of repetitions, and an error-reporting `main`.

use std::error::Error;
use std::process::{Command, ExitCode};

/// A bench's result.
pub type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// Re-executes the bench with `OMP_WAIT_POLICY=passive` when it is unset: OpenMP reads it
/// once at load time, and both sides must run with the same policy.
pub fn ensure_wait_policy(bench: &str) -> Result<String> {
    if let Ok(policy) = std::env::var("OMP_WAIT_POLICY") {
        return Ok(policy);
    }
    eprintln!(
        "{bench}: warning: OMP_WAIT_POLICY is unset (run `eval \"$(scripts/libtorch-env)\"` \
         first); re-running with OMP_WAIT_POLICY=passive"
    );
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let mut args = std::env::args_os();
        let program = args.next().ok_or("no program name")?;
        let err = Command::new(program)
            .args(args)
            .env("OMP_WAIT_POLICY", "passive")
            .exec();
        Err(format!("re-running the bench: {err}").into())
    }
    #[cfg(not(unix))]
    Ok("passive".to_string())
}

/// The median of `values` (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Runs `run`, printing its error as `<bench>: error: ...` and failing the process.
pub fn main(bench: &str, run: impl FnOnce() -> Result<()>) -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{bench}: error: {e}");
            ExitCode::FAILURE
        }
    }
}
