//! Evaluation speed against training speed, per model: does scoring a checkpoint run at
//! inference speed?
//!
//! For every model of the registry at its reference shapes (`ModelConfig::reference_*`:
//! images 3x32x32 with 2 classes; 768-d token states, 32 to 128 real tokens per row, 7
//! labels; 768-d pooled embeddings with 2 classes), on a random data set of `--rows` rows,
//! it times what `drift run` does per cutoff: `drift::train::train` for one epoch over the
//! rows with the reference settings (images: Adam 5e-4, batch 64; text: AdamW 5e-4, weight
//! decay 0.01, clip 1.0, batch 64, weighted BCE), the forward passes of that training alone
//! (train mode, batch 64, no backward), and `drift::eval::predict` over the same rows at
//! `drift::eval::EVAL_BATCH` (or `--eval-batch`). Evaluation makes one forward pass per row
//! and no backward pass, so it should process rows several times faster than training,
//! and at least as fast as training's forward passes; the table gives the three rates
//! (median over `--reps` repetitions, ± half their range in %), evaluation over training
//! and evaluation over training's forward passes.
//!
//! ```text
//! eval "$(scripts/libtorch-env)"; cargo bench --features torch --bench eval_speed
//! cargo bench --features torch --bench eval_speed -- --models cnn_s,tx_s --eval-batch 64
//! ```
//!
//! Options (after `--`): `--threads N` (default 1), `--models a,b` (default: all),
//! `--rows N` (512), `--reps R` (3), `--eval-batch B`. Without `--bench` (`cargo test
//! --benches`) each model trains and evaluates 64 rows once.

use std::time::Instant;

use drift::data::{DataSource, Dataset, Inputs, States, Targets};
use drift::models::{self, InputShape, ModelConfig};
use drift::slices::Timestamp;
use drift::train::loss::LossFn;
use drift::train::{self, DataTensors, Loss, Optimizer, TrainConfig, TrainJob};
use tch::Device;

mod common;
use common::{Result, Rng, ensure_wait_policy, spread};

/// Tokens per text row, as `benches/train_step.rs`: 32 to 128 real ones.
const TOKENS: usize = 128;
const SHORTEST: usize = 32;

