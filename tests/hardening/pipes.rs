//! A closed pipe (`drift models --params | head -2`): every printing command ends quietly
//! and successfully, as ripgrep does, instead of panicking on the failed write.

use std::process::{Command, Stdio};

use crate::support::stderr;

/// Runs `command` with its stdout a pipe whose reading end is already closed, so that its
/// first write fails with EPIPE whatever the timing, and checks the quiet, clean end.
fn ends_quietly(mut command: Command) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let shown = format!("{command:?}");
    let output = command
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = stderr(&output);
    assert!(
        output.status.success() && err.is_empty(),
        "{shown} on a closed pipe: {:?}, stderr {err:?}",
        output.status
    );
}

fn drift(args: &[&str]) -> Command {
    let mut command = crate::support::drift();
    command.args(args);
    command
}

#[test]
fn every_printing_command_ends_quietly_on_a_closed_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let matrix = dir.path().join("m.csv");
    std::fs::write(
        &matrix,
        "train_slice,eval_slice,value\n1,1,0.9\n1,2,0.8\n2,2,0.85\n",
    )
    .unwrap();
    let matrix = matrix.to_str().unwrap();
    let predictions = dir.path().join("p.csv");
    std::fs::write(&predictions, "label,score\n0,0\n1,1\n").unwrap();
    let predictions = predictions.to_str().unwrap();
    let run = "results/emoji/cnn_s/seed-0";
    // Parameter counts need libtorch.
    let params: &[&[&str]] = if cfg!(feature = "torch") {
        &[&["models", "--params"]]
    } else {
        &[]
    };
    for args in params.iter().copied().chain([
        &["--help"][..],
        &["models"],
        &["data", "list"],
        &["presets", "check", "presets/paper/emoji.toml"],
        &["summarize", matrix, "--metric", "accuracy"],
        &[
            "summarize",
            matrix,
            "--metric",
            "accuracy",
            "--format",
            "table",
        ],
        &["score", predictions, "--metric", "accuracy"],
        &["artifacts", "verify", run],
        &["study", "report/studies.toml", "--plan"],
    ]) {
        ends_quietly(drift(args));
    }
}

#[cfg(feature = "paper")]
#[test]
fn build_report_and_verify_paper_end_quietly_on_a_closed_pipe() {
    ends_quietly(drift(&["verify-paper", "report/build/paper.pdf"]));
    let mut why = Command::new(env!("CARGO_BIN_EXE_build-report"));
    why.current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["--why", "results/models.txt"]);
    ends_quietly(why);
}
