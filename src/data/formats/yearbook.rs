//! The Yearbook portraits (Ginosar et al.), as the original folder or as Wild-Time's
//! `yearbook.pkl`.
//!
//! **Labels** are explicit (option `labels`): `"f0-m1"` (default, the reference: F = 0,
//! M = 1, class names `["F", "M"]`) or `"m0-f1"` (Wild-Time's: M = 0, F = 1, class names
//! `["M", "F"]`). Inputs are 3x32x32 images, values in `[0, 1]`, channel-major.
//!
//! **Folder** (`faces_aligned_small_mirrored_co_aligned_cropped_cleaned/`): every file
//! ending in `.png` directly in `F/` or `M/` (other files are ignored) is one row. Its name
//! must start with a four-digit year and `_` (`1978_Ohio_Cleveland_12-3.png`); the
//! timestamp is January 1st of that year. Rows are in the order of their relative paths
//! (`F/...` before `M/...`, then by file name, bytewise). A PNG of any size and bit depth
//! is decoded to 8 bits (palette expanded, 16 bits truncated, alpha dropped), grey
//! replicated into 3 channels, resized to 32x32 by [`area_resize`] and divided by 255. A
//! bad name or an undecodable PNG is an error naming the file. Source: `yearbook`,
//! version `folder`, SHA-256 of the lines `"<relative path>\t<sha256 of the file>\n"` in
//! row order.
//!
//! **Pickle** (Wild-Time's `yearbook.pkl`, written by `pickle.dump` with protocol <= 4):
//! `dict[year][split] -> {"images": ndarray (N, 32, 32, 3) float, "labels": ndarray (N,)
//! int}` with splits `0` (train), `1` (held-out test) and `2` (all rows of the year). The
//! loader reads split `2` of each year (or splits `0` then `1` when a year has no `2`), in
//! year order, images transposed to channel-major (grey `(N, H, W)` or `(N, H, W, 1)`
//! replicated; images not 32x32 resized by [`area_resize`]); values are taken as stored. It is read with `serde-pickle`, which
//! keeps the `__setstate__` state of an object it cannot construct: a numpy array pickled
//! via `numpy.core.multiarray._reconstruct` arrives as `(1, shape, dtype state, fortran,
//! raw bytes)`. The dtype's own constructor arguments (`'f8'`, `'i8'`) are dropped by
//! `serde-pickle`, so the element type is taken from the byte count per element and the
//! byte order from the dtype state (little-endian when the state is not there: a dtype
//! pickled again is a memo reference to an object serde-pickle could not build): images are float (8 bytes: f64, 4: f32), labels are
//! integers (8: i64, 4: i32, 1: u8) and must be 0 or 1. Numpy arrays pickled with protocol
//! 5 (`_frombuffer`) or Fortran order are refused with an error naming the entry; so is any
//! other structure. The whole file is held in memory while it is read (the real one is
//! about 2 GB, as it stores every image twice). Source: `yearbook`, version
//! `wild-time-pkl`, SHA-256 of the file.
//!
//! **Area interpolation** is written here rather than taken from a crate because none
//! reproduces OpenCV's `INTER_AREA` exactly: see [`area_resize`].

use std::path::Path;

use serde_pickle::{HashableValue, Value};

use crate::checksum::sha256_hex;
use crate::data::dataset::{DataSource, Dataset, Inputs};
use crate::data::options::SourceOptions;
use crate::slices::Timestamp;
use crate::{Error, Result};

/// Source name recorded in provenance.
pub const NAME: &str = "yearbook";
/// Side of the resized images.
pub const SIDE: usize = 32;

