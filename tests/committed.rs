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
        let plan = preset.plan(&data, preset.seeds[0]).unwrap();
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

/// A finding of the committed paper stops holding when the committed results change: the
/// first `largest` finding over models' decays (`report/claims.toml`) is broken by giving
/// its leading model, in its study, a future equal to its ID (every cell right of the
/// diagonal set to the row's diagonal, in every seed, so its decay is about 0), and
/// `build-report` on that copy of the repository fails naming the claim and its numbers.
#[cfg(feature = "paper")]
#[test]
fn changing_one_committed_matrix_breaks_its_claim_and_the_build_names_it() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let claims = drift::report::claims::read(&root.join("report/claims.toml")).unwrap();
    let claim = claims
        .claims
        .iter()
        .find(|c| {
            c.check == drift::report::claims::Check::Largest
                && c.form == drift::report::claims::Form::Finding
                && c.quantities[0].model.is_some()
                && c.quantities[0].stat == drift::report::claims::Stat::Decay
        })
        .expect("the paper claims which model decays fastest somewhere");
    let q = &claim.quantities[0];
    let specs = drift::report::study::read_studies(&root.join("report/studies.toml")).unwrap();
    let spec = specs.studies.iter().find(|s| s.name == q.study).unwrap();
    let copy = tempfile::tempdir().unwrap();
    for dir in ["report", "presets", "results", "checksums"] {
        for entry in walkdir::WalkDir::new(root.join(dir)) {
            let entry = entry.unwrap();
            let rel = entry.path().strip_prefix(root).unwrap();
            let skip = rel.starts_with("report/build")
                || rel
                    .components()
                    .any(|c| c.as_os_str() == "checkpoints" || c.as_os_str() == ".study");
            if skip {
                continue;
            }
            let to = copy.path().join(rel);
            if entry.file_type().is_dir() {
                std::fs::create_dir_all(&to).unwrap();
            } else {
                std::fs::copy(entry.path(), &to).unwrap();
            }
        }
    }
    let model = q.model.as_deref().unwrap();
    let mut changed = 0;
    for preset in &spec.presets {
        // A tagged preset names its models `<key>-<tag>` in the study.
        let key = match spec.tags.get(preset) {
            Some(tag) => match model.strip_suffix(&format!("-{tag}")) {
                Some(key) => key,
                None => continue,
            },
            None => model,
        };
        let runs = copy.path().join("results").join(preset).join(key);
        if !runs.is_dir() {
            continue;
        }
        for seed in std::fs::read_dir(&runs).unwrap() {
            let dir = seed.unwrap().path();
            let mut run = drift::artifacts::load_run(&dir).unwrap();
            let diagonal: Vec<Option<f64>> =
                (0..run.grid.k()).map(|i| run.grid.get(i, i)).collect();
            run.grid = run
                .grid
                .map(|i, j, v| if j > i { diagonal[i] } else { Some(v) });
            drift::artifacts::write_run(&copy.path().join("results"), &run).unwrap();
            changed += 1;
        }
    }
    assert!(changed > 0);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_build-report"))
        .arg("--root")
        .arg(copy.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{err}");
    assert!(err.contains(&format!("claim \"{}\"", claim.name)), "{err}");
    assert!(
        err.contains(&format!("{}: {model} decay = ", q.study)),
        "{err}"
    );
}
