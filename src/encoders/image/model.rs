//! What an image family is to the encoder around it: the [`ImageModel`] trait, which every
//! family file implements and [`super::ImageEncoder`] runs, so it lives below both.

use tch::Tensor;

/// What an image family computes.
pub trait ImageModel: Send {
    /// The pooled features `[B, dim]` of the preprocessed `pixels` `[B, 3, size, size]`.
    fn features(&self, pixels: &Tensor) -> Tensor;
    /// Width of a feature.
    fn dim(&self) -> i64;
    /// The classifier's logits for `features`, when the weights hold one.
    fn classify(&self, features: &Tensor) -> Option<Tensor>;
}
