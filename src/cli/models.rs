//! `drift models`: the model registry, optionally with parameter counts.

use std::process::ExitCode;

use crate::Result;
use crate::models::{self, InputKind, InputShape, ModelConfig};
use crate::output::out;

/// Arguments of `drift models`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// End each line with the model's trainable parameter count (needs libtorch).
    #[arg(long)]
    pub params: bool,
    /// Image input as CxHxW.
    #[arg(long, default_value = "3x32x32", value_parser = parse_image)]
    pub image: (i64, i64, i64),
    /// Outputs of the image models (classes).
    #[arg(long, default_value_t = 2)]
    pub image_outputs: i64,
    /// Width of the token states the text models read.
    #[arg(long, default_value_t = 768)]
    pub text_dim: i64,
    /// Tokens per row (matters only with a positional embedding).
    #[arg(long, default_value_t = 256)]
    pub tokens: i64,
    /// Outputs of the text models (7 arXiv labels; 1 for a rating).
    #[arg(long, default_value_t = 7)]
    pub text_outputs: i64,
    /// Width of the pooled embeddings the linear probe reads.
    #[arg(long, default_value_t = 768)]
    pub embedding_dim: i64,
    /// Outputs of the linear probe.
    #[arg(long, default_value_t = 2)]
    pub embedding_outputs: i64,
    /// Write the listing to this file (atomically) instead of standard output.
    #[arg(long)]
    pub output: Option<std::path::PathBuf>,
}

fn parse_image(s: &str) -> std::result::Result<(i64, i64, i64), String> {
    let parts: Vec<i64> = s
        .split('x')
        .map(|p| p.parse().ok().filter(|&v| v > 0))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("expected CxHxW with positive sizes, e.g. 3x32x32, got {s:?}"))?;
    match parts[..] {
        [c, h, w] => Ok((c, h, w)),
        _ => Err(format!("expected CxHxW, e.g. 3x32x32, got {s:?}")),
    }
}

impl Args {
    fn config(&self, kind: InputKind) -> ModelConfig {
        let (input, outputs) = match kind {
            InputKind::Image => {
                let (channels, height, width) = self.image;
                (
                    InputShape::Image {
                        channels,
                        height,
                        width,
                    },
                    self.image_outputs,
                )
            }
            InputKind::Tokens => (
                InputShape::Tokens {
                    dim: self.text_dim,
                    max_tokens: self.tokens,
                },
                self.text_outputs,
            ),
            InputKind::Embedding => (
                InputShape::Embedding {
                    dim: self.embedding_dim,
                },
                self.embedding_outputs,
            ),
            InputKind::EncoderIds => unreachable!("no registry model reads encoder ids alone"),
        };
        ModelConfig {
            input,
            outputs,
            dropout: 0.1,
            positional_embedding: false,
            channels_last: false,
        }
    }
}

/// Runs `drift models`.
pub fn run(args: Args) -> Result<ExitCode> {
    let mut text = String::new();
    for info in models::registry() {
        let line = format!(
            "{:<14} {:<13} {:<10} {}",
            info.key,
            info.family,
            serde_json::to_value(info.input)
                .expect("kinds serialise")
                .as_str()
                .unwrap_or(""),
            info.summary
        );
        text += &line;
        if args.params {
            text += &format!("  {}", count(info.key, &args.config(info.input))?);
        }
        text.push('\n');
    }
    match &args.output {
        Some(path) => crate::files::write_atomic(path, text.as_bytes())?,
        None => out!("{text}")?,
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(feature = "torch")]
fn count(key: &str, config: &ModelConfig) -> Result<i64> {
    models::parameter_count(key, config)
}

#[cfg(not(feature = "torch"))]
fn count(_: &str, _: &ModelConfig) -> Result<i64> {
    Err(crate::Error::Invalid(
        "parameter counts need libtorch: build with \
         `eval \"$(scripts/libtorch-env)\" && cargo build --features torch`"
            .into(),
    ))
}
