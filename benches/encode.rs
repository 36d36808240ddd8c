//! Encoder benchmark: drift's MiniLM (src/encoders/bert.rs) against sentence-transformers,
//! same texts, same package files, same settings.
//!
//! Measures the throughput, in sentences per second, of encoding one fixed list of texts
//! (default 512, built deterministically below: 6 to 48 words each, every 16th about 150
//! words so that truncation happens) into normalised mean-pooled embeddings, batch 32,
//! `max_len` 128, on the CPU: drift's `Encoder::encode` (tokenising included) against
//! `SentenceTransformer.encode` in Python (`benches/encode.py --serve`, loading the model
//! from the same pinned wheel). Before timing, both sides encode the texts once (the
//! warm-up) and the largest cosine distance between their embeddings is checked (at most
//! 1e-4) and printed. The repetitions then alternate between the sides (drift first, then
//! Python first, …) so that both see the same machine load; the table gives per side the
//! median over the repetitions (± half their range, in %) and the ratio of the medians
//! drift/sentence-transformers (above 1: drift is faster).
//!
//! ```text
//! eval "$(scripts/libtorch-env)"; drift data fetch minilm
//! cargo bench --features torch --bench encode
//! cargo bench --features torch --bench encode -- --threads 2 --texts 1024 --reps 7
//! ```
//!
//! Options (after `--`): `--threads N` (default 1, or `DRIFT_BENCH_THREADS`), `--texts N`
//! (512), `--max-len L` (128), `--reps R` (5), `--drift-only`. Both sides call
//! `set_num_threads(N)` and run with the same environment, `OMP_WAIT_POLICY` included (the
//! bench re-executes itself with `passive`, what `scripts/libtorch-env` exports, when it is
//! unset); the Python tokenizer runs with `TOKENIZERS_PARALLELISM=false`, as drift
//! tokenises on one thread. The Python is `$DRIFT_ENCODER_PYTHON`, else the venv of
//! `scripts/torch-python` with the pins of `scripts/make-fixtures` (installed by
//! `scripts/venv-pins` on first use). Without `--bench` (`cargo test --benches`) drift
//! encodes 8 texts, alone.

use std::process::Command;
use std::time::Instant;

use drift::encoders::text::{BATCH, TextEncoder};
use drift::encoders::{self, EmbeddingPooling, Encoder, MINILM};
use serde_json::json;

mod common;
use common::{Result, Server, median, peer_python, spread};

/// Largest cosine distance allowed between drift's and sentence-transformers' embeddings.
const COSINE_TOLERANCE: f64 = 1e-4;
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/encode.py");
const VENV_PINS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/venv-pins");

/// drift's MiniLM against sentence-transformers, in sentences/s (details: the header of
/// benches/encode.rs).
#[derive(Debug, clap::Parser)]
struct Options {
    /// libtorch threads on both sides.
    #[arg(long, env = "DRIFT_BENCH_THREADS", default_value_t = 1,
          value_parser = clap::value_parser!(i32).range(1..))]
    threads: i32,
    /// Texts to encode.
    #[arg(long, default_value_t = 512)]
    texts: usize,
    /// Tokens kept per text.
    #[arg(long, default_value_t = 128)]
    max_len: usize,
    /// Timed repetitions per side.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Time drift alone.
    #[arg(long)]
    drift_only: bool,
    /// `cargo bench` passes `--bench`; without it (`cargo test --benches`) only smoke-test.
    #[arg(long)]
    bench: bool,
}

impl Options {
    fn parse() -> Result<Self> {
        // clap prints --help and its own errors and exits.
        let mut options = <Options as clap::Parser>::parse();
        if options.reps < 1 || options.texts < 1 {
            return Err("--reps and --texts must be at least 1".into());
        }
        if !options.bench {
            (options.texts, options.reps, options.drift_only) = (8, 1, true);
        }
        Ok(options)
    }
}

