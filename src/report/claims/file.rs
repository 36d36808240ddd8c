//! The claims file's form (`report/claims.toml`): its types, read and checked before any
//! study loads, so a mistake in the file is an error naming the claim, never a finding.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The claims file, relative to the repository root.
pub const CLAIMS: &str = "report/claims.toml";

/// The family-wise error rate when the file sets none.
pub const DEFAULT_LEVEL: f64 = 0.05;

/// The family a claim belongs to when it names none.
pub const DEFAULT_FAMILY: &str = "paper";

/// The whole file.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimsFile {
    /// The family-wise error rate Holm's correction holds each family to.
    #[serde(default = "default_level")]
    pub level: f64,
    /// The kind of every data source a claim can be measured on, ours (the studies' data
    /// source names) and the seed papers' (`seed_data`): a verdict against a seed paper is
    /// drawn only where both sides' data are of one kind.
    #[serde(default)]
    pub kinds: BTreeMap<String, String>,
    /// The claims, in the paper's order.
    pub claims: Vec<Claim>,
}

fn default_level() -> f64 {
    DEFAULT_LEVEL
}

/// One claim as written in the file.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// Its name, which the paper and errors use.
    pub name: String,
    /// The sentence it backs (a finding) or asks (a question).
    pub says: String,
    /// The check.
    pub check: Check,
    /// What it compares.
    pub quantities: Vec<Quantity>,
    /// A finding the build requires, or an open question the paper answers whatever the
    /// outcome.
    #[serde(default)]
    pub form: Form,
    /// `above` / `below`: the bound.
    pub value: Option<f64>,
    /// `largest` / `smallest`: the lead the first quantity must have over each other one
    /// (default 0); the test's null hypothesis is a lead of at most this.
    #[serde(default)]
    pub margin: f64,
    /// For decay quantities: the claim must hold under every definition of decay (pooled,
    /// row-matched and retention), not only the one it names.
    #[serde(default)]
    pub robust: bool,
    /// The family whose claims share Holm's correction (default `paper`).
    pub family: Option<String>,
    /// The claim of a reproduced paper this one tests, in words.
    pub seed_paper: Option<String>,
    /// The data the seed paper measured its claim on (names of `kinds`).
    #[serde(default)]
    pub seed_data: Vec<String>,
    /// Whether this claim, holding, agrees with `seed_paper` (required with it).
    pub agrees: Option<bool>,
}

/// How a claim is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Form {
    /// The paper states it; the build fails unless its outcome is the one it states.
    #[default]
    Finding,
    /// The paper asks it and reports the outcome in words chosen from it.
    Question,
}

/// How a claim's quantities are compared (see the module documentation of `claims`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// The first quantity is significantly larger than every other.
    Largest,
    /// The first quantity is significantly smaller than every other.
    Smallest,
    /// Every quantity is significantly above `value`.
    Above,
    /// Every quantity is significantly below `value`.
    Below,
    /// The first quantity differs significantly from every other, either way.
    Separated,
    /// No significant difference between the first quantity and any other.
    Overlapping,
    /// Every Agarwal & Nenkova score's Wilcoxon test is significant.
    Significant,
    /// The quantities are pairs `(x, y)` of one study and model (or family) each, every
    /// seed a point: x and y are rank-correlated over all the points (Spearman), either way.
    Correlated,
}

/// One number of one study.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Quantity {
    /// The study (its `name` in `report/studies.toml`).
    pub study: String,
    /// A model of the study (its name in the analyses).
    pub model: Option<String>,
    /// A family of the study.
    pub family: Option<String>,
    /// The statistic.
    pub stat: Stat,
}

