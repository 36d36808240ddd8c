//! Committed files that no other test reads: every preset is valid, and every Python
//! package has one pinned version.

use drift::preset::{Preset, preset_files};

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
