//! Rankings of models by future score and by decay.

use serde::Serialize;

use super::robustness::Robustness;
use crate::metrics::Direction;

/// One place in a ranking.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ranked {
    /// 1-based rank.
    pub rank: usize,
    /// Model key.
    pub model: String,
    /// The value ranked on.
    pub value: f64,
    /// Whether its seed range overlaps the next place's, so the seeds do not order the
    /// two ([`super::ties_with_next`]; false until a study marks it).
    pub tied_with_next: bool,
}

fn rank(mut entries: Vec<(String, f64)>, ascending: bool) -> Vec<Ranked> {
    // Ties keep name order so the ranking is the same on every run.
    entries.sort_by(|a, b| {
        let by_value = a.1.total_cmp(&b.1);
        (if ascending {
            by_value
        } else {
            by_value.reverse()
        })
        .then_with(|| a.0.cmp(&b.0))
    });
    entries
        .into_iter()
        .enumerate()
        .map(|(n, (model, value))| Ranked {
            rank: n + 1,
            model,
            value,
            tied_with_next: false,
        })
        .collect()
}

/// Models by future score, best first; models without one are left out.
pub fn rank_by_future(models: &[(&str, Robustness)], direction: Direction) -> Vec<Ranked> {
    let entries = models
        .iter()
        .filter_map(|(m, r)| r.future.map(|v| (m.to_string(), v)))
        .collect();
    rank(entries, direction == Direction::LowerIsBetter)
}

/// Models by decay, smallest (most robust) first; models without one are left out.
pub fn rank_by_decay(models: &[(&str, Robustness)]) -> Vec<Ranked> {
    let entries = models
        .iter()
        .filter_map(|(m, r)| r.decay.map(|v| (m.to_string(), v)))
        .collect();
    rank(entries, true)
}
