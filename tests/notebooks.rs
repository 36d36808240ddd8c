//! The notebooks under `notebooks/` and their headless runner, `scripts/run-notebooks`:
//!
//! - every committed notebook is stripped of outputs, nbformat 4 on the `rust` kernel,
//!   opens with a sentence on what it is for and depends on the crate by a relative path;
//! - every executed notebook shows at least one inline figure (SVG or PNG data);
//! - a copy of a notebook with one broken cell (a panic, then a compile error) makes the
//!   runner exit non-zero naming that cell and the error, and no later cell runs.
//!
//! The executed notebooks are those of `$DRIFT_EXECUTED_NOTEBOOKS` when set
//! (`scripts/test` runs `scripts/run-notebooks --out DIR` first); otherwise this test runs
//! the runner itself, which installs the notebook stack on first use.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::Value;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The runner gives each notebook name one evcxr folder, and two kernels must not share
/// one: the tests here that start kernels take turns.
static KERNELS: Mutex<()> = Mutex::new(());

fn notebooks() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(Path::new(REPO).join("notebooks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ipynb"))
        .collect();
    found.sort();
    found
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A multi-line string of a notebook: nbformat writes one string or a list of lines.
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(lines) => lines.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

fn source(cell: &Value) -> String {
    text(&cell["source"])
}

fn code_cells(nb: &Value) -> Vec<(usize, &Value)> {
    nb["cells"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, c)| c["cell_type"] == "code")
        .collect()
}

#[test]
fn committed_notebooks_are_stripped_and_self_describing() {
    let names: Vec<String> = notebooks()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "01-drift-matrices.ipynb",
            "02-families-and-forgetting.ipynb",
            "03-deterioration-vs-adaptation.ipynb",
            "04-new-experiment.ipynb",
        ]
    );
    for path in notebooks() {
        let nb = read(&path);
        let name = path.display();
        assert_eq!(nb["nbformat"], 4, "{name}");
        assert_eq!(nb["metadata"]["kernelspec"]["name"], "rust", "{name}");
        let first = &nb["cells"][0];
        assert_eq!(first["cell_type"], "markdown", "{name}: opens with text");
        let intro = source(first);
        assert!(
            intro.starts_with("# ") && intro.contains("This notebook"),
            "{name}: opens with a title and a sentence on what it is for"
        );
        for (i, cell) in code_cells(&nb) {
            assert_eq!(
                cell["outputs"].as_array().map(Vec::len),
                Some(0),
                "{name}: cell {} has outputs (strip them before committing)",
                i + 1
            );
            assert!(cell["execution_count"].is_null(), "{name}: cell {}", i + 1);
        }
        let dep = source(code_cells(&nb)[0].1);
        assert!(
            dep.starts_with(":dep drift = { path = \"..\""),
            "{name}: the first code cell depends on the crate by its relative path: {dep}"
        );
    }
}

/// Runs `scripts/run-notebooks` with `args`; returns (success, stdout + stderr).
fn run_notebooks(args: &[&str]) -> (bool, String) {
    let out = Command::new(Path::new(REPO).join("scripts/run-notebooks"))
        .args(args)
        .current_dir(REPO)
        .output()
        .expect("start scripts/run-notebooks");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn every_executed_notebook_shows_an_inline_figure() {
    let _turn = KERNELS.lock().unwrap_or_else(|e| e.into_inner());
    let scratch = tempfile::tempdir().unwrap();
    let executed = match std::env::var_os("DRIFT_EXECUTED_NOTEBOOKS") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let out = scratch.path().to_str().unwrap();
            let (ok, log) = run_notebooks(&["--out", out]);
            assert!(ok, "scripts/run-notebooks failed:\n{log}");
            scratch.path().to_path_buf()
        }
    };
    for path in notebooks() {
        let copy = executed.join(path.file_name().unwrap());
        assert!(
            copy.is_file(),
            "{} was not executed (no {}); notebook 04 needs LIBTORCH set",
            path.display(),
            copy.display()
        );
        let nb = read(&copy);
        let images: Vec<(&str, String)> = code_cells(&nb)
            .iter()
            .flat_map(|(_, c)| c["outputs"].as_array().unwrap())
            .filter_map(|o| {
                let data = o.get("data")?;
                ["image/svg+xml", "image/png"]
                    .into_iter()
                    .find_map(|mime| Some((mime, text(data.get(mime)?))))
            })
            .collect();
        assert!(
            !images.is_empty(),
            "{}: no image/svg+xml or image/png output",
            copy.display()
        );
        for (mime, image) in images {
            let drawn = match mime {
                "image/svg+xml" => image.starts_with("<svg") && image.contains("<rect"),
                _ => image.len() > 100,
            };
            assert!(drawn, "{}: an empty image output", copy.display());
        }
        for (i, cell) in code_cells(&nb) {
            assert!(
                !cell["execution_count"].is_null(),
                "{}: cell {} did not run",
                copy.display(),
                i + 1
            );
        }
    }
}

