//! What the label-free drift detectors add to a run's evaluation.
//!
//! For each `PRESET:MODEL` it runs the preset's model for two seeds with `--detectors` on
//! one libtorch thread into a temporary folder and reads each run's `timing.json`: the
//! evaluation time (every checkpoint on every slice) and the detectors' time. The first
//! seed's detectors include the representation detectors (MMD, KS and C2ST between each
//! cutoff's training data and every later slice), which depend on the data only and are
//! computed once per data set and shared by every model and seed that trains on it; the
//! second seed's are the output and accuracy-estimate detectors alone. Training runs one
//! epoch instead of the preset's (the evaluation and the detectors cost the same whatever
//! the weights), so the bench takes minutes, not the preset's hours.
//!
//! ```text
//! eval "$(scripts/libtorch-env)"; cargo bench --features torch --bench detectors
//! cargo bench --features torch --bench detectors -- --runs presets/paper/emoji.toml:cnn_s
//! ```
//!
//! The table: per run, evaluation seconds, detector seconds and their ratio, for the
//! first run (with the shared representation detectors) and the second (without), and the
//! share over the whole preset (its models and seeds) when the representation detectors
//! are computed once for all of them, as `drift run` does. Without `--bench` (`cargo test
//! --benches`) it runs `presets/smoke.toml`'s first model once as a smoke test.

use std::path::{Path, PathBuf};

use drift::artifacts::load_run;
use drift::device::DeviceChoice;
use drift::preset::Preset;
use drift::run::{RunOptions, run_preset};

mod common;
use common::{Result, ensure_wait_policy};

/// The detectors' cost against evaluation (details: the header of benches/detectors.rs).
#[derive(Debug, clap::Parser)]
struct Options {
    /// libtorch threads.
    #[arg(long, default_value_t = 1)]
    threads: u32,
    /// `PRESET:MODEL` pairs, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "presets/paper/types-label.toml:cnn_s,presets/paper/ht-tokens.toml:ffn_s"
    )]
    runs: Vec<String>,
    /// Epochs each cutoff trains (evaluation costs the same whatever the weights).
    #[arg(long, default_value_t = 1)]
    epochs: u64,
    /// `cargo bench` passes `--bench`; without it (`cargo test --benches`) only smoke-test.
    #[arg(long)]
    bench: bool,
}

/// One run's evaluation and detector seconds.
struct Times {
    eval: f64,
    detectors: f64,
}

/// Runs `model` of `preset` for `seeds` with detectors into `out`; each run's times.
fn time_runs(
    preset: &Path,
    model: &str,
    seeds: &[u64],
    options: &Options,
    out: &Path,
) -> Result<(Vec<Times>, usize)> {
    let mut loaded = Preset::load(preset)?;
    let runs = loaded.preset.models.len() * loaded.preset.seeds.len();
    for spec in &mut loaded.preset.models {
        spec.train.epochs = options.epochs;
    }
    let run_options = RunOptions {
        out: out.to_path_buf(),
        models: vec![model.to_string()],
        seeds: seeds.to_vec(),
        device: DeviceChoice::Cpu,
        threads: options.threads,
        progress: false,
        detectors: true,
        cutoffs: None,
    };
    let dirs = run_preset(&loaded, &run_options)?;
    let times = dirs
        .iter()
        .map(|dir| {
            let timing = load_run(dir)?.timing.ok_or("a run without timing.json")?;
            Ok(Times {
                eval: timing.eval,
                detectors: timing.detectors.ok_or("a run without detector times")?,
            })
        })
        .collect::<Result<_>>()?;
    Ok((times, runs))
}

fn main() -> Result<()> {
    use clap::Parser;
    let options = Options::parse();
    ensure_wait_policy("detectors")?;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::env::set_current_dir(&root)?;
    let scratch = tempfile::tempdir()?;
    if !options.bench {
        let preset = Preset::load(Path::new("presets/smoke.toml"))?;
        let model = preset.preset.models[0].key.clone();
        let (times, _) = time_runs(
            Path::new("presets/smoke.toml"),
            &model,
            &[0],
            &options,
            scratch.path(),
        )?;
        println!(
            "detectors smoke: smoke {model}: eval {:.2} s, detectors {:.2} s",
            times[0].eval, times[0].detectors
        );
        return Ok(());
    }
    println!(
        "| preset | model | eval s | detectors s, 1st run (with representation) | ratio | \
         detectors s, 2nd run | ratio | runs of the preset | share over the preset |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for pair in &options.runs {
        let (preset, model) = pair
            .split_once(':')
            .ok_or_else(|| format!("{pair:?} is not PRESET:MODEL"))?;
        let (times, runs) = time_runs(Path::new(preset), model, &[0, 1], &options, scratch.path())?;
        let (first, second) = (&times[0], &times[1]);
        // The preset's runs: every model and seed pays its own output detectors and
        // evaluation (taken as this model's), the representation detectors once.
        let representation = (first.detectors - second.detectors).max(0.0);
        let share = (representation + runs as f64 * second.detectors) / (runs as f64 * second.eval);
        let name = Path::new(preset)
            .file_stem()
            .map_or(preset.into(), |s| s.to_string_lossy());
        println!(
            "| {name} | {model} | {:.2} | {:.2} | {:.1} % | {:.2} | {:.1} % | {runs} | {:.1} % |",
            first.eval,
            first.detectors,
            100.0 * first.detectors / first.eval,
            second.detectors,
            100.0 * second.detectors / second.eval,
            100.0 * share
        );
    }
    Ok(())
}