/// `count` English-looking sentences from a fixed vocabulary and a fixed xorshift stream.
fn texts(count: usize) -> Vec<String> {
    const WORDS: &[&str] = &[
        "the",
        "committee",
        "reviewed",
        "quarterly",
        "figures",
        "and",
        "noted",
        "a",
        "sharp",
        "rise",
        "in",
        "shipping",
        "costs",
        "across",
        "every",
        "region",
        "while",
        "voters",
        "in",
        "the",
        "north",
        "asked",
        "for",
        "new",
        "roads",
        "schools",
        "hospitals",
        "health",
        "officials",
        "reported",
        "cases",
        "of",
        "measles",
        "today",
        "congress",
        "passed",
        "budget",
        "after",
        "long",
        "debate",
        "over",
        "taxes",
        "war",
        "peace",
        "trade",
        "tariffs",
        "farmers",
        "workers",
        "union",
        "railway",
        "bank",
        "currency",
        "gold",
        "silver",
        "treaty",
        "nation",
        "people",
        "government",
        "freedom",
        "study",
        "shows",
        "coffee",
        "may",
        "lower",
        "risk",
        "heart",
        "disease",
        "research",
        "suggests",
        "children",
        "sleep",
        "more",
        "than",
        "adults",
        "2014",
        "1861",
        "42%",
        "$3.5",
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..count)
        .map(|i| {
            let words = if i % 16 == 15 {
                150
            } else {
                6 + (next() % 43) as usize
            };
            let mut text: Vec<&str> = (0..words)
                .map(|_| WORDS[(next() % WORDS.len() as u64) as usize])
                .collect();
            let first = text[0].to_string();
            let mut sentence = first[..1].to_uppercase() + &first[1..];
            text.remove(0);
            for word in text {
                sentence.push(' ');
                sentence.push_str(word);
            }
            sentence.push('.');
            sentence
        })
        .collect()
}

/// The Python side (`encode.py --serve`).
struct Peer {
    server: Server,
    torch: String,
    sentence_transformers: String,
}

impl Peer {
    fn start(
        wait_policy: &str,
        options: &Options,
        wheel: &std::path::Path,
        texts: &std::path::Path,
    ) -> Result<Self> {
        // The set of scripts/pins that scripts/make-fixtures uses for encoder_fixtures.py.
        let python = peer_python(
            "DRIFT_ENCODER_PYTHON",
            VENV_PINS,
            &["--set", "encoder-peer"],
        )?;
        eprintln!("encode: sentence-transformers side: {python} {SCRIPT}");
        let mut command = Command::new(&python);
        command
            .arg(SCRIPT)
            .arg("--serve")
            .arg("--wheel")
            .arg(wheel)
            .arg("--texts")
            .arg(texts)
            .args(["--threads", &options.threads.to_string()])
            .args(["--batch", &BATCH.to_string()])
            .args(["--max-len", &options.max_len.to_string()])
            .env("OMP_WAIT_POLICY", wait_policy)
            .env("TOKENIZERS_PARALLELISM", "false");
        let (server, hello) = Server::start(command, SCRIPT)?;
        let threads = hello["threads"].as_i64().unwrap_or(0);
        if threads != i64::from(options.threads) {
            return Err(format!("sentence-transformers runs with {threads} threads").into());
        }
        Ok(Peer {
            server,
            torch: hello["torch"].as_str().unwrap_or("?").to_string(),
            sentence_transformers: hello["sentence_transformers"]
                .as_str()
                .unwrap_or("?")
                .to_string(),
        })
    }
}

/// `median sentences/s (±half the range over the repetitions, in % of the median)`.
fn cell(rates: &[f64]) -> String {
    let (mid, half_range) = spread(rates);
    format!("{mid:.1} (±{half_range:.1}%)")
}

fn cosine_distance(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    1.0 - dot / (norm(a) * norm(b))
}

fn main() -> std::process::ExitCode {
    common::main("encode", run)
}

