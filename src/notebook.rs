//! Inline display in the Jupyter notebooks under `notebooks/` (the evcxr Rust kernel).
//!
//! evcxr shows a cell's value inline when its type has an inherent method
//! `evcxr_display(&self)` that prints `EVCXR_BEGIN_CONTENT <mime>`, the content and
//! `EVCXR_END_CONTENT` to stdout. The types people look at have one:
//!
//! | value | shows as |
//! |---|---|
//! | [`DriftMatrix`] | heatmap of the seed mean above a compact table of its cells |
//! | [`Summary`] | ID / future / decay, the Agarwal & Nenkova scores and the per-cutoff rows, as HTML tables |
//! | [`StudyAnalysis`] | every model's ID / future / decay and ranks with the cohort's, the family averages, and drift-happens' robustness scores ranked by H, as HTML tables |
//! | [`TemporalEffects`] | the four scores with p-values and min / max over seeds, as an HTML table |
//! | [`Curve`] | its forgetting curve, as a chart |
//! | [`Figure::history`] | a run's training history (loss and gradient norm by epoch) |
//! | [`Figure`] | any SVG figure of [`crate::report::figures`] |
//! | [`Table`] | its cells, as an HTML table |
//!
//! A frontend shows one MIME type of an output, so a value with a picture and a table
//! sends one `text/html` document holding both, with the picture alone as
//! `image/svg+xml` and the table as `text/plain` beside it for frontends without HTML.
//! [`Bundle`] is what each value sends; `evcxr_display` only prints it. A study's numbers
//! are read from its [`StudyAnalysis`] (the value the report's figures and tables read),
//! never recomputed here.
//!
//! Nothing here adds a dependency, so it is not behind a cargo feature.

use std::io::Write as _;

use crate::analysis::{SCORES, StudyAnalysis, Summary, TemporalEffects, TemporalScore};
use crate::format::{self, MISSING};
use crate::matrix::{DriftMatrix, Grid};
use crate::metrics::Metric;
use crate::report::figures::{self, Curve, CurveOptions, HeatmapOptions, Scale};
use crate::{Error, Result};

/// A table of text cells, shown as HTML (the crate's one table type).
pub use crate::table::Table;

/// The outputs of one value: `(MIME type, content)` pairs, richest first.
pub type Bundle = Vec<(&'static str, String)>;

/// Prints `bundle` in evcxr's protocol.
fn emit(bundle: &Bundle) {
    let mut out = std::io::stdout().lock();
    for (mime, content) in bundle {
        // A closed stdout means the kernel is gone; there is no one left to tell.
        let _ = writeln!(
            out,
            "EVCXR_BEGIN_CONTENT {mime}\n{content}\nEVCXR_END_CONTENT"
        );
    }
    let _ = out.flush();
}

macro_rules! evcxr_display {
    ($($ty:ty),*) => {$(
        impl $ty {
            /// Shows the value inline in a notebook (evcxr calls this; see [`crate::notebook`]).
            pub fn evcxr_display(&self) {
                emit(&self.bundle());
            }
        }
    )*};
}

evcxr_display!(
    DriftMatrix,
    Summary,
    StudyAnalysis,
    TemporalEffects,
    Curve,
    Figure,
    Table
);

/// An SVG figure, shown as an image.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    svg: String,
}

impl Figure {
    /// Wraps an SVG document, e.g. one of [`crate::report::figures`]'s functions returned.
    pub fn new(svg: String) -> Figure {
        Figure { svg }
    }

    /// The SVG document.
    pub fn svg(&self) -> &str {
        &self.svg
    }

    /// The heatmap of `grid` (a seed mean or a cohort mean) with its own colour scale: the
    /// 5th to the 95th percentile of its cells, reversed for lower-is-better metrics.
    pub fn heatmap(grid: &Grid, slices: &[String], metric: Metric, title: &str) -> Result<Figure> {
        let scale = Scale::shared_sequential(&[grid])
            .ok_or_else(|| Error::Invalid(format!("heatmap {title:?}: no filled cell")))?;
        let opts = HeatmapOptions::raw(metric, (!title.is_empty()).then(|| title.to_string()));
        figures::heatmap(grid, slices, scale, &opts).map(Figure::new)
    }

