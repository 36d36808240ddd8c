//! Fixtures shared by the integration tests.

use drift::Metric;
use drift::artifacts::{CodeVersion, DataSource, PresetRef, Provenance};

/// The provenance of a run of preset `tiny` on the CPU with one thread.
pub fn provenance(model: &str, seed: u64) -> Provenance {
    Provenance {
        schema: 1,
        preset: PresetRef {
            name: "tiny".into(),
            path: "presets/tiny.toml".into(),
            sha256: "0123456789abcdef".repeat(4),
        },
        model: model.into(),
        seed,
        metric: Metric::Accuracy,
        code: CodeVersion {
            crate_version: "0.1.0".into(),
            git_commit: Some("89abcdef01".repeat(4)),
            git_dirty: Some(false),
            cargo_lock_sha256: "f".repeat(64),
        },
        data: DataSource {
            name: "synthetic-portraits".into(),
            version: "1.0.0".into(),
            sha256: "a1".repeat(32),
        },
        device: "cpu".into(),
        threads: 1,
    }
}
