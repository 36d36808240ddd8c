//! Training-step benchmark: drift against PyTorch in Python, same model, same batch.
//!
//! Measures the wall time of one training step, on the CPU, of every model of the registry
//! (src/models, 25 models) as `drift::train` takes it: forward in train mode, loss, reading
//! the loss value, then `drift::train::optimise`: `zero_grad`, backward, the gradients'
//! global norm (which training records and PyTorch's loop does not compute), gradient
//! clipping (text setting only), optimiser step; on one fixed random batch (no data
//! loading). The settings are the reference ones
//! (protocol.md §5):
//!
//! - images: batch 64 x 3x32x32, 2 classes, cross-entropy, Adam lr 5e-4; the linear probe
//!   the same on 64 x 768 embeddings;
//! - token models: batch 64 of [128 tokens, 768] token states with random lengths in
//!   32..=128, 7 labels, weighted BCE (pos_weight = neg / max(pos, 1) over the batch),
//!   AdamW lr 5e-4, weight decay 0.01, gradient norm clipped to 1.0.
//!
//! How far each step is from what the core can do: the Python side counts a step's
//! floating-point operations with PyTorch's flop counter (matrix products, convolutions and
//! attention, forward and backward; elementwise work is not counted), and this side
//! measures the core's peak as the best of several 2048 x 2048 single-precision matrix
//! products through libtorch on the same threads, in the same run. The table gives each
//! model's achieved GFLOP/s (counted FLOPs / drift's median step time) and its fraction of
//! that peak. The CPU model (`/proc/cpuinfo`) heads the output.
//!
//! One process pair: this one and one Python process (`benches/train_step.py --serve`) that
//! builds the identical `torch.nn` models, loads drift's initial weights and batch (an npz
//! in a temporary directory), and checks that its parameter count equals drift's and that
//! its eval-mode outputs on the batch match drift's (`max |Δout|`, at most 1e-4). Both sides
//! run the same thread count and warm-up. Per model, after `--warmup` untimed steps on each
//! side, the step count is sized so that drift's `--reps` repetitions take about `--seconds`
//! (or fixed with `--steps`); the repetitions then alternate between the sides (drift
//! first, then PyTorch first, …) so that both see the same machine load. The table gives
//! per side the median over the repetitions of the time per step (± half their range, in %)
//! and the ratio of the medians drift/PyTorch (below 1: drift is faster).
//!
//! ```text
//! eval "$(scripts/libtorch-env)"; cargo bench --features torch --bench train_step
//! cargo bench --features torch --bench train_step -- --threads 2 --models cnn_s,vit_s
//! ```
//!
//! Options (after `--`): `--threads N` (default 1, or `DRIFT_BENCH_THREADS`), `--models
//! a,b`, `--seconds S` (drift's timed seconds per model, default 10), `--reps R` (5),
//! `--warmup W` (3), `--steps N` (fixed steps per repetition), `--drift-only`,
//! `--channels-last` (the convolutional models' activations channels-last on both sides, as
//! `train.channels_last` in a preset), `--glibc-defaults` (this process keeps glibc's heap
//! thresholds). Both sides
//! call `set_num_threads(N)` and run with the same environment, `OMP_WAIT_POLICY` included
//! (the bench re-executes itself with `passive`, what `scripts/libtorch-env` exports, when
//! it is unset). The Python is `$DRIFT_TORCH_PYTHON`, else what `scripts/torch-python`
//! prints (it installs torch 2.13.0, the libtorch drift links, on first use). Without
//! `--bench` (`cargo test --benches`) each model runs one step on the drift side only.
//!
//! Both sides run the same libtorch kernels, so the ratio measures what lies around them
//! (Python's interpreter, tch's calls, drift's own recurrence) plus noise. The largest noise
//! is glibc's heap: large activations come from fresh pages (page faults) or reused ones
//! depending on the dynamic mmap threshold, i.e. on the process's allocation history. This
//! process fixes its thresholds as `drift run` does (`drift::device::keep_freed_memory`);
//! the Python process keeps glibc's defaults, as a PyTorch user's would
//! (`MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=2147483647` in the environment
//! gives it the same).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use drift::models::{self, Input, InputKind, InputShape, ModelConfig};
use drift::train::loss::{cross_entropy, weighted_bce};
use serde_json::json;
use tch::nn::{self, OptimizerConfig};
use tch::{Device, Kind, Tensor};