    /// The heatmap of a deviation grid (`analysis::deviation`, a model minus the cohort
    /// mean) on a diverging scale symmetric around zero.
    pub fn deviation(
        grid: &Grid,
        slices: &[String],
        metric: Metric,
        title: &str,
    ) -> Result<Figure> {
        // An all-zero deviation (a cohort of one) is fine: `Scale::range` widens it.
        let scale = Scale::shared_diverging(&[grid])
            .ok_or_else(|| Error::Invalid(format!("deviation {title:?}: no filled cell")))?;
        let opts =
            HeatmapOptions::deviation(metric, (!title.is_empty()).then(|| title.to_string()));
        figures::heatmap(grid, slices, scale, &opts).map(Figure::new)
    }

    /// Forgetting curves (mean ± std over seeds where known) in one chart.
    pub fn curves(curves: &[Curve], metric: Metric, title: &str) -> Result<Figure> {
        let opts = CurveOptions::forgetting(metric, (!title.is_empty()).then(|| title.to_string()));
        figures::forgetting_curves(curves, &opts).map(Figure::new)
    }

    /// A run's training history (`history.json`): loss and gradient norm before
    /// clipping, epoch by epoch, one line per cutoff.
    pub fn history(history: &[crate::artifacts::CutoffHistory]) -> Result<Figure> {
        figures::training_history(history).map(Figure::new)
    }

    /// What [`Figure::evcxr_display`] sends.
    pub fn bundle(&self) -> Bundle {
        vec![("image/svg+xml", self.svg.clone())]
    }
}

impl Table {
    /// What [`Table::evcxr_display`] sends.
    pub fn bundle(&self) -> Bundle {
        vec![("text/html", self.html()), ("text/plain", self.text())]
    }
}

/// `v` with `decimals` decimals, `–` when there is none ([`format::fixed_or_missing`]).
pub fn number(v: Option<f64>, decimals: usize) -> String {
    format::fixed_or_missing(v, decimals)
}

/// A p-value as the tables write it: three decimals, or `<0.001`
/// ([`format::p_value_or_missing`]).
pub fn p_value(p: Option<f64>) -> String {
    format::p_value_or_missing(p)
}

/// The `<svg>` element of an SVG document, to inline in HTML.
fn inline_svg(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |at| &svg[at..])
}

fn html_block(parts: &[String]) -> String {
    format!("<div class=\"drift\">{}</div>", parts.concat())
}

/// Several tables as one HTML block, and as plain text one after the other.
fn tables_bundle(tables: &[Table]) -> Bundle {
    let html: Vec<String> = tables.iter().map(Table::html).collect();
    let text: Vec<String> = tables.iter().map(Table::text).collect();
    vec![
        ("text/html", html_block(&html)),
        ("text/plain", text.join("\n\n")),
    ]
}

fn seeds_text(seeds: &[u64]) -> String {
    let seeds: Vec<String> = seeds.iter().map(u64::to_string).collect();
    seeds.join(", ")
}

impl DriftMatrix {
    /// The seed-mean cells as a compact table: one row per cutoff (trained through), one
    /// column per evaluation slice, three decimals, `·` for an empty cell.
    pub fn table(&self) -> Table {
        let mean = self.mean();
        let mut header = vec!["trained through ↓ / evaluated on →"];
        header.extend(self.slices().iter().map(String::as_str));
        let rows = mean
            .rows()
            .zip(self.slices())
            .map(|(row, label)| {
                std::iter::once(label.clone())
                    .chain(
                        row.iter()
                            .map(|v| v.map_or("·".into(), |v| format::fixed(v, 3))),
                    )
                    .collect()
            })
            .collect();
        let caption = format!(
            "{} over {} slices, mean over seeds {}",
            self.metric().name(),
            self.k(),
            seeds_text(self.seeds())
        );
        Table::new(&caption, &header, rows).expect("every row has one cell per slice")
    }

