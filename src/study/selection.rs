//! Which of a plan's items to execute under a [`Rerun`] choice, clearing what is redone
//! from scratch, and the `--plan` listing of them.

use std::collections::BTreeMap;

use super::item::{Stage, State, Work};
use super::plan::StudyPlan;
use super::timings::seconds;
use crate::{Error, Result};

/// Which existing results to redo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Rerun {
    /// None: stale items are an error.
    #[default]
    None,
    /// Stale items (their old output is removed first).
    Stale,
    /// Every item.
    All,
}

impl StudyPlan {
    /// The items to execute under `rerun`: those not done, plus every item after one of
    /// them (a redone run makes its saliency maps and the paper out of date). Stale items
    /// are an error under [`Rerun::None`], naming each with its reason.
    pub fn selected(&self, rerun: Rerun) -> Result<Vec<usize>> {
        if rerun == Rerun::None {
            let stale: Vec<String> = self
                .items
                .iter()
                .filter(|i| matches!(i.state, State::Stale(_)))
                .map(|i| format!("  {}: {}", i.id, i.state.detail()))
                .collect();
            if !stale.is_empty() {
                return Err(Error::Invalid(format!(
                    "{} item(s) have results made for something else; drift never reuses or \
                     overwrites them silently: pass --rerun stale to redo them (or --rerun \
                     all to redo everything)\n{}",
                    stale.len(),
                    stale.join("\n")
                )));
            }
        }
        let mut chosen = vec![false; self.items.len()];
        for (i, item) in self.items.iter().enumerate() {
            let upstream = item.deps.iter().any(|&d| chosen[d]);
            chosen[i] = rerun == Rerun::All
                || item.state != State::Done
                || (upstream && matches!(item.stage, Stage::Saliency | Stage::Report));
        }
        Ok((0..self.items.len()).filter(|&i| chosen[i]).collect())
    }

    /// Removes the old output of the selected items that are redone from scratch: stale
    /// ones, and every run under [`Rerun::All`]. A resumable run's checkpoints stay.
    pub fn clear(&self, selected: &[usize], rerun: Rerun) -> Result<()> {
        for &i in selected {
            let item = &self.items[i];
            let redo = rerun == Rerun::All || matches!(item.state, State::Stale(_));
            if !redo {
                continue;
            }
            let dirs = match &item.work {
                Work::Run { dir, .. } => std::slice::from_ref(dir),
                Work::Baseline { dirs, .. } => dirs.as_slice(),
                _ => &[],
            };
            for dir in dirs.iter().filter(|d| d.exists()) {
                std::fs::remove_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            }
        }
        Ok(())
    }

    /// The `--plan` listing: one line per item with its state, the reason, and the
    /// estimate; then the totals.
    pub fn describe(&self, selected: &[usize]) -> String {
        let width = self.items.iter().map(|i| i.id.len()).max().unwrap_or(0);
        let mut text = String::new();
        for (i, item) in self.items.iter().enumerate() {
            let runs = if selected.contains(&i) { "*" } else { " " };
            text += &format!(
                "{runs} {:<width$}  {:<7}  {:>8}  {}\n",
                item.id,
                item.state.name(),
                item.estimate.map_or("-".into(), seconds),
                item.state.detail()
            );
        }
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for item in &self.items {
            *counts.entry(item.state.name()).or_default() += 1;
        }
        let tally: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
        let known: f64 = selected
            .iter()
            .filter_map(|&i| self.items[i].estimate)
            .sum();
        let unknown = selected
            .iter()
            .filter(|&&i| self.items[i].estimate.is_none())
            .count();
        text += &format!(
            "{} items ({}); {} to run (*), estimated {} of work{}\n",
            self.items.len(),
            tally.join(", "),
            selected.len(),
            seconds(known),
            if unknown > 0 {
                format!(" plus {unknown} without an earlier timing")
            } else {
                String::new()
            }
        );
        text
    }
}