/// A copy of notebook 01 in a fresh folder, with its relative paths made absolute and
/// code cell `broken` replaced by `code`; returns the folder, the copy and the cell's
/// 1-based index among all cells.
fn broken_copy(code: &str, broken: usize) -> (tempfile::TempDir, PathBuf, usize) {
    let original = Path::new(REPO).join("notebooks/01-drift-matrices.ipynb");
    let text = std::fs::read_to_string(&original).unwrap();
    let text = text
        .replace("path = \\\"..\\\"", &format!("path = \\\"{REPO}\\\""))
        .replace("\\\"../results/", &format!("\\\"{REPO}/results/"));
    let mut nb: Value = serde_json::from_str(&text).unwrap();
    let index = code_cells(&nb)[broken].0;
    nb["cells"][index]["source"] = Value::String(code.to_string());
    let dir = tempfile::tempdir().unwrap();
    // The same name as the original: the runner reuses its warm evcxr folder.
    let copy = dir.path().join("01-drift-matrices.ipynb");
    std::fs::write(&copy, serde_json::to_string_pretty(&nb).unwrap()).unwrap();
    (dir, copy, index + 1)
}

fn assert_fails_naming(code: &str, expected: &[&str]) {
    let (dir, copy, cell) = broken_copy(code, 3);
    let out = dir.path().join("out");
    let (ok, log) = run_notebooks(&["--out", out.to_str().unwrap(), copy.to_str().unwrap()]);
    assert!(
        !ok,
        "the runner passed a notebook with a broken cell:\n{log}"
    );
    assert!(log.contains("01-drift-matrices.ipynb: failed"), "{log}");
    assert!(
        log.contains(&format!("cell {cell} (code cell 4) failed")),
        "{log}"
    );
    assert!(
        log.contains(code.lines().next().unwrap()),
        "the cell's source: {log}"
    );
    let error = log.split("--- error ---").nth(1).unwrap_or_default();
    for e in expected {
        assert!(error.contains(e), "the error names {e:?}: {log}");
    }
    assert!(log.contains("FAILED: "), "{log}");
    // The executed copy is kept for inspection; nothing after the broken cell ran.
    let executed = read(&out.join("01-drift-matrices.ipynb"));
    let after: Vec<_> = code_cells(&executed)
        .into_iter()
        .filter(|(i, _)| *i + 1 > cell)
        .collect();
    assert!(!after.is_empty());
    for (i, c) in after {
        assert!(c["execution_count"].is_null(), "cell {} ran", i + 1);
    }
}

#[test]
fn a_broken_cell_fails_the_runner_naming_the_cell() {
    let _turn = KERNELS.lock().unwrap_or_else(|e| e.into_inner());
    // A panic: evcxr alone would report the cell as a success and run the next.
    assert_fails_naming(
        "let missing = runs\n    .iter()\n    .find(|r| r.model == \"no_such_model\")\n    \
         .expect(\"no_such_model is in the study\")\n    .model\n    .clone();",
        &["panicked at", "no_such_model is in the study"],
    );
    // A compile error.
    assert_fails_naming("let count: u32 = \"twelve\";", &["mismatched types"]);
}
