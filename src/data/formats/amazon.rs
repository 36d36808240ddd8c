//! Amazon Reviews 2023 (McAuley lab), one JSON object per line, as in the per-category
//! review files (`<Category>.jsonl`, optionally gzipped).
//!
//! Each line must be a JSON object with `rating` (a number), `text` (a string) and
//! `timestamp` (an integer, milliseconds since 1970-01-01 UTC); every other field
//! (`title`, `user_id`, `asin`, ...) is ignored. A line that breaks this is an error
//! naming the file and line, e.g. `data/amazon.jsonl: line 17: rating: expected a number
//! 1-5, got "x"`. Blank lines are skipped (they still count in line numbers).
//!
//! Filters of the reference (a row that fails one is dropped, not an error):
//! `2014-01-01 <= t < 2024-01-01` (UTC), `rating` one of 1, 2, 3, 4, 5 (integer-valued),
//! and `text` not empty after trimming white space. The input is `text` as written
//! ([`Inputs::Text`]); the target is the rating as a real number
//! ([`Targets::Values`], regression); timestamps are rounded down to the second.
//!
//! Sampling (options `sample`, default 300000, and `seed`, default 0): when more rows
//! pass the filters than `sample`, exactly `sample` are kept by this deterministic rule.
//! The stratum of a row is (half-year `year * 2 + (month - 1) / 6`, rating). Shuffle the
//! kept rows' positions `0..n` with the ChaCha20 stream of `crate::slices` keyed
//! `("drift-amazon-sample", seed, "amazon-reviews")` (Fisher-Yates, as the splits do).
//! Walking the shuffled order, the first row met of each stratum is taken (one
//! guaranteed row per stratum present, uniformly chosen within it); walking the order
//! again, rows not yet taken are added until `sample` are taken (a uniform draw of the
//! rest). The taken rows keep their file order. A `sample` smaller than the number of
//! strata is an error.
//!
//! Source: `amazon-reviews`, version `jsonl`, SHA-256 of the file's stored bytes.

use std::collections::BTreeSet;
use std::path::Path;

use super::json_lines::{at, each_line, object, string};
use crate::data::dataset::{DataSource, Dataset, Inputs, Targets};
use crate::data::options::SourceOptions;
use crate::slices::{Timestamp, shuffle, stream};
use crate::{Error, Result};

/// Source name recorded in provenance.
pub const NAME: &str = "amazon-reviews";

/// Loads a review file with the reference's filters and stratified sample.
pub fn load(path: &Path, opts: &SourceOptions) -> Result<Dataset> {
    let sample = opts.integer("sample", 300_000, 1, i64::MAX)? as usize;
    let seed = opts.integer("seed", 0, 0, i64::MAX)? as u64;
    let start = Timestamp::from_year(2014)?;
    let end = Timestamp::from_year(2024)?;
    let mut timestamps = Vec::new();
    let mut texts = Vec::new();
    let mut ratings = Vec::new();
    let sha256 = each_line(path, |line, text| {
        let row = object(path, line, text)?;
        let rating = match row.get("rating") {
            None => return Err(at(path, line, "rating: missing")),
            Some(v) => v.as_f64().ok_or_else(|| {
                at(
                    path,
                    line,
                    format!("rating: expected a number 1-5, got {v}"),
                )
            })?,
        };
        let ms = match row.get("timestamp") {
            None => return Err(at(path, line, "timestamp: missing")),
            Some(v) => v.as_i64().ok_or_else(|| {
                at(
                    path,
                    line,
                    format!("timestamp: expected milliseconds since 1970 (an integer), got {v}"),
                )
            })?,
        };
        let review = string(path, line, &row, "text")?;
        let t = Timestamp::from_millis(ms);
        let kept = (start..end).contains(&t)
            && [1.0, 2.0, 3.0, 4.0, 5.0].contains(&rating)
            && !review.trim().is_empty();
        if kept {
            timestamps.push(t);
            texts.push(review.to_string());
            ratings.push(rating);
        }
        Ok(())
    })?;
    let keep = stratified_sample(&timestamps, &ratings, sample, seed)?;
    let rows = keep.unwrap_or_else(|| (0..timestamps.len()).collect());
    Ok(Dataset {
        source: DataSource::new(NAME, "jsonl", sha256),
        timestamps: rows.iter().map(|&r| timestamps[r]).collect(),
        inputs: Inputs::Text(
            rows.iter()
                .map(|&r| std::mem::take(&mut texts[r]))
                .collect(),
        ),
        targets: Targets::Values(rows.iter().map(|&r| ratings[r]).collect()),
        class_names: Vec::new(),
    })
}

/// The rows to keep (ascending), or `None` when all `n <= sample` rows are kept; the rule
/// is in the module documentation.
pub fn stratified_sample(
    timestamps: &[Timestamp],
    ratings: &[f64],
    sample: usize,
    seed: u64,
) -> Result<Option<Vec<usize>>> {
    let n = timestamps.len();
    if n <= sample {
        return Ok(None);
    }
    let stratum = |r: usize| {
        let (year, month, _) = timestamps[r].date();
        (year * 2 + i32::from((month - 1) / 6), ratings[r] as i64)
    };
    let strata: BTreeSet<_> = (0..n).map(stratum).collect();
    if strata.len() > sample {
        return Err(Error::Invalid(format!(
            "data.options.sample: {sample} rows cannot hold one of each of the {} \
             (half-year, rating) strata",
            strata.len()
        )));
    }
    let mut order: Vec<usize> = (0..n).collect();
    shuffle(&mut stream("drift-amazon-sample", seed, NAME), &mut order);
    let mut taken = vec![false; n];
    let mut seen = BTreeSet::new();
    let mut count = 0;
    for &r in &order {
        if seen.insert(stratum(r)) {
            taken[r] = true;
            count += 1;
        }
    }
    for &r in &order {
        if count == sample {
            break;
        }
        if !taken[r] {
            taken[r] = true;
            count += 1;
        }
    }
    Ok(Some((0..n).filter(|&r| taken[r]).collect()))
}
