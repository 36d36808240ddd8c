//! The checksum manifest of the paper build: written deterministically and read back
//! exactly, and every way the build or the files on disk can differ from it (inputs
//! changed, non-deterministic bytes, missing, new, modified on disk, stray files)
//! reported as one line naming the file and the reason.

use std::fs;
use std::path::Path;

use drift::checksum::sha256_hex;
use drift::report::manifest::{
    Change, Difference, InputChange, InputHashes, Kind, Manifest, Reason, check, files_under,
    hash_files, input_key, strays, verify,
};

const DIRS: &[&str] = &["figures", "tables", "paper"];
const MATRIX: &str = "results/smoke/cnn_s/seed-0/matrix.json";
const PRESET: &str = "presets/smoke.toml";

fn inputs(pairs: &[(&str, &str)]) -> InputHashes {
    pairs
        .iter()
        .map(|(p, text)| (p.to_string(), sha256_hex(text.as_bytes())))
        .collect()
}

/// The outputs of a small build: (path, bytes, inputs), deliberately unsorted.
fn outputs() -> Vec<(&'static str, &'static str, InputHashes)> {
    vec![
        (
            "tables/smoke/robustness.typ",
            "#table()\n",
            inputs(&[(MATRIX, "m0"), (PRESET, "p")]),
        ),
        (
            "figures/smoke/cnn_s-raw.svg",
            "<svg>raw</svg>\n",
            inputs(&[(MATRIX, "m0")]),
        ),
        ("paper/drift.pdf", "%PDF-1.7 ...", inputs(&[(PRESET, "p")])),
        (
            "figures/smoke/cnn_s-dev.svg",
            "<svg>dev</svg>\n",
            inputs(&[(MATRIX, "m0"), ("code/report", "c")]),
        ),
    ]
}

fn manifest(outputs: &[(&str, &str, InputHashes)]) -> Manifest {
    let mut m = Manifest::new();
    for (path, bytes, inputs) in outputs {
        m.add(path, bytes.as_bytes(), inputs.clone()).unwrap();
    }
    m
}

/// A report root with the outputs on disk and their manifest committed.
fn committed_root() -> (tempfile::TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let outs = outputs();
    for (path, bytes, _) in &outs {
        let file = dir.path().join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, bytes).unwrap();
    }
    let m = manifest(&outs);
    m.write(dir.path()).unwrap();
    (dir, m)
}

fn lines(diffs: &[Difference]) -> Vec<String> {
    diffs.iter().map(ToString::to_string).collect()
}

fn read(root: &Path, rel: &str) -> String {
    fs::read_to_string(root.join(rel)).unwrap()
}

