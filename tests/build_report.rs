//! `build-report` end to end on a small study written here: it builds and verifies, a
//! second run changes no byte, and a flipped byte in an output or an input artifact, a
//! stray file, a changed input or a changed preset is named with its reason.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use drift::artifacts::{CodeVersion, PresetRef, RunArtifact, RunProvenance, WallTimes, write_run};
use drift::data::DataSource;
use drift::report::study::LoadedStudy;
use drift::report::sweep::sweep;
use drift::saliency::SaliencyMap;

use crate::support::TINY_PRESET;

/// Two claims about the tiny study. `cnn_s` (the first model) is 0.02 above `mlp_s` in
/// every cell, and each model's two seeds differ by 0.01: the point estimates order them,
/// but two seeds a side cannot make that significant (Welch's t = 2.83, df 2, p = 0.11),
/// so the first is an open question whose outcome is `inconclusive`. Its ID is far above
/// 0.5 on both seeds (one-sample t = 80, df 1, p = 0.008; 0.016 after Holm over the two),
/// a finding that holds.
const TINY_CLAIMS: &str = r#"
[[claims]]
name = "cnn-leads-in-distribution"
says = "Does cnn_s score higher in distribution than mlp_s?"
check = "largest"
form = "question"
quantities = [
  { study = "tiny", model = "cnn_s", stat = "id" },
  { study = "tiny", model = "mlp_s", stat = "id" },
]

[[claims]]
name = "cnn-learns"
says = "cnn_s scores above 0.5 in distribution."
check = "above"
value = 0.5
quantities = [
  { study = "tiny", model = "cnn_s", stat = "id" },
]
"#;

/// Two models, two seeds, four slices of one study.
pub(crate) fn study(root: &Path) {
    fs::create_dir_all(root.join("report")).unwrap();
    fs::create_dir_all(root.join("presets")).unwrap();
    fs::write(root.join("presets/tiny.toml"), TINY_PRESET).unwrap();
    fs::create_dir_all(root.join("results")).unwrap();
    // The committed paper template with its partials and bibliography, a claim about this
    // study, and a model listing as `drift models --params` writes.
    for entry in fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/report")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if name.ends_with(".typ") || name.ends_with(".bib") {
            fs::copy(&path, root.join("report").join(name)).unwrap();
        }
    }
    fs::write(root.join("report/claims.toml"), TINY_CLAIMS).unwrap();
    fs::write(
        root.join("results/models.txt"),
        "mlp_s          mlp           image      Flatten -> Linear+ReLU (32) -> Linear  98402\n\
         cnn_s          cnn           image      Conv3x3 blocks -> Linear  93954\n",
    )
    .unwrap();
    fs::write(
        root.join("report/studies.toml"),
        "[[studies]]\nname = \"tiny\"\ntitle = \"Tiny\"\npresets = [\"tiny\"]\ngroup = \"small\"\n",
    )
    .unwrap();
    for (m, model) in ["cnn_s", "mlp_s"].into_iter().enumerate() {
        for seed in [0u64, 1] {
            let dir = write_tiny_run(root, "tiny", TINY_PRESET, model, seed, 0.02 * m as f64);
            // Saliency maps of one model, as `drift saliency` writes them.
            if model == "cnn_s" {
                for cutoff in ["2001", "2003"] {
                    let map = SaliencyMap {
                        schema: drift::saliency::SCHEMA,
                        preset: "tiny".into(),
                        model: model.into(),
                        seed,
                        cutoff: cutoff.into(),
                        slice: "2004".into(),
                        rows: vec![0, 1],
                        checkpoint_sha256: "3".repeat(64),
                        // Through 2001 the model is blind to its input: zero gradient.
                        values: (0..4)
                            .map(|y| {
                                (0..4)
                                    .map(|x| match cutoff {
                                        "2001" => 0.0,
                                        _ => ((x + y + seed as usize) % 5) as f64 / 4.0,
                                    })
                                    .collect()
                            })
                            .collect(),
                    };
                    drift::saliency::save(&dir, &map).unwrap();
                }
            }
        }
    }
}

