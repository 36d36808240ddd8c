//! The field checks of a run, shared by writing (which refuses a run that fails them)
//! and loading (which names the file the failing field came from).

use super::layout::{DETECTORS_JSON, HEALTH_JSON, HISTORY_JSON, TIMING_JSON};
use super::record::CutoffHistory;
use super::record::{RunArtifact, SCHEMA};
use crate::checksum::{is_hex, is_sha256};
use crate::eval::{COLLAPSE_RULE, Health};
use crate::slices::Varied;

/// The field checks shared by writing and loading; the error starts with the field.
pub(super) fn check_run(run: &RunArtifact) -> Result<(), String> {
    let p = &run.provenance;
    let k = run.slices.len();
    if !(1..=SCHEMA).contains(&p.schema) {
        return Err(format!(
            "schema: expected 1 to {SCHEMA}, found {}",
            p.schema
        ));
    }
    if (p.schema >= 2) != run.health.is_some() {
        return Err(format!(
            "{HEALTH_JSON}: schema {} folders {} one",
            p.schema,
            if p.schema >= 2 { "need" } else { "have no" }
        ));
    }
    if p.varied.first() != Some(&Varied::Init) || !p.varied.is_sorted_by(|a, b| a < b) {
        return Err(format!(
            "varied: expected \"init\" first and no part twice, found {:?}",
            p.varied.iter().map(|v| v.name()).collect::<Vec<_>>()
        ));
    }
    for (field, value) in [("preset.name", &p.preset.name), ("model", &p.model)] {
        if value.is_empty() || value.contains(['/', '\\']) || value.starts_with('.') {
            return Err(format!("{field}: {value:?} is not a valid folder name"));
        }
    }
    for (field, value) in [
        ("preset.sha256", &p.preset.sha256),
        ("code.cargo_lock_sha256", &p.code.cargo_lock_sha256),
        ("data.sha256", &p.data.sha256),
    ] {
        if !is_sha256(value) {
            return Err(format!(
                "{field}: expected 64 lower-case hex digits, found {value:?}"
            ));
        }
    }
    if let Some(commit) = &p.code.git_commit
        && !is_hex(commit, 40)
        && !is_hex(commit, 64)
    {
        return Err(format!(
            "code.git_commit: expected a hex commit id, found {commit:?}"
        ));
    }
    if p.code.git_commit.is_none() != p.code.git_dirty.is_none() {
        return Err("code.git_dirty: must be null exactly when code.git_commit is".into());
    }
    for (field, value) in [
        ("code.crate_version", &p.code.crate_version),
        ("data.name", &p.data.name),
        ("data.version", &p.data.version),
    ] {
        if value.is_empty() {
            return Err(format!("{field}: must not be empty"));
        }
    }
    let device_ok = p.device == "cpu"
        || p.device == "cuda"
        || p.device
            .strip_prefix("cuda:")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if !device_ok {
        return Err(format!(
            "device: expected cpu, cuda or cuda:N, found {:?}",
            p.device
        ));
    }
    if p.threads == 0 {
        return Err("threads: must be at least 1".into());
    }
    let times = run.timing.as_ref().map_or([0.0; 2], |t| [t.train, t.eval]);
    for (field, value) in [("train", times[0]), ("eval", times[1])] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(format!(
                "{TIMING_JSON}: {field}: expected a non-negative number of seconds, found {value}"
            ));
        }
    }
    if k == 0 {
        return Err("slices: a matrix needs at least one slice".into());
    }
    if let Some(n) =
        (0..k).find(|&n| run.slices[..n].contains(&run.slices[n]) || run.slices[n].is_empty())
    {
        return Err(format!(
            "slices[{n}]: {:?} is empty or repeated",
            run.slices[n]
        ));
    }
    if run.grid.k() != k {
        return Err(format!("cells: {0}x{0} cells for {k} slices", run.grid.k()));
    }
    if let Some((i, j, v)) = run.grid.filled().find(|(_, _, v)| !v.is_finite()) {
        return Err(format!("cells[{i}][{j}]: {v} is not a finite number"));
    }
    if let Some(seen) = &run.seen_classes {
        if seen.k() != k {
            return Err(format!(
                "seen_classes: {0}x{0} cells for {k} slices",
                seen.k()
            ));
        }
        if let Some((i, j, v)) = seen.filled().find(|(_, _, v)| !v.is_finite()) {
            return Err(format!(
                "seen_classes[{i}][{j}]: {v} is not a finite number"
            ));
        }
        // Scored on a subset of a cell's rows: never where the cell itself is empty.
        if let Some((i, j, _)) = seen
            .filled()
            .find(|&(i, j, _)| run.grid.get(i, j).is_none())
        {
            return Err(format!(
                "seen_classes[{i}][{j}]: filled where cells[{i}][{j}] is empty"
            ));
        }
    }
    if let Some(health) = &run.health {
        check_health(health, &run.slices).map_err(|m| format!("{HEALTH_JSON}: {m}"))?;
    }
    if let Some(history) = &run.history {
        check_history(history, &run.slices).map_err(|m| format!("{HISTORY_JSON}: {m}"))?;
    }
    if let Some(detectors) = &run.detectors {
        detectors
            .check()
            .map_err(|m| format!("{DETECTORS_JSON}: {m}"))?;
        if detectors.slices != run.slices {
            return Err(format!(
                "{DETECTORS_JSON}: slices {:?} disagree with the matrix's",
                detectors.slices
            ));
        }
    }
    Ok(())
}

