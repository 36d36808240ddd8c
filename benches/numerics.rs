//! Numerics at scale against the peers the test fixtures come from: macro ROC AUC over
//! 1M rows x 4 labels (scores on a 0.001 grid, so ties are many) against scikit-learn's
//! `roc_auc_score(average="macro")`, and the two-sided Wilcoxon signed-rank test on 1M
//! differences (on a 0.01 grid: zeros and large tie groups, so scipy's normal
//! approximation with the tie correction) against `scipy.stats.wilcoxon`. Both sides
//! read the same bytes (written here), run on one thread, and alternate repetitions in
//! one run; the bench prints the median seconds of each side, the ratio peer / drift, and
//! the largest difference of the values, which must be at rounding level.
//!
//! `cargo bench --bench numerics [-- --rows N --reps R --drift-only]`. The python comes
//! from `DRIFT_FIXTURES_PYTHON`, else `scripts/venv-pins --set fixtures` (the pinned
//! numpy, scipy and scikit-learn of `scripts/make-fixtures`, installed on first use).

mod common;

use std::process::Command;
use std::time::Instant;

use common::{Result, Rng, Server, median, peer_python, spread};
use serde_json::json;

const CLASSES: usize = 4;
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/numerics.py");
const VENV_PINS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/venv-pins");

struct Options {
    rows: usize,
    reps: usize,
    drift_only: bool,
}

impl Options {
    fn parse() -> Result<Options> {
        let mut options = Options {
            rows: 1_000_000,
            reps: 5,
            drift_only: false,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let mut value = |name: &str| -> Result<usize> {
                let v = args.next().ok_or(format!("{name} needs a value"))?;
                Ok(v.parse().map_err(|e| format!("{name} {v:?}: {e}"))?)
            };
            match arg.as_str() {
                "--rows" => options.rows = value("--rows")?,
                "--reps" => options.reps = value("--reps")?.max(1),
                "--drift-only" => options.drift_only = true,
                // cargo bench passes --bench to every bench binary.
                "--bench" => {}
                other => return Err(format!("unknown argument {other:?}").into()),
            }
        }
        Ok(options)
    }
}

/// The data: row-major `rows x CLASSES` labels and scores (a label is more likely where
/// its score is high, so each AUC is about 0.6-0.7), and `rows` differences.
struct Data {
    labels: Vec<bool>,
    scores: Vec<f64>,
    differences: Vec<f64>,
}

fn data(rows: usize) -> Data {
    let mut rng = Rng(2026_1201);
    let mut labels = Vec::with_capacity(rows * CLASSES);
    let mut scores = Vec::with_capacity(rows * CLASSES);
    for _ in 0..rows {
        for c in 0..CLASSES {
            let score = (rng.next() * 1000.0).round() / 1000.0;
            let prior = 0.15 + 0.1 * c as f64;
            labels.push(rng.next() < prior + 0.3 * (score - 0.5));
            scores.push(score);
        }
    }
    let differences = (0..rows)
        .map(|_| ((rng.next() - rng.next() + 0.002) * 100.0).round() / 100.0)
        .collect();
    Data {
        labels,
        scores,
        differences,
    }
}

fn write_f64(path: &std::path::Path, values: &[f64]) -> Result<()> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(path, bytes)?;
    Ok(())
}

fn seconds(run: impl FnOnce()) -> f64 {
    let start = Instant::now();
    run();
    start.elapsed().as_secs_f64()
}

/// `median s (±half the range, in % of the median)`.
fn cell(times: &[f64]) -> String {
    let (mid, half_range) = spread(times);
    format!("{mid:.4} (±{half_range:.0}%)")
}

fn main() -> std::process::ExitCode {
    common::main("numerics", run)
}

