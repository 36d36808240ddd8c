//! Text to model input. The text models read token states `[T, D]` with a padding mask;
//! until a frozen encoder caches real ones (the encoder stage), text becomes token states
//! by a bag of embeddings: every token gets a fixed pseudo-random vector.
//!
//! `[data.options]` of any source or file that yields text:
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `text` | `"hashed"` | `"hashed"`: lower-cased words (runs of letters and digits); `"tokenizer"`: the ids of a Hugging Face `tokenizer.json` (e.g. the one in the MiniLM package); `"raw"`: keep the text (for encoders) |
//! | `tokenizer` | none | path of the `tokenizer.json`, relative to the preset; needed by `"tokenizer"` |
//! | `text_dim` | 64 | width `D` of the token vectors |
//! | `max_tokens` | 128 | tokens kept per row (the first ones); padding fills the rest |
//!
//! A token's vector depends only on the token (the word, or `id:<n>` for tokenizer ids):
//! `D` uniform values in `[-1, 1)` from a ChaCha20 stream keyed like the splits
//! (`drift-text-v1:0:<token>`), so it is the same in every data set and on every machine.
//! A row with no token gets one zero vector (models need at least one real token).

use std::collections::HashMap;
use std::path::Path;

use rand_core::Rng;

use super::{Dataset, Inputs, Options};
use crate::slices::stream;
use crate::{Error, Result};

/// How text becomes model input.
#[derive(Clone, Debug)]
pub enum TextInput {
    /// Keep the text.
    Raw,
    /// Words, hashed to vectors.
    Hashed {
        /// Vector width.
        dim: usize,
        /// Tokens kept per row.
        max_tokens: usize,
    },
    /// Tokenizer ids, hashed to vectors.
    Tokenizer {
        /// The tokenizer.
        tokenizer: Box<tokenizers::Tokenizer>,
        /// Vector width.
        dim: usize,
        /// Tokens kept per row.
        max_tokens: usize,
    },
}

impl TextInput {
    /// Reads the text options; `base` resolves a relative tokenizer path.
    pub fn from_options(opts: &Options, base: &Path) -> Result<Self> {
        let kind = opts.choice("text", "hashed", &["hashed", "tokenizer", "raw"])?;
        let dim = opts.integer("text_dim", 64, 1, 4096)? as usize;
        let max_tokens = opts.integer("max_tokens", 128, 1, 65536)? as usize;
        let path = opts.string("tokenizer")?;
        Ok(match kind {
            "raw" => TextInput::Raw,
            "hashed" => TextInput::Hashed { dim, max_tokens },
            _ => {
                let path = base.join(path.ok_or_else(|| {
                    Error::Invalid(
                        "data.options.tokenizer: text = \"tokenizer\" needs the path of a \
                         tokenizer.json"
                            .into(),
                    )
                })?);
                let tokenizer = tokenizers::Tokenizer::from_file(&path).map_err(|e| {
                    Error::Invalid(format!(
                        "{}: not a readable tokenizer.json: {e}",
                        path.display()
                    ))
                })?;
                TextInput::Tokenizer {
                    tokenizer: Box::new(tokenizer),
                    dim,
                    max_tokens,
                }
            }
        })
    }
}

/// Lower-cased runs of letters and digits.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// The vector of `token`: `dim` uniform values in `[-1, 1)`.
pub fn token_vector(token: &str, dim: usize) -> Vec<f32> {
    let mut rng = stream("drift-text-v1", 0, token);
    (0..dim)
        .map(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
        .collect()
}

/// Turns a data set's text into model input as `input` says; other inputs pass through.
/// The vocabulary lists tokens in order of first appearance (index 0 is padding), so the
/// result depends only on the texts and the options.
pub fn apply(data: Dataset, input: &TextInput) -> Result<Dataset> {
    let Inputs::Text(texts) = &data.inputs else {
        return Ok(data);
    };
    let (dim, max_tokens) = match input {
        TextInput::Raw => return Ok(data),
        TextInput::Hashed { dim, max_tokens }
        | TextInput::Tokenizer {
            dim, max_tokens, ..
        } => (*dim, *max_tokens),
    };
    let mut vocabulary: HashMap<String, u32> = HashMap::new();
    let mut table = vec![0f32; dim];
    let mut ids = vec![0u32; texts.len() * max_tokens];
    let mut lengths = Vec::with_capacity(texts.len());
    for (r, text) in texts.iter().enumerate() {
        let tokens: Vec<String> = match input {
            TextInput::Tokenizer { tokenizer, .. } => tokenizer
                .encode(text.as_str(), false)
                .map_err(|e| Error::Invalid(format!("tokenizing row {r}: {e}")))?
                .get_ids()
                .iter()
                .take(max_tokens)
                .map(|id| format!("id:{id}"))
                .collect(),
            _ => words(text).take(max_tokens).collect(),
        };
        for (t, token) in tokens.into_iter().enumerate() {
            let next = vocabulary.len() as u32 + 1;
            ids[r * max_tokens + t] = *vocabulary.entry(token).or_insert_with_key(|token| {
                table.extend(token_vector(token, dim));
                next
            });
        }
        let n = ids[r * max_tokens..(r + 1) * max_tokens]
            .iter()
            .take_while(|&&id| id != 0)
            .count();
        lengths.push(n.max(1) as u32);
    }
    Ok(Dataset {
        inputs: Inputs::TokenIds {
            tokens: max_tokens,
            dim,
            ids,
            lengths,
            table,
        },
        ..data
    })
}