/// Resizes a `height x width` single-channel image to `out_h x out_w` by area averaging:
/// output pixel `(y, x)` covers the input rectangle `[y*sy, (y+1)*sy) x [x*sx, (x+1)*sx)`
/// with `sy = height / out_h`, `sx = width / out_w`, and is the mean of the input pixels
/// weighted by the area of each pixel inside that rectangle (fractional at the edges). For
/// downscaling this is OpenCV's `INTER_AREA` (for integer ratios, a plain block mean);
/// for upscaling OpenCV switches to bilinear, this stays with the coverage rule. The
/// weights factor into rows and columns, so the resize is done as two 1-D passes in f64.
pub fn area_resize(
    pixels: &[f64],
    height: usize,
    width: usize,
    out_h: usize,
    out_w: usize,
) -> Vec<f64> {
    let weights = |n_in: usize, n_out: usize| -> Vec<Vec<(usize, f64)>> {
        let scale = n_in as f64 / n_out as f64;
        (0..n_out)
            .map(|o| {
                let (lo, hi) = (o as f64 * scale, (o + 1) as f64 * scale);
                let first = lo.floor() as usize;
                let last = (hi.ceil() as usize).min(n_in);
                (first..last)
                    .map(|i| {
                        let cover = hi.min(i as f64 + 1.0) - lo.max(i as f64);
                        (i, cover / scale)
                    })
                    .filter(|&(_, w)| w > 0.0)
                    .collect()
            })
            .collect()
    };
    let (wy, wx) = (weights(height, out_h), weights(width, out_w));
    // Columns first: height x out_w.
    let mut tmp = vec![0.0; height * out_w];
    for y in 0..height {
        for (x, ws) in wx.iter().enumerate() {
            tmp[y * out_w + x] = ws.iter().map(|&(i, w)| w * pixels[y * width + i]).sum();
        }
    }
    let mut out = vec![0.0; out_h * out_w];
    for (y, ws) in wy.iter().enumerate() {
        for x in 0..out_w {
            out[y * out_w + x] = ws.iter().map(|&(i, w)| w * tmp[i * out_w + x]).sum();
        }
    }
    out
}

/// `(label of F, label of M, class names)` for the `labels` option.
fn mapping(opts: &SourceOptions) -> Result<(u32, u32, Vec<String>)> {
    Ok(match opts.choice("labels", "f0-m1", &["f0-m1", "m0-f1"])? {
        "f0-m1" => (0, 1, vec!["F".into(), "M".into()]),
        _ => (1, 0, vec!["M".into(), "F".into()]),
    })
}

/// Decodes one PNG to 3 x 32 x 32 values in `[0, 1]`.
fn decode(path: &Path, bytes: &[u8]) -> Result<Vec<f32>> {
    let bad = |e: &dyn std::fmt::Display| {
        Error::Invalid(format!("{}: not a readable PNG: {e}", path.display()))
    };
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(|e| bad(&e))?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| bad(&"image too large"))?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(|e| bad(&e))?;
    let (h, w) = (info.height as usize, info.width as usize);
    let step = info.color_type.samples();
    let grey = matches!(
        info.color_type,
        png::ColorType::Grayscale | png::ColorType::GrayscaleAlpha
    );
    let mut out = Vec::with_capacity(3 * SIDE * SIDE);
    for c in 0..3 {
        let channel = if grey { 0 } else { c };
        let plane: Vec<f64> = (0..h * w)
            .map(|p| f64::from(buf[(p / w) * info.line_size + (p % w) * step + channel]))
            .collect();
        out.extend(
            area_resize(&plane, h, w, SIDE, SIDE)
                .into_iter()
                .map(|v| (v / 255.0) as f32),
        );
    }
    Ok(out)
}

