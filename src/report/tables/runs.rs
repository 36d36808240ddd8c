//! The tables read from one study's runs rather than its analyses: compute (provenance
//! and `timing.json`) and checkpoint health (`health.json`).

use super::rows::runs_by_key;
use crate::artifacts::ModelRuns;
use crate::baseline::Baseline;
use crate::table::{Column, Format, Table};
use crate::{Error, Result};

/// Compute per model (by key), from provenance and `timing.json`: `model`, `device` (the
/// distinct devices of its seeds, sorted, joined by `, `), `threads` (the distinct
/// libtorch thread counts), `host` (the machine kinds its seeds recorded, as `H1`, `H2`,
/// ... in order of first appearance, spelled out in the caption; `-` when none did),
/// `seeds`, `timed` (seeds with a `timing.json`), `train s`, `eval s` (sums over the
/// timed seeds; null when none is). Imported runs show where they were made.
pub fn compute_table(runs: &[ModelRuns]) -> Result<Table> {
    let name = "compute";
    if runs.is_empty() {
        return Err(Error::Invalid("table compute: no model runs".into()));
    }
    let sorted = runs_by_key(runs);
    let mut devices = Vec::new();
    let (mut threads, mut hosts, mut host_names) = (Vec::new(), Vec::new(), Vec::<String>::new());
    let (mut train, mut eval, mut timed) = (Vec::new(), Vec::new(), Vec::new());
    for r in &sorted {
        let mut ds: Vec<&str> = r.provenance.iter().map(|p| p.device.as_str()).collect();
        ds.sort_unstable();
        ds.dedup();
        devices.push(ds.join(", "));
        let mut ts: Vec<u32> = r.provenance.iter().map(|p| p.threads).collect();
        ts.sort_unstable();
        ts.dedup();
        threads.push(ts.iter().map(u32::to_string).collect::<Vec<_>>().join(", "));
        let mut hs: Vec<String> = Vec::new();
        for host in r.timing.iter().flatten().filter_map(|t| t.host.as_ref()) {
            let n = match host_names.iter().position(|h| h == host) {
                Some(n) => n,
                None => {
                    host_names.push(host.clone());
                    host_names.len() - 1
                }
            };
            let label = format!("H{}", n + 1);
            if !hs.contains(&label) {
                hs.push(label);
            }
        }
        hosts.push(if hs.is_empty() {
            "-".into()
        } else {
            hs.join(", ")
        });
        let times: Vec<_> = r.timing.iter().flatten().collect();
        timed.push(Some(times.len() as i64));
        let sum = |f: fn(&crate::artifacts::WallTimes) -> f64| {
            (!times.is_empty()).then(|| times.iter().map(|t| f(t)).sum::<f64>())
        };
        train.push(sum(|t| t.train));
        eval.push(sum(|t| t.eval));
    }
    let hours = |v: &[Option<f64>]| v.iter().flatten().sum::<f64>() / 3600.0;
    let caption = format!(
        "Compute: wall-clock seconds of training (all cutoffs) and evaluation (all cells), \
         summed over the seeds that recorded them; in all {:.2} h training and {:.2} h \
         evaluation. Hosts: {}.",
        hours(&train),
        hours(&eval),
        if host_names.is_empty() {
            "none recorded".to_string()
        } else {
            host_names
                .iter()
                .enumerate()
                .map(|(n, h)| format!("H{} = {h}", n + 1))
                .collect::<Vec<_>>()
                .join("; ")
        }
    );
    let columns = vec![
        Column::text("model", sorted.iter().map(|r| r.model.clone()).collect()),
        Column::text("device", devices),
        Column::text("threads", threads),
        Column::text("host", hosts),
        Column::ints(
            "seeds",
            sorted
                .iter()
                .map(|r| Some(r.provenance.len() as i64))
                .collect(),
        ),
        Column::ints("timed", timed),
        Column::floats("train s", train),
        Column::floats("eval s", eval),
    ];
    Table::from_columns(
        name,
        &caption,
        columns,
        vec![
            Format::Text,
            Format::Text,
            Format::Text,
            Format::Text,
            Format::Integer,
            Format::Integer,
            Format::Fixed(1),
            Format::Fixed(1),
        ],
    )
}