fn run() -> Result<()> {
    let options = Options::parse()?;
    let wait_policy = common::ensure_wait_policy("encode")?;
    tch::set_num_threads(options.threads);
    let cache = drift::packages::cache_dir();
    let bert = TextEncoder::from_package("minilm", &cache)?;
    let texts = texts(options.texts);
    let tokens: usize = bert
        .tokenize(&texts, options.max_len)?
        .iter()
        .map(Vec::len)
        .sum();
    println!(
        "encode: CPU, {} thread(s), OMP_WAIT_POLICY={wait_policy}; {} texts, {tokens} tokens \
         after truncation to {}, batch {BATCH}",
        tch::get_num_threads(),
        texts.len(),
        options.max_len,
    );
    // Warm-up, and the embeddings the Python side must reproduce.
    let reference = bert.encode(&texts, options.max_len, EmbeddingPooling::Mean)?;
    let dir = tempfile::tempdir()?;
    let mut peer = if options.drift_only {
        None
    } else {
        let texts_path = dir.path().join("texts.json");
        std::fs::write(&texts_path, serde_json::to_vec(&texts)?)?;
        let wheel = encoders::package(MINILM)
            .ok_or("no minilm package")?
            .archive(&cache);
        let mut peer = Peer::start(&wait_policy, &options, &wheel, &texts_path)?;
        println!(
            "encode: sentence-transformers {} on PyTorch {} (Python), {} thread(s)",
            peer.sentence_transformers, peer.torch, options.threads
        );
        let check = dir.path().join("embeddings.f32");
        let reply = peer.server.ask(json!({ "check": check }))?;
        if reply["rows"].as_u64() != Some(texts.len() as u64) {
            return Err(format!("the Python side encoded {} rows", reply["rows"]).into());
        }
        let theirs: Vec<f32> = std::fs::read(&check)?
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().expect("chunks of 4")))
            .collect();
        let dim = reference.dim;
        let worst = (0..texts.len())
            .map(|i| {
                cosine_distance(
                    &reference.pooled[i * dim..(i + 1) * dim],
                    &theirs[i * dim..(i + 1) * dim],
                )
            })
            .fold(0.0, f64::max);
        if worst.is_nan() || worst > COSINE_TOLERANCE {
            return Err(format!(
                "the embeddings differ from sentence-transformers' by a cosine distance of \
                 up to {worst:e}"
            )
            .into());
        }
        println!("encode: max cosine distance to sentence-transformers {worst:.1e}");
        Some(peer)
    };

    let mut drift = Vec::new();
    let mut python = Vec::new();
    for rep in 0..options.reps {
        for side in [rep % 2, 1 - rep % 2] {
            match (side, peer.as_mut()) {
                (0, _) => {
                    let start = Instant::now();
                    let out = bert.encode(&texts, options.max_len, EmbeddingPooling::Mean)?;
                    drift.push(texts.len() as f64 / start.elapsed().as_secs_f64());
                    if out.pooled != reference.pooled {
                        return Err("drift's encodes are not deterministic".into());
                    }
                }
                (_, Some(p)) => {
                    let reply = p.server.ask(json!({ "run": 1 }))?;
                    let seconds = reply["seconds"].as_f64().ok_or("no time")?;
                    python.push(texts.len() as f64 / seconds);
                }
                _ => {}
            }
        }
        eprintln!(
            "encode: repetition {}/{}: drift {:.1}/s, sentence-transformers {}",
            rep + 1,
            options.reps,
            drift[rep],
            python.get(rep).map_or("-".into(), |r| format!("{r:.1}/s")),
        );
    }
    if let Some(peer) = peer {
        peer.server.finish()?;
    }
    if !options.bench {
        println!(
            "encode: drift encoded {} texts; `cargo bench` times it against sentence-transformers",
            texts.len()
        );
        return Ok(());
    }
    println!();
    println!(
        "{:<12} {:>24} {:>28} {:>16}",
        "", "drift sentences/s", "sentence-transformers /s", "drift/st"
    );
    println!(
        "{:<12} {:>24} {:>28} {:>16}",
        format!("{} reps", options.reps),
        cell(&drift),
        if python.is_empty() {
            "-".into()
        } else {
            cell(&python)
        },
        if python.is_empty() {
            "-".into()
        } else {
            format!("{:.3}", median(&drift) / median(&python))
        },
    );
    Ok(())
}
