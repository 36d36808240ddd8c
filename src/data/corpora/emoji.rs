//! Emoji images dated by the Emoji version that added them, labelled with their category.
//!
//! Source: npm `emoji-datasource-google` 16.0.0 (MIT, Cal Henderson,
//! <https://github.com/iamcal/emoji-data>); the images are Google's Noto Emoji v2.048
//! (Apache-2.0, <https://github.com/googlefonts/noto-emoji>). The package (`.tgz`) holds
//! `package/emoji.json` (one entry per emoji: `image`, `category`, `added_in`,
//! `has_img_google`, ...) and one 64x64 PNG per emoji under
//! `package/img/google/64/<image>`.
//!
//! Rows: every entry of `emoji.json` with `has_img_google` (all 1,911), in file order;
//! skin-tone variations are not rows.
//! - image: the 64x64 PNG, alpha composited over white, then averaged over 2x2 blocks to
//!   3x32x32, values in `[0, 1]`, channels R, G, B;
//! - label: `category` (10 classes, sorted: `Activities`, `Animals & Nature`,
//!   `Component`, `Flags`, `Food & Drink`, `Objects`, `People & Body`,
//!   `Smileys & Emotion`, `Symbols`, `Travel & Places`);
//! - timestamp: 1 January of the year the Emoji version `added_in` was released
//!   ([`version_year`]; 0.6 and 0.7 are the emoji of Unicode 6.0 and 7.0):
//!
//! | `added_in` | 0.6 | 0.7 | 1.0 | 2.0 | 3.0 | 4.0 | 5.0 | 11.0 | 12.0 | 12.1 | 13.0 | 13.1 | 14.0 | 15.0 | 15.1 | 16.0 |
//! |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
//! | year | 2010 | 2014 | 2015 | 2015 | 2016 | 2016 | 2017 | 2018 | 2019 | 2019 | 2020 | 2020 | 2021 | 2022 | 2023 | 2024 |
//! | rows | 719 | 139 | 175 | 271 | 72 | 113 | 79 | 77 | 75 | 23 | 67 | 7 | 37 | 21 | 28 | 8 |
//!
//! An unknown version is an error, never a guess.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use flate2::read::GzDecoder;

use super::{EMOJI, class_ids, malformed, source};
use crate::Result;
use crate::data::dataset::{Dataset, Inputs};
use crate::data::options::SourceOptions;
use crate::packages::Package;
use crate::slices::Timestamp;

const JSON: &str = "package/emoji.json";
const IMAGES: &str = "package/img/google/64/";
/// Side of the PNGs in the package.
pub const SOURCE_SIDE: usize = 64;
/// Side of the images rows hold.
pub const SIDE: usize = 32;

fn corpus() -> &'static Package {
    super::corpus(EMOJI).expect("emoji is a corpus")
}

/// The release year of an Emoji version (see the module table).
pub fn version_year(version: &str) -> Option<i32> {
    Some(match version {
        "0.6" => 2010,
        "0.7" => 2014,
        "1.0" | "2.0" => 2015,
        "3.0" | "4.0" => 2016,
        "5.0" => 2017,
        "11.0" => 2018,
        "12.0" | "12.1" => 2019,
        "13.0" | "13.1" => 2020,
        "14.0" => 2021,
        "15.0" => 2022,
        "15.1" => 2023,
        "16.0" => 2024,
        _ => return None,
    })
}

#[derive(serde::Deserialize)]
struct Entry {
    image: String,
    category: String,
    added_in: String,
    #[serde(default)]
    has_img_google: bool,
}

/// Loads the fetched corpus from `cache` (it has no options).
pub fn load(cache: &Path, _opts: &SourceOptions) -> Result<Dataset> {
    let (path, bytes) = corpus().read(cache)?;
    parse(&path, &bytes)
}

/// Reads the rows out of the package's bytes (a gzipped tar); errors name `path`.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Dataset> {
    let bad = |what: String| malformed(path, what);
    let mut json = None;
    let mut pngs = BTreeMap::new();
    let mut tar = tar::Archive::new(GzDecoder::new(bytes));
    let entries = tar
        .entries()
        .map_err(|e| bad(format!("not a readable .tgz: {e}")))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| bad(format!("not a readable .tgz: {e}")))?;
        let name = entry
            .path()
            .map_err(|e| bad(format!("not a readable .tgz: {e}")))?
            .to_string_lossy()
            .into_owned();
        let keep = name == JSON || name.starts_with(IMAGES);
        if keep {
            let mut data = Vec::new();
            entry
                .read_to_end(&mut data)
                .map_err(|e| bad(format!("{name}: {e}")))?;
            if name == JSON {
                json = Some(data);
            } else {
                pngs.insert(name[IMAGES.len()..].to_string(), data);
            }
        }
    }
    let json = json.ok_or_else(|| bad(format!("{JSON} is missing")))?;
    let entries: Vec<Entry> =
        serde_json::from_slice(&json).map_err(|e| bad(format!("{JSON}: {e}")))?;
    let (mut pixels, mut timestamps, mut categories) = (Vec::new(), Vec::new(), Vec::new());
    for entry in entries.iter().filter(|e| e.has_img_google) {
        let year = version_year(&entry.added_in).ok_or_else(|| {
            bad(format!(
                "{JSON}: {}: unknown Emoji version {:?} (known: 0.6, 0.7, 1.0-5.0, 11.0-16.0)",
                entry.image, entry.added_in
            ))
        })?;
        let png = pngs
            .get(&entry.image)
            .ok_or_else(|| bad(format!("{IMAGES}{} is missing", entry.image)))?;
        let image = decode(png).map_err(|e| bad(format!("{IMAGES}{}: {e}", entry.image)))?;
        pixels.extend(downsample(&image));
        timestamps.push(Timestamp::from_year(year)?);
        categories.push(entry.category.clone());
    }
    if timestamps.is_empty() {
        return Err(bad(format!("{JSON}: no emoji with a Google image")));
    }
    let (class_names, labels) = class_ids(&categories, str::to_string);
    Ok(Dataset::classified(
        source(corpus()),
        timestamps,
        Inputs::rgb(SIDE, pixels),
        labels,
        class_names,
    ))
}

/// Decodes a 64x64 PNG to RGB over white, `[r, g, b]` per pixel in `[0, 1]`, row-major.
fn decode(png_bytes: &[u8]) -> std::result::Result<Vec<[f64; 3]>, String> {
    let image = crate::data::png::decode_over_white(png_bytes)?;
    if (image.width, image.height) != (SOURCE_SIDE, SOURCE_SIDE) {
        return Err(format!(
            "{}x{} pixels, expected {SOURCE_SIDE}x{SOURCE_SIDE}",
            image.width, image.height
        ));
    }
    Ok(image.pixels)
}

/// 2x2 block means of a 64x64 RGB image, channel-major 3x32x32.
fn downsample(image: &[[f64; 3]]) -> Vec<f32> {
    let mut out = vec![0f32; 3 * SIDE * SIDE];
    for c in 0..3 {
        for y in 0..SIDE {
            for x in 0..SIDE {
                let at = |dy: usize, dx: usize| image[(2 * y + dy) * SOURCE_SIDE + 2 * x + dx][c];
                let mean = (at(0, 0) + at(0, 1) + at(1, 0) + at(1, 1)) / 4.0;
                out[(c * SIDE + y) * SIDE + x] = mean as f32;
            }
        }
    }
    out
}
