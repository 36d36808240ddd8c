//! UTC timestamps in whole seconds, with the calendar arithmetic slicing needs.

use std::fmt;

use crate::{Error, Result};

/// Days between the Julian day epoch and 1970-01-01.
const UNIX_EPOCH_JULIAN_DAY: i64 = 2_440_588;
const SECONDS_PER_DAY: i64 = 86_400;

/// Seconds since 1970-01-01T00:00:00 UTC (negative before it), without leap seconds.
///
/// Data sets with coarser dates map them to the first second of the period (a year-only
/// date is January 1st of that year).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// Midnight UTC of a calendar date; errors on an impossible date.
    pub fn from_date(year: i32, month: u8, day: u8) -> Result<Self> {
        let month_enum = time::Month::try_from(month)
            .map_err(|_| Error::Invalid(format!("month {month} is not in 1..=12")))?;
        let date = time::Date::from_calendar_date(year, month_enum, day)
            .map_err(|e| Error::Invalid(format!("{year:04}-{month:02}-{day:02}: {e}")))?;
        let days = i64::from(date.to_julian_day()) - UNIX_EPOCH_JULIAN_DAY;
        Ok(Timestamp(days * SECONDS_PER_DAY))
    }

    /// January 1st of `year`.
    pub fn from_year(year: i32) -> Result<Self> {
        Self::from_date(year, 1, 1)
    }

    /// Milliseconds since the epoch (as in Amazon Reviews), rounded down to the second.
    pub fn from_millis(ms: i64) -> Self {
        Timestamp(ms.div_euclid(1000))
    }

    /// The calendar date `(year, month 1-12, day 1-31)` this timestamp falls on.
    pub fn date(self) -> (i32, u8, u8) {
        let days = self.0.div_euclid(SECONDS_PER_DAY);
        // Julian days of years -9999..=9999 fit an i32; clamp keeps absurd inputs total.
        let jd = (days + UNIX_EPOCH_JULIAN_DAY).clamp(-1_930_999, 5_373_484) as i32;
        let date = time::Date::from_julian_day(jd).expect("julian day clamped into range");
        (date.year(), u8::from(date.month()), date.day())
    }

    /// The year this timestamp falls in.
    pub fn year(self) -> i32 {
        self.date().0
    }

    /// Parses `YYYY`, `YYYY-MM` or `YYYY-MM-DD` (the first instant of that period).
    pub fn parse(text: &str) -> Result<Self> {
        let bad = || {
            Error::Invalid(format!(
                "{text:?} is not a date of the form YYYY, YYYY-MM or YYYY-MM-DD"
            ))
        };
        let mut parts = text.split('-');
        let year_text = parts.next().ok_or_else(bad)?;
        if year_text.len() != 4 || !year_text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let year: i32 = year_text.parse().map_err(|_| bad())?;
        let two_digits = |part: Option<&str>| -> Result<Option<u8>> {
            match part {
                None => Ok(None),
                Some(p) if p.len() == 2 && p.bytes().all(|b| b.is_ascii_digit()) => {
                    Ok(Some(p.parse().map_err(|_| bad())?))
                }
                Some(_) => Err(bad()),
            }
        };
        let month = two_digits(parts.next())?;
        let day = two_digits(parts.next())?;
        if parts.next().is_some() || (month.is_none() && day.is_some()) {
            return Err(bad());
        }
        Self::from_date(year, month.unwrap_or(1), day.unwrap_or(1)).map_err(|_| bad())
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl fmt::Display for Timestamp {
    /// The shortest exact date: `1978`, `2014-03` or `2014-03-05` (UTC, start of day).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = self.date();
        let midnight = self.0.rem_euclid(SECONDS_PER_DAY) == 0;
        match (m, d) {
            (1, 1) if midnight => write!(f, "{y:04}"),
            (_, 1) if midnight => write!(f, "{y:04}-{m:02}"),
            _ if midnight => write!(f, "{y:04}-{m:02}-{d:02}"),
            _ => {
                let s = self.0.rem_euclid(SECONDS_PER_DAY);
                write!(
                    f,
                    "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
                    s / 3600,
                    s / 60 % 60,
                    s % 60
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_round_trip() {
        assert_eq!(Timestamp::from_year(1970).unwrap(), Timestamp(0));
        assert_eq!(Timestamp::from_date(2000, 3, 1).unwrap().0, 951_868_800);
        for (y, m, d) in [(1790, 1, 8), (1905, 12, 31), (2024, 2, 29), (2013, 7, 4)] {
            assert_eq!(Timestamp::from_date(y, m, d).unwrap().date(), (y, m, d));
        }
        assert_eq!(Timestamp::from_millis(-1).0, -1);
        assert!(Timestamp::from_date(2023, 2, 29).is_err());
    }

    #[test]
    fn parse_and_display() {
        for text in ["1978", "2014-03", "2014-03-05", "1850"] {
            assert_eq!(Timestamp::parse(text).unwrap().to_string(), text);
        }
        for bad in ["78", "2014-3", "2014-13", "2014-02-30", "2014--01", "x"] {
            assert!(Timestamp::parse(bad).is_err(), "{bad}");
        }
    }
}
