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
