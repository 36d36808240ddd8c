//! Drift-strength sweeps: a group of studies of the synthetic portraits whose presets differ
//! in one drift knob at a time, read as in-distribution score and decay against strength,
//! per kind of drift and model. Comparing the kinds over a range of strengths, instead of
//! at one hand-picked setting of each knob, is what makes "concept drift costs most" a
//! statement about the kinds rather than about the settings chosen.
//!
//! A group is a sweep when every study's presets read the `synthetic-portraits` source
//! with the same generator settings, at most one of the knobs of [`KINDS`] above 0 (the
//! generator's defaults, read by [`PortraitParams`], count: an unset knob is at full
//! strength), and one study sets none (the strength-0 point that every kind's curve starts
//! from). Decay is row-matched (each
//! cutoff's diagonal minus its own future, averaged over the cutoffs), the definition the
//! claims use; each point holds the mean of the per-seed values with their range, as the
//! claims' tests see them.

use crate::analysis::Spread;
use crate::data::synthetic::{PORTRAITS, PortraitParams};
use crate::data::{DataSpec, SourceOptions};
use crate::metrics::Metric;
use crate::report::study::{LoadedStudy, group_members};
use crate::{Error, Result};

/// The generator's drift knobs (`[data.options]` of `synthetic-portraits`), in the order
/// the paper lists them.
pub const KINDS: [&str; 3] = ["covariate", "label", "concept"];

/// One model at one strength of one kind.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    /// The knob's value (0: the no-drift study).
    pub strength: f64,
    /// The study the point is read from.
    pub study: String,
    /// In-distribution score (pooled diagonal) over the seeds.
    pub id: Spread,
    /// Row-matched decay over the seeds.
    pub decay: Spread,
}

/// One model under one kind of drift, strength ascending from the no-drift study.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepCurve {
    /// The model (its name in the studies).
    pub model: String,
    /// One of [`KINDS`].
    pub kind: &'static str,
    /// The points, strength ascending; the first is the no-drift study's.
    pub points: Vec<SweepPoint>,
}

/// A group's sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// The group's name.
    pub group: String,
    /// The metric the group's studies share.
    pub metric: Metric,
    /// The trained models, in the no-drift study's order.
    pub models: Vec<String>,
    /// The no-drift study.
    pub none: String,
    /// The no-drift study's generator settings (images per year, the cue's reliability).
    pub params: PortraitParams,
    /// The strengths above 0 that some kind was swept at, ascending.
    pub strengths: Vec<f64>,
    /// Per model, one curve per kind that has a study, in [`KINDS`] order.
    pub curves: Vec<SweepCurve>,
}

impl Sweep {
    /// The curve of `model` under `kind`.
    pub fn curve(&self, model: &str, kind: &str) -> Option<&SweepCurve> {
        self.curves
            .iter()
            .find(|c| c.model == model && c.kind == kind)
    }
}

/// The generator settings every preset of `study` reads, or `None` when one is not the
/// portraits or two differ.
fn params(study: &LoadedStudy) -> Option<PortraitParams> {
    let mut all = study.presets.iter().map(|loaded| {
        let p = &loaded.preset;
        match &p.data {
            DataSpec::Source(s) if s == PORTRAITS => {
                PortraitParams::read(&SourceOptions::new(PORTRAITS, &p.data_options)).ok()
            }
            _ => None,
        }
    });
    let first = all.next()??;
    all.all(|p| p == Some(first)).then_some(first)
}

/// Where a study sits in a sweep: the kind of drift its presets set (none for the
/// no-drift study) and its strength, with its generator settings; `None` when it is not a
/// single-knob study of the portraits.
fn position(study: &LoadedStudy) -> Option<(Option<&'static str>, f64, PortraitParams)> {
    let p = params(study)?;
    let mut set = KINDS
        .into_iter()
        .zip([p.covariate, p.label, p.concept])
        .filter(|&(_, v)| v != 0.0);
    match (set.next(), set.next()) {
        (None, _) => Some((None, 0.0, p)),
        (Some((kind, v)), None) => Some((Some(kind), v, p)),
        _ => None,
    }
}

/// The sweep of every group that is one, in group order: computed once per build, and
/// read by the figures, the tables and the paper.
pub fn sweeps(studies: &[LoadedStudy]) -> Result<Vec<Sweep>> {
    let mut found = Vec::new();
    for group in crate::report::study::groups(studies) {
        found.extend(sweep(studies, &group)?);
    }
    Ok(found)
}