mod common;
use common::{Result, Server, median, peer_python, spread};

const BATCH: i64 = 64;
const TOKENS: i64 = 128;
const DIM: i64 = 768;
const SHORTEST: i64 = 32;
/// Width of the linear probe's pooled embeddings.
const EMBEDDING: i64 = 768;
/// Side of the square matrices whose product measures the core's peak.
const GEMM: i64 = 2048;
const LABELS: i64 = 7;
const LEARNING_RATE: f64 = 5e-4;
const TEXT_WEIGHT_DECAY: f64 = 0.01;
const TEXT_CLIP: f64 = 1.0;
/// Largest difference allowed between drift's and PyTorch's eval-mode outputs on the same
/// weights and batch (float32 kernels summing in different orders).
const OUTPUT_TOLERANCE: f64 = 1e-4;
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/train_step.py");
const TORCH_PYTHON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/torch-python");

/// drift's training step against PyTorch, per model (details: the header of
/// benches/train_step.rs).
#[derive(Debug, clap::Parser)]
struct Options {
    /// libtorch threads on both sides.
    #[arg(long, env = "DRIFT_BENCH_THREADS", default_value_t = 1,
          value_parser = clap::value_parser!(i32).range(1..))]
    threads: i32,
    /// Models to time, comma-separated (default: every model of the registry).
    #[arg(long, value_delimiter = ',')]
    models: Vec<String>,
    /// drift's timed seconds per model (sizes the step count).
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Timed repetitions per side.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Untimed steps per side first.
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// Fixed steps per repetition instead of `--seconds`.
    #[arg(long)]
    steps: Option<usize>,
    /// Time drift alone.
    #[arg(long)]
    drift_only: bool,
    /// Leave glibc's default heap thresholds in this process, instead of fixing them as
    /// `drift run` does (`drift::device::keep_freed_memory`), to measure what that does.
    #[arg(long)]
    glibc_defaults: bool,
    /// Channels-last activations in the convolutional image models, on both sides
    /// (`train.channels_last` in a preset; `memory_format=torch.channels_last` in PyTorch).
    #[arg(long)]
    channels_last: bool,
    /// `cargo bench` passes `--bench`; without it (`cargo test --benches`) only smoke-test.
    #[arg(long)]
    bench: bool,
}

impl Options {
    fn parse() -> Result<Self> {
        // clap prints --help and its own errors and exits.
        let mut options = <Options as clap::Parser>::parse();
        let known: Vec<&str> = models::registry().iter().map(|m| m.key).collect();
        if options.models.is_empty() {
            options.models = known.iter().map(|k| k.to_string()).collect();
        }
        if let Some(bad) = options.models.iter().find(|m| !known.contains(&m.as_str())) {
            return Err(format!("--models: {bad} is not one of {}", known.join(",")).into());
        }
        if options.reps < 1 || options.steps == Some(0) {
            return Err("--reps and --steps must be at least 1".into());
        }
        if !options.bench {
            (options.reps, options.warmup, options.steps) = (1, 0, Some(1));
            options.drift_only = true;
        }
        Ok(options)
    }
}

