//! The paper's fixed date: what it sees as today and its PDF's creation date, so that
//! every build of the same sources gives the same bytes.

use typst::foundations::Datetime;

/// The paper's fixed date (year, month, day): what `datetime.today()` returns inside the
/// paper and the PDF's creation date (at 00:00:00 UTC). A constant rather than the clock
/// or a file time, so that every build of the same sources is byte-identical (file times
/// change with every checkout). Change it deliberately, together with the manifest.
pub const PAPER_DATE: (i32, u8, u8) = (2026, 1, 1);

/// The fixed date as a Typst [`Datetime`] (a date without time).
pub fn paper_date() -> Datetime {
    let (y, m, d) = PAPER_DATE;
    Datetime::from_ymd(y, m, d).expect("PAPER_DATE is a valid date")
}