fn run() -> Result<()> {
    let options = Options::parse()?;
    let data = data(options.rows);
    // The values drift reports, once untimed (also the warm-up).
    let auc = drift::metrics::macro_auc(CLASSES, &data.labels, &data.scores)?
        .ok_or("every column has both labels")?;
    let test = drift::analysis::wilcoxon(&data.differences).ok_or("there are differences")?;
    println!(
        "numerics: {} rows x {CLASSES} labels (macro AUC {auc:.6}); {} differences \
         (Wilcoxon statistic {}, p {:.6e}); one thread each side, {} repetitions",
        options.rows,
        options.rows,
        test.statistic,
        test.p_value.unwrap_or(f64::NAN),
        options.reps
    );
    let dir = tempfile::tempdir()?;
    let mut peer = if options.drift_only {
        None
    } else {
        let labels: Vec<u8> = data.labels.iter().map(|&l| u8::from(l)).collect();
        std::fs::write(dir.path().join("labels.u8"), labels)?;
        write_f64(&dir.path().join("scores.f64"), &data.scores)?;
        write_f64(&dir.path().join("differences.f64"), &data.differences)?;
        let python = peer_python("DRIFT_FIXTURES_PYTHON", VENV_PINS, &["--set", "fixtures"])?;
        let mut command = Command::new(python);
        command
            .arg(SCRIPT)
            .arg("--serve")
            .env("OMP_NUM_THREADS", "1")
            .env("OPENBLAS_NUM_THREADS", "1");
        let (mut server, hello) = Server::start(command, SCRIPT)?;
        println!(
            "numerics: peer numpy {}, scipy {}, scikit-learn {}",
            hello["numpy"], hello["scipy"], hello["sklearn"]
        );
        let reply = server.ask(json!({ "load": dir.path(), "classes": CLASSES }))?;
        if reply["rows"].as_u64() != Some(options.rows as u64) {
            return Err(format!("the peer read {} rows", reply["rows"]).into());
        }
        Some(server)
    };

    let (mut drift_auc, mut drift_wilcoxon) = (Vec::new(), Vec::new());
    let (mut peer_auc, mut peer_wilcoxon) = (Vec::new(), Vec::new());
    let (mut auc_gap, mut p_gap, mut statistic_gap) = (0.0f64, 0.0f64, 0.0f64);
    for _ in 0..options.reps {
        drift_auc.push(seconds(|| {
            drift::metrics::macro_auc(CLASSES, &data.labels, &data.scores).expect("valid");
        }));
        drift_wilcoxon.push(seconds(|| {
            drift::analysis::wilcoxon(&data.differences);
        }));
        if let Some(server) = peer.as_mut() {
            let reply = server.ask(json!({ "auc": 1 }))?;
            peer_auc.push(reply["seconds"].as_f64().ok_or("auc: no seconds")?);
            auc_gap = auc_gap.max((reply["value"].as_f64().ok_or("no value")? - auc).abs());
            let reply = server.ask(json!({ "wilcoxon": 1 }))?;
            peer_wilcoxon.push(reply["seconds"].as_f64().ok_or("wilcoxon: no seconds")?);
            let p = reply["p"].as_f64().ok_or("no p")?;
            p_gap = p_gap.max((p - test.p_value.unwrap_or(f64::NAN)).abs() / p.abs().max(1e-300));
            let statistic = reply["statistic"].as_f64().ok_or("no statistic")?;
            statistic_gap = statistic_gap.max((statistic - test.statistic).abs());
        }
    }
    println!("numerics: median seconds over {} repetitions", options.reps);
    println!("| computation | drift s | peer s | peer / drift | largest difference |");
    println!("|---|---|---|---|---|");
    for (name, mine, theirs, gap) in [
        (
            "macro AUC vs roc_auc_score",
            &drift_auc,
            &peer_auc,
            format!("{auc_gap:.1e}"),
        ),
        (
            "Wilcoxon vs scipy.stats.wilcoxon",
            &drift_wilcoxon,
            &peer_wilcoxon,
            format!("statistic {statistic_gap}, p {p_gap:.1e} relative"),
        ),
    ] {
        let (theirs_cell, ratio) = if theirs.is_empty() {
            ("skipped".to_string(), "–".to_string())
        } else {
            (
                cell(theirs),
                format!("{:.1}x", median(theirs) / median(mine)),
            )
        };
        println!(
            "| {name} | {} | {theirs_cell} | {ratio} | {gap} |",
            cell(mine)
        );
    }
    if let Some(server) = peer {
        server.finish()?;
    }
    Ok(())
}
