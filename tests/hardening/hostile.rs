//! Hostile input: names that would climb out of their folder (`../`), absolute paths, NUL,
//! very long names; a results folder or a run folder that is a symbolic link out of the
//! tree. Each is refused with an error that says what and where. (Typst templates that
//! read outside the report root are refused by the paper's world:
//! `paper::files_outside_the_root_are_refused`.)

use std::os::unix::fs::symlink;

use drift::preset::Preset;

/// Every hostile spelling of a name.
fn hostile_names() -> Vec<String> {
    vec![
        "../evil".into(),
        "../../etc".into(),
        "/etc/passwd".into(),
        "a/b".into(),
        "..".into(),
        ".hidden".into(),
        "a\0b".into(),
        "a\\b".into(),
        "x".repeat(101),
        "x".repeat(5000),
    ]
}

/// TOML for `s` as a basic string (NUL and backslash escaped).
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[test]
fn hostile_preset_names_model_keys_and_families_are_refused_naming_the_field() {
    let valid = crate::presets::VALID;
    for name in hostile_names() {
        let quoted = toml_string(&name);
        for (field, text) in [
            (
                "name",
                valid.replacen("name = \"tiny-portraits\"", &format!("name = {quoted}"), 1),
            ),
            (
                "models[0].key",
                valid.replacen("key = \"cnn_s\"", &format!("key = {quoted}"), 1),
            ),
            (
                "models[2].family",
                valid.replacen("family = \"dense\"", &format!("family = {quoted}"), 1),
            ),
        ] {
            assert_ne!(text, valid, "the preset template changed: {field}");
            let error = Preset::parse(&text).expect_err(&format!("{field} = {name:?} accepted"));
            assert!(
                error.starts_with(&format!("{field}: ")),
                "{field} = {name:?}: {error}"
            );
        }
    }
}

#[test]
fn hostile_study_names_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("studies.toml");
    for name in hostile_names() {
        let text = format!(
            "[[studies]]\nname = {}\ntitle = \"T\"\npresets = [\"p\"]\n",
            toml_string(&name)
        );
        std::fs::write(&path, text).unwrap();
        let error = drift::report::study::read_specs(&path)
            .expect_err(&format!("study name {name:?} accepted"))
            .to_string();
        assert!(
            error.starts_with(&format!("{}: studies[0].name: ", path.display())),
            "{name:?}: {error}"
        );
    }
}

#[test]
fn a_run_folder_that_is_a_symlink_out_of_the_results_is_refused() {
    let (tree, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let results = tree.path().join("results");
    std::fs::create_dir_all(results.join("p")).unwrap();
    std::fs::create_dir_all(elsewhere.path().join("cnn_s/seed-0")).unwrap();
    symlink(elsewhere.path(), results.join("p/cnn_s-link")).unwrap();
    let error = drift::artifacts::find_runs(&results)
        .expect_err("a symlinked run folder was walked past")
        .to_string();
    assert!(
        error.starts_with(&format!(
            "{}: a symbolic link",
            results.join("p/cnn_s-link").display()
        )),
        "{error}"
    );
}

/// `drift study --out results` and `build-report`, with `results` a link out of the tree.
#[test]
fn a_results_folder_that_is_a_symlink_out_of_the_tree_is_refused() {
    let (tree, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    symlink(elsewhere.path(), tree.path().join("results")).unwrap();
    let expected = format!(
        "error: results: resolves to {}",
        elsewhere.path().canonicalize().unwrap().display()
    );
    let o = crate::support::drift()
        .current_dir(tree.path())
        .args(["study", "studies.toml", "--out", "results", "--plan"])
        .output()
        .unwrap();
    let err = crate::support::stderr(&o);
    assert!(!o.status.success() && err.starts_with(&expected), "{err}");
    #[cfg(feature = "paper")]
    {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_build-report"))
            .current_dir(tree.path())
            .args(["--check"])
            .output()
            .unwrap();
        let err = crate::support::stderr(&o);
        let expected = expected.replace(
            "error: results",
            &format!("error: {}", std::path::Path::new("./results").display()),
        );
        assert!(!o.status.success() && err.starts_with(&expected), "{err}");
    }
}

/// Slice labels name files (`checkpoints/<cutoff>.safetensors`,
/// `saliency/<cutoff>-on-<slice>.json`): `drift saliency` takes them from its user, and
/// refuses any that is not a slice of the run before a path is made of it.
#[cfg(feature = "torch")]
#[test]
fn hostile_slice_labels_are_refused_before_a_path_is_made_of_them() {
    let reference = crate::study::reference();
    let run = reference.join("results/smoke-single/mlp_s/seed-0");
    let before = super::files(&run, &["."]);
    let long = "9".repeat(5000);
    for label in ["../../x", "/etc/passwd", "2001/../2002", "..", "", &long] {
        for (cutoff, slice) in [(label, "2005"), ("2001", label)] {
            let o = crate::support::drift()
                .current_dir(reference)
                .arg("saliency")
                .arg(&run)
                .args(["--cutoff", cutoff, "--slice", slice])
                .output()
                .unwrap();
            let err = crate::support::stderr(&o);
            assert!(
                !o.status.success() && err.contains("no slice") && err.contains("2000, 2001"),
                "--cutoff {cutoff:?} --slice {slice:?}: {err}"
            );
        }
    }
    assert!(
        super::files(&run, &["."]) == before,
        "something was written"
    );
}