/// Writes one seed's run of `model` under `results/<preset>/`, made from `presets/<preset>.toml`
/// holding `text`: four yearly slices, 0.9 less 0.05 per year of lag less `offset`, seed 1
/// 0.01 above seed 0, one future cell left empty.
fn write_tiny_run(
    root: &Path,
    preset: &str,
    text: &str,
    model: &str,
    seed: u64,
    offset: f64,
) -> PathBuf {
    let slices: Vec<String> = ["2001", "2002", "2003", "2004"].map(String::from).to_vec();
    let rows: Vec<Vec<Option<f64>>> = (0..4)
        .map(|i| {
            (0..4)
                .map(|j| {
                    let lag = j as f64 - i as f64;
                    let v = 0.9 - 0.05 * lag.max(0.0) - offset + 0.01 * seed as f64;
                    (i + j != 3 || i == j).then_some(v)
                })
                .collect()
        })
        .collect();
    let run = RunArtifact {
        slices: slices.clone(),
        grid: drift::Grid::from_rows(&rows).unwrap(),
        seen_classes: None,
        provenance: RunProvenance {
            schema: 1,
            preset: PresetRef {
                name: preset.into(),
                path: format!("presets/{preset}.toml"),
                sha256: drift::preset::Preset::parse(text).unwrap().content_hash(),
            },
            model: model.into(),
            seed,
            varied: vec![drift::slices::Varied::Init],
            metric: drift::Metric::Accuracy,
            code: CodeVersion::current(),
            data: DataSource::new("toy-images", "1", "2".repeat(64)),
            device: "cpu".into(),
            threads: 1,
        },
        timing: Some(WallTimes {
            train: 1.0 + seed as f64,
            eval: 0.5,
            host: None,
            detectors: None,
            epochs: None,
        }),
        health: None,
        detectors: None,
        // One run with a training history, for the gallery's explorer: three epochs a
        // cutoff, the loss falling.
        history: (model == "cnn_s" && seed == 0).then(|| {
            slices
                .iter()
                .enumerate()
                .map(|(n, cutoff)| drift::artifacts::CutoffHistory {
                    cutoff: cutoff.clone(),
                    epochs: (1..=3)
                        .map(|epoch| drift::train::Epoch {
                            epoch,
                            loss: 1.0 / (epoch as f64 + n as f64),
                            grad_norm: 2.0 / epoch as f64,
                            learning_rate: 0.001,
                            encoder_learning_rate: None,
                        })
                        .collect(),
                })
                .collect()
        }),
    };
    write_run(&root.join("results"), &run).unwrap()
}

pub(crate) fn build(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_build-report"))
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .unwrap()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Every file under the output folders and checksums/, by path.
fn outputs(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    ["figures", "report/build", "checksums"]
        .iter()
        .filter(|d| root.join(d).exists())
        .flat_map(|d| walkdir::WalkDir::new(root.join(d)).sort_by_file_name())
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().to_path_buf(), fs::read(e.path()).unwrap()))
        .collect()
}

pub(crate) fn built() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    study(dir.path());
    let o = build(dir.path(), &["--update"]);
    assert!(o.status.success(), "{}", stderr(&o));
    dir
}

