//! End to end against the reference pipeline: `drift run` against the same protocol
//! written in PyTorch (benches/pipeline.py), fed the same rows and initial weights.
//!
//! Three cases, one model and seed 0 each: an image preset (`report-portraits`, `cnn_s`),
//! a token-state text preset (`sotu-minilm-tokens`, `ffn_s`) and a pooled linear-head
//! preset (`sotu-minilm-pooled`, `linear`). Per case the drift side is
//! `drift::run::run_preset` into a temporary folder, timed whole: loading the data (the
//! encoder cache for the text cases), planning, one fresh model per cutoff trained and
//! checkpointed, every checkpoint scored on every slice, the artifact written. Then, untimed,
//! the bench exports what the PyTorch side starts from: the data set's inputs (token states
//! as the F16 the cache holds), labels and token lengths; per cutoff the training seed,
//! the initial weights `drift::train::build` draws, the row order of every epoch
//! (`drift::train::epoch_order`) and the rows of every cell under the regime's ID/OOD
//! rule. The Python side (one process per case) runs the protocol as a PyTorch user writes
//! it, timed from reading that export to its matrix (details in benches/pipeline.py).
//!
//! The table gives per case both wall times (median over `--reps`, ± half their range in
//! %), the ratio PyTorch/drift (above 1: drift is faster) and the largest difference
//! between the two matrices. Both sides run the same libtorch kernels from the same
//! weights on the same batches (and the same dropout masks: both draw from libtorch's
//! generator in the same order), but `torch.optim`'s Adam and AdamW round their first
//! moment differently from libtorch's C++ optimisers that tch calls, and `clip_grad_norm_`
//! computes its coefficient in float32 where tch uses f64: every step differs in the last
//! bits and training amplifies that. `--libtorch-update` closes the gap to zero.
//!
//! ```text
//! eval "$(scripts/libtorch-env)"; cargo bench --features torch --bench pipeline
//! cargo bench --features torch --bench pipeline -- --cases pooled,text --reps 3
//! ```
//!
//! Needs the fetched corpora and the MiniLM cache of the SOTU presets (`drift data fetch
//! sotu minilm`, then `drift cache presets/sotu-minilm-tokens.toml`; `run_preset` builds a
//! missing cache, outside the timing of neither side, so build it first). Options (after
//! `--`): `--threads N` (1), `--cases image,text,pooled`, `--reps R` (1), `--drift-only`,
//! `--keep DIR` (keep each case's run folder and export in `DIR/<case>`),
//! `--libtorch-update` (the PyTorch side steps as libtorch's C++ optimisers and tch's
//! clipping do: then the matrices agree bit for bit, which shows where the gap comes from).
//! The Python is `$DRIFT_PIPELINE_PYTHON`, else what `scripts/venv-pins --set
//! pipeline-peer` prints (torch 2.13.0, the libtorch drift links, and scikit-learn for the
//! metric; installed on first use). Without `--bench` (`cargo test --benches`) it runs the
//! pooled case on the drift side only.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use drift::artifacts;
use drift::data::{Inputs, States, Targets};
use drift::device::DeviceChoice;
use drift::preset::{ModelSpec, Preset};
use drift::run::{self, RunOptions};
use drift::train::{self, TrainJob};
use serde_json::json;
use tch::{Device, Tensor};

mod common;
use common::{Result, ensure_wait_policy, peer_python, spread};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/pipeline.py");
const VENV_PINS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/venv-pins");

/// One preset and model of the comparison.
struct Case {
    name: &'static str,
    preset: &'static str,
    model: &'static str,
}

const CASES: [Case; 3] = [
    Case {
        name: "image",
        preset: "presets/report-portraits.toml",
        model: "cnn_s",
    },
    Case {
        name: "text",
        preset: "presets/sotu-minilm-tokens.toml",
        model: "ffn_s",
    },
    Case {
        name: "pooled",
        preset: "presets/sotu-minilm-pooled.toml",
        model: "linear",
    },
];

