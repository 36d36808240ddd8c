//! What a text family is to the rest of [`super`]: the batch it reads ([`TokenBatch`]),
//! what it computes ([`TextModel`]), and what the table of architectures needs of its
//! configuration ([`Family`]), with the checks every configuration shares.

use serde::de::DeserializeOwned;
use tch::Tensor;

use crate::encoders::hub::Params;

/// A batch as every family reads it.
pub struct TokenBatch {
    /// Token ids `[B, T]` (Int64), padding (id 0) after the real tokens.
    pub ids: Tensor,
    /// `[B, T]` (Bool): the real tokens.
    pub mask: Tensor,
}

/// What a family computes: the last hidden states `[B, T, hidden]` of a batch (padding
/// positions hold whatever the reference leaves there; callers zero them).
pub trait TextModel: Send + std::fmt::Debug {
    /// The forward pass, with dropout when `train`.
    fn forward_t(&self, inputs: &TokenBatch, train: bool) -> Tensor;
}

/// What the table needs of a family's `config.json`.
pub(super) trait Family: DeserializeOwned {
    /// The family's model.
    type Model: TextModel + 'static;
    /// Sizes and settings this module can compute with, or what is not.
    fn check(&self) -> std::result::Result<(), String>;
    /// Width of the hidden states.
    fn hidden(&self) -> i64;
    /// The longest input, special tokens included.
    fn max_positions(&self) -> i64;
    /// Rows of the token embedding: every id the tokenizer gives must be below it.
    fn vocab(&self) -> i64;
    /// The model, its parameters declared under `p`.
    fn model(&self, p: &Params) -> Self::Model;
}

/// Positive sizes, or the first that is not.
pub(super) fn positive(sizes: &[(&str, i64)]) -> std::result::Result<(), String> {
    match sizes.iter().find(|(_, v)| *v < 1) {
        Some((name, v)) => Err(format!("{name} {v} must be positive")),
        None => Ok(()),
    }
}

/// The heads divide the width.
pub(super) fn check_heads(hidden: i64, heads: i64) -> std::result::Result<(), String> {
    if hidden % heads != 0 {
        return Err(format!(
            "hidden size {hidden} is not a multiple of {heads} attention heads"
        ));
    }
    Ok(())
}
