//! What the benches that time drift against a Python peer share: the OpenMP wait policy
//! both sides run under, the peer's pinned python, a fixed random stream for their data,
//! the median and spread of repetitions, and an error-reporting `main`.
// Each bench compiles this module as its own and uses part of it.
#![allow(dead_code)]

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

/// The python a peer runs in: `$env_var` when set, else what `script args` prints (a
/// set-up script of `scripts/` that installs its pinned venv on first use; its progress
/// goes to our stderr).
pub fn peer_python(env_var: &str, script: &str, args: &[&str]) -> Result<String> {
    if let Ok(python) = std::env::var(env_var) {
        return Ok(python);
    }
    let out = Command::new(script)
        .args(args)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("running {script}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{script} failed ({})", out.status).into());
    }
    Ok(String::from_utf8(out.stdout)?.trim().to_string())
}

/// splitmix64: a fixed, dependency-free stream of values in [0, 1).
pub struct Rng(pub u64);

impl Rng {
    /// The next value.
    pub fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The median of `values` and half their range in % of the median.
pub fn spread(values: &[f64]) -> (f64, f64) {
    let mid = median(values);
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (mid, (hi - lo) / 2.0 / mid * 100.0)
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

/// A Python peer driven one JSON line at a time: each request is a line on its stdin, each
/// answer a line on its stdout; its stderr goes to ours. Closing its stdin ends it.
pub struct Server {
    script: String,
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl Server {
    /// Starts `command` (running `script`) and reads its greeting line.
    pub fn start(mut command: Command, script: &str) -> Result<(Server, serde_json::Value)> {
        use std::process::Stdio;
        let program = command.get_program().to_string_lossy().into_owned();
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("running {program}: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = std::io::BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut server = Server {
            script: script.to_string(),
            child,
            stdin,
            stdout,
        };
        let hello = server.receive()?;
        Ok((server, hello))
    }

    fn receive(&mut self) -> Result<serde_json::Value> {
        use std::io::BufRead;
        let mut line = String::new();
        if self.stdout.read_line(&mut line)? == 0 {
            let status = self.child.wait()?;
            return Err(format!("{} stopped ({status}); its error is above", self.script).into());
        }
        Ok(serde_json::from_str(&line)?)
    }

    /// Sends `message` and returns the answer.
    pub fn ask(&mut self, message: serde_json::Value) -> Result<serde_json::Value> {
        use std::io::Write;
        writeln!(self.stdin, "{message}")?;
        self.stdin.flush()?;
        self.receive()
    }

    /// Closes the peer's input, which ends it, and checks its exit status.
    pub fn finish(self) -> Result<()> {
        let Server {
            script,
            mut child,
            stdin,
            ..
        } = self;
        drop(stdin);
        let status = child.wait()?;
        if !status.success() {
            return Err(format!("{script} failed at exit ({status})").into());
        }
        Ok(())
    }
}