/// The statistics a quantity can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stat {
    /// Mean of the diagonal.
    Id,
    /// Mean above the diagonal.
    Future,
    /// Pooled decay: ID minus future, oriented so positive is worse on the future.
    Decay,
    /// Row-matched decay: per cutoff, its diagonal minus its future, averaged.
    DecayMatched,
    /// The share of ID kept on the future (1 keeps all; lower is worse).
    Retention,
    /// ID lead over the baseline.
    MarginId,
    /// Future lead over the baseline.
    MarginFuture,
    /// Decay lead over the baseline (the baseline's decay minus this one's).
    MarginDecay,
    /// `M_i^j - M_i^{j-1}`.
    DeteriorationConsecutive,
    /// `M_i^j - M_i^{i+1}`.
    DeteriorationAnchor,
    /// `M_i^j - M_{i-1}^j`.
    AdaptationConsecutive,
    /// `M_i^j - M_s^j`.
    AdaptationAnchor,
}

impl Check {
    /// The check's name as the file writes it.
    pub fn name(self) -> &'static str {
        match self {
            Check::Largest => "largest",
            Check::Smallest => "smallest",
            Check::Above => "above",
            Check::Below => "below",
            Check::Separated => "separated",
            Check::Overlapping => "overlapping",
            Check::Significant => "significant",
            Check::Correlated => "correlated",
        }
    }
}

impl Stat {
    /// Whether it is one of the Agarwal & Nenkova scores (a Wilcoxon p-value, no seed
    /// values).
    pub fn score_like(self) -> bool {
        matches!(
            self,
            Stat::DeteriorationConsecutive
                | Stat::DeteriorationAnchor
                | Stat::AdaptationConsecutive
                | Stat::AdaptationAnchor
        )
    }

    /// Whether it is a lead over the study's baseline (a model's only).
    pub fn margin_like(self) -> bool {
        matches!(
            self,
            Stat::MarginId | Stat::MarginFuture | Stat::MarginDecay
        )
    }

    /// Whether it is one of the three definitions of decay.
    pub fn decay_like(self) -> bool {
        matches!(self, Stat::Decay | Stat::DecayMatched | Stat::Retention)
    }

    /// In words, for labels and errors.
    pub fn name(self) -> &'static str {
        match self {
            Stat::Id => "ID",
            Stat::Future => "future",
            Stat::Decay => "decay",
            Stat::DecayMatched => "row-matched decay",
            Stat::Retention => "retention",
            Stat::MarginId => "ID margin over the baseline",
            Stat::MarginFuture => "future margin over the baseline",
            Stat::MarginDecay => "decay margin over the baseline",
            Stat::DeteriorationConsecutive => "deterioration (consecutive)",
            Stat::DeteriorationAnchor => "deterioration (anchor)",
            Stat::AdaptationConsecutive => "adaptation (consecutive)",
            Stat::AdaptationAnchor => "adaptation (anchor)",
        }
    }
}

impl Claim {
    /// Its Holm family.
    pub fn family(&self) -> &str {
        self.family.as_deref().unwrap_or(DEFAULT_FAMILY)
    }
}

/// Reads and checks the claims file's form (names, checks and their arguments, the data
/// kinds the seed-paper claims name).
pub fn read(path: &Path) -> Result<ClaimsFile> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let file: ClaimsFile = toml::from_str(&text).map_err(|e| Error::Preset {
        path: path.to_path_buf(),
        message: e.message().to_string(),
    })?;
    let invalid = |message: String| Error::Preset {
        path: path.to_path_buf(),
        message,
    };
    if !(file.level > 0.0 && file.level < 1.0) {
        return Err(invalid(format!("level {}: must be in (0, 1)", file.level)));
    }
    for (i, c) in file.claims.iter().enumerate() {
        if !crate::report::study::is_name(&c.name)
            || file.claims[..i].iter().any(|o| o.name == c.name)
        {
            return Err(invalid(format!(
                "claims[{i}]: name {:?} must be unique, lower-case letters, digits and '-'",
                c.name
            )));
        }
        check_claim(c, &file.kinds).map_err(|e| invalid(format!("claim {:?}: {e}", c.name)))?;
    }
    Ok(file)
}

