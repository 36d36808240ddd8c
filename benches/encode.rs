//! Encoder benchmark: drift's text encoders (src/encoders/text/) against their Python
//! reference, same texts, same files, same settings: the packaged MiniLM and MPNet against
//! sentence-transformers, and every architecture at its base size (random weights, built by
//! `benches/base_encoders.py`) against `transformers`.
//!
//! Measures the throughput, in texts per second, of encoding one fixed list of texts
//! (default 128, built deterministically below: 6 to 48 words each, every 16th about 150
//! words so that truncation happens) into mean-pooled embeddings (normalised for the
//! packaged ones, as their modules.json says), batch 32, `max_len` 128, on the CPU: drift's
//! `Encoder::encode` (tokenising included) against `SentenceTransformer.encode` or the
//! same loop in `transformers` (`benches/encode.py --serve`). Before timing, both sides
//! encode the texts once (the warm-up) and the largest cosine distance between their
//! embeddings is checked (at most 1e-4) and printed. The repetitions then alternate between
//! the sides (drift first, then Python first, …) so that both see the same machine load;
//! the table gives per encoder and side the median over the repetitions (± half their
//! range, in %) and the ratio of the medians drift/Python (above 1: drift is faster). Last,
//! the peak memory (maximum resident set) of `drift embed --encoder minilm` on 10,000 texts.
//!
//! ```text
//! eval "$(scripts/libtorch-env)"; drift data fetch minilm mpnet
//! cargo bench --features torch --bench encode
//! cargo bench --features torch --bench encode -- --only minilm,bert-base --texts 512 --reps 5
//! ```
//!
//! Options (after `--`): `--threads N` (default 1, or `DRIFT_BENCH_THREADS`), `--texts N`
//! (128), `--max-len L` (128), `--reps R` (3), `--only NAME,..` (the rows: minilm, mpnet,
//! bert-base, roberta-base, distilbert-base, electra-base, mpnet-base, deberta-v3-base,
//! modernbert-base), `--memory-texts N` (10,000; 0 skips it), `--drift-only`. Both sides
//! call `set_num_threads(N)` and run with the same environment, `OMP_WAIT_POLICY`
//! included (the bench re-executes itself with `passive`, what `scripts/libtorch-env`
//! exports, when it is unset); the Python tokenizer runs with
//! `TOKENIZERS_PARALLELISM=false`, as drift tokenises on one thread. The Python is
//! `$DRIFT_ENCODER_PYTHON`, else the `encoder-peer` venv of `scripts/pins` (installed by
//! `scripts/venv-pins` on first use). Without `--bench` (`cargo test --benches`) drift
//! encodes 8 texts with MiniLM, alone.

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
const BASE_SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/base_encoders.py");
const VENV_PINS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/venv-pins");

/// drift's text encoders against sentence-transformers and transformers, in texts/s
/// (details: the header of benches/encode.rs).
#[derive(Debug, clap::Parser)]
struct Options {
    /// libtorch threads on both sides.
    #[arg(long, env = "DRIFT_BENCH_THREADS", default_value_t = 1,
          value_parser = clap::value_parser!(i32).range(1..))]
    threads: i32,
    /// Texts to encode.
    #[arg(long, default_value_t = 128)]
    texts: usize,
    /// Tokens kept per text.
    #[arg(long, default_value_t = 128)]
    max_len: usize,
    /// Timed repetitions per side.
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// The rows to run, comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Texts `drift embed` encodes for the peak-memory line (0: none).
    #[arg(long, default_value_t = 10_000)]
    memory_texts: usize,
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
            (options.only, options.memory_texts) = (vec![MINILM.into()], 0);
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

/// One row of the table: a packaged encoder, or an architecture at its base size.
#[derive(Clone, Copy, Debug)]
enum Subject {
    /// A packaged encoder of `drift::encoders::ENCODERS`.
    Package(&'static str),
    /// A random base-size model of this `model_type`, named `row`.
    Base {
        architecture: &'static str,
        row: &'static str,
    },
}

const SUBJECTS: &[Subject] = &[
    Subject::Package(MINILM),
    Subject::Package("mpnet"),
    Subject::Base {
        architecture: "bert",
        row: "bert-base",
    },
    Subject::Base {
        architecture: "roberta",
        row: "roberta-base",
    },
    Subject::Base {
        architecture: "distilbert",
        row: "distilbert-base",
    },
    Subject::Base {
        architecture: "electra",
        row: "electra-base",
    },
    Subject::Base {
        architecture: "mpnet",
        row: "mpnet-base",
    },
    Subject::Base {
        architecture: "deberta-v2",
        row: "deberta-v3-base",
    },
    Subject::Base {
        architecture: "modernbert",
        row: "modernbert-base",
    },
];

impl Subject {
    fn row(self) -> &'static str {
        match self {
            Subject::Package(name) => name,
            Subject::Base { row, .. } => row,
        }
    }
}

