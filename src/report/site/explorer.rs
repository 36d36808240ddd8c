//! The gallery's interactive explorer (`explorer.html`): one self-contained page that
//! holds every study's analysed matrices as JSON and a small script (`explorer.js`) that
//! draws them. A reader picks a study, a model and a seed (or the seed mean), switches
//! between the raw matrix and its deviation from the cohort mean, replays the matrix
//! cutoff by cutoff, reads the forgetting curves with their seed bands and the runs'
//! training histories, and puts two models side by side; every value can be read on
//! hover and by keyboard.
//!
//! The numbers are the study analyses' own ([`crate::analysis::ModelAnalysis`]: seed
//! mean, deviation, standard deviation, each seed's grid, deviation and forgetting curve)
//! and the runs' `history.json`; the script computes none, it only looks them up and
//! colours them from palettes sampled here from the figures' colour maps. Nothing is
//! fetched: the data sit in a `<script type="application/json">` element.

use serde::Serialize;

use crate::analysis::{ForgettingPoint, ModelAnalysis};
use crate::artifacts::{CutoffHistory, ModelRuns};
use crate::matrix::Grid;
use crate::metrics::Direction;
use crate::report::figures::colors;
use crate::report::study::LoadedStudy;

use super::frame;

/// The page's file, relative to the gallery folder.
pub const FILE: &str = frame::EXPLORER;

/// The script, as written by hand: a page of a few hundred lines needs no framework.
const SCRIPT: &str = include_str!("explorer.js");

/// The page's own style, after the gallery's.
const STYLE: &str = include_str!("explorer.css");

/// How many colours each palette holds (the script picks the nearest).
const PALETTE: usize = 101;

/// A grid as rows of cells, `null` where empty.
type Cells = Vec<Vec<Option<f64>>>;

fn cells(grid: &Grid) -> Cells {
    grid.rows().map(<[Option<f64>]>::to_vec).collect()
}

/// Everything the script reads.
#[derive(Serialize)]
struct Data<'a> {
    /// Colours of the raw matrices, low to high, then of the deviations.
    sequential: Vec<String>,
    diverging: Vec<String>,
    empty: String,
    studies: Vec<StudyData<'a>>,
}

#[derive(Serialize)]
struct StudyData<'a> {
    name: &'a str,
    title: &'a str,
    /// Its static page, for readers who want the tables.
    page: String,
    slices: &'a [String],
    metric: &'static str,
    scale: f64,
    decimals: usize,
    higher_is_better: bool,
    /// The colour scales of the study page: raw from the trained models' smallest to
    /// largest seed-mean cell, deviation within ± the largest absolute deviation.
    raw_range: (f64, f64),
    deviation_bound: f64,
    models: Vec<ModelData<'a>>,
}

#[derive(Serialize)]
struct ModelData<'a> {
    name: &'a str,
    family: &'a str,
    baseline: bool,
    mean: Cells,
    deviation: Cells,
    std: Cells,
    forgetting: &'a [ForgettingPoint],
    seeds: Vec<SeedData<'a>>,
}

#[derive(Serialize)]
struct SeedData<'a> {
    seed: u64,
    cells: Cells,
    /// `null` when the cohort has no grid of this seed.
    deviation: Option<Cells>,
    forgetting: &'a [(usize, f64)],
    /// Whether each cutoff's checkpoint collapsed (its row is left out of the analyses
    /// when the study says so).
    collapsed: Vec<bool>,
    /// `null` for a run made before `history.json`.
    history: Option<&'a [CutoffHistory]>,
}

fn model_data<'a>(m: &'a ModelAnalysis, runs: &'a ModelRuns) -> ModelData<'a> {
    let k = m.mean.k();
    let seeds = m
        .seed_grids
        .iter()
        .map(|s| {
            let at = runs.provenance.iter().position(|p| p.seed == s.seed);
            SeedData {
                seed: s.seed,
                cells: cells(&s.grid),
                deviation: s.deviation.as_ref().map(cells),
                forgetting: &s.forgetting,
                collapsed: (0..k).map(|i| runs.collapsed(s.seed, i)).collect(),
                history: at
                    .and_then(|n| runs.history.get(n))
                    .and_then(Option::as_deref),
            }
        })
        .collect();
    ModelData {
        name: &m.model,
        family: &m.family,
        baseline: m.baseline,
        mean: cells(&m.mean),
        deviation: cells(&m.deviation),
        std: cells(&m.std),
        forgetting: &m.forgetting,
        seeds,
    }
}