#[test]
fn a_build_verifies_and_a_second_run_changes_no_byte() {
    let dir = built();
    let root = dir.path();
    let first = outputs(root);
    for file in [
        "figures/tiny/cnn_s-raw.svg",
        "figures/cohort-means-small.svg",
        "figures/tiny/temporal-effects.svg",
        "figures/tiny/saliency.svg",
        "report/build/tables/tiny-robustness.typ",
        "report/build/tables/tiny-roster.csv",
        "report/build/paper.typ",
        "report/build/paper.pdf",
        "report/build/supplement.typ",
        "report/build/supplement.pdf",
        "checksums/SHA256SUMS",
        "checksums/inputs.json",
    ] {
        assert!(first.keys().any(|p| p.ends_with(file)), "{file}");
    }
    let pdf = &first[&root.join("report/build/paper.pdf")];
    assert!(pdf.starts_with(b"%PDF"));
    // The paper quotes the analyses: the cohort's ID score of this study.
    let source = String::from_utf8(first[&root.join("report/build/paper.typ")].clone()).unwrap();
    assert!(source.contains("the in-distribution score is"), "{source}");
    // The per-model figures are the supplement's, which attaches the same proof.
    let supplement =
        String::from_utf8(first[&root.join("report/build/supplement.typ")].clone()).unwrap();
    assert!(
        supplement.contains("An all-dark map")
            && supplement.contains("cnn_s through 2001, on 2004"),
        "{supplement}"
    );
    assert!(!source.contains("An all-dark map"), "{source}");
    assert!(supplement.contains("#pdf.attach(\"/report/build/proof/SHA256SUMS\""));
    assert!(first[&root.join("report/build/supplement.pdf")].starts_with(b"%PDF"));
    let o = build(root, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("outputs match checksums/"),
        "{}",
        stderr(&o)
    );
    assert_eq!(outputs(root), first);
    // Forced: everything rendered again, the same bytes.
    let o = build(root, &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(outputs(root), first);
    assert!(build(root, &["--check"]).status.success());
}

#[test]
fn a_flipped_byte_in_an_output_is_named() {
    let dir = built();
    let root = dir.path();
    let figure = root.join("figures/tiny/mlp_s-deviation.svg");
    let good = fs::read(&figure).unwrap();
    // The default build reports the damage (and renders the file again); --check only reports.
    for args in [&[][..], &["--check"]] {
        let mut bytes = good.clone();
        bytes[100] ^= 1;
        fs::write(&figure, bytes).unwrap();
        let o = build(root, args);
        assert!(!o.status.success());
        let err = stderr(&o);
        assert!(
            err.contains("figures/tiny/mlp_s-deviation.svg: modified: its sha256 "),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_flipped_byte_in_an_input_artifact_is_named() {
    let dir = built();
    let root = dir.path();
    let input = root.join("results/tiny/cnn_s/seed-1/matrix.json");
    let text = fs::read_to_string(&input)
        .unwrap()
        .replacen("0.9", "0.8", 1);
    fs::write(&input, text).unwrap();
    let o = build(root, &[]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "{}: modified after it was written",
            input.display()
        )),
        "{err}"
    );
}

/// Regression (found by tests/hardening/damage.rs): `timing.json` is not in its run's
/// `SHA256SUMS` (identical runs differ in it), so a changed digit loaded cleanly and
/// `--check`, which read only outputs, passed; it now re-hashes the recorded inputs too.
#[test]
fn a_changed_digit_in_timing_json_fails_the_check_naming_it() {
    let dir = built();
    let root = dir.path();
    let rel = "results/tiny/cnn_s/seed-0/timing.json";
    let timing = root.join(rel);
    let text = fs::read_to_string(&timing).unwrap();
    let at = text.find(|c: char| c.is_ascii_digit()).unwrap();
    let digit = if &text[at..=at] == "7" { "8" } else { "7" };
    fs::write(
        &timing,
        format!("{}{digit}{}", &text[..at], &text[at + 1..]),
    )
    .unwrap();
    drift::artifacts::load_run(timing.parent().unwrap()).expect("the run still loads");
    let o = build(root, &["--check"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{rel}: input modified: its sha256 "))
            && err.contains("recorded in checksums/inputs.json"),
        "{err}"
    );
}

#[test]
fn a_flipped_byte_in_a_saliency_map_is_named() {
    let dir = built();
    let root = dir.path();
    let map = root.join("results/tiny/cnn_s/seed-0/saliency/2003-on-2004.json");
    let mut bytes = fs::read(&map).unwrap();
    let at = bytes.len() - 10;
    bytes[at] ^= 1;
    fs::write(&map, bytes).unwrap();
    let o = build(root, &[]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{}: its sha256 ", map.display()))
            && err.contains("recorded in SHA256SUMS"),
        "{err}"
    );
}

#[test]
fn changed_inputs_and_stray_files_are_reported_with_their_reason() {
    let dir = built();
    let root = dir.path();
    // A new seed changes the inputs of every figure of the study.
    let mut run = drift::artifacts::load_run(&root.join("results/tiny/mlp_s/seed-1")).unwrap();
    run.provenance.seed = 2;
    write_run(&root.join("results"), &run).unwrap();
    fs::write(root.join("figures/notes.txt"), "by hand").unwrap();
    let o = build(root, &[]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(
            "figures/tiny/cohort-mean.svg: differs from the manifest: its inputs changed \
             (results/tiny/mlp_s/seed-2/SHA256SUMS added"
        ),
        "{err}"
    );
    assert!(
        err.contains("figures/notes.txt: in an output folder but not in the manifest"),
        "{err}"
    );
}

#[test]
fn families_come_from_the_preset_and_a_changed_preset_is_stale() {
    let dir = built();
    let root = dir.path();
    let families = fs::read_to_string(root.join("report/build/tables/tiny-families.csv")).unwrap();
    assert!(
        families.contains("\ndense,") && families.contains("\ncnn,"),
        "{families}"
    );
    fs::write(
        root.join("presets/tiny.toml"),
        TINY_PRESET.replace("epochs = 1", "epochs = 2"),
    )
    .unwrap();
    let o = build(root, &[]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("results/tiny/cnn_s/seed-0: made from preset tiny with sha256 ")
            && err.contains("but presets/tiny.toml is now preset tiny with sha256 ")
            && err.contains("the results are stale"),
        "{err}"
    );
    fs::remove_file(root.join("presets/tiny.toml")).unwrap();
    let err = stderr(&build(root, &[]));
    assert!(
        err.contains(
            "results/tiny/cnn_s/seed-0/run.json: its preset presets/tiny.toml is not a file"
        ),
        "{err}"
    );
}

#[test]
fn a_missing_manifest_or_study_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    study(dir.path());
    let o = build(dir.path(), &[]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("checksums"), "{}", stderr(&o));
    fs::write(
        dir.path().join("report/studies.toml"),
        "[[studies]]\nname = \"x\"\ntitle = \"X\"\npresets = [\"absent\"]\n",
    )
    .unwrap();
    let o = build(dir.path(), &["--update"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("study x: no runs of preset absent under results/"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_claim_that_no_longer_holds_fails_the_build_naming_it_and_its_numbers() {
    let dir = built();
    let root = dir.path();
    let table = fs::read_to_string(root.join("report/build/tables/claims.csv")).unwrap();
    assert!(table.contains("cnn-learns"), "{table}");
    // cnn_s's matrices drop 0.5 everywhere: its ID is now significantly below 0.5.
    for seed in [0u64, 1] {
        let run_dir = root.join(format!("results/tiny/cnn_s/seed-{seed}"));
        let mut run = drift::artifacts::load_run(&run_dir).unwrap();
        run.grid = run.grid.map(|_, _, v| Some(v - 0.5));
        write_run(&root.join("results"), &run).unwrap();
    }
    let o = build(root, &[]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("claim \"cnn-learns\""), "{err}");
    assert!(err.contains("comes out contradicted"), "{err}");
    assert!(err.contains("tiny: cnn_s ID = 0.4"), "{err}");
    assert!(err.contains("Holm-adjusted p = "), "{err}");
}

/// Point estimates that order two models while their seed values do not differ
/// significantly: the claim is `inconclusive`; as a question the build reports it so, and
/// written as a finding it fails the build naming the claim, its values, the test
/// statistic and the adjusted p.
#[test]
fn an_ordering_inside_seed_noise_is_inconclusive_and_no_finding() {
    let dir = built();
    let root = dir.path();
    let table = fs::read_to_string(root.join("report/build/tables/claims.csv")).unwrap();
    let row = table
        .lines()
        .find(|l| l.starts_with("cnn-leads-in-distribution,"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains(",inconclusive,"), "{row}");
    let finding = TINY_CLAIMS.replace("form = \"question\"\n", "");
    fs::write(root.join("report/claims.toml"), finding).unwrap();
    let o = build(root, &[]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(
            "claim \"cnn-leads-in-distribution\" (Does cnn_s score higher in distribution \
             than mlp_s?) is written as a finding (holds) but comes out inconclusive"
        ),
        "{err}"
    );
    assert!(
        err.contains("tiny: cnn_s ID = 0.9050 (seeds 0.9000, 0.9100)"),
        "{err}"
    );
    assert!(
        err.contains("tiny: mlp_s ID = 0.8850 (seeds 0.8800, 0.8900)"),
        "{err}"
    );
    assert!(err.contains("t = 2.828, df = 2.00, p = 0.1056"), "{err}");
    assert!(err.contains("Holm-adjusted p = 0.1056"), "{err}");
}

#[test]
fn a_claim_naming_what_is_not_there_is_an_error_not_a_finding() {
    let dir = built();
    let root = dir.path();
    fs::write(
        root.join("report/claims.toml"),
        TINY_CLAIMS.replace("model = \"mlp_s\"", "model = \"vit_s\""),
    )
    .unwrap();
    let o = build(root, &[]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("claim \"cnn-leads-in-distribution\": tiny: no model \"vit_s\""),
        "{err}"
    );
}

#[test]
fn one_study_trains_a_key_on_several_presets_when_they_are_tagged() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    study(root);
    // A second preset of the same models on another input, and each preset's baseline.
    let other = TINY_PRESET.replace("name = \"tiny\"", "name = \"tiny-b\"");
    fs::write(root.join("presets/tiny-b.toml"), &other).unwrap();
    for seed in [0u64, 1] {
        for model in ["cnn_s", "mlp_s"] {
            write_tiny_run(root, "tiny-b", &other, model, seed, 0.1);
        }
    }
    write_tiny_run(root, "tiny", TINY_PRESET, "majority", 0, 0.4);
    write_tiny_run(root, "tiny-b", &other, "majority", 0, 0.4);
    let spec = |tags: &str| {
        let text = format!(
            "[[studies]]\nname = \"tiny\"\ntitle = \"Tiny\"\npresets = [\"tiny\", \"tiny-b\"]\n{tags}"
        );
        fs::write(root.join("report/studies.toml"), text).unwrap();
        drift::report::study::read_specs(&root.join("report/studies.toml"))
    };
    let load = |specs: Vec<drift::report::study::StudySpec>| {
        drift::report::study::load(root, "results", &specs)
    };

    let err = load(spec("").unwrap()).unwrap_err().to_string();
    assert!(err.contains("model \"cnn_s\" appears twice"), "{err}");
    let err = spec("tags = { tiny-c = \"c\" }").unwrap_err().to_string();
    assert!(
        err.contains("studies[0].tags: preset \"tiny-c\" is not one of the study's presets"),
        "{err}"
    );
    let err = spec("tags = { tiny-b = \"B\" }").unwrap_err().to_string();
    assert!(err.contains("studies[0].tags: \"B\" must be"), "{err}");

    let studies = load(spec("tags = { tiny-b = \"b\" }").unwrap()).unwrap();
    let a = &studies[0].analysis;
    let names: Vec<(&str, &str)> = a
        .models
        .iter()
        .map(|m| (m.model.as_str(), m.key.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("cnn_s", "cnn_s"),
            ("majority", "majority"),
            ("mlp_s", "mlp_s"),
            ("cnn_s-b", "cnn_s"),
            ("mlp_s-b", "mlp_s")
        ]
    );
    let id = |m: &str| a.model(m).unwrap().overall.id.unwrap();
    assert!((id("cnn_s") - id("cnn_s-b") - 0.1).abs() < 1e-12);
    let listing = drift::report::tables::parse_models_listing(
        &fs::read_to_string(root.join("results/models.txt")).unwrap(),
    )
    .unwrap();
    let roster = drift::report::tables::roster(&listing, a).unwrap();
    let csv = roster.csv();
    let models: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(models, ["mlp_s", "mlp_s-b", "cnn_s", "cnn_s-b", "majority"]);

    // Baselines are kept once, and only when the presets fitted the same one.
    write_tiny_run(root, "tiny-b", &other, "majority", 0, 0.3);
    let err = load(spec("tags = { tiny-b = \"b\" }").unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("study tiny: presets tiny and tiny-b fitted different majority baselines"),
        "{err}"
    );
}

#[test]
fn why_walks_from_an_output_to_its_inputs_and_from_an_input_to_its_outputs() {
    let dir = built();
    let root = dir.path();
    let stdout = |o: &Output| String::from_utf8_lossy(&o.stdout).to_string();
    // Backward: a figure of cnn_s is made from the study's runs, its preset and the code.
    let o = build(root, &["--why", "figures/tiny/cnn_s-raw.svg"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("figures/tiny/cnn_s-raw.svg is made from:\n"),
        "{out}"
    );
    for input in [
        "results/tiny/cnn_s/seed-0/run.json",
        "presets/tiny.toml",
        "src",
    ] {
        assert!(out.contains(&format!("\n  {input}  ")), "{input}: {out}");
    }
    assert!(!out.contains("feeds:"), "{out}");
    // Forward: a run of mlp_s feeds its figures, the tables and the paper.
    let o = build(root, &["--why", "./results/tiny/mlp_s/seed-1/matrix.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("results/tiny/mlp_s/seed-1/matrix.json feeds:\n"),
        "{out}"
    );
    for output in ["figures/tiny/mlp_s-raw.svg", "report/build/paper.pdf"] {
        assert!(out.contains(&format!("\n  {output}\n")), "{output}: {out}");
    }
    assert!(
        !out.contains("is made from:") && !out.contains("checksums/"),
        "{out}"
    );
    // A path the manifest does not know.
    let o = build(root, &["--why", "figures/nothing.svg"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains(
            "figures/nothing.svg: neither an output nor an input in checksums/SHA256SUMS"
        ),
        "{}",
        stderr(&o)
    );
}

/// Pretends that the committed version of output `rel` is `bytes`: writes them and
/// records their hash in checksums/SHA256SUMS (as a build elsewhere would have).
fn commit_output(root: &Path, rel: &str, bytes: &[u8]) {
    fs::write(root.join(rel), bytes).unwrap();
    let sums = root.join("checksums/SHA256SUMS");
    let text = fs::read_to_string(&sums).unwrap();
    let hash = drift::checksum::sha256_hex(bytes);
    let text: String = text
        .lines()
        .map(|l| match l.split_once("  ") {
            Some((_, p)) if p == rel => format!("{hash}  {p}\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    fs::write(&sums, text).unwrap();
}

#[test]
fn a_pdf_that_differs_in_metadata_only_is_told_apart_and_accepted() {
    let dir = built();
    let root = dir.path();
    let mut doc = lopdf::Document::load(root.join("report/build/paper.pdf")).unwrap();
    let mut info = lopdf::Dictionary::new();
    info.set("Producer", lopdf::Object::string_literal("another machine"));
    let info = doc.add_object(info);
    doc.trailer.set("Info", info);
    let mut stamped = Vec::new();
    doc.save_to(&mut stamped).unwrap();
    commit_output(root, "report/build/paper.pdf", &stamped);
    // Rendered again (--force: its inputs are unchanged), it differs from the manifest.
    let o = build(root, &["--force"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("report/build/paper.pdf: differs from the manifest with the same inputs: the build is not deterministic; byte-identical after canonicalisation (PDF metadata and identifiers only differ)"),
        "{err}"
    );
    assert!(
        err.contains("1 difference from checksums/, all accepted"),
        "{err}"
    );
}

#[test]
fn a_table_within_the_tolerance_is_accepted_only_with_it() {
    let table = "report/build/tables/tiny-robustness.csv";
    for (args, accepted) in [
        (&["--force", "--tolerance", "0.01"][..], true),
        (&["--force"][..], false),
    ] {
        let dir = built();
        let root = dir.path();
        let text = fs::read_to_string(root.join(table)).unwrap();
        // The first field with a decimal point on the first row, a millionth higher.
        let row = text.lines().nth(1).unwrap();
        let field = row.split(',').find(|f| f.contains('.')).unwrap();
        let value: f64 = field.parse().unwrap();
        let nudged = format!("{}", value + 1e-6);
        let committed = text.replacen(row, &row.replacen(field, &nudged, 1), 1);
        commit_output(root, table, committed.as_bytes());
        let o = build(root, args);
        let err = stderr(&o);
        assert_eq!(o.status.success(), accepted, "{err}");
        if accepted {
            assert!(
                err.contains("; equal within the tolerance 0.01 (largest difference"),
                "{err}"
            );
        } else {
            assert!(
                err.contains(&format!(
                    "; a real change: {nudged} became {field} (difference "
                )),
                "{err}"
            );
            assert!(err.contains("(0 accepted, 1 not)"), "{err}");
        }
    }
}

#[test]
fn a_changed_input_names_the_outputs_it_feeds() {
    let dir = built();
    let root = dir.path();
    // mlp_s seed 1 made again with other numbers.
    let seed = root.join("results/tiny/mlp_s/seed-1");
    fs::remove_dir_all(&seed).unwrap();
    write_tiny_run(root, "tiny", TINY_PRESET, "mlp_s", 1, 0.03);
    let o = build(root, &[]);
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("figures/tiny/mlp_s-raw.svg: differs from the manifest: its inputs changed (results/tiny/mlp_s/seed-1/"),
        "{err}"
    );
    assert!(err.contains("; a real change: "), "{err}");
    assert!(
        err.contains("input results/tiny/mlp_s/seed-1/matrix.json changed: it feeds "),
        "{err}"
    );
    assert!(
        err.contains("build-report --why results/tiny/mlp_s/seed-1/matrix.json lists them"),
        "{err}"
    );
}

/// Regression (found by tests/hardening/kills.rs): a build killed mid-write left its
/// `.<name>.tmp-<pid>` beside the outputs, and the next build did not clear it.
#[test]
fn a_temporary_file_a_killed_build_left_is_cleared_by_the_next_build() {
    let dir = built();
    let root = dir.path();
    let left = root.join("figures/tiny/.cnn_s-raw.svg.tmp-999999999");
    fs::write(&left, b"<svg").unwrap();
    // --check writes nothing: it names the file, which no manifest lists.
    let o = build(root, &["--check"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains(".cnn_s-raw.svg.tmp-999999999: in an output folder"));
    assert!(left.exists());
    let o = build(root, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!left.exists());
}

/// A claim naming a seed paper's claim gets a verdict only on data of the seed's kind:
/// `not comparable` when the kinds differ, whatever the outcome; on comparable data a
/// claim that holds `agrees` (or `contradicts` when it states the opposite), and an
/// inconclusive one is `inconclusive`, never a contradiction.
#[test]
fn a_verdict_against_a_seed_paper_needs_data_of_its_kind() {
    let dir = built();
    let root = dir.path();
    let with_seed = |kind_of_ours: &str, agrees: bool| {
        let claims = format!(
            "[kinds]\n\"toy-images\" = \"{kind_of_ours}\"\nYearbook = \"photographs\"\n{}",
            TINY_CLAIMS
                .replace(
                    "check = \"above\"\n",
                    &format!(
                        "check = \"above\"\nseed_paper = \"Models learn.\"\n\
                         seed_data = [\"Yearbook\"]\nagrees = {agrees}\n"
                    ),
                )
                .replace(
                    "form = \"question\"\n",
                    "form = \"question\"\nseed_paper = \"cnn leads.\"\n\
                     seed_data = [\"Yearbook\"]\nagrees = true\n",
                )
        );
        fs::write(root.join("report/claims.toml"), claims).unwrap();
        let o = build(root, &["--update"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let table = fs::read_to_string(root.join("report/build/tables/claims.csv")).unwrap();
        let verdict = |name: &str| {
            table
                .lines()
                .find(|l| l.starts_with(&format!("{name},")))
                .unwrap_or_else(|| panic!("{table}"))
                .to_string()
        };
        (verdict("cnn-learns"), verdict("cnn-leads-in-distribution"))
    };
    let (learns, leads) = with_seed("toy images", true);
    assert!(
        learns.ends_with(
            ",holds,not comparable: data of different kinds (ours: toy images; the seed \
             paper's: photographs)"
        ),
        "{learns}"
    );
    assert!(leads.contains("not comparable"), "{leads}");
    let (learns, leads) = with_seed("photographs", true);
    assert!(
        learns.contains(",holds,agrees: the claim holds"),
        "{learns}"
    );
    assert!(
        leads.contains(",inconclusive,\"inconclusive: no significant result"),
        "{leads}"
    );
    let (learns, _) = with_seed("photographs", false);
    assert!(
        learns.contains(",holds,contradicts: the claim holds"),
        "{learns}"
    );
    // A seed-paper claim must say what the seed measured on, in a kind the file knows.
    let unknown = TINY_CLAIMS.replace(
        "check = \"above\"\n",
        "check = \"above\"\nseed_paper = \"x\"\nseed_data = [\"arXiv\"]\nagrees = true\n",
    );
    fs::write(root.join("report/claims.toml"), unknown).unwrap();
    let o = build(root, &[]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("claim \"cnn-learns\": seed_data \"arXiv\" has no kind in [kinds]"),
        "{}",
        stderr(&o)
    );
}

/// The tiny preset on the synthetic portraits, named `name`, with `knobs` set and every
/// other drift knob at 0 (the generator's default is 1).
fn portraits_preset(name: &str, knobs: &[(&str, f64)]) -> String {
    let mut options = String::from("\n[data.options]\n");
    for knob in ["covariate", "label", "concept"] {
        let v = knobs
            .iter()
            .find(|(k, _)| *k == knob)
            .map_or(0.0, |(_, v)| *v);
        options.push_str(&format!("{knob} = {v}\n"));
    }
    TINY_PRESET
        .replace("name = \"tiny\"", &format!("name = \"{name}\""))
        .replace(
            "source = \"toy-images\"\n",
            &format!("source = \"synthetic-portraits\"\n{options}"),
        )
}

/// Writes `presets/<name>.toml` and its two models' two seeds; returns the studies as
/// `report/studies.toml` would list them, all in group `sweep`.
fn sweep_studies(root: &Path, presets: &[(&str, &[(&str, f64)])]) -> Vec<LoadedStudy> {
    fs::create_dir_all(root.join("presets")).unwrap();
    let mut toml = String::new();
    for (name, knobs) in presets {
        let text = portraits_preset(name, knobs);
        fs::write(root.join(format!("presets/{name}.toml")), &text).unwrap();
        for (m, model) in ["cnn_s", "mlp_s"].into_iter().enumerate() {
            for seed in [0u64, 1] {
                write_tiny_run(root, name, &text, model, seed, 0.02 * m as f64);
            }
        }
        toml.push_str(&format!(
            "[[studies]]\nname = \"{name}\"\ntitle = \"{name}\"\npresets = [\"{name}\"]\ngroup = \"sweep\"\n"
        ));
    }
    fs::write(root.join("studies.toml"), toml).unwrap();
    let specs = drift::report::study::read_specs(&root.join("studies.toml")).unwrap();
    drift::report::study::load(root, "results", &specs).unwrap()
}

/// A group of single-knob portrait studies with a no-drift one is a sweep: one curve per
/// model and kind, from the no-drift study up in strength, each point the seeds' ID and
/// row-matched decay; a study with two knobs makes the group no sweep, two no-drift
/// studies are an error.
#[test]
fn a_sweep_group_reads_each_kind_against_strength() {
    let dir = tempfile::tempdir().unwrap();
    let studies = sweep_studies(
        dir.path(),
        &[
            ("s-none", &[]),
            ("s-concept-100", &[("concept", 1.0)]),
            ("s-concept-50", &[("concept", 0.5), ("label", 0.0)]),
            ("s-label-100", &[("label", 1.0)]),
        ],
    );
    let s = sweep(&studies, "sweep").unwrap().expect("a sweep");
    assert_eq!(s.none, "s-none");
    assert_eq!(s.models, ["cnn_s", "mlp_s"]);
    assert_eq!(s.strengths, [0.5, 1.0]);
    let kinds: Vec<(&str, &str)> = s
        .curves
        .iter()
        .map(|c| (c.model.as_str(), c.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("cnn_s", "label"),
            ("cnn_s", "concept"),
            ("mlp_s", "label"),
            ("mlp_s", "concept")
        ]
    );
    let concept = s.curve("cnn_s", "concept").unwrap();
    let along: Vec<(f64, &str)> = concept
        .points
        .iter()
        .map(|p| (p.strength, p.study.as_str()))
        .collect();
    assert_eq!(
        along,
        [
            (0.0, "s-none"),
            (0.5, "s-concept-50"),
            (1.0, "s-concept-100")
        ]
    );
    // write_tiny_run: 0.9 less 0.05 a slice of lag, seed 1 0.01 above seed 0, cells (0, 3)
    // and (1, 2) empty: row-matched decay (0.075 + 0.1 + 0.05) / 3 on both seeds; ID 0.90
    // and 0.91 for cnn_s, 0.02 less for mlp_s.
    let p = &concept.points[2];
    assert!((p.decay.mean - 0.075).abs() < 1e-12, "{:?}", p.decay);
    assert_eq!((p.decay.n, p.id.n), (2, 2));
    assert!(
        (p.id.min - 0.90).abs() < 1e-12 && (p.id.max - 0.91).abs() < 1e-12,
        "{:?}",
        p.id
    );
    let mlp = &s.curve("mlp_s", "label").unwrap().points[1];
    assert!((mlp.id.mean - 0.885).abs() < 1e-12, "{:?}", mlp.id);
    assert_eq!(sweep(&studies, "no such group").unwrap(), None);

    // Two knobs at once: not a single-knob study, so no sweep.
    let dir = tempfile::tempdir().unwrap();
    let mixed = sweep_studies(
        dir.path(),
        &[
            ("s-none", &[]),
            ("s-both", &[("concept", 1.0), ("covariate", 0.5)]),
        ],
    );
    assert_eq!(sweep(&mixed, "sweep").unwrap(), None);

    // Two no-drift studies: which one is strength 0 is ambiguous.
    let dir = tempfile::tempdir().unwrap();
    let twice = sweep_studies(
        dir.path(),
        &[
            ("s-none", &[]),
            ("s-zero", &[("concept", 0.0)]),
            ("s-concept", &[("concept", 1.0)]),
        ],
    );
    let err = sweep(&twice, "sweep").unwrap_err().to_string();
    assert!(
        err.contains("s-none and s-zero both set no drift knob"),
        "{err}"
    );
}