/// The Python side (`encode.py --serve`).
struct Peer {
    server: Server,
    torch: String,
}

impl Peer {
    /// The peer of `which`: `--encoder NAME --archive FILE` or `--folder DIR`.
    fn start(
        python: &str,
        wait_policy: &str,
        options: &Options,
        which: &[std::ffi::OsString],
        texts: &std::path::Path,
    ) -> Result<Self> {
        let mut command = Command::new(python);
        command
            .arg(SCRIPT)
            .arg("--serve")
            .args(which)
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
            return Err(format!("the Python side runs with {threads} threads").into());
        }
        Ok(Peer {
            server,
            torch: hello["torch"].as_str().unwrap_or("?").to_string(),
        })
    }
}

/// `median texts/s (±half the range over the repetitions, in % of the median)`.
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

/// One row's measurements: drift's and the peer's texts/s per repetition.
struct Row {
    name: &'static str,
    drift: Vec<f64>,
    python: Vec<f64>,
}

fn run() -> Result<()> {
    let options = Options::parse()?;
    let wait_policy = common::ensure_wait_policy("encode")?;
    tch::set_num_threads(options.threads);
    let cache = drift::packages::cache_dir();
    let texts = texts(options.texts);
    let dir = tempfile::tempdir()?;
    let texts_path = dir.path().join("texts.json");
    std::fs::write(&texts_path, serde_json::to_vec(&texts)?)?;
    println!(
        "encode: CPU, {} thread(s), OMP_WAIT_POLICY={wait_policy}; {} texts, truncated to {} \
         tokens, batch {BATCH}",
        tch::get_num_threads(),
        texts.len(),
        options.max_len,
    );
    let python = if options.drift_only {
        None
    } else {
        let python = peer_python(
            "DRIFT_ENCODER_PYTHON",
            VENV_PINS,
            &["--set", "encoder-peer"],
        )?;
        eprintln!("encode: Python side: {python} {SCRIPT}");
        Some(python)
    };
    let chosen: Vec<Subject> = SUBJECTS
        .iter()
        .copied()
        .filter(|s| options.only.is_empty() || options.only.iter().any(|o| o == s.row()))
        .collect();
    if let Some(unknown) = (options.only.iter()).find(|o| !SUBJECTS.iter().any(|s| s.row() == *o)) {
        return Err(format!("--only: no row {unknown:?}").into());
    }
    let mut rows = Vec::new();
    for subject in chosen {
        rows.push(measure(
            subject,
            &options,
            &wait_policy,
            python.as_deref(),
            &cache,
            &texts,
            &texts_path,
            dir.path(),
        )?);
    }
    if !options.bench {
        println!(
            "encode: drift encoded {} texts; `cargo bench` times it against the references",
            texts.len()
        );
        return Ok(());
    }
    println!();
    println!(
        "{:<17} {:>22} {:>22} {:>10}",
        format!("{} reps", options.reps),
        "drift texts/s",
        "Python texts/s",
        "drift/Py"
    );
    for row in &rows {
        let (theirs, ratio) = if row.python.is_empty() {
            ("-".to_string(), "-".to_string())
        } else {
            (
                cell(&row.python),
                format!("{:.3}", median(&row.drift) / median(&row.python)),
            )
        };
        println!(
            "{:<17} {:>22} {:>22} {:>10}",
            row.name,
            cell(&row.drift),
            theirs,
            ratio
        );
    }
    if options.memory_texts > 0 {
        peak_memory(&options, &cache, dir.path())?;
    }
    Ok(())
}