fn check_claim(c: &Claim, kinds: &BTreeMap<String, String>) -> std::result::Result<(), String> {
    let n = c.quantities.len();
    let problem = match c.check {
        Check::Largest | Check::Smallest | Check::Separated | Check::Overlapping if n < 2 => {
            Some("needs at least two quantities")
        }
        Check::Above | Check::Below if c.value.is_none() => Some("needs a value"),
        Check::Above | Check::Below | Check::Significant if n == 0 => {
            Some("needs at least one quantity")
        }
        Check::Correlated if n < 2 || n % 2 == 1 => {
            Some("needs its quantities in pairs (x, y), at least one")
        }
        _ => None,
    };
    if let Some(p) = problem {
        return Err(format!("check {:?} {p}", c.check.name()));
    }
    let leads = matches!(c.check, Check::Largest | Check::Smallest);
    if !(c.margin >= 0.0 && c.margin.is_finite()) || (c.margin > 0.0 && !leads) {
        return Err(format!(
            "margin {}: a lead of 0 or more, for largest and smallest only",
            c.margin
        ));
    }
    for (j, q) in c.quantities.iter().enumerate() {
        if q.model.is_some() && q.family.is_some() {
            return Err(format!(
                "quantities[{j}]: name a model or a family, not both"
            ));
        }
        // A score is tested by its own Wilcoxon test: that it is not 0 (`significant`), or
        // that it is significantly on one side of 0 (`above` / `below` 0).
        let sided = matches!(c.check, Check::Above | Check::Below) && c.value == Some(0.0);
        let scores_allowed = c.check == Check::Significant || sided;
        if q.stat.score_like() && !scores_allowed {
            return Err(format!(
                "quantities[{j}]: the Agarwal & Nenkova scores take \"significant\", or \
                 \"above\" / \"below\" with value 0 ({} has {})",
                c.check.name(),
                q.stat.name()
            ));
        }
        if c.check == Check::Significant && !q.stat.score_like() {
            return Err(format!(
                "quantities[{j}]: \"significant\" takes the Agarwal & Nenkova scores, not {}",
                q.stat.name()
            ));
        }
    }
    if c.check == Check::Correlated {
        let (x, y) = (&c.quantities[0], &c.quantities[1]);
        for (j, pair) in c.quantities.chunks(2).enumerate() {
            let [a, b] = pair else {
                unreachable!("checked: pairs")
            };
            if a.study != b.study || a.model != b.model || a.family != b.family {
                return Err(format!(
                    "quantities[{}] and [{}]: a pair of \"correlated\" names one study and \
                     one model or family, whose seeds are its points",
                    2 * j,
                    2 * j + 1
                ));
            }
            if a.stat != x.stat || b.stat != y.stat || a.stat == b.stat {
                return Err(format!(
                    "quantities[{}] and [{}]: every pair of \"correlated\" names the same two \
                     statistics, x then y ({} then {})",
                    2 * j,
                    2 * j + 1,
                    x.stat.name(),
                    y.stat.name()
                ));
            }
        }
    }
    if c.robust {
        let comparative = matches!(
            c.check,
            Check::Largest | Check::Smallest | Check::Separated | Check::Overlapping
        );
        if !comparative || !c.quantities.iter().all(|q| q.stat.decay_like()) || c.margin > 0.0 {
            return Err(
                "robust takes a largest, smallest, separated or overlapping check \
                        over decay quantities (decay, decay-matched, retention), without a \
                        margin (the definitions have different units)"
                    .into(),
            );
        }
    }
    let seed = (
        c.seed_paper.is_some(),
        c.agrees.is_some(),
        !c.seed_data.is_empty(),
    );
    if seed != (false, false, false) && seed != (true, true, true) {
        return Err(
            "seed_paper, seed_data and agrees go together: the seed paper's claim, \
                    the data it measured it on, and whether this one agrees with it"
                .into(),
        );
    }
    if let Some(unknown) = c.seed_data.iter().find(|d| !kinds.contains_key(*d)) {
        return Err(format!(
            "seed_data {unknown:?} has no kind in [kinds] (it has {})",
            kinds.keys().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(())
}
