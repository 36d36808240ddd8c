//! The label-free drift detectors of a run (src/detectors.rs) on the synthetic portraits,
//! where the drift is known: under label drift the black-box shift estimate follows the
//! generator's class prior, under covariate drift the representation statistics grow with
//! the distance in time; a run with detectors resumes to the same bytes, and a damaged
//! detector file is named.
#![cfg(feature = "torch")]

use std::path::{Path, PathBuf};

use drift::artifacts::load_run;
use drift::detectors::DetectorMatrices;
use drift::device::DeviceChoice;
use drift::preset::Preset;
use drift::run::{RunOptions, run_preset};

/// `cnn_s` (seed 0), cumulative, on 6 years of 200 portraits with `knobs`, trained for
/// `epochs`, detectors on.
fn run(dir: &Path, knobs: &str, epochs: u32) -> PathBuf {
    let preset = dir.join("study.toml");
    std::fs::write(
        &preset,
        format!(
            r#"schema = 1
name = "study"
seeds = [0]
metric = "accuracy"
vary = ["init"]
[data]
source = "synthetic-portraits"
[data.options]
start = 2000
end = 2005
rows_per_year = 200
{knobs}
[slicing]
scheme = "yearly"
[regime]
kind = "cumulative"
[train]
optimizer = "adam"
learning_rate = 1e-3
batch_size = 32
epochs = {epochs}
loss = "cross-entropy"
[[models]]
key = "cnn_s"
"#
        ),
    )
    .unwrap();
    let loaded = Preset::load(&preset).unwrap();
    let options = RunOptions {
        out: dir.join("out"),
        models: Vec::new(),
        seeds: Vec::new(),
        device: DeviceChoice::Cpu,
        threads: 1,
        progress: false,
        detectors: true,
        cutoffs: None,
    };
    run_preset(&loaded, &options).unwrap().remove(0)
}

fn detectors(dir: &Path) -> DetectorMatrices {
    load_run(dir)
        .unwrap()
        .detectors
        .expect("a run with --detectors has them")
}

/// Spearman's rank correlation of two equally long lists without ties.
fn spearman(a: &[f64], b: &[f64]) -> f64 {
    let rank = |v: &[f64]| -> Vec<f64> {
        let mut order: Vec<usize> = (0..v.len()).collect();
        order.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
        let mut r = vec![0.0; v.len()];
        for (k, &i) in order.iter().enumerate() {
            r[i] = k as f64;
        }
        r
    };
    let (ra, rb) = (rank(a), rank(b));
    let n = a.len() as f64;
    let d2: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - y).powi(2)).sum();
    1.0 - 6.0 * d2 / (n * (n * n - 1.0))
}

#[test]
fn under_label_drift_bbse_follows_the_generators_class_prior() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = run(
        dir.path(),
        "covariate = 0.0
label = 1.0
concept = 0.0",
        8,
    );
    let d = detectors(&run_dir);
    let k = d.slices.len();
    // P(y = 1) of year u in [0, 1]: 0.5 + 0.3 (2u - 1) (src/data/synthetic/portraits.rs).
    let truth = |j: usize| 0.5 + 0.3 * (2.0 * j as f64 / (k - 1) as f64 - 1.0);
    let priors = d.estimated_priors.as_ref().unwrap();
    let (mut estimated, mut expected) = (Vec::new(), Vec::new());
    for j in 1..k {
        // The latest checkpoint before slice j: the most training and ID rows.
        estimated.push(priors[j - 1][j].as_ref().expect("identified")[1]);
        expected.push(truth(j));
    }
    eprintln!("accuracy: {:.3?}", d.accuracy);
    eprintln!("BBSE P(y = 1) by slice: {estimated:.3?}, generator: {expected:.3?}");
    let error = estimated
        .iter()
        .zip(&expected)
        .map(|(e, t)| (e - t).abs())
        .sum::<f64>()
        / expected.len() as f64;
    assert!(
        error < 0.08,
        "mean error {error}: {estimated:?} vs {expected:?}"
    );
    assert!(spearman(&estimated, &expected) > 0.8, "{estimated:?}");

    // `drift summarize --detectors` backtests every detector against the matrix.
    let output = crate::support::drift()
        .arg("summarize")
        .arg(run_dir.parent().unwrap())
        .args(["--detectors", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        crate::support::stderr(&output)
    );
    let json: serde_json::Value = serde_json::from_str(&crate::support::stdout(&output)).unwrap();
    let backtest = &json["detectors"];
    assert_eq!(
        backtest["detectors"].as_array().unwrap().len(),
        drift::detectors::DETECTORS.len()
    );
    assert!(backtest["best"].is_string(), "{backtest}");
    assert!(
        backtest["schedules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["policy"] == "every slice")
    );
    for d in backtest["detectors"].as_array().unwrap() {
        assert!(
            d["spearman"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r.is_null() || r.as_f64().unwrap().abs() <= 1.0)
        );
    }
}

#[test]
fn under_covariate_drift_the_representation_shift_grows_with_time() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = run(
        dir.path(),
        "covariate = 0.25\nlabel = 0.0\nconcept = 0.0",
        2,
    );
    let d = detectors(&run_dir);
    let k = d.slices.len();
    for name in ["mmd", "ks", "c2st"] {
        let row: Vec<f64> = (1..k).map(|j| d.detectors[name][0][j].unwrap()).collect();
        eprintln!("{name} of the first checkpoint's training rows by slice: {row:.4?}");
        let lags: Vec<f64> = (1..k).map(|j| j as f64).collect();
        assert!(spearman(&row, &lags) >= 0.9, "{name}: {row:?}");
    }
    // Every detector has a value in every cell after the diagonal, none before (BBSE
    // where its confusion matrix is invertible, which a barely trained model's is not).
    for (name, m) in d.detectors.iter().filter(|(name, _)| *name != "bbse") {
        for (i, row) in m.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                assert_eq!(v.is_some(), j > i, "{name}[{i}][{j}]");
            }
        }
    }
    // A rerun finds every cutoff done and writes the same bytes; without the cutoffs'
    // detector files it recomputes them from the checkpoints, to the same bytes, whether
    // it reads the representation detectors from the preset's cache or computes them.
    let before = std::fs::read(run_dir.join("detectors.json")).unwrap();
    let cache = dir.path().join("out/study/.detectors");
    assert!(cache.is_dir(), "the representation detectors are cached");
    let remove_cutoff_files = || {
        for entry in std::fs::read_dir(run_dir.join("checkpoints")).unwrap() {
            let path = entry.unwrap().path();
            if path.to_string_lossy().ends_with(".detectors.json") {
                std::fs::remove_file(path).unwrap();
            }
        }
    };
    remove_cutoff_files();
    run(
        dir.path(),
        "covariate = 0.25\nlabel = 0.0\nconcept = 0.0",
        2,
    );
    assert_eq!(
        std::fs::read(run_dir.join("detectors.json")).unwrap(),
        before
    );
    remove_cutoff_files();
    std::fs::remove_dir_all(&cache).unwrap();
    run(
        dir.path(),
        "covariate = 0.25\nlabel = 0.0\nconcept = 0.0",
        2,
    );
    assert_eq!(
        std::fs::read(run_dir.join("detectors.json")).unwrap(),
        before
    );
    // A damaged file is named.
    let path = run_dir.join("detectors.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("\"mmd\"", "\"mmx\"", 1)).unwrap();
    let error = load_run(&run_dir).unwrap_err().to_string();
    assert!(error.contains("detectors.json"), "{error}");
}
