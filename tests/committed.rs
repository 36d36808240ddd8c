//! Committed files that no other test reads: every preset is valid, and every Python
//! package has one pinned version.

use drift::preset::{Preset, preset_files};
use drift::slices::EvalPart;

#[test]
fn committed_presets_are_valid() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("presets");
    let files = preset_files(&dir).unwrap();
    assert!(
        files.len() >= 4,
        "expected the committed presets, found {files:?}"
    );
    for file in files {
        let loaded = Preset::load(&file).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(loaded.sha256.len(), 64);
        let stem = file.file_stem().unwrap().to_str().unwrap();
        assert_eq!(loaded.preset.name, stem, "a preset's name is its file name");
    }
}

/// `scripts/pins` lists every Python package the scripts install; a package pinned to two
/// versions in two sets would compare drift with two different peers.
#[test]
fn every_python_package_has_one_pinned_version() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/pins");
    let text = std::fs::read_to_string(path).unwrap();
    let mut versions = std::collections::BTreeMap::new();
    let mut sets = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        sets += 1;
        let words: Vec<&str> = line.split_whitespace().collect();
        assert!(words.len() >= 3, "{path}: {line:?} has no pins");
        for pin in words[2..].iter().filter(|w| !w.starts_with("--")) {
            let (name, version) = pin
                .split_once("==")
                .unwrap_or_else(|| panic!("{path}: {pin:?} is not NAME==VERSION"));
            let first = versions
                .entry(name.to_string())
                .or_insert(version.to_string());
            assert_eq!(first, version, "{path}: {name} is pinned to two versions");
        }
    }
    assert!(sets >= 7, "{path}: {sets} sets");
}

/// The drift-types studies' constant checkpoints, recounted from their matrices alone. A
/// checkpoint that predicts one class `c` for every ID test row (the test parts of the
/// slices it trained on, which its cells `(i, j)`, `j <= i`, score) has, in each of those
/// cells, the balanced accuracy of a constant: the mean recall over the classes present,
/// `1 / (classes present)` when `c` is present, else 0. So the rows whose ID cells all
/// match one class that way are exactly the checkpoints `health.json` records as
/// predicting one class for every ID row.
#[test]
fn the_drift_types_constant_checkpoints_match_a_recount_from_their_matrices() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut recounted = 0;
    for knob in ["covariate", "label", "concept", "all"] {
        let loaded = Preset::load(&root.join(format!("presets/paper/types-{knob}.toml"))).unwrap();
        let preset = &loaded.preset;
        assert_eq!(preset.metric, drift::Metric::BalancedAccuracy);
        let results = root.join(format!("results/types-{knob}"));
        if !results.is_dir() {
            continue;
        }
        let data = drift::text::load(&preset.data, &preset.data_options, root).unwrap();
        let plan = preset.plan(&data).unwrap();
        let drift::data::Targets::Classes { classes, labels } = &data.targets else {
            panic!("portraits are single-label");
        };
        let k = plan.splits.len();
        // The balanced accuracy of predicting `c` for every row of `rows`.
        let constant_score = |rows: &[usize], c: u32| -> f64 {
            let present: Vec<u32> = (0..*classes as u32)
                .filter(|&k| rows.iter().any(|&r| labels[r] == k))
                .collect();
            if present.contains(&c) {
                1.0 / present.len() as f64
            } else {
                0.0
            }
        };
        let runs = drift::artifacts::load_all(&results).unwrap();
        let (mut constant_rows, mut all_rows) = (0, 0);
        for r in runs.iter().filter(|r| r.model != "majority") {
            for ((p, health), grid) in r.provenance.iter().zip(&r.health).zip(r.matrix.grids()) {
                let health = health.as_ref().expect("the committed study records health");
                for (i, h) in health.iter().enumerate() {
                    let id_cells: Vec<(f64, Vec<usize>)> = (0..k)
                        .filter(|&j| preset.regime.eval_part(i, j) == EvalPart::Test)
                        .filter_map(|j| {
                            let v = grid.get(i, j)?;
                            Some((v, preset.regime.eval_rows(&plan.splits, i, j)))
                        })
                        .collect();
                    let constant = (0..*classes as u32).any(|c| {
                        id_cells
                            .iter()
                            .all(|(v, rows)| (v - constant_score(rows, c)).abs() < 1e-12)
                    });
                    let what = format!(
                        "types-{knob} {}/seed-{} cutoff {}: {h:?}",
                        r.model, p.seed, h.cutoff
                    );
                    assert_eq!(constant, h.majority_share == Some(1.0), "{what}");
                    constant_rows += usize::from(constant);
                    all_rows += usize::from(h.majority_share == Some(1.0));
                }
            }
        }
        assert_eq!(constant_rows, all_rows, "types-{knob}");
        recounted += constant_rows;
    }
    eprintln!("{recounted} constant checkpoints recounted");
}
