//! The model roster and the listing it is read from (the committed output of
//! `drift models --params`).

use std::collections::BTreeMap;

use super::rows::by_key;
use crate::analysis::{ModelAnalysis, StudyAnalysis};
use crate::baseline::Baseline;
use crate::table::{Column, Format, Table};
use crate::{Error, Result};

/// One line of `drift models --params`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelListing {
    /// Model key.
    pub key: String,
    /// Family.
    pub family: String,
    /// Input kind (`image`, `tokens`, `embedding`).
    pub input: String,
    /// Architecture in one line (words joined by single spaces).
    pub summary: String,
    /// Trainable parameters.
    pub parameters: u64,
}

/// Parses the output of `drift models --params`: one model a line,
/// `key family input summary… count`, fields separated by whitespace. Blank lines and
/// lines starting with `#` are skipped. Errors name the 1-based line.
pub fn parse_models_listing(text: &str) -> Result<Vec<ModelListing>> {
    let mut out: Vec<ModelListing> = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = trimmed.split_whitespace().collect();
        if words.len() < 4 {
            return Err(Error::Invalid(format!(
                "models listing, line {n}: expected `key family input summary… count`, \
                 got {} field(s): {trimmed:?}",
                words.len()
            )));
        }
        let last = words[words.len() - 1];
        let parameters: u64 = last
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| last.parse().ok())
            .flatten()
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "models listing, line {n}: parameter count {last:?} is not a \
                     non-negative integer (was it written by `drift models --params`?)"
                ))
            })?;
        let key = words[0].to_string();
        if let Some(first) = seen.get(&key) {
            return Err(Error::Invalid(format!(
                "models listing, line {n}: model {key:?} is listed twice (first on line {first})"
            )));
        }
        seen.insert(key.clone(), n);
        out.push(ModelListing {
            key,
            family: words[1].to_string(),
            input: words[2].to_string(),
            summary: words[3..words.len() - 1].join(" "),
            parameters,
        });
    }
    if out.is_empty() {
        return Err(Error::Invalid("models listing: no models".into()));
    }
    Ok(out)
}

/// The model roster: `model`, `family`, `input`, `architecture`, `parameters`, for the
/// study's models in listing order (the family is the study's, which a preset may set).
/// Every model's key must be in the listing.
pub fn roster(listing: &[ModelListing], study: &StudyAnalysis) -> Result<Table> {
    let name = "roster";
    // The counting baselines are not in the registry's listing: they are described here.
    let baselines: Vec<ModelListing> = by_key(study)
        .iter()
        .filter_map(|m| Baseline::from_key(&m.key))
        .map(|b| ModelListing {
            key: b.key().into(),
            family: crate::baseline::BASELINE_FAMILY.into(),
            input: "labels".into(),
            summary: b.description().into(),
            parameters: 0,
        })
        .collect();
    let listing: Vec<ModelListing> = listing.iter().cloned().chain(baselines).collect();
    for m in by_key(study) {
        if !listing.iter().any(|l| l.key == m.key) {
            return Err(Error::Invalid(format!(
                "table roster: model {:?} is not in the models listing",
                m.key
            )));
        }
    }
    // Listing order; a key the study trains on several inputs gives one row per name.
    let rows: Vec<(&ModelAnalysis, &ModelListing)> = listing
        .iter()
        .flat_map(|l| {
            by_key(study)
                .into_iter()
                .filter(move |m| m.key == l.key)
                .map(move |m| (m, l))
        })
        .collect();
    let columns = vec![
        Column::text("model", rows.iter().map(|(m, _)| m.model.clone()).collect()),
        Column::text(
            "family",
            rows.iter().map(|(m, _)| m.family.clone()).collect(),
        ),
        Column::text("input", rows.iter().map(|(_, l)| l.input.clone()).collect()),
        Column::text(
            "architecture",
            rows.iter().map(|(_, l)| l.summary.clone()).collect(),
        ),
        Column::ints(
            "parameters",
            rows.iter()
                .map(|(_, l)| i64::try_from(l.parameters).ok())
                .collect(),
        ),
    ];
    Table::from_columns(
        name,
        "Models: family, input, architecture and trainable parameters; the counting \
                  baseline is fitted on each cutoff's training set.",
        columns,
        vec![
            Format::Text,
            Format::Text,
            Format::Text,
            Format::Text,
            Format::Grouped,
        ],
    )
}