/// One fixed batch and its loss.
struct Batch {
    input: Input,
    /// What the loss reads besides the outputs (labels, targets, weights), by name.
    loss_tensors: Vec<(&'static str, Tensor)>,
    loss: Box<dyn Fn(&Tensor) -> Tensor>,
}

/// A model ready to train: its variables, optimiser and batch.
struct Setup {
    vs: nn::VarStore,
    model: Box<dyn models::Model>,
    params: i64,
    opt: nn::Optimizer,
    clip: Option<f64>,
    batch: Batch,
}

fn setup(key: &str, lengths: &Tensor, channels_last: bool) -> Result<Setup> {
    tch::manual_seed(0);
    let vs = nn::VarStore::new(Device::Cpu);
    let kind = models::info(key)?.input;
    let text = kind == InputKind::Tokens;
    let config = match kind {
        InputKind::Tokens => ModelConfig {
            input: InputShape::Tokens {
                dim: DIM,
                max_tokens: TOKENS,
            },
            ..ModelConfig::reference_text()
        },
        InputKind::Embedding => ModelConfig {
            input: InputShape::Embedding { dim: EMBEDDING },
            ..ModelConfig::reference_embedding()
        },
        _ => ModelConfig {
            channels_last,
            ..ModelConfig::reference_image()
        },
    };
    let model = models::build(key, &vs.root(), &config)?;
    let params = vs
        .trainable_variables()
        .iter()
        .map(Tensor::numel)
        .sum::<usize>() as i64;
    let cpu = (Kind::Float, Device::Cpu);
    let (batch, opt, clip) = if text {
        let rows = lengths.size()[0];
        let mask = Tensor::arange(TOKENS, (Kind::Int64, Device::Cpu))
            .unsqueeze(0)
            .lt_tensor(&lengths.unsqueeze(1));
        let states = Tensor::randn([rows, TOKENS, DIM], cpu);
        let targets = Tensor::rand([rows, LABELS], cpu)
            .lt(0.3)
            .to_kind(Kind::Float);
        let pos = targets.sum_dim_intlist(0, false, Kind::Float);
        let pos_weight = (-&pos + rows as f64) / pos.clamp_min(1.0);
        let batch = Batch {
            input: Input::Tokens { states, mask },
            loss_tensors: vec![
                ("targets", targets.shallow_clone()),
                ("pos_weight", pos_weight.shallow_clone()),
            ],
            loss: Box::new(move |logits| weighted_bce(logits, &targets, &pos_weight)),
        };
        let opt = nn::AdamW::default()
            .wd(TEXT_WEIGHT_DECAY)
            .build(&vs, LEARNING_RATE)?;
        (batch, opt, Some(TEXT_CLIP))
    } else {
        let input = match kind {
            InputKind::Embedding => Input::Embeddings(Tensor::randn([BATCH, EMBEDDING], cpu)),
            _ => Input::Images(Tensor::randn([BATCH, 3, 32, 32], cpu)),
        };
        let labels = Tensor::randint(2, [BATCH], (Kind::Int64, Device::Cpu));
        let batch = Batch {
            input,
            loss_tensors: vec![("labels", labels.shallow_clone())],
            loss: Box::new(move |logits| cross_entropy(logits, &labels)),
        };
        (batch, nn::Adam::default().build(&vs, LEARNING_RATE)?, None)
    };
    Ok(Setup {
        vs,
        model,
        params,
        opt,
        clip,
        batch,
    })
}

impl Setup {
    /// Writes what the Python side starts from to `path` (npz): the initial variables
    /// (`weights.<PyTorch state_dict key>`, BatchNorm statistics included), the batch
    /// (`batch.images` or `batch.states` and `batch.mask` as uint8, `batch.<loss tensor>`) and the
    /// eval-mode outputs on it (`outputs`), which the Python model must reproduce.
    fn export(&self, path: &Path) -> Result<()> {
        let mut named: Vec<(String, Tensor)> = self
            .vs
            .variables()
            .into_iter()
            .map(|(name, t)| (format!("weights.{name}"), t.detach()))
            .collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        match &self.batch.input {
            Input::Images(images) => named.push(("batch.images".into(), images.shallow_clone())),
            Input::Tokens { states, mask } => {
                named.push(("batch.states".into(), states.shallow_clone()));
                // tch writes no bool npy: 0/1 bytes, which the Python side turns back.
                named.push(("batch.mask".into(), mask.to_kind(Kind::Uint8)));
            }
            Input::Embeddings(e) => named.push(("batch.embeddings".into(), e.shallow_clone())),
            Input::EncoderIds { .. } => {
                unreachable!("no registry model reads encoder ids")
            }
        }
        for (name, t) in &self.batch.loss_tensors {
            named.push((format!("batch.{name}"), t.shallow_clone()));
        }
        let outputs = tch::no_grad(|| self.model.forward_t(&self.batch.input, false));
        named.push(("outputs".into(), outputs));
        Ok(Tensor::write_npz(&named, path)?)
    }