/// `drift run` against the same protocol in PyTorch (details: the header of
/// benches/pipeline.rs).
#[derive(Debug, clap::Parser)]
struct Options {
    /// libtorch threads on both sides.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    threads: u32,
    /// Cases to run, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = CASES.map(|c| c.name.to_string()))]
    cases: Vec<String>,
    /// Timed repetitions per side (alternating which side goes first).
    #[arg(long, default_value_t = 1)]
    reps: usize,
    /// Time drift alone.
    #[arg(long)]
    drift_only: bool,
    /// The PyTorch side steps with libtorch's C++ optimiser update and tch's clipping
    /// (`pipeline.py --libtorch-update`): a diagnosis of the matrix difference.
    #[arg(long)]
    libtorch_update: bool,
    /// Keep each case's work (drift's run folder and the export) under this folder.
    #[arg(long)]
    keep: Option<std::path::PathBuf>,
    /// `cargo bench` passes `--bench`; without it (`cargo test --benches`) only smoke-test.
    #[arg(long)]
    bench: bool,
}

/// One case's measurements.
struct Measured {
    drift: Vec<f64>,
    torch: Vec<f64>,
    /// Largest |drift - PyTorch| over the matrix cells (and cells filled on one side only).
    max_diff: f64,
    cells: usize,
}

fn main() -> std::process::ExitCode {
    common::main("pipeline", run)
}

fn run() -> Result<()> {
    let mut options = <Options as clap::Parser>::parse();
    let policy = ensure_wait_policy("pipeline")?;
    if let Some(bad) = options
        .cases
        .iter()
        .find(|c| !CASES.iter().any(|k| k.name == c.as_str()))
    {
        return Err(format!("--cases: {bad} is not one of image, text, pooled").into());
    }
    if options.reps < 1 {
        return Err("--reps must be at least 1".into());
    }
    if !options.bench {
        options.cases = vec!["pooled".into()];
        options.drift_only = true;
    }
    let python = if options.drift_only {
        None
    } else {
        Some(peer_python(
            "DRIFT_PIPELINE_PYTHON",
            VENV_PINS,
            &["--set", "pipeline-peer"],
        )?)
    };
    println!(
        "pipeline: {} thread(s), {} repetition(s), OMP_WAIT_POLICY={policy}",
        options.threads, options.reps
    );
    let mut results = Vec::new();
    for case in CASES
        .iter()
        .filter(|c| options.cases.iter().any(|n| n == c.name))
    {
        let measured = measure(case, &options, python.as_deref())?;
        results.push((case, measured));
    }
    println!(
        "{:<8} {:<20} {:<8} {:>18} {:>18} {:>8} {:>12}",
        "case", "preset", "model", "drift s", "PyTorch s", "ratio", "max |Δcell|"
    );
    for (case, m) in &results {
        let (drift, drift_spread) = spread(&m.drift);
        let (torch_cell, ratio, diff) = if m.torch.is_empty() {
            ("-".to_string(), "-".to_string(), "-".to_string())
        } else {
            let (torch, torch_spread) = spread(&m.torch);
            (
                format!("{torch:.1} (±{torch_spread:.1}%)"),
                format!("{:.2}x", torch / drift),
                format!("{:.2e}", m.max_diff),
            )
        };
        let preset = Path::new(case.preset)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(case.preset);
        println!(
            "{:<8} {preset:<20} {:<8} {:>18} {torch_cell:>18} {ratio:>8} {diff:>12}",
            case.name,
            case.model,
            format!("{drift:.1} (±{drift_spread:.1}%)"),
        );
        if !m.torch.is_empty() {
            println!("         ({} cells compared)", m.cells);
        }
    }
    Ok(())
}