/// Checkpoint health per (model, seed, cutoff), from the runs' `health.json`: `model`,
/// `seed`, `cutoff`, `majority_share` (classification; null otherwise), `collapsed`
/// (`true` / `false`), `prediction_variance` (regression), `final_loss` (null for a
/// baseline); runs without a health record are left out.
pub fn health_table(runs: &[ModelRuns]) -> Result<Table> {
    let name = "health";
    let sorted = runs_by_key(runs);
    let mut rows = Vec::new();
    for r in sorted {
        for (p, health) in r.provenance.iter().zip(&r.health) {
            for h in health.iter().flatten() {
                rows.push((r.model.clone(), p.seed, h));
            }
        }
    }
    let collapsed = rows
        .iter()
        .filter(|r| r.2.collapsed && Baseline::from_key(&r.0).is_none())
        .count();
    let checkpoints = rows
        .iter()
        .filter(|r| Baseline::from_key(&r.0).is_none())
        .count();
    let columns = vec![
        Column::text("model", rows.iter().map(|r| r.0.clone()).collect()),
        Column::ints(
            "seed",
            rows.iter().map(|r| i64::try_from(r.1).ok()).collect(),
        ),
        Column::text("cutoff", rows.iter().map(|r| r.2.cutoff.clone()).collect()),
        Column::floats(
            "majority_share",
            rows.iter().map(|r| r.2.majority_share).collect(),
        ),
        Column::text(
            "collapsed",
            rows.iter().map(|r| r.2.collapsed.to_string()).collect(),
        ),
        Column::floats(
            "prediction_variance",
            rows.iter().map(|r| r.2.prediction_variance).collect(),
        ),
        Column::floats("final_loss", rows.iter().map(|r| r.2.final_loss).collect()),
    ];
    Table::from_columns(
        name,
        &format!(
            "Checkpoint health: the share of the most frequent prediction on each \
             checkpoint's ID test rows, the final training loss, and whether it collapsed \
             ({}); {collapsed} of {checkpoints} trained checkpoints collapsed. The counting \
             baseline is constant by design.",
            crate::eval::COLLAPSE_RULE
        ),
        columns,
        vec![
            Format::Text,
            Format::Integer,
            Format::Text,
            Format::Fixed(3),
            Format::Text,
            Format::Fixed(4),
            Format::Fixed(4),
        ],
    )
}

/// The collapsed checkpoints per (model, seed), from the runs' `health.json`: `model`,
/// `seed`, `collapsed` (how many cutoffs), `cutoffs` (of how many), `where` (the collapsed
/// cutoffs' labels; for a baseline, that it is constant by design); runs without a health
/// record are left out. The long form, one row per checkpoint, is [`health_table`].
pub fn collapsed_table(runs: &[ModelRuns]) -> Result<Table> {
    let name = "collapsed";
    let sorted = runs_by_key(runs);
    let mut rows = Vec::new();
    for r in sorted {
        for (p, health) in r.provenance.iter().zip(&r.health) {
            let Some(health) = health else { continue };
            let hit: Vec<&str> = health
                .iter()
                .filter(|h| h.collapsed)
                .map(|h| h.cutoff.as_str())
                .collect();
            let place = if Baseline::from_key(&r.model).is_some() {
                "constant by design".to_string()
            } else {
                hit.join(" ")
            };
            rows.push((r.model.clone(), p.seed, hit.len(), health.len(), place));
        }
    }
    let columns = vec![
        Column::text("model", rows.iter().map(|r| r.0.clone()).collect()),
        Column::ints(
            "seed",
            rows.iter().map(|r| i64::try_from(r.1).ok()).collect(),
        ),
        Column::ints("collapsed", rows.iter().map(|r| Some(r.2 as i64)).collect()),
        Column::ints("cutoffs", rows.iter().map(|r| Some(r.3 as i64)).collect()),
        Column::text("where", rows.iter().map(|r| r.4.clone()).collect()),
    ];
    Table::from_columns(
        name,
        &format!(
            "Collapsed checkpoints per run ({}); report/build/tables/<study>-health.csv has \
             every checkpoint's figures.",
            crate::eval::COLLAPSE_RULE
        ),
        columns,
        vec![
            Format::Text,
            Format::Integer,
            Format::Integer,
            Format::Integer,
            Format::Text,
        ],
    )
}