    /// One training step, as `drift::train::train` takes it; returns the loss.
    fn step(&mut self) -> f64 {
        let logits = self.model.forward_t(&self.batch.input, true);
        let loss = (self.batch.loss)(&logits);
        let value = f64::try_from(&loss).expect("the loss is a scalar");
        // The norm is read once an epoch in training; a step only computes it.
        let _norm = drift::train::optimise(&mut self.opt, &self.vs, &loss, self.clip);
        value
    }
}

/// The Python side (`train_step.py --serve`).
struct Peer {
    server: Server,
    torch: String,
    /// Where drift's initial weights and batches go, one npz per model.
    dir: tempfile::TempDir,
}

impl Peer {
    fn start(wait_policy: &str, options: &Options) -> Result<Self> {
        let python = peer_python("DRIFT_TORCH_PYTHON", TORCH_PYTHON, &[])?;
        eprintln!("train_step: PyTorch side: {python} {SCRIPT}");
        let mut command = Command::new(&python);
        command
            .arg(SCRIPT)
            .arg("--serve")
            .args(["--threads", &options.threads.to_string()])
            .args(["--warmup", &options.warmup.to_string()])
            .args(options.channels_last.then_some("--channels-last"))
            .env("OMP_WAIT_POLICY", wait_policy);
        let (server, hello) = Server::start(command, SCRIPT)?;
        let threads = hello["threads"].as_i64().unwrap_or(0);
        if threads != i64::from(options.threads) {
            return Err(format!("PyTorch runs with {threads} threads").into());
        }
        Ok(Peer {
            server,
            torch: hello["torch"].as_str().unwrap_or("?").to_string(),
            dir: tempfile::tempdir()?,
        })
    }
}

/// Both sides' measurement of one model.
struct Measured {
    key: String,
    params: i64,
    steps: usize,
    /// Seconds per step, one per repetition.
    drift: Vec<f64>,
    torch: Option<Torch>,
}

/// The Python side's measurement of one model.
struct Torch {
    /// Its parameter count, which must be drift's.
    params: i64,
    /// Largest difference of the eval-mode outputs from drift's, same weights and batch.
    max_diff: f64,
    /// Floating-point operations of one step, by PyTorch's flop counter.
    flops: f64,
    /// Seconds per step, one per repetition.
    step_seconds: Vec<f64>,
}

/// Times `key` on both sides, alternating which side runs a repetition first.
fn measure(
    key: &str,
    lengths: &Tensor,
    options: &Options,
    mut peer: Option<&mut Peer>,
) -> Result<Measured> {
    let mut s = setup(key, lengths, options.channels_last)?;
    let mut torch = match peer.as_deref_mut() {
        Some(p) => {
            // The Python model starts from drift's weights and trains on drift's batch.
            let data = p.dir.path().join(format!("{key}.npz"));
            s.export(&data)?;
            let reply = p
                .server
                .ask(json!({"setup": key, "params": s.params, "data": data}))?;
            let torch = Torch {
                params: reply["params"].as_i64().ok_or("no parameter count")?,
                max_diff: reply["max_diff"].as_f64().ok_or("no output difference")?,
                flops: reply["flops"].as_f64().ok_or("no FLOP count")?,
                step_seconds: Vec::new(),
            };
            if torch.params != s.params {
                return Err(format!(
                    "{key}: {} parameters in PyTorch, {} in drift",
                    torch.params, s.params
                )
                .into());
            }
            if torch.max_diff.is_nan() || torch.max_diff > OUTPUT_TOLERANCE {
                return Err(format!(
                    "{key}: the PyTorch outputs differ from drift's by up to {:e}",
                    torch.max_diff
                )
                .into());
            }
            Some(torch)
        }
        None => None,
    };
    for _ in 0..options.warmup {
        s.step();
    }
    let steps = options.steps.unwrap_or_else(|| {
        // Size the repetitions from the steps that fit in about half a second.
        let start = Instant::now();
        let mut probed = 0;
        while probed < 1 || start.elapsed().as_secs_f64() < 0.5 {
            s.step();
            probed += 1;
        }
        let per_step = start.elapsed().as_secs_f64() / probed as f64;
        ((options.seconds / options.reps as f64 / per_step).round() as usize).max(1)
    });
    let mut drift = Vec::new();
    for rep in 0..options.reps {
        for side in [rep % 2, 1 - rep % 2] {
            match (side, peer.as_deref_mut(), torch.as_mut()) {
                (0, _, _) => {
                    let start = Instant::now();
                    let mut loss = 0.0;
                    for _ in 0..steps {
                        loss = s.step();
                    }
                    drift.push(start.elapsed().as_secs_f64() / steps as f64);
                    if !loss.is_finite() {
                        return Err(format!("{key}: the drift loss became {loss}").into());
                    }
                }
                (_, Some(p), Some(t)) => {
                    let reply = p.server.ask(json!({ "run": steps }))?;
                    t.step_seconds
                        .push(reply["seconds"].as_f64().ok_or("no time")?);
                    if !reply["loss"].as_f64().is_some_and(f64::is_finite) {
                        return Err(format!(
                            "{key}: the PyTorch loss is not finite ({})",
                            reply["loss"]
                        )
                        .into());
                    }
                }
                _ => {}
            }
        }
    }
    Ok(Measured {
        key: key.to_string(),
        params: s.params,
        steps,
        drift,
        torch,
    })
}

/// `median ms (±half the range over the repetitions, in % of the median)`.
fn cell(step_seconds: &[f64]) -> String {
    let (mid, half_range) = spread(step_seconds);
    format!("{:.3} (±{half_range:.1}%)", mid * 1e3)
}

/// The libtorch version drift links, from `$LIBTORCH/version.py` where there is one.
fn libtorch_version() -> Option<String> {
    let text = std::fs::read_to_string(std::env::var("LIBTORCH").ok()? + "/version.py").ok()?;
    let line = text.lines().find(|l| l.starts_with("__version__"))?;
    Some(line.split('\'').nth(1)?.to_string())
}

/// The CPU's model name, from `/proc/cpuinfo` where there is one.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("model name"))?;
            Some(line.split_once(':')?.1.trim().to_string())
        })
        .unwrap_or_else(|| "(CPU model unknown)".into())
}

