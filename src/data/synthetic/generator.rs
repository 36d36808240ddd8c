//! What every generator shares: the years it draws and how many rows each
//! ([`GeneratedYears`]), uniform draws from a year's ChaCha20 stream, and its source
//! identity (the SHA-256 of its name, version and resolved parameters).

use rand_chacha::ChaCha20Rng;
use rand_core::Rng;
use serde::Serialize;

use crate::data::dataset::DataSource;
use crate::data::options::SourceOptions;
use crate::slices::Timestamp;
use crate::{Error, Result};

const SECONDS_PER_YEAR: i64 = 365 * 86_400;

/// The years a generator draws, the rows of each year and the seed: what every generator
/// shares.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GeneratedYears {
    /// First year.
    pub start: i32,
    /// Last year (inclusive).
    pub end: i32,
    /// Rows generated per year.
    pub rows_per_year: usize,
    /// Generator seed.
    pub seed: u64,
}

impl GeneratedYears {
    /// Reads `start`, `end`, `rows_per_year` and `seed` with the given defaults.
    pub(super) fn read(
        opts: &SourceOptions,
        start: i64,
        end: i64,
        rows_per_year: i64,
    ) -> Result<Self> {
        let timeline = GeneratedYears {
            start: opts.integer("start", start, 1, 9999)? as i32,
            end: opts.integer("end", end, 1, 9999)? as i32,
            rows_per_year: opts.integer("rows_per_year", rows_per_year, 1, 10_000_000)? as usize,
            seed: opts.integer("seed", 0, 0, i64::MAX)? as u64,
        };
        if timeline.end < timeline.start {
            return Err(Error::Invalid(format!(
                "data.options.end: {} is before start {}",
                timeline.end, timeline.start
            )));
        }
        Ok(timeline)
    }

    /// The years, oldest first.
    pub fn years(&self) -> std::ops::RangeInclusive<i32> {
        self.start..=self.end
    }

    /// Normalised time of `year`: 0 at `start`, 1 at `end`.
    pub fn u(&self, year: i32) -> f64 {
        if self.end == self.start {
            0.0
        } else {
            f64::from(year - self.start) / f64::from(self.end - self.start)
        }
    }

    /// Total rows.
    pub fn rows(&self) -> usize {
        (self.end - self.start + 1) as usize * self.rows_per_year
    }

    /// One timestamp per row, year by year.
    pub(super) fn timestamps(&self) -> Result<Vec<Timestamp>> {
        let step = SECONDS_PER_YEAR / self.rows_per_year as i64;
        let mut out = Vec::with_capacity(self.rows());
        for year in self.years() {
            let first = Timestamp::from_year(year)?.0;
            out.extend((0..self.rows_per_year as i64).map(|r| Timestamp(first + r * step)));
        }
        Ok(out)
    }
}

/// A uniform draw in `[0, 1)` from the top 53 bits of one `next_u64`.
pub(super) fn unit(rng: &mut ChaCha20Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A uniform integer in `0..n` (`n > 0`), by 64-bit multiply-shift (bias below 2^-40 for
/// the small `n` used here).
pub(super) fn below(rng: &mut ChaCha20Rng, n: usize) -> usize {
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

/// The source identity of a generator with resolved parameters `params`.
pub(super) fn source(name: &str, version: &str, params: &impl Serialize) -> DataSource {
    let json = serde_json::to_string(params).expect("parameters serialise");
    DataSource::of_bytes(
        name,
        version,
        format!("{name}\n{version}\n{json}").as_bytes(),
    )
}
