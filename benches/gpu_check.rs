//! The CUDA check that `scripts/gpu-check` runs: a few training steps of one model of
//! every family on `cuda` (the reference batch of 64, random inputs), printing the time
//! per step. It fails when CUDA is unusable rather than falling back to the CPU.
//!
//!     eval "$(scripts/libtorch-env)"   # or the CUDA libtorch scripts/gpu-check uses
//!     cargo bench --features torch --bench gpu_check [-- --steps 20 --device cuda:0]

use std::time::Instant;

use drift::device::{self, DeviceChoice};
use drift::models::{self, Input, InputShape, ModelConfig};
use drift::train::{self, TrainJob, loss};
use drift::train::{Loss, Optimizer, TrainConfig};
use tch::nn::OptimizerConfig;
use tch::{Device, Kind, Tensor};

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let steps: usize = flag("--steps").map_or(Ok(20), |s| s.parse())?;
    let choice: DeviceChoice = flag("--device").unwrap_or_else(|| "cuda".into()).parse()?;
    let dev = device::resolve(choice)?;
    println!(
        "device {}, {steps} timed steps after 3 warm-up steps, batch 64",
        device::name(dev)
    );
    println!(
        "{:<10} {:<10} {:>12} {:>12}",
        "family", "model", "params", "ms/step"
    );
    for key in [
        "mlp_s",
        "cnn_s",
        "resnet_s",
        "vit_s",
        "ffn_s",
        "textcnn_s",
        "bigru_s",
        "tx_s",
        "linear",
    ] {
        let info = models::info(key)?;
        let (config, batch) = reference(info.input);
        let train_config = TrainConfig {
            optimizer: Optimizer::Adamw,
            learning_rate: 5e-4,
            weight_decay: 0.01,
            grad_clip: Some(1.0),
            batch_size: 64,
            epochs: 1,
            loss: Loss::CrossEntropy,
            encoder: None,
            channels_last: false,
        };
        let job = TrainJob {
            model: key,
            config: &config,
            train: &train_config,
            rows: &[],
            training_seed: 0,
            device: dev,
            backbone: None,
        };
        let built = train::build(&job)?;
        let mut opt = tch::nn::AdamW::default().build(&built.vs, 5e-4)?;
        let input = batch(dev);
        let labels = Tensor::randint(config.outputs, [64], (Kind::Int64, dev));
        let mut step = || {
            let out = built.model.forward_t(&input, true);
            let value = loss::cross_entropy(&out, &labels);
            opt.zero_grad();
            value.backward();
            opt.clip_grad_norm(1.0);
            opt.step();
        };
        for _ in 0..3 {
            step();
        }
        sync(dev);
        let started = Instant::now();
        for _ in 0..steps {
            step();
        }
        sync(dev);
        let ms = started.elapsed().as_secs_f64() * 1e3 / steps as f64;
        let params = models::parameter_count(key, &config)?;
        println!("{:<10} {key:<10} {params:>12} {ms:>12.3}", info.family);
    }
    Ok(())
}

fn sync(dev: Device) {
    if let Device::Cuda(i) = dev {
        tch::Cuda::synchronize(i as i64);
    }
}

type Batch = Box<dyn Fn(Device) -> Input>;

/// The reference shapes of an input kind and a random batch of 64 rows of them.
fn reference(kind: models::InputKind) -> (ModelConfig, Batch) {
    match kind {
        models::InputKind::Image => (
            ModelConfig::reference_image(),
            Box::new(|d| Input::Images(Tensor::rand([64, 3, 32, 32], (Kind::Float, d)))),
        ),
        models::InputKind::Tokens => {
            let mut config = ModelConfig::reference_text();
            config.input = InputShape::Tokens {
                dim: 768,
                max_tokens: 256,
            };
            (
                config,
                Box::new(|d| {
                    let lengths = Tensor::randint_low(32, 257, [64, 1], (Kind::Int64, d));
                    let positions = Tensor::arange(256, (Kind::Int64, d)).unsqueeze(0);
                    Input::Tokens {
                        states: Tensor::randn([64, 256, 768], (Kind::Float, d)),
                        mask: positions.lt_tensor(&lengths),
                    }
                }),
            )
        }
        models::InputKind::Embedding => (
            ModelConfig::reference_embedding(),
            Box::new(|d| Input::Embeddings(Tensor::randn([64, 768], (Kind::Float, d)))),
        ),
        models::InputKind::EncoderIds => unreachable!("no registry model reads encoder ids"),
    }
}