    /// What [`DriftMatrix::evcxr_display`] sends: the heatmap of the seed mean and
    /// [`DriftMatrix::table`].
    pub fn bundle(&self) -> Bundle {
        let table = self.table();
        let mut bundle = Vec::new();
        match Figure::heatmap(&self.mean(), self.slices(), self.metric(), "") {
            Ok(figure) => {
                bundle.push((
                    "text/html",
                    html_block(&[inline_svg(figure.svg()).to_string(), table.html()]),
                ));
                bundle.push(("image/svg+xml", figure.svg));
            }
            // An empty matrix has no picture; its table says so.
            Err(_) => bundle.push(("text/html", table.html())),
        }
        bundle.push(("text/plain", table.text()));
        bundle
    }
}

/// The four Agarwal & Nenkova scores as a table.
fn effects_table(effects: &TemporalEffects) -> Table {
    let row = |name: &str, formula: &str, s: &TemporalScore| {
        vec![
            name.to_string(),
            formula.to_string(),
            number(s.score, 4),
            p_value(s.p_value),
            s.n.to_string(),
            number(s.min, 4),
            number(s.max, 4),
        ]
    };
    let rows = SCORES
        .iter()
        .zip(effects.all())
        .map(|((name, formula), score)| row(name, formula, &score))
        .collect();
    let header = [
        "score",
        "difference",
        "mean",
        "Wilcoxon p",
        "n",
        "min over seeds",
        "max over seeds",
    ];
    Table::new("Agarwal & Nenkova scores on the seed mean", &header, rows)
        .expect("seven cells per row")
}

impl TemporalEffects {
    /// The four scores as a [`Table`].
    pub fn table(&self) -> Table {
        effects_table(self)
    }

    /// What [`TemporalEffects::evcxr_display`] sends.
    pub fn bundle(&self) -> Bundle {
        self.table().bundle()
    }
}

impl Summary {
    /// ID, future and decay of the whole matrix.
    pub fn overall(&self) -> Table {
        let first_last = match (self.slices.first(), self.slices.last()) {
            (Some(a), Some(b)) => format!("{a} – {b}"),
            _ => String::new(),
        };
        let caption = format!(
            "{} over {} slices ({first_last}), seeds {}",
            self.metric.name(),
            self.slices.len(),
            seeds_text(&self.seeds)
        );
        let row = vec![
            number(self.id, 4),
            number(self.future, 4),
            number(self.decay, 4),
        ];
        Table::new(&caption, &["ID", "future", "decay"], vec![row]).expect("three cells")
    }

    /// ID, future and decay of each cutoff's row.
    pub fn cutoffs(&self) -> Table {
        let rows = self
            .per_cutoff
            .iter()
            .map(|c| {
                vec![
                    c.slice.clone(),
                    number(c.row.scores.id, 4),
                    number(c.row.scores.future, 4),
                    number(c.row.scores.decay, 4),
                ]
            })
            .collect();
        Table::new(
            "per cutoff (trained through the slice)",
            &["cutoff", "ID", "future", "decay"],
            rows,
        )
        .expect("four cells")
    }

    /// The four Agarwal & Nenkova scores.
    pub fn effects(&self) -> Table {
        effects_table(&self.effects)
    }

    /// What [`Summary::evcxr_display`] sends.
    pub fn bundle(&self) -> Bundle {
        tables_bundle(&[self.overall(), self.effects(), self.cutoffs()])
    }
}

