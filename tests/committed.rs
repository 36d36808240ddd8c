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

/// The committed image study's collapsed checkpoints, recounted from its matrices alone.
/// A checkpoint that predicts one class `c` for every ID test row (the test parts of the
/// slices it trained on, which its cells `(i, j)`, `j <= i`, score) has, in each of those
/// cells, exactly the share of `c` among the cell's rows as its accuracy; one that predicts
/// `c` for a share `s` of them has a pooled ID accuracy within `1 - s` of `c`'s share. So:
/// the rows whose ID cells match one class exactly are exactly the checkpoints
/// `health.json` records as predicting one class for every ID row, and every other
/// collapsed checkpoint (99% <= s < 100%) is within its bound.
#[test]
fn the_portraits_studys_collapsed_cutoffs_match_a_recount_from_its_matrices() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let loaded = Preset::load(&root.join("presets/report-portraits.toml")).unwrap();
    let preset = &loaded.preset;
    assert_eq!(preset.metric, drift::Metric::Accuracy);
    let data = drift::text::load(&preset.data, &preset.data_options, root).unwrap();
    let plan = preset.plan(&data).unwrap();
    let drift::data::Targets::Classes { classes, labels } = &data.targets else {
        panic!("portraits are single-label");
    };
    let k = plan.splits.len();
    let shares = |rows: &[usize]| -> Vec<f64> {
        (0..*classes as u32)
            .map(|c| {
                let n = rows.iter().filter(|&&r| labels[r] == c).count();
                n as f64 / rows.len().max(1) as f64
            })
            .collect()
    };
    let runs = drift::artifacts::load_all(&root.join("results/report-portraits")).unwrap();
    let (mut constant_rows, mut all_rows, mut near) = (0, 0, 0);
    for r in runs.iter().filter(|r| r.model != "majority") {
        for ((p, health), grid) in r.provenance.iter().zip(&r.health).zip(r.matrix.grids()) {
            let health = health.as_ref().expect("the committed study records health");
            for (i, h) in health.iter().enumerate() {
                let id_cells: Vec<(usize, f64, Vec<usize>)> = (0..k)
                    .filter(|&j| preset.regime.eval_part(i, j) == EvalPart::Test)
                    .filter_map(|j| {
                        let v = grid.get(i, j)?;
                        Some((j, v, preset.regime.eval_rows(&plan.splits, i, j)))
                    })
                    .collect();
                let constant = (0..*classes).any(|c| {
                    id_cells
                        .iter()
                        .all(|(_, v, rows)| (v - shares(rows)[c]).abs() < 1e-12)
                });
                let what = format!("{}/seed-{} cutoff {}: {h:?}", r.model, p.seed, h.cutoff);
                assert_eq!(constant, h.majority_share == Some(1.0), "{what}");
                constant_rows += usize::from(constant);
                all_rows += usize::from(h.majority_share == Some(1.0));
                if h.collapsed && !constant {
                    near += 1;
                    let s = h.majority_share.unwrap();
                    let c = h.majority_class.unwrap() as usize;
                    let id_rows: Vec<usize> = id_cells.iter().flat_map(|c| c.2.clone()).collect();
                    let pooled = id_cells
                        .iter()
                        .map(|(_, v, rows)| v * rows.len() as f64)
                        .sum::<f64>()
                        / id_rows.len() as f64;
                    assert!(
                        (pooled - shares(&id_rows)[c]).abs() <= 1.0 - s + 1e-12,
                        "{what}: pooled ID accuracy {pooled}"
                    );
                }
            }
        }
    }
    assert_eq!(constant_rows, all_rows);
    assert!(
        constant_rows > 0,
        "the study has constant checkpoints to recount"
    );
    eprintln!("{constant_rows} constant checkpoints recounted, {near} more at 99-100%");
}