/// The sweep of `group`, or `None` when the group is not one (a study that is not a
/// single-knob study of the portraits, or no no-drift study). Two studies at the same
/// kind and strength, or studies of other metrics, are an error naming them.
pub fn sweep(studies: &[LoadedStudy], group: &str) -> Result<Option<Sweep>> {
    let members = group_members(studies, group);
    let Some(placed) = members
        .iter()
        .map(|s| position(s).map(|p| (*s, p)))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    let invalid =
        |what: String| Error::Invalid(format!("report/studies.toml: group {group}: {what}"));
    let mut nones = placed.iter().filter(|(_, (kind, _, _))| kind.is_none());
    let Some((none, (_, _, params))) = nones.next() else {
        return Ok(None);
    };
    if let Some((other, _)) = nones.next() {
        return Err(invalid(format!(
            "studies {} and {} both set no drift knob; a sweep has one no-drift study",
            none.spec.name, other.spec.name
        )));
    }
    for (i, (a, (ka, va, pa))) in placed.iter().enumerate() {
        let same = |(_, (kb, vb, _)): &&(&LoadedStudy, _)| kb == ka && vb == va;
        if let Some((b, _)) = placed[i + 1..].iter().find(same) {
            return Err(invalid(format!(
                "studies {} and {} set the same drift knob to the same strength",
                a.spec.name, b.spec.name
            )));
        }
        let unknobbed = |p: &PortraitParams| PortraitParams {
            covariate: 0.0,
            label: 0.0,
            concept: 0.0,
            ..*p
        };
        if unknobbed(pa) != unknobbed(params) {
            return Err(invalid(format!(
                "study {} draws its portraits with other settings than {} besides the drift \
                 knobs; a sweep varies one knob at a time",
                a.spec.name, none.spec.name
            )));
        }
        if a.analysis.metric != none.analysis.metric {
            return Err(invalid(format!(
                "study {} scores {} but {} scores {}; a sweep compares one metric",
                a.spec.name,
                a.analysis.metric.name(),
                none.spec.name,
                none.analysis.metric.name()
            )));
        }
    }
    let models: Vec<String> = none
        .analysis
        .models
        .iter()
        .filter(|m| !m.baseline)
        .map(|m| m.model.clone())
        .collect();
    let mut strengths: Vec<f64> = placed
        .iter()
        .filter(|(_, (kind, _, _))| kind.is_some())
        .map(|(_, (_, v, _))| *v)
        .collect();
    strengths.sort_by(f64::total_cmp);
    strengths.dedup();
    let mut curves = Vec::new();
    for model in &models {
        for kind in KINDS {
            let mut along: Vec<(&LoadedStudy, f64)> = placed
                .iter()
                .filter(|(_, (k, _, _))| *k == Some(kind))
                .map(|(s, (_, v, _))| (*s, *v))
                .collect();
            if along.is_empty() {
                continue;
            }
            along.sort_by(|a, b| a.1.total_cmp(&b.1));
            let points = std::iter::once((*none, 0.0))
                .chain(along)
                .map(|(s, strength)| point(s, model, strength))
                .collect::<Result<Vec<_>>>()?;
            curves.push(SweepCurve {
                model: model.clone(),
                kind,
                points,
            });
        }
    }
    Ok(Some(Sweep {
        group: group.to_string(),
        metric: none.analysis.metric,
        models,
        none: none.spec.name.clone(),
        params: *params,
        strengths,
        curves,
    }))
}

/// `model`'s point in `study`: its seeds' ID and row-matched decay.
fn point(study: &LoadedStudy, model: &str, strength: f64) -> Result<SweepPoint> {
    let name = &study.spec.name;
    let m = study.analysis.model(model).ok_or_else(|| {
        Error::Invalid(format!(
            "study {name}: no model {model}, which the group's no-drift study trains; a \
             sweep compares the same models at every strength"
        ))
    })?;
    let ids: Vec<f64> = m.per_seed.iter().filter_map(|s| s.overall.id).collect();
    let decays: Vec<f64> = m
        .per_seed
        .iter()
        .filter_map(|s| s.decay.row_matched)
        .collect();
    let missing = |what: &str| Error::Invalid(format!("study {name}: {model} has no {what}"));
    Ok(SweepPoint {
        strength,
        study: name.clone(),
        id: Spread::of(&ids).ok_or_else(|| missing("ID score"))?,
        decay: Spread::of(&decays).ok_or_else(|| missing("row-matched decay"))?,
    })
}
