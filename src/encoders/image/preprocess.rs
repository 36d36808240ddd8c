//! An image as a pretrained image encoder reads it, as its reference prepares it for
//! evaluation (timm's `resolve_data_config` + `create_transform(is_training=False)`,
//! transformers' image processors), from the folder's configuration:
//!
//! 1. a grey image (one channel) is repeated to three;
//! 2. an image smaller than the input on both sides (the 3x32x32 portraits, the emoji) is
//!    upsampled bilinearly straight to the input size, as the seed paper upsamples its
//!    32x32 images to 224 (`F.interpolate(mode="bilinear", align_corners=False)`), with
//!    no crop: a crop would cut a quarter of a 32-pixel image away;
//! 3. any other is resized ([`Resize`]: its shorter side to a length and the longer in
//!    proportion, truncated as torchvision computes it, as timm and transformers'
//!    `shortest_edge` do; or straight to a square, as SigLIP's and DINOv3's processors do)
//!    with the model's interpolation (bicubic or bilinear, antialiased as torchvision's
//!    `antialias=True` does when it shrinks), then cropped to `size` x `size` about the
//!    centre (the offset rounded half to even, as torchvision's `center_crop` rounds);
//! 4. each channel is normalised with the model's mean and standard deviation.
//!
//! Values are float32 in `[0, 1]` before, channels R, G, B. The steps are libtorch's own
//! kernels, the ones the references call, so the pixels agree with theirs to float
//! rounding (`tests/image_encoders.rs` compares them).

use serde::Serialize;
use tch::{Kind, Tensor};

/// How a resize interpolates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Interpolation {
    /// Bicubic (a = -0.75, as PyTorch's).
    Bicubic,
    /// Bilinear.
    Bilinear,
}

impl Interpolation {
    /// The interpolation a configuration names (`bicubic`, `bilinear`), or an error listing
    /// both.
    pub fn from_name(name: &str) -> Result<Interpolation, String> {
        match name {
            "bicubic" => Ok(Interpolation::Bicubic),
            "bilinear" => Ok(Interpolation::Bilinear),
            other => Err(format!(
                "interpolation {other:?} is not supported (supported: bicubic, bilinear)"
            )),
        }
    }
}

/// How an image is resized before the centre crop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Resize {
    /// The shorter side to this length, the longer in proportion (timm's
    /// `floor(size / crop_pct)`, transformers' `shortest_edge`).
    ShorterSide(i64),
    /// Both sides to this length.
    Square(i64),
}

impl Resize {
    /// The side the crop is cut from (the shorter one for [`Resize::ShorterSide`]).
    fn length(self) -> i64 {
        match self {
            Resize::ShorterSide(n) | Resize::Square(n) => n,
        }
    }
}

/// What preparing an image for one encoder takes; part of an image cache's key.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Preprocess {
    /// Height and width of the model's input.
    pub size: i64,
    /// How an image at least as large as the input is resized before the crop.
    pub resize: Resize,
    /// The resize's interpolation.
    pub interpolation: Interpolation,
    /// Per channel, subtracted.
    pub mean: [f64; 3],
    /// Per channel, divided by.
    pub std: [f64; 3],
}

impl Preprocess {
    /// Checks the numbers (a configuration is user input).
    pub fn check(&self) -> Result<(), String> {
        if !(1..=4096).contains(&self.size) {
            return Err(format!("input size {} is outside 1..=4096", self.size));
        }
        let length = self.resize.length();
        if !(self.size..=8192).contains(&length) {
            return Err(format!(
                "resize to {length} is outside {}..=8192 (at least the crop)",
                self.size
            ));
        }
        if self.std.iter().any(|s| !(s.is_finite() && *s > 0.0))
            || self.mean.iter().any(|m| !m.is_finite())
        {
            return Err(format!(
                "mean {:?} and std {:?} must be finite, std positive",
                self.mean, self.std
            ));
        }
        Ok(())
    }

    /// The model's input `[1, 3, size, size]` for `image` `[channels, height, width]`
    /// (one or three channels, float32 in `[0, 1]`).
    pub fn apply(&self, image: &Tensor) -> Result<Tensor, String> {
        let size = image.size();
        let [channels, h, w] = size[..] else {
            return Err(format!(
                "an image is [channels, height, width], got {size:?}"
            ));
        };
        let x = match channels {
            3 => image.unsqueeze(0),
            1 => image.unsqueeze(0).expand([1, 3, h, w], false),
            other => return Err(format!("{other} channels (one or three are read)")),
        };
        let x = x.to_kind(Kind::Float);
        let s = self.size;
        let x = if h < s && w < s {
            x.upsample_bilinear2d([s, s], false, None, None)
        } else {
            let (rh, rw) = match self.resize {
                Resize::ShorterSide(short) => resized(h, w, short),
                Resize::Square(side) => (side, side),
            };
            let x = if (rh, rw) == (h, w) {
                x
            } else {
                match self.interpolation {
                    Interpolation::Bicubic => {
                        x.internal_upsample_bicubic2d_aa([rh, rw], false, None, None)
                    }
                    Interpolation::Bilinear => {
                        x.internal_upsample_bilinear2d_aa([rh, rw], false, None, None)
                    }
                }
            };
            let top = centre_offset(rh, s);
            let left = centre_offset(rw, s);
            x.narrow(2, top, s).narrow(3, left, s)
        };
        let device = x.device();
        let mean = Tensor::from_slice(&self.mean.map(|v| v as f32))
            .reshape([1, 3, 1, 1])
            .to_device(device);
        let std = Tensor::from_slice(&self.std.map(|v| v as f32))
            .reshape([1, 3, 1, 1])
            .to_device(device);
        Ok((x - mean) / std)
    }
}

/// The size torchvision's `resize(image, [short])` gives `h` x `w`: the shorter side
/// `short`, the longer `int(short * long / short_side)`.
fn resized(h: i64, w: i64, short: i64) -> (i64, i64) {
    if w <= h {
        (((short as f64) * (h as f64) / (w as f64)) as i64, short)
    } else {
        (short, ((short as f64) * (w as f64) / (h as f64)) as i64)
    }
}

/// torchvision's `center_crop` offset: `int(round((length - crop) / 2))`, halves to even.
fn centre_offset(length: i64, crop: i64) -> i64 {
    ((length - crop) as f64 / 2.0).round_ties_even() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resized_keeps_the_aspect_as_torchvision_truncates_it() {
        // torchvision: resize(80x64 image, [71]) -> 88x71 (int(71 * 80 / 64) = 88).
        assert_eq!(resized(80, 64, 71), (88, 71));
        assert_eq!(resized(70, 90, 71), (71, 91));
        assert_eq!(resized(32, 32, 35), (35, 35));
    }

    #[test]
    fn centre_offsets_round_half_to_even() {
        assert_eq!(centre_offset(35, 32), 2); // round(1.5) = 2
        assert_eq!(centre_offset(37, 32), 2); // round(2.5) = 2
        assert_eq!(centre_offset(91, 64), 14); // round(13.5) = 14
    }
}