#[test]
fn round_trip_sorted_and_byte_stable() {
    let (dir, m) = committed_root();
    let root = dir.path();
    let sums = read(root, "checksums/SHA256SUMS");
    let expected: String = [
        ("figures/smoke/cnn_s-dev.svg", "<svg>dev</svg>\n"),
        ("figures/smoke/cnn_s-raw.svg", "<svg>raw</svg>\n"),
        ("paper/drift.pdf", "%PDF-1.7 ..."),
        ("tables/smoke/robustness.typ", "#table()\n"),
    ]
    .iter()
    .map(|(p, b)| format!("{}  {p}\n", sha256_hex(b.as_bytes())))
    .collect();
    assert_eq!(sums, expected);

    let back = Manifest::read(root).unwrap();
    assert_eq!(back, m);
    assert_eq!(back.len(), 4);
    let paths: Vec<&str> = back.entries().map(|(p, _)| p).collect();
    assert_eq!(paths[0], "figures/smoke/cnn_s-dev.svg");

    // Built in another order, the bytes are the same; rewriting changes nothing.
    let mut reversed = outputs();
    reversed.reverse();
    let again = manifest(&reversed);
    assert_eq!(again.sums_text(), sums);
    assert_eq!(again.inputs_text(), read(root, "checksums/inputs.json"));
    back.write(root).unwrap();
    assert_eq!(read(root, "checksums/SHA256SUMS"), sums);
    // No temporary file is left beside them.
    let names: Vec<String> = fs::read_dir(root.join("checksums"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn inputs_json_layout_and_key() {
    let (dir, m) = committed_root();
    let text = read(dir.path(), "checksums/inputs.json");
    let entry = m.get("figures/smoke/cnn_s-raw.svg").unwrap();
    // The key is the sha256 of the inputs in sha256sum format.
    let key = sha256_hex(format!("{}  {MATRIX}\n", sha256_hex(b"m0")).as_bytes());
    assert_eq!(entry.input_key(), key);
    assert_eq!(input_key(&entry.inputs), key);
    // Schema 2: the set once under its key, and the output's key.
    let set = format!(
        "    \"{key}\": {{\n      \"{MATRIX}\": \"{}\"\n    }}",
        sha256_hex(b"m0")
    );
    let output = format!("    \"figures/smoke/cnn_s-raw.svg\": \"{key}\"");
    assert!(
        text.starts_with("{\n  \"schema\": 2,\n  \"sets\": {\n"),
        "{text}"
    );
    assert!(text.contains(&set), "{text}");
    assert!(text.contains(&output), "{text}");
    assert_eq!(text.matches(&set).count(), 1, "each set once");
    assert!(text.ends_with("}\n"));
}

#[test]
fn identical_build_verifies_clean() {
    let (_dir, m) = committed_root();
    assert_eq!(verify(&m, &manifest(&outputs())), vec![]);
}

#[test]
fn verify_names_every_kind_of_difference() {
    let (_dir, committed) = committed_root();
    let mut outs = outputs();
    // tables: an input artifact changed (one byte), another is new -> other bytes.
    outs[0].1 = "#table(1)\n";
    outs[0].2 = inputs(&[(MATRIX, "m1"), (PRESET, "p"), ("results/extra.json", "x")]);
    // raw heatmap: same inputs, other bytes.
    outs[1].1 = "<svg>raw!</svg>\n";
    // the PDF is not built; a new figure is.
    outs.remove(2);
    outs.push((
        "figures/smoke/cohort.svg",
        "<svg/>",
        inputs(&[(MATRIX, "m0")]),
    ));
    // deviation heatmap: same bytes, one input dropped.
    outs[2].2 = inputs(&[(MATRIX, "m0")]);
    let built = manifest(&outs);

    let diffs = verify(&committed, &built);
    assert_eq!(
        lines(&diffs),
        [
            "figures/smoke/cnn_s-dev.svg: same bytes as the manifest, but its inputs changed (code/report removed): the recorded inputs are stale (run with --update)".to_string(),
            "figures/smoke/cnn_s-raw.svg: differs from the manifest with the same inputs: the build is not deterministic".into(),
            "figures/smoke/cohort.svg: built but not in the manifest (run with --update)".into(),
            "paper/drift.pdf: in the manifest but not built".into(),
            format!("tables/smoke/robustness.typ: differs from the manifest: its inputs changed (results/extra.json added, {MATRIX} changed)"),
        ]
    );
    assert_eq!(
        diffs[4].kind,
        Kind::Changed(Reason::InputsChanged(vec![
            InputChange {
                path: "results/extra.json".into(),
                change: Change::Added
            },
            InputChange {
                path: MATRIX.into(),
                change: Change::Changed
            },
        ]))
    );
    assert_eq!(diffs[1].kind, Kind::Changed(Reason::NonDeterministic));
}

#[test]
fn flipping_one_input_byte_names_that_input() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("results/smoke/cnn_s/seed-0")).unwrap();
    fs::create_dir_all(root.join("presets")).unwrap();
    fs::write(root.join(MATRIX), "{\"cells\": [[0.5]]}\n").unwrap();
    fs::write(root.join(PRESET), "name = \"smoke\"\n").unwrap();
    let used = hash_files(root, &[MATRIX, PRESET]).unwrap();
    let mut committed = Manifest::new();
    committed
        .add("figures/a.svg", b"<svg/>", used.clone())
        .unwrap();

    let mut bytes = fs::read(root.join(MATRIX)).unwrap();
    bytes[12] ^= 1;
    fs::write(root.join(MATRIX), bytes).unwrap();
    let now = hash_files(root, &[MATRIX, PRESET]).unwrap();
    assert!(!committed.is_fresh(root, "figures/a.svg", &now).unwrap());
    let mut built = Manifest::new();
    built.add("figures/a.svg", b"<svg>new</svg>", now).unwrap();
    assert_eq!(
        lines(&verify(&committed, &built)),
        [format!(
            "figures/a.svg: differs from the manifest: its inputs changed ({MATRIX} changed)"
        )]
    );
    let missing = hash_files(root, &["results/none.json"]).unwrap_err();
    assert!(
        missing.to_string().contains("results/none.json"),
        "{missing}"
    );
}

#[test]
fn check_on_disk_finds_modified_missing_and_stray_files() {
    let (dir, committed) = committed_root();
    let root = dir.path();
    assert_eq!(check(root, &committed, DIRS).unwrap(), vec![]);

    // Flip one byte of a committed output.
    let svg = root.join("figures/smoke/cnn_s-raw.svg");
    let mut bytes = fs::read(&svg).unwrap();
    bytes[1] ^= 0x20;
    fs::write(&svg, &bytes).unwrap();
    let recorded = sha256_hex(b"<svg>raw</svg>\n");
    let actual = sha256_hex(&bytes);
    assert_eq!(
        lines(&check(root, &committed, DIRS).unwrap()),
        [format!(
            "figures/smoke/cnn_s-raw.svg: modified: its sha256 {actual} is not the {recorded} recorded in checksums/SHA256SUMS"
        )]
    );

    // A missing output and stray files (a nested one and a leftover temporary file).
    fs::remove_file(root.join("paper/drift.pdf")).unwrap();
    fs::create_dir_all(root.join("tables/extra")).unwrap();
    fs::write(root.join("tables/extra/rogue.typ"), "x").unwrap();
    fs::write(root.join("figures/.a.svg.tmp-1"), "x").unwrap();
    // Files outside the output folders are not the manifest's business.
    fs::write(root.join("notes.txt"), "x").unwrap();
    let diffs = check(root, &committed, DIRS).unwrap();
    assert_eq!(
        lines(&diffs),
        [
            "figures/.a.svg.tmp-1: in an output folder but not in the manifest (every output must be listed in checksums/SHA256SUMS)".to_string(),
            format!("figures/smoke/cnn_s-raw.svg: modified: its sha256 {actual} is not the {recorded} recorded in checksums/SHA256SUMS"),
            "paper/drift.pdf: in the manifest but missing on disk".into(),
            "tables/extra/rogue.typ: in an output folder but not in the manifest (every output must be listed in checksums/SHA256SUMS)".into(),
        ]
    );
    assert_eq!(diffs[2].kind, Kind::Missing);
    assert_eq!(
        strays(root, DIRS, &committed).unwrap().len(),
        2,
        "strays alone"
    );
    // A missing output folder holds nothing.
    assert_eq!(
        files_under(root, &["nowhere"]).unwrap(),
        Vec::<String>::new()
    );
}

#[test]
fn freshness() {
    let (dir, committed) = committed_root();
    let root = dir.path();
    let path = "figures/smoke/cnn_s-raw.svg";
    let same = inputs(&[(MATRIX, "m0")]);
    assert!(committed.is_fresh(root, path, &same).unwrap());
    // An input changed, added or removed.
    assert!(
        !committed
            .is_fresh(root, path, &inputs(&[(MATRIX, "m1")]))
            .unwrap()
    );
    assert!(
        !committed
            .is_fresh(root, path, &inputs(&[(MATRIX, "m0"), (PRESET, "p")]))
            .unwrap()
    );
    assert!(!committed.is_fresh(root, path, &InputHashes::new()).unwrap());
    // Not in the manifest.
    assert!(!committed.is_fresh(root, "figures/new.svg", &same).unwrap());
    // The file on disk was modified, or is gone.
    fs::write(root.join(path), "<svg>raw</svg>\n ").unwrap();
    assert!(!committed.is_fresh(root, path, &same).unwrap());
    fs::remove_file(root.join(path)).unwrap();
    assert!(!committed.is_fresh(root, path, &same).unwrap());
}

fn sums_error(sums: &str) -> String {
    let inputs = Manifest::new().inputs_text();
    Manifest::parse(sums, &inputs).unwrap_err().to_string()
}

#[test]
fn malformed_sums_lines_name_file_and_line() {
    let h = "a".repeat(64);
    let cases = [
        (
            format!("{h}  a/x\n{h} a/y\n"),
            "line 2: expected \"<sha256>  <path>\"",
        ),
        (
            format!("{}  a/x\n", "A".repeat(64)),
            "line 1: expected \"<sha256>  <path>\"",
        ),
        (format!("{h}  a/x\n{h}  \n"), "line 2: empty path"),
        (format!("{h}  a/x\n\n"), "line 2: expected"),
        (format!("{h}  b\n{h}  a\n"), "line 2: a is out of order"),
        (format!("{h}  a\n{h}  a\n"), "line 2: a is listed twice"),
        (
            format!("{h}  /abs\n"),
            "line 1: /abs: not a path relative to the root",
        ),
        (
            format!("{h}  a/../b\n"),
            "line 1: a/../b: a path may not have",
        ),
        (
            format!("{h}  a\\b\n"),
            "line 1: \"a\\\\b\": a path may not hold",
        ),
        (
            format!("{h}  a\r\n"),
            "line 1: \"a\\r\": a path may not hold",
        ),
        (
            format!("{h}  checksums/x\n"),
            "line 1: checksums/x: the manifest folder checksums/ holds no output",
        ),
        (format!("{h}  a\n{h}  b"), "line 2: no newline at the end"),
    ];
    for (sums, expected) in cases {
        let error = sums_error(&sums);
        assert!(
            error.starts_with(&format!("checksums/SHA256SUMS: {expected}")),
            "{sums:?}: {error}"
        );
    }
    // Read from a root, the error names the file there.
    let (dir, _) = committed_root();
    let sums = dir.path().join("checksums/SHA256SUMS");
    let mut text = fs::read_to_string(&sums).unwrap();
    text.insert_str(text.find('\n').unwrap() + 1, "junk\n");
    fs::write(&sums, text).unwrap();
    let error = Manifest::read(dir.path()).unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "{}: line 2: expected \"<sha256>  <path>\" (64 lower-case hex digits, two spaces, a path)",
            sums.display()
        )
    );
}

