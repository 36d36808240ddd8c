//! Slicing schemes and the timeline of slices they cut from a data set.

use std::collections::BTreeMap;

use serde::Serialize;

use super::timestamp::Timestamp;
use crate::{Error, Result};

/// How the timeline is cut into slices.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheme {
    /// Calendar years, labelled `1978`.
    Yearly,
    /// January-June and July-December, labelled `2017-H1` / `2017-H2`.
    HalfYearly,
    /// Calendar quarters, labelled `2017-Q3`.
    Quarterly,
    /// Decades starting at years divisible by ten, labelled `1850s`.
    Decade,
    /// Explicit, strictly increasing slice starts; slice k is `[edges[k], edges[k+1])` and
    /// the last one is open-ended. Rows before the first edge belong to no slice. Labels
    /// are the start dates (`2014`, `2014-03`, `2014-03-05`).
    Edges(Vec<Timestamp>),
}

/// Where a scheme puts one row: the start of its interval (the slice's identity).
fn interval_start(scheme: &Scheme, t: Timestamp) -> Option<Timestamp> {
    let (y, m, _) = t.date();
    let start = match scheme {
        Scheme::Yearly => Timestamp::from_year(y),
        Scheme::HalfYearly => Timestamp::from_date(y, if m <= 6 { 1 } else { 7 }, 1),
        Scheme::Quarterly => Timestamp::from_date(y, (m - 1) / 3 * 3 + 1, 1),
        Scheme::Decade => Timestamp::from_year(y.div_euclid(10) * 10),
        Scheme::Edges(edges) => {
            let k = edges.partition_point(|e| *e <= t);
            return k.checked_sub(1).map(|k| edges[k]);
        }
    };
    Some(start.expect("start of a period of a valid date is valid"))
}

/// The end (exclusive) of the interval that starts at `start`; `None` when open-ended.
fn interval_end(scheme: &Scheme, start: Timestamp) -> Option<Timestamp> {
    let (y, m, _) = start.date();
    let end = match scheme {
        Scheme::Yearly => Timestamp::from_year(y + 1),
        Scheme::HalfYearly | Scheme::Quarterly => {
            let step = if *scheme == Scheme::HalfYearly { 6 } else { 3 };
            let next = m + step;
            if next > 12 {
                Timestamp::from_year(y + 1)
            } else {
                Timestamp::from_date(y, next, 1)
            }
        }
        Scheme::Decade => Timestamp::from_year(y + 10),
        Scheme::Edges(edges) => {
            let k = edges.partition_point(|e| *e <= start);
            return edges.get(k).copied();
        }
    };
    Some(end.expect("end of a period of a valid date is valid"))
}

impl Scheme {
    /// The label of the slice starting at `start`: `1978`, `2017-H1`, `2017-Q3`, `1850s`.
    pub fn label(&self, start: Timestamp) -> String {
        let (y, m, _) = start.date();
        match self {
            Scheme::Yearly => format!("{y}"),
            Scheme::HalfYearly => format!("{y}-H{}", if m <= 6 { 1 } else { 2 }),
            Scheme::Quarterly => format!("{y}-Q{}", (m - 1) / 3 + 1),
            Scheme::Decade => format!("{y}s"),
            Scheme::Edges(_) => start.to_string(),
        }
    }
}

/// Parses any slice label this module writes back to the start of its slice, so labels
/// can be put in timeline order. Returns `None` for other text.
pub(crate) fn parse_label(label: &str) -> Option<Timestamp> {
    let four_digit_year = |text: &str| -> Option<i32> {
        (text.len() == 4 && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse().ok())
            .flatten()
    };
    if let Some(decade) = label.strip_suffix('s') {
        let year = four_digit_year(decade).filter(|y| y % 10 == 0)?;
        return Timestamp::from_year(year).ok();
    }
    if let Some((year, part)) = label.split_once('-') {
        let month = match part {
            "H1" | "Q1" => Some(1),
            "Q2" => Some(4),
            "H2" | "Q3" => Some(7),
            "Q4" => Some(10),
            _ => None,
        };
        if let Some(month) = month {
            return Timestamp::from_date(four_digit_year(year)?, month, 1).ok();
        }
    }
    Timestamp::parse(label).ok()
}

/// Which rows become slices, and how few rows a slice may have.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SlicingConfig {
    /// The scheme that cuts the timeline.
    pub scheme: Scheme,
    /// Rows before this instant are left out.
    pub start: Option<Timestamp>,
    /// Rows at or after this instant are left out.
    pub end: Option<Timestamp>,
    /// Slices with fewer rows are dropped (and reported in [`Timeline::dropped`]).
    pub min_rows: usize,
}

impl SlicingConfig {
    /// A config with no bounds and no minimum size.
    pub fn new(scheme: Scheme) -> Self {
        SlicingConfig {
            scheme,
            start: None,
            end: None,
            min_rows: 1,
        }
    }
}

/// One time slice: a label, its interval and the indices of its rows (ascending).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Slice {
    /// Human-readable label, unique within a timeline.
    pub label: String,
    /// First instant of the interval.
    pub start: Timestamp,
    /// First instant after the interval; `None` for the open-ended last edge slice.
    pub end: Option<Timestamp>,
    /// Indices into the data set, ascending.
    pub rows: Vec<usize>,
}

