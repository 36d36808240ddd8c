//! The table jobs: every study's tables, and the paper-wide ones, as Typst and CSV under
//! `report/build/tables/`.

use std::path::Path;

use super::hashed::Hashed;
use super::job::OutputJob;
use crate::report::claims::ClaimOutcome;
use crate::report::layout::MODELS;
use crate::report::study::{LoadedStudy, group_members, groups};
use crate::report::tables;
use crate::{Error, Result};

/// The table jobs: per study, every table of [`tables`] as Typst (for the paper) and CSV.
/// Tables are cheap, so they are computed here; the jobs only hand out the bytes.
pub fn table_jobs(
    root: &Path,
    studies: &[LoadedStudy],
    hashed: &Hashed,
) -> Result<(Vec<OutputJob>, serde_json::Value, Vec<Vec<String>>)> {
    let listing_path = root.join(MODELS);
    let listing_text =
        std::fs::read_to_string(&listing_path).map_err(|e| Error::io(&listing_path, e))?;
    let listing = tables::parse_models_listing(&listing_text)
        .map_err(|e| Error::Invalid(format!("{}: {e}", listing_path.display())))?;
    let mut jobs = Vec::new();
    let mut context = serde_json::Map::new();
    let mut html = Vec::new();
    for (at, study) in studies.iter().enumerate() {
        let name = &study.spec.name;
        let inputs = hashed.with_models([at]);
        let analysis = &study.analysis;
        let mut all = vec![
            tables::roster(&listing, analysis)?,
            tables::robustness(analysis)?,
        ];
        all.extend(tables::cutoff_tables(analysis)?);
        all.push(tables::family_table(analysis)?);
        all.push(tables::temporal_effects_table(analysis, &study.design)?);
        all.push(tables::wild_time_table(analysis)?);
        all.push(tables::retraining_table(analysis)?);
        all.push(tables::bootstrap_table(analysis)?);
        all.push(tables::decay_definitions_table(analysis)?);
        all.push(tables::robustness_scores_table(analysis)?);
        all.push(tables::collapsed_table(&study.runs)?);
        all.push(tables::health_table(&study.runs)?);
        all.push(tables::compute_table(&study.runs)?);
        all.extend(tables::detectors_table(analysis)?);
        html.push(crate::report::site::tables_html(&all));
        let mut listed = Vec::new();
        for table in &all {
            let stem = format!("report/build/tables/{name}-{}", table.name);
            for (ext, text) in [("typ", table.typst()), ("csv", table.csv())] {
                jobs.push(OutputJob::new(
                    format!("{stem}.{ext}"),
                    inputs.clone(),
                    move || Ok(text.clone().into_bytes()),
                ));
            }
            // One row per checkpoint is too long for the paper: it is the CSV's.
            if table.name == "health" {
                continue;
            }
            listed.push(serde_json::json!({
                "name": table.name,
                "what": table_what(&table.name),
                "caption": table.caption,
                "path": format!("/{stem}.typ"),
            }));
        }
        context.insert(name.clone(), serde_json::Value::Array(listed));
    }
    Ok((jobs, serde_json::Value::Object(context), html))
}

/// The paper-wide tables, as Typst and CSV under `report/build/tables/`: the
/// hyperparameters of every preset, one side-by-side table per group of studies, and the
/// claims. Each is made from the inputs of the studies it reads.
pub fn paper_table_jobs(
    studies: &[LoadedStudy],
    sweeps: &[crate::report::sweep::Sweep],
    outcomes: &[ClaimOutcome],
    hashed: &Hashed,
) -> Result<Vec<OutputJob>> {
    let every = || hashed.of(0..studies.len());
    let mut presets: Vec<&crate::preset::LoadedPreset> = Vec::new();
    for p in studies.iter().flat_map(|s| &s.presets) {
        if !presets.iter().any(|q| q.path == p.path) {
            presets.push(p);
        }
    }
    let mut tables = vec![(tables::claims_table(outcomes)?, every())];
    for table in tables::hyperparameters(&presets)? {
        tables.push((table, every()));
    }
    tables.push((tables::data_table(&presets)?, every()));
    for group in groups(studies) {
        let members = group_members(studies, &group);
        let named: Vec<(&str, &crate::analysis::StudyAnalysis)> = members
            .iter()
            .map(|s| (s.spec.name.as_str(), &s.analysis))
            .collect();
        let at = studies
            .iter()
            .enumerate()
            .filter(|(_, s)| s.spec.group.as_deref() == Some(group.as_str()))
            .map(|(i, _)| i);
        // A drift-strength sweep reads as decay against strength, not as its studies
        // side by side.
        match sweeps.iter().find(|s| s.group == group) {
            Some(sweep) => tables.push((tables::strength_table(sweep)?, hashed.of(at))),
            None => tables.push((tables::group_table(&group, &named)?, hashed.of(at))),
        }
    }
    let mut jobs = Vec::new();
    for (table, inputs) in tables {
        for (ext, text) in [("typ", table.typst()), ("csv", table.csv())] {
            jobs.push(OutputJob::new(
                format!("report/build/tables/{}.{ext}", table.name),
                inputs.clone(),
                move || Ok(text.clone().into_bytes()),
            ));
        }
    }
    Ok(jobs)
}

/// What a study's table holds, in a few words, for the sentence that references it.
fn table_what(name: &str) -> String {
    match name {
        "roster" => "the models and their parameters".into(),
        "robustness" => "ID, future and decay with their seed ranges".into(),
        "families" => "the family averages".into(),
        "temporal-effects" => "the Agarwal and Nenkova scores".into(),
        "wild-time" => "Wild-Time's Eval-Fix and Eval-Stream".into(),
        "retraining" => "the retraining policies".into(),
        "bootstrap" => "bootstrap intervals".into(),
        "decay-definitions" => "decay under three definitions".into(),
        "robustness-scores" => "the drift-happens robustness scores".into(),
        "collapsed" => "the collapsed checkpoints".into(),
        "compute" => "the compute".into(),
        "detectors" => "the label-free drift detectors against the true drop".into(),
        other => match other.strip_prefix("cutoff-") {
            Some(n) => format!("the ranking at spread cutoff {n}"),
            None => other.replace('-', " "),
        },
    }
}