fn check_history(history: &[CutoffHistory], slices: &[String]) -> Result<(), String> {
    let labels: Vec<&String> = history.iter().map(|c| &c.cutoff).collect();
    if !labels.iter().copied().eq(slices) {
        return Err(format!(
            "cutoffs {labels:?} are not the matrix's slices {slices:?}"
        ));
    }
    for c in history {
        for (n, epoch) in c.epochs.iter().enumerate() {
            if epoch.epoch != n as u64 + 1 {
                return Err(format!(
                    "cutoff {}: epoch {} where epoch {} belongs",
                    c.cutoff,
                    epoch.epoch,
                    n + 1
                ));
            }
            epoch
                .check()
                .map_err(|m| format!("cutoff {}: {m}", c.cutoff))?;
        }
    }
    Ok(())
}

fn check_health(health: &[Health], slices: &[String]) -> Result<(), String> {
    if health.len() != slices.len() {
        return Err(format!(
            "cutoffs: {} entries for {} slices",
            health.len(),
            slices.len()
        ));
    }
    for (n, (h, label)) in health.iter().zip(slices).enumerate() {
        if &h.cutoff != label {
            return Err(format!(
                "cutoffs[{n}].cutoff: {:?}, but slice {n} is {label:?}",
                h.cutoff
            ));
        }
        let fractions = [("majority_share", h.majority_share)];
        for (field, v) in fractions {
            if v.is_some_and(|v| !(0.0..=1.0).contains(&v)) {
                return Err(format!("cutoffs[{n}].{field}: {v:?} is not in [0, 1]"));
            }
        }
        let finite = [
            ("prediction_variance", h.prediction_variance),
            ("target_variance", h.target_variance),
            ("final_loss", h.final_loss),
        ];
        for (field, v) in finite {
            if v.is_some_and(|v| !v.is_finite() || (field != "final_loss" && v < 0.0)) {
                return Err(format!("cutoffs[{n}].{field}: {v:?} is not a valid value"));
            }
        }
        if h.collapsed != h.meets_collapse_rule() {
            return Err(format!(
                "cutoffs[{n}].collapsed: {} disagrees with its figures ({COLLAPSE_RULE})",
                h.collapsed,
            ));
        }
    }
    Ok(())
}