/// A slice dropped for having fewer than `min_rows` rows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DroppedSlice {
    /// Its label.
    pub label: String,
    /// How many rows it had.
    pub rows: usize,
}

/// The slices of a data set in time order, and what was left out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Timeline {
    /// Kept slices, oldest first.
    pub slices: Vec<Slice>,
    /// Slices below the minimum row count, oldest first.
    pub dropped: Vec<DroppedSlice>,
    /// Rows outside `start..end` or before the first edge.
    pub outside: usize,
}

impl Timeline {
    /// The labels of the kept slices, oldest first.
    pub fn labels(&self) -> Vec<String> {
        self.slices.iter().map(|s| s.label.clone()).collect()
    }
}

/// Cuts rows with the given timestamps into slices (row `r` has timestamp `timestamps[r]`).
pub fn slice_rows(timestamps: &[Timestamp], config: &SlicingConfig) -> Result<Timeline> {
    if let Scheme::Edges(edges) = &config.scheme
        && (edges.is_empty() || edges.windows(2).any(|w| w[0] >= w[1]))
    {
        return Err(Error::Invalid(
            "slice edges must be non-empty and strictly increasing".into(),
        ));
    }
    let mut groups: BTreeMap<Timestamp, Vec<usize>> = BTreeMap::new();
    let mut outside = 0;
    for (row, &t) in timestamps.iter().enumerate() {
        let inside = config.start.is_none_or(|s| t >= s) && config.end.is_none_or(|e| t < e);
        match interval_start(&config.scheme, t).filter(|_| inside) {
            Some(start) => groups.entry(start).or_default().push(row),
            None => outside += 1,
        }
    }
    let mut timeline = Timeline {
        slices: Vec::new(),
        dropped: Vec::new(),
        outside,
    };
    for (start, rows) in groups {
        let label = config.scheme.label(start);
        if rows.len() < config.min_rows {
            timeline.dropped.push(DroppedSlice {
                label,
                rows: rows.len(),
            });
        } else {
            timeline.slices.push(Slice {
                label,
                start,
                end: interval_end(&config.scheme, start),
                rows,
            });
        }
    }
    Ok(timeline)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    #[test]
    fn labels_of_each_scheme() {
        let t = ts("2017-08-15");
        let label = |s: Scheme| s.label(interval_start(&s, t).unwrap());
        assert_eq!(label(Scheme::Yearly), "2017");
        assert_eq!(label(Scheme::HalfYearly), "2017-H2");
        assert_eq!(label(Scheme::Quarterly), "2017-Q3");
        assert_eq!(label(Scheme::Decade), "2010s");
        assert_eq!(
            label(Scheme::Edges(vec![ts("2014"), ts("2017-03")])),
            "2017-03"
        );
        for l in [
            "1978",
            "2017-H1",
            "2017-H2",
            "2017-Q3",
            "1850s",
            "2014-03-05",
        ] {
            let start = parse_label(l).unwrap();
            assert!(start.to_string().starts_with(&l[..4]), "{l}");
        }
        assert_eq!(parse_label("2017-H2"), Some(ts("2017-07")));
        assert_eq!(parse_label("1855s"), None);
        assert_eq!(parse_label("early"), None);
    }

    #[test]
    fn slicing_drops_small_slices_and_keeps_order() {
        let stamps: Vec<_> = [
            "1999-05",
            "1998-01",
            "1999-12-31",
            "2001-02",
            "1990",
            "1997",
        ]
        .map(ts)
        .to_vec();
        let mut config = SlicingConfig::new(Scheme::Yearly);
        config.min_rows = 2;
        config.start = Some(ts("1995"));
        let timeline = slice_rows(&stamps, &config).unwrap();
        assert_eq!(timeline.labels(), vec!["1999"]);
        assert_eq!(timeline.slices[0].rows, vec![0, 2]);
        assert_eq!(timeline.slices[0].end, Some(ts("2000")));
        let dropped: Vec<_> = timeline.dropped.iter().map(|d| d.label.as_str()).collect();
        assert_eq!(dropped, vec!["1997", "1998", "2001"]);
        assert_eq!(timeline.outside, 1);
    }

    #[test]
    fn edges_are_half_open_and_last_is_open_ended() {
        let config = SlicingConfig::new(Scheme::Edges(vec![ts("2000"), ts("2010")]));
        let stamps = [
            ts("1999-12-31"),
            ts("2000"),
            ts("2009-12-31"),
            ts("2010"),
            ts("2090"),
        ];
        let timeline = slice_rows(&stamps, &config).unwrap();
        assert_eq!(timeline.slices[0].rows, vec![1, 2]);
        assert_eq!(timeline.slices[1].rows, vec![3, 4]);
        assert_eq!(timeline.slices[1].end, None);
        assert_eq!(timeline.outside, 1);
        let quarters = SlicingConfig::new(Scheme::Quarterly);
        let q = slice_rows(&[ts("2017-12-31")], &quarters).unwrap();
        assert_eq!(q.slices[0].end, Some(ts("2018")));
    }
}
