//! Every committed preset is valid.

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