/// Times `subject` on both sides (details: the header).
#[allow(clippy::too_many_arguments)]
fn measure(
    subject: Subject,
    options: &Options,
    wait_policy: &str,
    python: Option<&str>,
    cache: &std::path::Path,
    texts: &[String],
    texts_path: &std::path::Path,
    dir: &std::path::Path,
) -> Result<Row> {
    let (encoder, which): (TextEncoder, Vec<std::ffi::OsString>) = match subject {
        Subject::Package(name) => {
            let archive = encoders::package(name)
                .ok_or("no such package")?
                .archive(cache);
            (
                TextEncoder::from_package(name, cache)?,
                vec![
                    "--encoder".into(),
                    name.into(),
                    "--archive".into(),
                    archive.into(),
                ],
            )
        }
        Subject::Base { architecture, row } => {
            let python = python.ok_or("base-size models are built in Python: drop --drift-only")?;
            let folder = dir.join(row);
            let status = Command::new(python)
                .arg(BASE_SCRIPT)
                .arg(architecture)
                .arg(&folder)
                .status()?;
            if !status.success() {
                return Err(format!("{BASE_SCRIPT} {architecture} failed").into());
            }
            (
                TextEncoder::from_folder(&folder)?,
                vec!["--folder".into(), folder.into()],
            )
        }
    };
    // Warm-up, and the embeddings the Python side must reproduce.
    let reference = encoder.encode(texts, options.max_len, EmbeddingPooling::Mean)?;
    let mut peer = match python {
        None => None,
        Some(python) => {
            let mut peer = Peer::start(python, wait_policy, options, &which, texts_path)?;
            let check = dir.join("embeddings.f32");
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
                    "{}: the embeddings differ from the Python side's by a cosine distance \
                     of up to {worst:e}",
                    subject.row()
                )
                .into());
            }
            println!(
                "encode: {}: max cosine distance to the Python side (PyTorch {}) {worst:.1e}",
                subject.row(),
                peer.torch
            );
            Some(peer)
        }
    };
    let mut row = Row {
        name: subject.row(),
        drift: Vec::new(),
        python: Vec::new(),
    };
    for rep in 0..options.reps {
        for side in [rep % 2, 1 - rep % 2] {
            match (side, peer.as_mut()) {
                (0, _) => {
                    let start = Instant::now();
                    let out = encoder.encode(texts, options.max_len, EmbeddingPooling::Mean)?;
                    row.drift
                        .push(texts.len() as f64 / start.elapsed().as_secs_f64());
                    if out.pooled != reference.pooled {
                        return Err("drift's encodes are not deterministic".into());
                    }
                }
                (_, Some(p)) => {
                    let reply = p.server.ask(json!({ "run": 1 }))?;
                    let seconds = reply["seconds"].as_f64().ok_or("no time")?;
                    row.python.push(texts.len() as f64 / seconds);
                }
                _ => {}
            }
        }
        eprintln!(
            "encode: {} repetition {}/{}: drift {:.1}/s, Python {}",
            subject.row(),
            rep + 1,
            options.reps,
            row.drift[rep],
            row.python
                .get(rep)
                .map_or("-".into(), |r| format!("{r:.1}/s")),
        );
    }
    if let Some(peer) = peer {
        peer.server.finish()?;
    }
    Ok(row)
}

/// The peak resident memory of `drift embed --encoder minilm` on `--memory-texts` texts.
fn peak_memory(options: &Options, cache: &std::path::Path, dir: &std::path::Path) -> Result<()> {
    let input = dir.join("memory-texts.txt");
    std::fs::write(&input, texts(options.memory_texts).join("\n") + "\n")?;
    let start = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_drift"))
        .args(["embed", "--quiet", "--encoder", MINILM, "--threads"])
        .arg(options.threads.to_string())
        .args(["--max-tokens", &options.max_len.to_string()])
        .arg(&input)
        .arg("--out")
        .arg(dir.join("memory.npy"))
        .env("DRIFT_DATA", cache)
        .spawn()?;
    // The child's own peak (wait4), not that of every child so far (getrusage's
    // RUSAGE_CHILDREN would count the Python peers).
    let mut status = 0;
    // SAFETY: wait4 only writes the status and the struct it is given, for a child of ours
    // that nothing else waits for.
    let (waited, usage) = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let waited = libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage);
        (waited, usage)
    };
    if waited < 0 || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err("drift embed failed".into());
    }
    println!();
    println!(
        "encode: drift embed --encoder minilm of {} texts ({} tokens at most): peak resident \
         memory {:.0} MB, {:.1} s",
        options.memory_texts,
        options.max_len,
        usage.ru_maxrss as f64 / 1024.0,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