/// Loads the portrait folder (see the module documentation).
pub fn load_folder(root: &Path, opts: &SourceOptions) -> Result<Dataset> {
    let (f_label, m_label, class_names) = mapping(opts)?;
    let mut files = Vec::new();
    for (folder, label) in [("F", f_label), ("M", m_label)] {
        let dir = root.join(folder);
        let entries = std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".png") && entry.path().is_file() {
                files.push((format!("{folder}/{name}"), name, label));
            }
        }
    }
    files.sort();
    let mut listing = String::new();
    let mut timestamps = Vec::with_capacity(files.len());
    let mut labels = Vec::with_capacity(files.len());
    let mut pixels = Vec::with_capacity(files.len() * 3 * SIDE * SIDE);
    for (relative, name, label) in &files {
        let path = root.join(relative);
        let year = name
            .split_once('_')
            .map(|(y, _)| y)
            .filter(|y| y.len() == 4 && y.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|y| y.parse().ok())
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "{}: file name does not start with a four-digit year and `_`",
                    path.display()
                ))
            })?;
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        listing += &format!("{relative}\t{}\n", sha256_hex(&bytes));
        pixels.extend(decode(&path, &bytes)?);
        timestamps.push(
            Timestamp::from_year(year)
                .map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?,
        );
        labels.push(*label);
    }
    let source = DataSource::of_bytes(NAME, "folder", listing.as_bytes());
    let inputs = Inputs::rgb(SIDE, pixels);
    Ok(Dataset::classified(
        source,
        timestamps,
        inputs,
        labels,
        class_names,
    ))
}

/// A numpy array as `serde-pickle` leaves it: shape, element size, byte order, bytes.
struct Array<'v> {
    shape: Vec<usize>,
    item: usize,
    big_endian: bool,
    bytes: &'v [u8],
}

fn array<'v>(value: &'v Value) -> std::result::Result<Array<'v>, String> {
    let refused = || {
        "expected a numpy array pickled with protocol <= 4 (state \
         (1, shape, dtype, False, bytes))"
            .to_string()
    };
    let Value::Tuple(state) = value else {
        return Err(refused());
    };
    let [
        Value::I64(1),
        Value::Tuple(shape),
        dtype,
        fortran,
        Value::Bytes(bytes),
    ] = &state[..]
    else {
        return Err(refused());
    };
    if !matches!(fortran, Value::Bool(false)) {
        return Err("Fortran-ordered arrays are not supported".into());
    }
    let shape = shape
        .iter()
        .map(|d| match d {
            Value::I64(n) if *n >= 0 => Ok(*n as usize),
            _ => Err(refused()),
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let big_endian = match dtype {
        Value::Tuple(state) => matches!(state.get(1), Some(Value::String(o)) if o == ">"),
        _ => false,
    };
    let count: usize = shape.iter().product();
    if count == 0 || !bytes.len().is_multiple_of(count) {
        return Err(format!(
            "{} bytes do not hold an array of shape {shape:?}",
            bytes.len()
        ));
    }
    Ok(Array {
        item: bytes.len() / count,
        shape,
        big_endian,
        bytes,
    })
}

impl Array<'_> {
    fn chunks(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.bytes.chunks_exact(self.item)
    }

    fn word<const N: usize>(&self, chunk: &[u8]) -> [u8; N] {
        let mut word: [u8; N] = chunk.try_into().expect("chunk of the item size");
        if self.big_endian {
            word.reverse();
        }
        word
    }

    fn floats(&self) -> std::result::Result<Vec<f32>, String> {
        match self.item {
            8 => Ok(self
                .chunks()
                .map(|c| f64::from_le_bytes(self.word(c)) as f32)
                .collect()),
            4 => Ok(self
                .chunks()
                .map(|c| f32::from_le_bytes(self.word(c)))
                .collect()),
            n => Err(format!(
                "expected float64 or float32 images, got {n}-byte elements"
            )),
        }
    }

    fn ints(&self) -> std::result::Result<Vec<i64>, String> {
        match self.item {
            8 => Ok(self
                .chunks()
                .map(|c| i64::from_le_bytes(self.word(c)))
                .collect()),
            4 => Ok(self
                .chunks()
                .map(|c| i64::from(i32::from_le_bytes(self.word(c))))
                .collect()),
            1 => Ok(self.bytes.iter().map(|&b| i64::from(b)).collect()),
            n => Err(format!("expected integer labels, got {n}-byte elements")),
        }
    }
}

fn get(dict: &Value, key: HashableValue) -> Option<&Value> {
    match dict {
        Value::Dict(map) => map.get(&key),
        _ => None,
    }
}