/// Evaluation against training speed, per model (details: the header of
/// benches/eval_speed.rs).
#[derive(Debug, clap::Parser)]
struct Options {
    /// libtorch threads.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(i32).range(1..))]
    threads: i32,
    /// Models to time, comma-separated (default: every model of the registry).
    #[arg(long, value_delimiter = ',')]
    models: Vec<String>,
    /// Rows trained on (one epoch) and evaluated.
    #[arg(long, default_value_t = 512)]
    rows: usize,
    /// Timed repetitions of each.
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Rows per evaluation batch (default: drift's).
    #[arg(long, default_value_t = drift::eval::EVAL_BATCH)]
    eval_batch: usize,
    /// `cargo bench` passes `--bench`; without it (`cargo test --benches`) only smoke-test.
    #[arg(long)]
    bench: bool,
}

/// A random data set of `rows` rows of the input `shape` (text rows at most [`TOKENS`]).
fn dataset(shape: InputShape, outputs: usize, rows: usize) -> Dataset {
    let mut rng = Rng(7);
    let mut values = |n: usize| -> Vec<f32> { (0..n).map(|_| rng.next() as f32 - 0.5).collect() };
    let (inputs, targets) = match shape {
        InputShape::Image {
            channels,
            height,
            width,
        } => {
            let (c, h, w) = (channels as usize, height as usize, width as usize);
            let image = Inputs::Images {
                channels: c,
                height: h,
                width: w,
                pixels: values(rows * c * h * w),
            };
            (image, classes(outputs, rows))
        }
        InputShape::Tokens { dim, .. } => {
            let dim = dim as usize;
            let mut states = values(rows * TOKENS * dim);
            let mut rng = Rng(11);
            let lengths: Vec<u32> = (0..rows)
                .map(|_| (SHORTEST + (rng.next() * (TOKENS - SHORTEST + 1) as f64) as usize) as u32)
                .collect();
            for (row, &len) in states.chunks_exact_mut(TOKENS * dim).zip(&lengths) {
                row[len as usize * dim..].fill(0.0);
            }
            let labels = (0..rows * outputs).map(|_| rng.next() < 0.3).collect();
            (
                Inputs::Tokens {
                    tokens: TOKENS,
                    dim,
                    states: States::F32(states),
                    lengths,
                },
                Targets::MultiLabel {
                    classes: outputs,
                    labels,
                },
            )
        }
        InputShape::Embedding { dim } => (
            Inputs::Embeddings {
                dim: dim as usize,
                values: values(rows * dim as usize),
            },
            classes(outputs, rows),
        ),
        InputShape::EncoderIds { .. } => unreachable!("the registry's models read no ids"),
    };
    Dataset {
        source: DataSource::new("eval-speed", "1", "-"),
        timestamps: (0..rows).map(|_| Timestamp(0)).collect(),
        inputs,
        targets,
        class_names: Vec::new(),
    }
}

fn classes(classes: usize, rows: usize) -> Targets {
    Targets::Classes {
        classes,
        labels: (0..rows).map(|r| (r % classes) as u32).collect(),
    }
}

/// The reference shapes and training settings of a model reading `input`.
fn reference(input: models::InputKind) -> (ModelConfig, TrainConfig) {
    use models::InputKind;
    let image = TrainConfig {
        optimizer: Optimizer::Adam,
        learning_rate: 5e-4,
        weight_decay: 0.0,
        grad_clip: None,
        batch_size: 64,
        epochs: 1,
        loss: Loss::CrossEntropy,
        encoder: None,
        channels_last: false,
    };
    match input {
        InputKind::Image => (ModelConfig::reference_image(), image),
        InputKind::Embedding => (ModelConfig::reference_embedding(), image),
        InputKind::Tokens => (
            ModelConfig {
                input: InputShape::Tokens {
                    dim: 768,
                    max_tokens: TOKENS as i64,
                },
                ..ModelConfig::reference_text()
            },
            TrainConfig {
                optimizer: Optimizer::Adamw,
                weight_decay: 0.01,
                grad_clip: Some(1.0),
                loss: Loss::WeightedBce,
                encoder: None,
                ..image
            },
        ),
        InputKind::EncoderIds => unreachable!("the registry's models read no ids"),
    }
}

/// Rows per second, one value per repetition.
struct Rates {
    /// Training (forward, loss, backward, clipping, optimiser step).
    train: Vec<f64>,
    /// The forward passes of training alone (train mode, the graph recorded), at the
    /// training batch size: what evaluation's one pass per row is to be held against.
    forward: Vec<f64>,
    /// Evaluation (`drift::eval::predict`).
    eval: Vec<f64>,
}

fn measure(key: &str, options: &Options) -> Result<Rates> {
    let info = models::info(key)?;
    let (config, train_config) = reference(info.input);
    let data = dataset(config.input, config.outputs as usize, options.rows);
    let tensors = DataTensors::new(&data)?;
    let rows: Vec<usize> = (0..data.rows()).collect();
    let loss = LossFn::new(train_config.loss, &data.targets, &rows, Device::Cpu)?;
    let job = TrainJob {
        model: key,
        config: &config,
        train: &train_config,
        rows: &rows,
        training_seed: 0,
        device: Device::Cpu,
        backbone: None,
    };
    let mut rates = Rates {
        train: Vec::new(),
        forward: Vec::new(),
        eval: Vec::new(),
    };
    for _ in 0..options.reps {
        let start = Instant::now();
        let built = train::train(&job, None, &tensors, &loss, |_| {})?.built;
        rates
            .train
            .push(rows.len() as f64 / start.elapsed().as_secs_f64());
        let start = Instant::now();
        for chunk in rows.chunks(train_config.batch_size as usize) {
            let out = built
                .model
                .forward_t(&tensors.input(chunk, Device::Cpu), true);
            drop(std::hint::black_box(out));
        }
        rates
            .forward
            .push(rows.len() as f64 / start.elapsed().as_secs_f64());
        let start = Instant::now();
        let outputs = drift::eval::predict(
            built.model.as_ref(),
            &tensors,
            rows.len(),
            &rows,
            options.eval_batch,
            Device::Cpu,
        )?;
        rates
            .eval
            .push(rows.len() as f64 / start.elapsed().as_secs_f64());
        if outputs.values.iter().any(|v| !v.is_finite()) {
            return Err(format!("{key}: evaluation gave a value that is not finite").into());
        }
    }
    Ok(rates)
}

fn main() -> std::process::ExitCode {
    common::main("eval_speed", run)
}

fn run() -> Result<()> {
    let mut options = <Options as clap::Parser>::parse();
    let policy = ensure_wait_policy("eval_speed")?;
    let known: Vec<&str> = models::registry().iter().map(|m| m.key).collect();
    if options.models.is_empty() {
        options.models = known.iter().map(|k| k.to_string()).collect();
    }
    if let Some(bad) = options.models.iter().find(|m| !known.contains(&m.as_str())) {
        return Err(format!("--models: {bad} is not one of {}", known.join(",")).into());
    }
    if options.reps < 1 || options.rows < 1 || options.eval_batch < 1 {
        return Err("--reps, --rows and --eval-batch must be at least 1".into());
    }
    if !options.bench {
        (options.rows, options.reps) = (64, 1);
    }
    drift::device::set_threads(options.threads as u32)?;
    drift::device::keep_freed_memory();
    println!(
        "eval_speed: {} rows per model, {} repetitions, {} thread(s), evaluation batch {}, \
         OMP_WAIT_POLICY={policy}",
        options.rows, options.reps, options.threads, options.eval_batch
    );
    println!(
        "{:<14} {:>20} {:>20} {:>20} {:>8} {:>8}",
        "model", "train rows/s", "train fwd rows/s", "eval rows/s", "eval/tr", "eval/fwd"
    );
    let mut ratios = Vec::new();
    for key in &options.models {
        let rates = measure(key, &options)?;
        let cell = |values: &[f64]| {
            let (mid, half_range) = spread(values);
            (mid, format!("{mid:.0} (±{half_range:.1}%)"))
        };
        let (train, train_cell) = cell(&rates.train);
        let (forward, forward_cell) = cell(&rates.forward);
        let (eval, eval_cell) = cell(&rates.eval);
        ratios.push((key.clone(), eval / train));
        println!(
            "{key:<14} {train_cell:>20} {forward_cell:>20} {eval_cell:>20} {:>7.2}x {:>7.2}x",
            eval / train,
            eval / forward
        );
    }
    let (worst, ratio) = ratios
        .iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("at least one model");
    println!("lowest ratio: {worst} {ratio:.2}x");
    Ok(())
}