fn measure(case: &Case, options: &Options, python: Option<&str>) -> Result<Measured> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let loaded = Preset::load(&root.join(case.preset))?;
    let spec = loaded
        .preset
        .models
        .iter()
        .find(|m| m.key == case.model)
        .ok_or_else(|| format!("{}: no model {}", case.preset, case.model))?;
    let work = tempfile::tempdir()?;
    let work = match &options.keep {
        Some(dir) => dir.join(case.name),
        None => work.path().to_path_buf(),
    };
    let run_options = RunOptions {
        out: work.join("drift"),
        models: vec![case.model.to_string()],
        seeds: vec![0],
        device: DeviceChoice::Cpu,
        threads: options.threads,
        progress: false,
        detectors: false,
        cutoffs: None,
    };
    let export = work.join("export");
    let mut measured = Measured {
        drift: Vec::new(),
        torch: Vec::new(),
        max_diff: 0.0,
        cells: 0,
    };
    if python.is_some() {
        export_job(&loaded, spec, &export)?;
    }
    let mut drift_grid = None;
    for rep in 0..options.reps {
        for side in [rep % 2, 1 - rep % 2] {
            if side == 0 {
                // A fresh folder each time: a rerun would resume instead of train.
                let _ = std::fs::remove_dir_all(&run_options.out);
                eprintln!("pipeline: {} drift run {}", case.name, rep + 1);
                let start = Instant::now();
                let dirs = run::run_preset(&loaded, &run_options)?;
                measured.drift.push(start.elapsed().as_secs_f64());
                drift_grid = Some(artifacts::load_run(&dirs[0])?.grid);
            } else if let Some(python) = python {
                eprintln!("pipeline: {} PyTorch run {}", case.name, rep + 1);
                let out = export.join("matrix.json");
                let status = Command::new(python)
                    .arg(SCRIPT)
                    .arg(&export)
                    .args(["--threads", &options.threads.to_string()])
                    .args(["--out", &out.display().to_string()])
                    .args(options.libtorch_update.then_some("--libtorch-update"))
                    .status()?;
                if !status.success() {
                    return Err(format!("{SCRIPT} failed ({status})").into());
                }
                let reply: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&out)?)?;
                measured
                    .torch
                    .push(reply["seconds"].as_f64().ok_or("no seconds")?);
                // The first repetition runs drift first, so there is a matrix to compare.
                let grid = drift_grid.as_ref().expect("drift ran first");
                let (diff, cells) = compare(grid, &reply["cells"])?;
                measured.max_diff = measured.max_diff.max(diff);
                measured.cells = cells;
            }
        }
    }
    Ok(measured)
}

/// The largest cell difference and the number of cells compared; a cell filled on one
/// side only counts as an infinite difference.
fn compare(grid: &drift::matrix::Grid, cells: &serde_json::Value) -> Result<(f64, usize)> {
    let rows = cells.as_array().ok_or("cells is not a list")?;
    if rows.len() != grid.k() {
        return Err(format!("PyTorch gave {} rows, drift {}", rows.len(), grid.k()).into());
    }
    let mut largest = 0f64;
    let mut compared = 0;
    for (i, row) in rows.iter().enumerate() {
        for j in 0..grid.k() {
            match (grid.get(i, j), row.get(j).and_then(|v| v.as_f64())) {
                (Some(a), Some(b)) => {
                    largest = largest.max((a - b).abs());
                    compared += 1;
                }
                (None, None) => {}
                _ => largest = f64::INFINITY,
            }
        }
    }
    Ok((largest, compared))
}