#[test]
fn malformed_inputs_json_is_named() {
    let (dir, m) = committed_root();
    let root = dir.path();
    let sums = m.sums_text();
    let inputs = m.inputs_text();
    let parse = |inputs: &str| Manifest::parse(&sums, inputs).unwrap_err().to_string();

    let error = parse(&inputs.replacen("\"schema\": 2", "\"schema\": 1", 1));
    assert_eq!(
        error,
        "checksums/inputs.json: schema: expected 2, found 1 (rewrite it with build-report --update)"
    );
    let error = parse(&inputs[..inputs.len() - 3]);
    assert!(
        error.starts_with("checksums/inputs.json: line ") && error.contains("EOF"),
        "{error}"
    );
    let error = parse(&inputs.replacen("\"schema\"", "\"extra\": 0,\n  \"schema\"", 1));
    assert!(error.contains("unknown field `extra`"), "{error}");
    // An output recorded in one file and not the other.
    let fewer = sums
        .lines()
        .skip(1)
        .map(|l| format!("{l}\n"))
        .collect::<String>();
    let error = Manifest::parse(&fewer, &inputs).unwrap_err().to_string();
    assert_eq!(
        error,
        "checksums/inputs.json: outputs.figures/smoke/cnn_s-dev.svg: not listed in checksums/SHA256SUMS"
    );
    let error = Manifest::parse(&sums, &Manifest::new().inputs_text())
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "checksums/inputs.json: outputs: no record for figures/smoke/cnn_s-dev.svg, which checksums/SHA256SUMS lists"
    );
    // A tampered input hash no longer matches its set's key.
    let old = sha256_hex(b"c");
    let error = parse(&inputs.replacen(&old, &"0".repeat(64), 1));
    assert!(
        error.starts_with("checksums/inputs.json: sets.")
            && error.contains("not the key of its inputs"),
        "{error}"
    );
    // An output whose key names no set, and a set no output uses.
    let dev_key = m.get("figures/smoke/cnn_s-dev.svg").unwrap().input_key();
    let text: serde_json::Value = serde_json::from_str(&inputs).unwrap();
    let mut orphan = text.clone();
    orphan["outputs"]["figures/smoke/cnn_s-dev.svg"] = serde_json::json!("1".repeat(64));
    let orphan = serde_json::to_string_pretty(&orphan).unwrap() + "\n";
    let error = parse(&orphan);
    assert!(
        error.contains(&format!(
            "outputs.figures/smoke/cnn_s-dev.svg: no set {} in sets",
            "1".repeat(64)
        )),
        "{error}"
    );
    let mut unused = text.clone();
    let keys: Vec<String> = unused["outputs"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let single = keys.iter().filter(|k| **k == dev_key).count() == 1;
    assert!(single, "the dev figure's inputs are its own set");
    {
        // Point the output at another set: its own set is then used by no output.
        let other = keys.iter().find(|k| **k != dev_key).unwrap().clone();
        unused["outputs"]["figures/smoke/cnn_s-dev.svg"] = serde_json::json!(other);
        let unused = serde_json::to_string_pretty(&unused).unwrap() + "\n";
        let error = parse(&unused);
        assert!(
            error.contains(&format!("sets.{dev_key}: no output has these inputs")),
            "{error}"
        );
    }
    // A bad input hash.
    let error = parse(&inputs.replacen(&old, "00", 1));
    assert!(
        error.contains("code/report: sha256 \"00\" is not 64 lower-case hex digits"),
        "{error}"
    );
    // Same content, other layout.
    let error = parse(&inputs.replace("  ", "    "));
    assert!(error.contains("not in the canonical layout"), "{error}");
    // Missing manifest.
    fs::remove_file(root.join("checksums/inputs.json")).unwrap();
    let error = Manifest::read(root).unwrap_err().to_string();
    assert!(
        error.ends_with(
            "checksums/inputs.json: missing: write the manifest with build-report --update"
        ),
        "{error}"
    );
}

#[test]
fn invalid_outputs_are_refused() {
    let mut m = Manifest::new();
    m.add("figures/a.svg", b"x", InputHashes::new()).unwrap();
    let error = m
        .add("figures/a.svg", b"y", InputHashes::new())
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "manifest output \"figures/a.svg\": added twice"
    );
    let error = m
        .add("checksums/SHA256SUMS", b"y", InputHashes::new())
        .unwrap_err();
    assert!(error.to_string().contains("holds no output"), "{error}");
    let error = m
        .add_hashed("figures/b.svg", "x".into(), InputHashes::new())
        .unwrap_err();
    assert!(
        error.to_string().contains("not 64 lower-case hex"),
        "{error}"
    );
    let bad = [("../up".to_string(), sha256_hex(b""))]
        .into_iter()
        .collect();
    let error = m.add("figures/c.svg", b"x", bad).unwrap_err();
    assert!(error.to_string().contains("../up"), "{error}");
    // The empty manifest round-trips too.
    let dir = tempfile::tempdir().unwrap();
    Manifest::new().write(dir.path()).unwrap();
    assert_eq!(read(dir.path(), "checksums/SHA256SUMS"), "");
    assert!(Manifest::read(dir.path()).unwrap().is_empty());
}
