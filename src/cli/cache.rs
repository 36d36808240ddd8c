//! `drift cache`: build (or verify) the encoder cache a preset reads.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use crate::data;
use crate::encoders::cache::Cache;
use crate::image;
use crate::output::outln;
use crate::preset::Preset;
use crate::text::{self, Encoding};
use crate::{Error, Result};

/// Arguments of `drift cache`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The preset file; its `[data.options]` must have `text = "encoder"`, or an image
    /// `encoder`.
    pub preset: PathBuf,
    /// Rebuild the cache even when it is there and intact.
    #[arg(long)]
    pub force: bool,
    /// Where a transformer encoder runs (builds with the `torch` feature): `cpu`, `auto`
    /// (the first GPU if CUDA is usable), `cuda` or `cuda:N`. A cache's bytes are
    /// reproducible on one device and thread count; GloVe always runs on the CPU.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// libtorch threads for a transformer on the CPU; 1, as `drift run`, by default. The
    /// cache records where it was computed, and so does every run that reads it.
    #[arg(long, default_value_t = 1)]
    pub threads: u32,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `drift cache`.
pub fn run(args: Args) -> Result<ExitCode> {
    let loaded = Preset::load(&args.preset)?;
    let preset = &loaded.preset;
    let base = loaded.path.parent().unwrap_or(std::path::Path::new("."));
    let who = args.preset.display().to_string();
    let text_input = text::encoder_input(&who, &preset.data_options, base)?;
    let image_input = match &text_input {
        Some(_) => None,
        None => image::encoder_input(&who, &preset.data_options, base)?,
    };
    let (settings, raw) = match (text_input, image_input) {
        (Some(text), _) => text,
        (None, Some((images, raw))) => return run_images(&args, &preset.data, &images, &raw, base),
        (None, None) => {
            return Err(Error::Invalid(format!(
                "{who}: data.options has neither text = \"encoder\" nor an image encoder: \
                 this preset reads no encoder cache"
            )));
        }
    };
    if preset.fine_tunes() {
        return Err(Error::Invalid(format!(
            "{who}: the preset fine-tunes {} (train.encoder): it reads the encoder's token ids, \
             not a cache of its output",
            settings.encoder
        )));
    }
    let how = encoding(&args)?;
    let started = Instant::now();
    let texts = data::load(&preset.data, &raw, base)?;
    let (_, cache, built) = text::encode(texts, &settings, &how)?;
    report(&cache, built, started)
}

/// Where the encoder runs and how, from the arguments (threads set here).
fn encoding(args: &Args) -> Result<Encoding> {
    use std::io::IsTerminal;

    #[cfg(feature = "torch")]
    {
        crate::device::set_threads(args.threads)?;
        crate::device::keep_freed_memory();
    }
    #[cfg(not(feature = "torch"))]
    if args.threads != 1 || args.device != "cpu" {
        return Err(Error::Invalid(
            "--device and --threads choose where a transformer encoder runs, which needs a build with the \
             `torch` feature"
                .into(),
        ));
    }
    Ok(Encoding {
        force: args.force,
        progress: !args.quiet && std::io::stderr().is_terminal(),
        device: args.device.clone(),
        ..Encoding::default()
    })
}

/// The image cache of a preset with an image `encoder`.
fn run_images(
    args: &Args,
    spec: &data::DataSpec,
    settings: &image::EncoderImages,
    raw: &data::DataOptions,
    base: &std::path::Path,
) -> Result<ExitCode> {
    let how = encoding(args)?;
    let started = Instant::now();
    let images = data::load(spec, raw, base)?;
    let (_, cache, built) = image::encode(images, settings, &how)?;
    report(&cache, built, started)
}

/// Prints what the cache is.
fn report(cache: &Cache, built: bool, started: Instant) -> Result<ExitCode> {
    if !built {
        // Loading read only the input the preset uses; check the rest too.
        cache.verify()?;
    }
    let m = &cache.manifest;
    outln!("folder  {}", cache.dir.display())?;
    outln!("key     {}", m.key)?;
    match m.pooling {
        Some(pooling) => outln!(
            "encoder {} {} ({}), max_tokens {}, pooling {}",
            m.encoder.name,
            m.encoder.version,
            m.encoder.package,
            m.max_len,
            pooling.name()
        )?,
        None => outln!(
            "encoder {} {} ({}), one feature per image",
            m.encoder.name,
            m.encoder.version,
            m.encoder.package
        )?,
    }
    outln!("rows    {}", m.rows)?;
    outln!("dim     {}", m.dim)?;
    outln!("on      {}", m.computed_on)?;
    outln!(
        "{:<7} {:.1} s",
        if built { "built" } else { "checked" },
        started.elapsed().as_secs_f64()
    )?;
    Ok(ExitCode::SUCCESS)
}