/// The core's single-precision peak as libtorch reaches it, in GFLOP/s: the best of 5
/// `GEMM x GEMM` matrix products after one untimed, on the threads set.
fn gemm_peak() -> f64 {
    let a = Tensor::randn([GEMM, GEMM], (Kind::Float, Device::Cpu));
    let b = Tensor::randn([GEMM, GEMM], (Kind::Float, Device::Cpu));
    let _ = a.mm(&b);
    let best = (0..5)
        .map(|_| {
            let start = Instant::now();
            let c = a.mm(&b);
            let seconds = start.elapsed().as_secs_f64();
            drop(c);
            seconds
        })
        .fold(f64::INFINITY, f64::min);
    2.0 * (GEMM as f64).powi(3) / best / 1e9
}

fn main() -> std::process::ExitCode {
    common::main("train_step", run)
}

fn run() -> Result<()> {
    let options = Options::parse()?;
    let wait_policy = common::ensure_wait_policy("train_step")?;
    tch::set_num_threads(options.threads);
    // As `drift run` does (this process only; the Python side keeps glibc's defaults).
    if !options.glibc_defaults {
        drift::device::keep_freed_memory();
    }
    // The text rows' real lengths.
    tch::manual_seed(0);
    let lengths = Tensor::randint_low(SHORTEST, TOKENS + 1, [BATCH], (Kind::Int64, Device::Cpu));

    println!(
        "train_step: CPU {}, {} thread(s), OMP_WAIT_POLICY={wait_policy}, libtorch {}; batch \
         {BATCH}; token models: {} real tokens in {BATCH} x {TOKENS}",
        cpu_model(),
        tch::get_num_threads(),
        libtorch_version().unwrap_or_else(|| "(version unknown)".into()),
        lengths.sum(Kind::Int64).int64_value(&[]),
    );
    let peak = options.bench.then(gemm_peak);
    if let Some(peak) = peak {
        println!("train_step: peak {peak:.1} GFLOP/s (best of 5 {GEMM} x {GEMM} float32 products)");
    }
    let mut peer = if options.drift_only {
        None
    } else {
        let peer = Peer::start(&wait_policy, &options)?;
        println!(
            "train_step: PyTorch {} (Python), {} thread(s)",
            peer.torch, options.threads
        );
        Some(peer)
    };
    let mut measured = Vec::new();
    for key in &options.models {
        let m = measure(key, &lengths, &options, peer.as_mut())?;
        eprintln!(
            "train_step: {key}: {} x {} steps, drift {} ms/step, PyTorch {} ms/step",
            options.reps,
            m.steps,
            cell(&m.drift),
            m.torch
                .as_ref()
                .map_or("-".into(), |t| cell(&t.step_seconds)),
        );
        measured.push(m);
    }
    if let Some(peer) = peer {
        peer.server.finish()?;
    }
    if !options.bench {
        println!("train_step: one step per model ran; `cargo bench` times them against PyTorch");
        return Ok(());
    }

    println!();
    println!(
        "{:<13} {:>9} {:>10} {:>10} {:>20} {:>20} {:>11} {:>9} {:>8} {:>7}",
        "model",
        "params",
        "max |Δout|",
        "reps x steps",
        "drift ms/step",
        "PyTorch ms/step",
        "drift/torch",
        "MFLOP",
        "GFLOP/s",
        "of peak"
    );
    for m in &measured {
        let t = m.torch.as_ref();
        let or_dash = |f: &dyn Fn(&Torch) -> String| t.map_or_else(|| "-".to_string(), f);
        let achieved = |t: &Torch| t.flops / median(&m.drift) / 1e9;
        println!(
            "{:<13} {:>9} {:>10} {:>10} {:>20} {:>20} {:>11} {:>9} {:>8} {:>7}",
            m.key,
            m.params,
            or_dash(&|t| format!("{:.1e}", t.max_diff)),
            format!("{} x {}", options.reps, m.steps),
            cell(&m.drift),
            or_dash(&|t| cell(&t.step_seconds)),
            or_dash(&|t| format!("{:.3}", median(&m.drift) / median(&t.step_seconds))),
            or_dash(&|t| format!("{:.1}", t.flops / 1e6)),
            or_dash(&|t| format!("{:.1}", achieved(t))),
            or_dash(&|t| peak.map_or("-".into(), |p| format!("{:.1}%", 100.0 * achieved(t) / p))),
        );
    }
    Ok(())
}
