//! What the test modules share: the committed peer fixtures, the `drift` binary, the
//! packaged encoders and a run's provenance.

use std::process::{Command, Output};
use std::sync::OnceLock;

use drift::Metric;
use drift::artifacts::{CodeVersion, PresetRef, RunProvenance};
use drift::data::DataSource;
use drift::encoders::glove::Glove;
use serde_json::Value;

/// The provenance of a run of preset `tiny` on the CPU with one thread.
pub fn provenance(model: &str, seed: u64) -> RunProvenance {
    RunProvenance {
        schema: 1,
        preset: PresetRef {
            name: "tiny".into(),
            path: "presets/tiny.toml".into(),
            sha256: "0123456789abcdef".repeat(4),
        },
        model: model.into(),
        seed,
        varied: vec![drift::slices::Varied::Init],
        metric: Metric::Accuracy,
        code: CodeVersion {
            crate_version: "0.1.0".into(),
            git_commit: Some("89abcdef01".repeat(4)),
            git_dirty: Some(false),
            cargo_lock_sha256: "f".repeat(64),
        },
        data: DataSource::new("synthetic-portraits", "1.0.0", "a1".repeat(32)),
        device: "cpu".into(),
        threads: 1,
    }
}

/// A committed fixture of `tests/fixtures/` (made by `scripts/make-fixtures`), parsed.
pub fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A JSON array of numbers as floats.
pub fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// The `drift` binary, run from the repository root.
pub fn drift() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_drift"));
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}

/// A finished command's stdout, as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A finished command's stderr, as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// GloVe from the fetched package, loaded once for every test.
pub fn glove() -> &'static Glove {
    static GLOVE: OnceLock<Glove> = OnceLock::new();
    GLOVE.get_or_init(|| {
        Glove::from_package(&drift::packages::cache_dir())
            .unwrap_or_else(|e| panic!("{e} (run `drift data fetch glove`)"))
    })
}

/// Every file under `root` except wall times, lock files and `drift study`'s own folder
/// (logs, job records), by relative path: what two runs that should agree must agree on.
#[cfg(feature = "torch")]
pub fn tree(root: &std::path::Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.file_name() != ".study")
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            let name = e.file_name().to_string_lossy();
            !name.ends_with("timing.json") && name != ".lock"
        })
        .map(|e| {
            let rel = e.path().strip_prefix(root).unwrap().to_path_buf();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect()
}

/// Asserts that two result folders hold the same files with the same bytes ([`tree`]).
#[cfg(feature = "torch")]
pub fn assert_same_tree(a: &std::path::Path, b: &std::path::Path) {
    let (ta, tb) = (tree(a), tree(b));
    assert_eq!(
        ta.keys().collect::<Vec<_>>(),
        tb.keys().collect::<Vec<_>>(),
        "different files"
    );
    for (path, bytes) in &ta {
        assert!(bytes == &tb[path], "{} differs", path.display());
    }
}

/// A small preset (`tiny`, 2 seeds, one epoch on the toy images): `cnn_s`, and `mlp_s` in a
/// family of its own choosing. The study of the build-report tests and the run the import
/// tests bring in.
pub const TINY_PRESET: &str = r#"
schema = 1
name = "tiny"
seeds = [0, 1]
metric = "accuracy"

[data]
source = "toy-images"

[slicing]
scheme = "yearly"

[split]
train_fraction = 0.7

[regime]
kind = "cumulative"

[train]
optimizer = "adam"
learning_rate = 1e-3
batch_size = 16
epochs = 1
loss = "cross-entropy"

[[models]]
key = "cnn_s"

[[models]]
key = "mlp_s"
family = "dense"
"#;

/// Copies the files and folders under `from` to `to` (made as needed).
#[cfg(feature = "torch")]
pub fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
