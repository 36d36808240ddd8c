//! Image encoder benchmark: drift's image encoders (src/encoders/image/) against their
//! Python references on the same inputs: the seed paper's backbones at their reference
//! sizes with random weights (folders built by `benches/image_encode.py --build`, timm's
//! and transformers' own models) and the packaged EfficientNet-Lite0 with its real weights
//! against timm's `tf_efficientnet_lite0` on the mapped weights.
//!
//! Measures images per second of the model's forward pass to the pooled feature, batch
//! [`BATCH`], on the CPU, over one fixed set of preprocessed inputs (`--images`, default
//! 16, random smooth 3x256x240 pictures prepared by drift for each model and handed to the
//! Python side as raw float32, so both time the same tensors). Before timing, both sides
//! compute the features once (the warm-up) and the largest absolute difference is checked
//! (at most 1e-4 after scaling by the largest feature magnitude) and printed. Repetitions
//! alternate the sides (drift first, then Python first, ...); the table gives the median
//! images/s per side (± half the range, in %) and the ratio drift/Python (above 1: drift is
//! faster).
//!
//! ```text
//! eval "$(scripts/libtorch-env)"; drift data fetch efficientnet-lite0
//! cargo bench --features torch --bench image_encode
//! cargo bench --features torch --bench image_encode -- --only resnet50,lite0 --reps 5
//! ```
//!
//! Options (after `--`): `--threads N` (default 1, or `DRIFT_BENCH_THREADS`), `--images N`
//! (16), `--reps R` (3), `--only ROW,..` (vit-s16, mae-b, eva02-b, convnext-s, resnet50,
//! clip-b32, siglip-b, dinov2-s, dinov3-s, lite0). Both sides call `set_num_threads(N)`
//! under the same `OMP_WAIT_POLICY`. The Python is `$DRIFT_IMAGE_PYTHON`, else the
//! `image-peer` venv of `scripts/pins`. Without `--bench` (`cargo test --benches`) drift
//! encodes 2 images with Lite0, alone.

use std::process::Command;
use std::time::Instant;

use drift::encoders::image::{BATCH, ImageEncoder};
use serde_json::json;
use tch::Tensor;

mod common;
use common::{Result, Rng, Server, median, peer_python, spread};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/image_encode.py");
const VENV_PINS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/venv-pins");
/// Largest difference allowed, relative to the largest feature magnitude.
const TOLERANCE: f64 = 1e-4;
const ROWS: &[&str] = &[
    "vit-s16",
    "mae-b",
    "eva02-b",
    "convnext-s",
    "resnet50",
    "clip-b32",
    "siglip-b",
    "dinov2-s",
    "dinov3-s",
    "lite0",
];

/// drift's image encoders against timm and transformers, in images/s (details: the header
/// of benches/image_encode.rs).
#[derive(Debug, clap::Parser)]
struct Options {
    /// libtorch threads on both sides.
    #[arg(long, env = "DRIFT_BENCH_THREADS", default_value_t = 1,
          value_parser = clap::value_parser!(i32).range(1..))]
    threads: i32,
    /// Images per pass.
    #[arg(long, default_value_t = 16)]
    images: usize,
    /// Timed repetitions per side.
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// The rows to run, comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// `cargo bench` passes `--bench`; without it (`cargo test --benches`) only smoke-test.
    #[arg(long)]
    bench: bool,
}

/// `count` smooth random pictures, 3x256x240 in `[0, 1]`: large enough that every model
/// resizes and crops them.
fn pictures(count: usize) -> Vec<Tensor> {
    let mut rng = Rng(224);
    (0..count)
        .map(|_| {
            let coarse: Vec<f32> = (0..3 * 8 * 8).map(|_| rng.next() as f32).collect();
            Tensor::from_slice(&coarse)
                .reshape([1, 3, 8, 8])
                .upsample_bilinear2d([256, 240], false, None, None)
                .squeeze_dim(0)
        })
        .collect()
}

/// One row's measurements, images/s per repetition.
struct Row {
    name: String,
    drift: Vec<f64>,
    python: Vec<f64>,
}

fn main() -> std::process::ExitCode {
    common::main("image_encode", run)
}

fn run() -> Result<()> {
    let mut options = <Options as clap::Parser>::parse();
    if options.reps < 1 || options.images < 1 {
        return Err("--reps and --images must be at least 1".into());
    }
    if let Some(unknown) = options.only.iter().find(|o| !ROWS.contains(&o.as_str())) {
        return Err(format!("--only: no row {unknown:?}").into());
    }
    if !options.bench {
        (options.images, options.reps, options.only) = (2, 1, vec!["lite0".into()]);
    }
    let wait_policy = common::ensure_wait_policy("image_encode")?;
    tch::set_num_threads(options.threads);
    // What `drift run`, `drift cache` and `drift embed` do: keep freed blocks mapped.
    drift::device::keep_freed_memory();
    println!(
        "image_encode: CPU, {} thread(s), OMP_WAIT_POLICY={wait_policy}; {} images a pass, \
         batch {BATCH}",
        tch::get_num_threads(),
        options.images
    );
    let python = match options.bench {
        true => Some(peer_python(
            "DRIFT_IMAGE_PYTHON",
            VENV_PINS,
            &["--set", "image-peer"],
        )?),
        false => None,
    };
    let dir = tempfile::tempdir()?;
    let pictures = pictures(options.images);
    let mut rows = Vec::new();
    for &row in ROWS {
        if options.only.is_empty() || options.only.iter().any(|o| o == row) {
            rows.push(measure(
                row,
                &options,
                &wait_policy,
                python.as_deref(),
                &pictures,
                dir.path(),
            )?);
        }
    }
    if !options.bench {
        println!(
            "image_encode: drift encoded {} images; `cargo bench` times it against the references",
            options.images
        );
        return Ok(());
    }
    println!();
    println!(
        "{:<12} {:>22} {:>22} {:>10}",
        format!("{} reps", options.reps),
        "drift images/s",
        "Python images/s",
        "drift/Py"
    );
    for row in &rows {
        let cell = |rates: &[f64]| {
            let (mid, half) = spread(rates);
            format!("{mid:.2} (±{half:.1}%)")
        };
        println!(
            "{:<12} {:>22} {:>22} {:>10.3}",
            row.name,
            cell(&row.drift),
            cell(&row.python),
            median(&row.drift) / median(&row.python)
        );
    }
    Ok(())
}