/// The data of every study as JSON that can sit inside a `<script>` element: `<` is
/// written as `\u003c` (it occurs only inside strings), so no `</script>` can end it.
fn data_json(studies: &[LoadedStudy]) -> String {
    let palette = |f: fn(f64) -> colors::Rgb| {
        (0..PALETTE)
            .map(|n| f(n as f64 / (PALETTE - 1) as f64).hex())
            .collect()
    };
    let data = Data {
        sequential: palette(colors::sequential),
        diverging: palette(colors::diverging),
        empty: colors::EMPTY.hex(),
        studies: studies
            .iter()
            .map(|s| {
                let a = &s.analysis;
                let (raw_range, deviation_bound) = frame::scales(&a.models);
                StudyData {
                    name: &s.spec.name,
                    title: &s.spec.title,
                    page: frame::study_file(&s.spec.name),
                    slices: &a.slices,
                    metric: a.metric.name(),
                    scale: a.metric.display_scale(),
                    decimals: a.metric.display_decimals(),
                    higher_is_better: a.metric.direction() == Direction::HigherIsBetter,
                    raw_range,
                    deviation_bound,
                    models: a
                        .models
                        .iter()
                        .zip(&s.runs)
                        .map(|(m, r)| model_data(m, r))
                        .collect(),
                }
            })
            .collect(),
    };
    serde_json::to_string(&data)
        .expect("the explorer's data serialise")
        .replace('<', "\\u003c")
}

/// `explorer.html`.
pub fn page(studies: &[LoadedStudy]) -> String {
    let body = format!(
        "<h1>Explorer</h1>\n\
         <noscript><p class=\"note\">The explorer needs JavaScript. Every matrix is also on \
         the static pages (<a href=\"index.html\">index</a>).</p></noscript>\n\
         <form id=\"controls\" class=\"controls\" aria-label=\"What to show\">\n\
         <label>Study <select id=\"study\"></select></label>\n\
         <label>Model <select id=\"model\"></select></label>\n\
         <label>Seed <select id=\"seed\"></select></label>\n\
         <label>Beside it <select id=\"compare\"></select></label>\n\
         <fieldset id=\"view\"><legend>Matrix</legend>\
         <label><input type=\"radio\" name=\"view\" value=\"raw\" checked> raw</label>\
         <label><input type=\"radio\" name=\"view\" value=\"deviation\"> deviation from the \
         cohort mean</label></fieldset>\n\
         <fieldset id=\"replay\"><legend>Replay by cutoff</legend>\
         <button type=\"button\" id=\"back\" aria-label=\"One cutoff back\">◀</button>\
         <button type=\"button\" id=\"play\">Play</button>\
         <button type=\"button\" id=\"forward\" aria-label=\"One cutoff forward\">▶</button>\
         <input type=\"range\" id=\"through\" min=\"1\" step=\"1\" aria-label=\"Trained through\">\
         <output id=\"through-label\" for=\"through\"></output></fieldset>\n\
         </form>\n\
         <p id=\"about\" class=\"note\"></p>\n\
         <div id=\"panels\" class=\"panels\"></div>\n\
         <p id=\"readout\" class=\"readout\" aria-live=\"polite\">Hover a cell, or focus a \
         matrix (Tab) and move with the arrow keys, to read its value.</p>\n\
         <h2>Forgetting curves</h2>\n<div id=\"forgetting\"></div>\n\
         <h2>Training history</h2>\n<div id=\"history\"></div>\n\
         <script type=\"application/json\" id=\"explorer-data\">{}</script>\n\
         <script>{SCRIPT}</script>\n",
        data_json(studies)
    );
    frame::page_with(
        "drift: explorer",
        &frame::nav(studies),
        &format!("{}{STYLE}", frame::STYLE),
        &body,
    )
}