/// Writes what the PyTorch side reads into `dir`: `data.npz`, `init-<i>.npz` per cutoff and
/// `job.json` (see benches/pipeline.py).
fn export_job(loaded: &drift::preset::LoadedPreset, spec: &ModelSpec, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let preset = &loaded.preset;
    let base = loaded.path.parent().unwrap_or(Path::new("."));
    let data = preset.load_data(base, preset.seeds[0])?;
    let plan = preset.plan(&data, preset.seeds[0])?;
    let config = drift::models::ModelConfig {
        positional_embedding: spec.positional_embedding,
        ..run::model_config(&data)?
    };
    let n = data.rows() as i64;
    let (input, kind) = match &data.inputs {
        Inputs::Images {
            channels,
            height,
            width,
            pixels,
        } => (
            Tensor::from_slice(pixels).reshape([
                n,
                *channels as i64,
                *height as i64,
                *width as i64,
            ]),
            "image",
        ),
        Inputs::Tokens {
            tokens,
            dim,
            states,
            ..
        } => {
            let shape = [n, *tokens as i64, *dim as i64];
            let t = match states {
                States::F32(v) => Tensor::from_slice(v).reshape(shape),
                States::F16(v) => Tensor::from_slice(v).reshape(shape),
            };
            (t, "tokens")
        }
        Inputs::Embeddings { dim, values } => (
            Tensor::from_slice(values).reshape([n, *dim as i64]),
            "embedding",
        ),
        other => return Err(format!("the bench has no case for {other:?}").into()),
    };
    let Targets::Classes { classes, labels } = &data.targets else {
        return Err("the bench's cases are single-label classification".into());
    };
    let labels: Vec<i64> = labels.iter().map(|&l| i64::from(l)).collect();
    let mut named = vec![("inputs", input), ("labels", Tensor::from_slice(&labels))];
    if let Inputs::Tokens { lengths, .. } = &data.inputs {
        let lengths: Vec<i64> = lengths.iter().map(|&l| i64::from(l)).collect();
        named.push(("lengths", Tensor::from_slice(&lengths)));
    }
    Tensor::write_npz(&named, dir.join("data.npz"))?;

    let mut eval_rows: Vec<usize> = plan
        .timeline
        .slices
        .iter()
        .flat_map(|s| s.rows.iter().copied())
        .collect();
    eval_rows.sort_unstable();
    let mut cutoffs = Vec::new();
    for (i, slice) in plan.timeline.slices.iter().enumerate() {
        let rows = preset.regime.training_rows(&plan.splits, i);
        let seed = train::training_seed(0, &spec.key, &slice.label);
        let job = TrainJob {
            model: &spec.key,
            config: &config,
            train: &spec.train,
            rows: &rows,
            training_seed: seed,
            device: Device::Cpu,
            backbone: None,
        };
        let built = train::build(&job)?;
        let mut weights: Vec<(String, Tensor)> = built.vs.variables().into_iter().collect();
        weights.sort_by(|a, b| a.0.cmp(&b.0));
        Tensor::write_npz(&weights, dir.join(format!("init-{i}.npz")))?;
        let orders: Vec<Vec<usize>> = (1..=spec.train.epochs)
            .map(|epoch| train::epoch_order(&rows, seed, epoch))
            .collect();
        let cells: Vec<Vec<usize>> = (0..plan.timeline.slices.len())
            .map(|j| preset.regime.eval_rows(&plan.splits, i, j))
            .collect();
        cutoffs.push(json!({
            "label": slice.label,
            "training_seed": seed,
            "weights": format!("init-{i}.npz"),
            "orders": orders,
            "cells": cells,
        }));
    }
    let t = &spec.train;
    let job = json!({
        "preset": preset.name,
        "model": spec.key,
        "input": kind,
        "classes": classes,
        "metric": preset.metric,
        "train": {
            "optimizer": t.optimizer,
            "learning_rate": t.learning_rate,
            "weight_decay": t.weight_decay,
            "grad_clip": t.grad_clip,
            "batch_size": t.batch_size,
            "epochs": t.epochs,
            "loss": t.loss,
        },
        "eval_batch": drift::eval::EVAL_BATCH,
        "eval_rows": eval_rows,
        "cutoffs": cutoffs,
    });
    std::fs::write(dir.join("job.json"), serde_json::to_string(&job)?)?;
    Ok(())
}
