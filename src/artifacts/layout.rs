//! The layout of a run folder: its file names, its path under the artifact root, and the
//! canonical bytes of `matrix.json`, `matrix.csv` and `health.json`. Writing produces
//! these bytes and loading demands them, so both read them from here.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::record::{CutoffHistory, RunArtifact};
use crate::eval::{COLLAPSE_RULE, Health};
use crate::matrix::Grid;
use crate::metrics::{Direction, Metric};
use crate::{Error, Result};

pub(super) const MATRIX_JSON: &str = "matrix.json";
pub(super) const MATRIX_CSV: &str = "matrix.csv";
pub(super) const RUN_JSON: &str = "run.json";
pub(super) const TIMING_JSON: &str = "timing.json";
pub(super) const HEALTH_JSON: &str = "health.json";
/// The detector matrices of a run computed with detectors.
pub const DETECTORS_JSON: &str = "detectors.json";
/// The training history of a run.
pub const HISTORY_JSON: &str = "history.json";
pub(super) const CSV_HEADER: &str = "train_slice,eval_slice,metric,value";

/// `health.json`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HealthFile {
    pub(super) schema: u32,
    /// The rule, in words, so the file explains itself.
    pub(super) collapsed_when: String,
    pub(super) cutoffs: Vec<Health>,
}

/// `history.json`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HistoryFile {
    pub(super) schema: u32,
    pub(super) cutoffs: Vec<CutoffHistory>,
}

/// `matrix.json`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MatrixFile {
    pub(super) schema: u32,
    pub(super) preset: String,
    pub(super) model: String,
    pub(super) seed: u64,
    pub(super) metric: Metric,
    pub(super) direction: Direction,
    pub(super) slices: Vec<String>,
    pub(super) cells: Vec<Vec<Option<f64>>>,
    /// The cells scored on the classes each cutoff trained on (a preset's
    /// `seen_classes`); absent otherwise.
    #[serde(default)]
    pub(super) seen_classes: Option<Vec<Vec<Option<f64>>>>,
}

/// The folder of one run under `root`.
pub fn run_dir(root: &Path, preset: &str, model: &str, seed: u64) -> PathBuf {
    root.join(preset).join(model).join(format!("seed-{seed}"))
}

pub(super) fn json_line<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("artifact values serialise")
}

impl RunArtifact {
    pub(super) fn matrix_json(&self) -> String {
        let p = &self.provenance;
        let lines = |grid: &Grid| -> String {
            let rows: Vec<String> = grid
                .rows()
                .map(|r| format!("    {}", json_line(&r)))
                .collect();
            rows.join(",\n")
        };
        let seen = self.seen_classes.as_ref().map_or_else(String::new, |g| {
            format!(",\n  \"seen_classes\": [\n{}\n  ]", lines(g))
        });
        format!(
            "{{\n  \"schema\": {},\n  \"preset\": {},\n  \"model\": {},\n  \"seed\": {},\n  \
             \"metric\": {},\n  \"direction\": {},\n  \"slices\": {},\n  \"cells\": [\n{}\n  ]{}\n}}\n",
            p.schema,
            json_line(&p.preset.name),
            json_line(&p.model),
            p.seed,
            json_line(&p.metric),
            json_line(&p.metric.direction()),
            json_line(&self.slices),
            lines(&self.grid),
            seen,
        )
    }

    pub(super) fn health_json(&self) -> Option<String> {
        let cutoffs = self.health.as_ref()?;
        let lines: Vec<String> = cutoffs
            .iter()
            .map(|h| format!("    {}", json_line(h)))
            .collect();
        Some(format!(
            "{{\n  \"schema\": {},\n  \"collapsed_when\": {},\n  \"cutoffs\": [\n{}\n  ]\n}}\n",
            self.provenance.schema,
            json_line(&COLLAPSE_RULE),
            lines.join(",\n"),
        ))
    }

    /// `detectors.json`, each matrix row on a line of its own so that a diff shows which
    /// cells moved.
    pub(super) fn detectors_json(&self) -> Option<String> {
        let d = self.detectors.as_ref()?;
        let matrix = |m: &[Vec<Option<f64>>], indent: &str| -> String {
            let rows: Vec<String> = m
                .iter()
                .map(|r| format!("{indent}  {}", json_line(r)))
                .collect();
            format!("[\n{}\n{indent}]", rows.join(",\n"))
        };
        let named: Vec<String> = d
            .detectors
            .iter()
            .map(|(name, m)| format!("    {}: {}", json_line(name), matrix(m, "    ")))
            .collect();
        let accuracy = d
            .accuracy
            .as_deref()
            .map_or_else(|| "null".to_string(), |m| matrix(m, "  "));
        Some(format!(
            "{{\n  \"schema\": {},\n  \"slices\": {},\n  \"sample_rows\": {},\n  \
             \"permutations\": {},\n  \"detectors\": {{\n{}\n  }},\n  \"accuracy\": {},\n  \
             \"id_priors\": {},\n  \"estimated_priors\": {}\n}}\n",
            d.schema,
            json_line(&d.slices),
            d.sample_rows,
            d.permutations,
            named.join(",\n"),
            accuracy,
            json_line(&d.id_priors),
            json_line(&d.estimated_priors),
        ))
    }

    /// `history.json`, each cutoff on a line of its own.
    pub(super) fn history_json(&self) -> Option<String> {
        let history = self.history.as_ref()?;
        let lines: Vec<String> = history
            .iter()
            .map(|c| format!("    {}", json_line(c)))
            .collect();
        Some(format!(
            "{{\n  \"schema\": {},\n  \"cutoffs\": [\n{}\n  ]\n}}\n",
            self.provenance.schema,
            lines.join(",\n"),
        ))
    }

    pub(super) fn matrix_csv(&self) -> Result<String> {
        let mut csv = csv::Writer::from_writer(Vec::new());
        let io = |e: csv::Error| Error::Invalid(format!("writing {MATRIX_CSV}: {e}"));
        csv.write_record(CSV_HEADER.split(',')).map_err(io)?;
        let metric = self.provenance.metric.name();
        for (i, row) in self.grid.rows().enumerate() {
            for (j, value) in row.iter().enumerate() {
                let value = value.map_or(String::new(), |v| v.to_string());
                csv.write_record([&self.slices[i], &self.slices[j], metric, &value])
                    .map_err(io)?;
            }
        }
        let bytes = csv
            .into_inner()
            .map_err(|e| Error::Invalid(e.to_string()))?;
        Ok(String::from_utf8(bytes).expect("CSV of UTF-8 fields is UTF-8"))
    }
}