impl StudyAnalysis {
    /// Every model's family, seeds, ID, future and decay on its seed mean and its ranks by
    /// future score and by decay, then the cohort mean's scores.
    pub fn table(&self) -> Table {
        let rank = |ranking: &[crate::analysis::Ranked], model: &str| {
            ranking
                .iter()
                .find(|r| r.model == model)
                .map_or(MISSING.into(), |r| r.rank.to_string())
        };
        let mut rows: Vec<Vec<String>> = self
            .models
            .iter()
            .map(|m| {
                vec![
                    m.model.clone(),
                    m.family.clone(),
                    m.seeds.len().to_string(),
                    number(m.overall.id, 4),
                    number(m.overall.future, 4),
                    number(m.overall.decay, 4),
                    rank(&self.by_future, &m.model),
                    rank(&self.by_decay, &m.model),
                ]
            })
            .collect();
        let c = &self.cohort_overall;
        rows.push(vec![
            "cohort mean".into(),
            String::new(),
            String::new(),
            number(c.id, 4),
            number(c.future, 4),
            number(c.decay, 4),
            String::new(),
            String::new(),
        ]);
        let header = [
            "model",
            "family",
            "seeds",
            "ID",
            "future",
            "decay",
            "rank (future)",
            "rank (decay)",
        ];
        let caption = format!(
            "{} over {} slices, on each model's seed mean",
            self.metric.name(),
            self.slices.len()
        );
        Table::new(&caption, &header, rows).expect("eight cells per row")
    }

    /// The family averages at the spread cutoffs and over them.
    pub fn families_table(&self) -> Table {
        let rows = self
            .families
            .iter()
            .map(|f| {
                vec![
                    f.family.clone(),
                    f.cutoff
                        .map_or("mean".to_string(), |c| self.slices[c].clone()),
                    f.models.to_string(),
                    number(f.scores.id, 4),
                    number(f.scores.future, 4),
                    number(f.scores.decay, 4),
                ]
            })
            .collect();
        Table::new(
            "family averages at the spread cutoffs, and their mean",
            &["family", "cutoff", "models", "ID", "future", "decay"],
            rows,
        )
        .expect("six cells per row")
    }

    /// drift-happens' robustness family per trained model at its default parameters:
    /// each score's mean over seeds and H's sd, ranked by the mean H (best first).
    pub fn robustness_scores_table(&self) -> Table {
        let rows: Vec<Vec<String>> = crate::analysis::ranked_by_h(&self.models)
            .into_iter()
            .map(|(m, means)| {
                let h = means.last().and_then(|(_, h)| *h);
                let mut row = vec![m.model.clone(), m.robustness_scores.len().to_string()];
                row.extend(means.iter().map(|(_, s)| number(s.map(|s| s.mean), 3)));
                row.push(number(h.and_then(|h| h.sd), 3));
                row
            })
            .collect();
        let mut header = vec!["model", "seeds"];
        header.extend(crate::analysis::SCORE_NAMES.iter().map(|(name, _)| *name));
        header.push("H sd");
        Table::new(
            "robustness scores of drift-happens (alpha 1, tau 0.1, lambda 0.5, beta 0), mean \
             over seeds, ranked by H",
            &header,
            rows,
        )
        .expect("eleven cells per row")
    }

    /// What [`StudyAnalysis::evcxr_display`] sends.
    pub fn bundle(&self) -> Bundle {
        tables_bundle(&[
            self.table(),
            self.families_table(),
            self.robustness_scores_table(),
        ])
    }
}

impl Curve {
    /// What [`Curve::evcxr_display`] sends: the chart of this one curve, or its points as
    /// text when it has none to draw.
    pub fn bundle(&self) -> Bundle {
        let opts = CurveOptions {
            title: Some(self.label.clone()),
            y_label: String::new(),
            std_band: true,
        };
        let text = self
            .points
            .iter()
            .map(|p| format!("lag {}: {}", p.lag, format::fixed(p.mean, 4)))
            .collect::<Vec<_>>()
            .join("\n");
        match figures::forgetting_curves(std::slice::from_ref(self), &opts) {
            Ok(svg) => vec![("image/svg+xml", svg), ("text/plain", text)],
            Err(_) => vec![("text/plain", text)],
        }
    }
}