/// Builds `row`, checks both sides agree, and times them alternately.
fn measure(
    row: &str,
    options: &Options,
    wait_policy: &str,
    python: Option<&str>,
    pictures: &[Tensor],
    dir: &std::path::Path,
) -> Result<Row> {
    let cache = drift::packages::cache_dir();
    let (encoder, which): (ImageEncoder, Vec<std::ffi::OsString>) = if row == "lite0" {
        let wheel = drift::encoders::package("efficientnet-lite0")
            .ok_or("no package efficientnet-lite0")?
            .archive(&cache);
        let encoder = ImageEncoder::from_package("efficientnet-lite0", &cache)?;
        (encoder, vec!["--lite0".into(), wheel.into()])
    } else {
        let python = python.ok_or("the random models are built in Python")?;
        let folder = dir.join(row);
        let status = Command::new(python)
            .arg(SCRIPT)
            .arg("--build")
            .arg(row)
            .arg(&folder)
            .status()?;
        if !status.success() {
            return Err(format!("{SCRIPT} --build {row} failed").into());
        }
        (
            ImageEncoder::from_folder(&folder)?,
            vec!["--folder".into(), folder.into()],
        )
    };
    let pixels = encoder.pixels(pictures)?;
    let reference = encoder.features(&pixels);
    let mut result = Row {
        name: row.to_string(),
        drift: Vec::new(),
        python: Vec::new(),
    };
    let mut peer = match python {
        None => None,
        Some(python) => {
            let input = dir.join(format!("{row}.pixels"));
            let raw: Vec<f32> = Vec::try_from(pixels.flatten(0, -1))?;
            std::fs::write(
                &input,
                raw.iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect::<Vec<u8>>(),
            )?;
            let mut command = Command::new(python);
            command
                .arg(SCRIPT)
                .arg("--serve")
                .args(&which)
                .arg("--pixels")
                .arg(&input)
                .args(["--size", &encoder.preprocessing().size.to_string()])
                .args(["--threads", &options.threads.to_string()])
                .args(["--batch", &BATCH.to_string()])
                .env("OMP_WAIT_POLICY", wait_policy);
            let (mut server, hello) = Server::start(command, SCRIPT)?;
            if hello["threads"].as_i64() != Some(i64::from(options.threads)) {
                return Err(
                    format!("the Python side runs with {} threads", hello["threads"]).into(),
                );
            }
            let check = dir.join(format!("{row}.features"));
            server.ask(json!({ "check": check }))?;
            let theirs: Vec<f32> = std::fs::read(&check)?
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("chunks of 4")))
                .collect();
            let ours: Vec<f32> = Vec::try_from(reference.flatten(0, -1))?;
            if theirs.len() != ours.len() {
                return Err(format!(
                    "{row}: {} values from Python, {} from drift",
                    theirs.len(),
                    ours.len()
                )
                .into());
            }
            let scale = ours.iter().fold(1f64, |m, v| m.max(f64::from(v.abs())));
            let worst = ours
                .iter()
                .zip(&theirs)
                .map(|(a, b)| f64::from((a - b).abs()))
                .fold(0.0, f64::max);
            if worst.is_nan() || worst > TOLERANCE * scale {
                return Err(format!(
                    "{row}: features differ by up to {worst:e} (largest {scale:e})"
                )
                .into());
            }
            println!(
                "image_encode: {row}: {} {}, features within {worst:.1e} of the reference's \
                 (largest {scale:.1}; torch {}, timm {}, transformers {})",
                encoder.architecture().family,
                encoder.id().dim,
                hello["torch"],
                hello["timm"],
                hello["transformers"]
            );
            Some(server)
        }
    };
    let n = pictures.len() as f64;
    for rep in 0..options.reps {
        for side in [rep % 2, 1 - rep % 2] {
            match (side, peer.as_mut()) {
                (0, _) => {
                    let start = Instant::now();
                    let out = encoder.features(&pixels);
                    result.drift.push(n / start.elapsed().as_secs_f64());
                    if !out.equal(&reference) {
                        return Err("drift's features are not deterministic".into());
                    }
                }
                (_, Some(server)) => {
                    let reply = server.ask(json!({ "run": 1 }))?;
                    result
                        .python
                        .push(n / reply["seconds"].as_f64().ok_or("no time")?);
                }
                _ => {}
            }
        }
        eprintln!(
            "image_encode: {row} repetition {}/{}: drift {:.2}/s, Python {}",
            rep + 1,
            options.reps,
            result.drift[rep],
            result
                .python
                .get(rep)
                .map_or("-".into(), |r| format!("{r:.2}/s"))
        );
    }
    if let Some(server) = peer {
        server.finish()?;
    }
    Ok(result)
}