/// Loads Wild-Time's `yearbook.pkl` (see the module documentation).
pub fn load_pickle(path: &Path, opts: &SourceOptions) -> Result<Dataset> {
    let (f_label, m_label, class_names) = mapping(opts)?;
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let fail = |entry: &str, message: &str| {
        Error::Invalid(format!("{}: entry {entry}: {message}", path.display()))
    };
    // A dtype used again is pickled as a memo reference to the dtype object, which
    // serde-pickle holds as an unresolved global: replace it by None.
    let options = serde_pickle::DeOptions::new().replace_unresolved_globals();
    let root = serde_pickle::value_from_slice(&bytes, options)
        .map_err(|e| fail("(root)", &format!("not a readable pickle: {e}")))?;
    let Value::Dict(years) = &root else {
        return Err(fail("(root)", "expected a dict of years"));
    };
    let mut timestamps = Vec::new();
    let mut labels = Vec::new();
    let mut pixels = Vec::new();
    for (key, splits) in years {
        let HashableValue::I64(year) = key else {
            return Err(fail(&format!("[{key}]"), "expected an integer year as key"));
        };
        let chosen: &[i64] = if get(splits, HashableValue::I64(2)).is_some() {
            &[2]
        } else {
            &[0, 1]
        };
        for &split in chosen {
            let entry = format!("[{year}][{split}]");
            let part = get(splits, HashableValue::I64(split))
                .ok_or_else(|| fail(&format!("[{year}]"), "expected splits 2, or 0 and 1"))?;
            let field = |name: &str| {
                let entry = format!("{entry}[{name:?}]");
                let value = get(part, HashableValue::String(name.into()))
                    .ok_or_else(|| fail(&entry, "missing"))?;
                array(value).map_err(|m| fail(&entry, &m))
            };
            let images = field("images")?;
            let targets = field("labels")?;
            let n = targets.shape.first().copied().unwrap_or(0);
            let image_entry = format!("{entry}[\"images\"]");
            let (h, w, c) = match images.shape[..] {
                [m, h, w, c] if m == n && h * w > 0 && (c == 1 || c == 3) => (h, w, c),
                [m, h, w] if m == n && h * w > 0 => (h, w, 1),
                _ => {
                    return Err(fail(
                        &image_entry,
                        &format!(
                            "expected shape ({n}, 32, 32, 3) to match {n} labels, got {:?}",
                            images.shape
                        ),
                    ));
                }
            };
            let values = images.floats().map_err(|m| fail(&image_entry, &m))?;
            for row in 0..n {
                for channel in 0..3 {
                    let channel = channel.min(c - 1);
                    let plane = (0..h * w).map(|p| values[(row * h * w + p) * c + channel]);
                    if (h, w) == (SIDE, SIDE) {
                        pixels.extend(plane);
                    } else {
                        let plane: Vec<f64> = plane.map(f64::from).collect();
                        let resized = area_resize(&plane, h, w, SIDE, SIDE);
                        pixels.extend(resized.into_iter().map(|v| v as f32));
                    }
                }
            }
            let label_entry = format!("{entry}[\"labels\"]");
            for (row, label) in targets
                .ints()
                .map_err(|m| fail(&label_entry, &m))?
                .iter()
                .enumerate()
            {
                // Wild-Time stores M = 0, F = 1.
                labels.push(match label {
                    0 => m_label,
                    1 => f_label,
                    other => {
                        return Err(fail(
                            &label_entry,
                            &format!("row {row}: expected 0 (M) or 1 (F), got {other}"),
                        ));
                    }
                });
            }
            let t = i32::try_from(*year)
                .map_err(|_| format!("year {year} is out of range"))
                .and_then(|y| Timestamp::from_year(y).map_err(|e| e.to_string()))
                .map_err(|m| fail(&format!("[{year}]"), &m))?;
            timestamps.extend(std::iter::repeat_n(t, n));
        }
    }
    let source = DataSource::of_bytes(NAME, "wild-time-pkl", &bytes);
    let inputs = Inputs::rgb(SIDE, pixels);
    Ok(Dataset::classified(
        source,
        timestamps,
        inputs,
        labels,
        class_names,
    ))
}
