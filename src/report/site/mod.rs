//! The gallery under `report/build/site/`: `index.html`, an index of the studies; one
//! static page per study (`<study>.html`) with every model's raw and deviation matrix as
//! inline SVG and the study's tables as HTML; and the interactive [`explorer`]. What
//! every page shares (style, navigation, colour scales) is in `frame`.
//!
//! Matrices are drawn as the paper draws them: rows are the cutoff trained through,
//! columns the slice evaluated on, time increasing upward and to the right from a
//! lower-left origin, with a colour bar. A counting baseline's matrix, flat by design,
//! gets a small panel of its raw scores only. Each filled matrix cell is a
//! `<rect class="cell">` whose `<title>` (shown on hover) says what the cell is: trained
//! through, evaluated on, the seed-mean value, the seeds' sample standard deviation and
//! how many seeds filled it. The pages are self-contained: one style sheet inline, no
//! script on the static pages, no image or font fetched from anywhere, every string from
//! data escaped ([`html_escape`]). They are outputs of the build like the figures, listed
//! in the manifest.
//!
//! Written by hand rather than with plotters, whose SVG cannot carry a `<title>` per
//! element, and rather than a template engine, since the pages are a handful of loops.

pub mod explorer;
mod frame;

use crate::analysis::ModelAnalysis;
use crate::format::html_escape;
use crate::metrics::Metric;
use crate::report::figures::colors;
use crate::report::study::LoadedStudy;
use crate::report::tables::Table;

pub use frame::study_file;
use frame::{nav, page};

/// The gallery's folder, relative to the report root.
pub const DIR: &str = "report/build/site";

/// `index.html`: every study with its models, seeds and slices, linked to its page.
pub fn index_page(studies: &[LoadedStudy]) -> String {
    let mut body = String::from(
        "<h1>Drift matrices</h1>\n<p>One page per study of the paper (<a href=\"../paper.pdf\">\
         paper.pdf</a>): every model's seed-mean drift matrix and its deviation from the \
         cohort mean (hover a cell for its value, the seeds' standard deviation and how many \
         seeds filled it), then the study's tables. The <a href=\"explorer.html\">explorer</a> \
         shows every seed, replays the matrices cutoff by cutoff, puts two models side by \
         side and plots the forgetting curves and training histories.</p>\n<table>\n<thead><tr>\
         <th class=\"t\">study</th><th class=\"t\">models</th><th class=\"n\">seeds</th>\
         <th class=\"t\">slices</th><th class=\"t\">metric</th></tr></thead>\n<tbody>\n",
    );
    for s in studies {
        let a = &s.analysis;
        let models: Vec<String> = a.models.iter().map(|m| html_escape(&m.model)).collect();
        let seeds = a.models.iter().map(|m| m.seeds.len()).max().unwrap_or(0);
        body.push_str(&format!(
            "<tr><td class=\"t\"><a href=\"{}\">{}</a></td><td class=\"t\">{}</td>\
             <td class=\"n\">{seeds}</td><td class=\"t\">{} to {}</td><td class=\"t\">{}</td></tr>\n",
            html_escape(&study_file(&s.spec.name)),
            html_escape(&s.spec.title),
            models.join(", "),
            html_escape(a.slices.first().map_or("", String::as_str)),
            html_escape(a.slices.last().map_or("", String::as_str)),
            a.metric.name()
        ));
    }
    body.push_str("</tbody>\n</table>\n");
    page("drift: the studies", &nav(studies), &body)
}

/// The page of `studies[at]`: every model's matrices, then `tables` (HTML, as
/// [`Table::html_styled`] writes them).
pub fn study_page(studies: &[LoadedStudy], at: usize, tables: &[String]) -> String {
    let study = &studies[at];
    let a = &study.analysis;
    let metric = a.metric;
    let mut body = format!(
        "<h1>{}</h1>\n<p>{} models, slices {} to {}, {} ×{} ({}). Rows: trained through, \
         oldest at the bottom; columns: evaluated on, oldest at the left; the dashed line is \
         the diagonal; grey: no value. The <a href=\"{}\">explorer</a> replays these \
         matrices seed by seed.</p>\n",
        html_escape(&study.spec.title),
        a.models.len(),
        html_escape(a.slices.first().map_or("", String::as_str)),
        html_escape(a.slices.last().map_or("", String::as_str)),
        metric.name(),
        metric.display_scale(),
        if metric.direction() == crate::metrics::Direction::HigherIsBetter {
            "higher is better"
        } else {
            "lower is better"
        },
        html_escape(frame::EXPLORER)
    );
    // One colour scale per page and kind, so that cells compare across models; set by
    // the trained models and clamped at its ends for the baseline.
    let (raw_range, dev_bound) = frame::scales(&a.models);
    for m in &a.models {
        let seeds = format!(
            "{} seed{}",
            m.seeds.len(),
            if m.seeds.len() == 1 { "" } else { "s" }
        );
        if m.baseline {
            // Flat by design: a small panel, and no deviation (it is not in the cohort).
            body.push_str(&format!(
                "<h2 id=\"{}\">{} (counting baseline)</h2>\n<div class=\"pair baseline\">\n\
                 <figure>{}<figcaption>Seed mean ({seeds}) of a baseline that predicts what \
                 it counted in its training data; on the trained models' colour scale, \
                 clamped at its ends.</figcaption></figure>\n</div>\n",
                html_escape(&m.model),
                html_escape(&m.model),
                matrix_svg(&a.slices, m, metric, Kind::Raw(raw_range), 9.0),
            ));
            continue;
        }
        body.push_str(&format!(
            "<h2 id=\"{}\">{}</h2>\n<div class=\"pair\">\n",
            html_escape(&m.model),
            html_escape(&m.model)
        ));
        let cell = if a.slices.len() > 12 { 22.0 } else { 34.0 };
        body.push_str(&format!(
            "<figure>{}<figcaption>Seed mean ({seeds}); one colour scale for the page's \
             trained models.</figcaption></figure>\n",
            matrix_svg(&a.slices, m, metric, Kind::Raw(raw_range), cell),
        ));
        body.push_str(&format!(
            "<figure>{}<figcaption>Deviation from the cohort mean (blue: above it, red: \
             below); one colour scale for the page's trained models.</figcaption></figure>\n",
            matrix_svg(&a.slices, m, metric, Kind::Deviation(dev_bound), cell),
        ));
        body.push_str("</div>\n");
    }
    body.push_str("<h2 id=\"tables\">Tables</h2>\n");
    for t in tables {
        body.push_str(t);
    }
    page(&study.spec.title, &nav(studies), &body)
}

/// Which matrix a picture shows, with its colour scale.
#[derive(Clone, Copy)]
enum Kind {
    /// The seed mean, coloured from the page's smallest to its largest cell.
    Raw((f64, f64)),
    /// The deviation, coloured symmetrically within ± the bound.
    Deviation(f64),
}

impl Kind {
    /// Where `v` falls on the colour scale, in `[0, 1]` before clamping.
    fn position(self, v: f64) -> f64 {
        match self {
            Kind::Raw((lo, hi)) if hi > lo => (v - lo) / (hi - lo),
            Kind::Deviation(b) if b > 0.0 => 0.5 + v / (2.0 * b),
            _ => 0.5,
        }
    }

    fn colour(self, t: f64) -> colors::Rgb {
        match self {
            Kind::Raw(_) => colors::sequential(t),
            Kind::Deviation(_) => colors::diverging(t),
        }
    }

    /// The values at the bottom and top of the colour bar.
    fn ends(self) -> (f64, f64) {
        match self {
            Kind::Raw(range) => range,
            Kind::Deviation(b) => (-b, b),
        }
    }
}

/// One model's matrix as SVG, `cell` pixels a cell: row `i` (trained through slice `i`)
/// drawn upward from the bottom, column `j` rightward, labels of the slices, a `<title>`
/// per filled cell, a colour bar at the right.
fn matrix_svg(
    slices: &[String],
    m: &ModelAnalysis,
    metric: Metric,
    kind: Kind,
    cell: f64,
) -> String {
    let k = slices.len();
    let font = if cell < 20.0 { 9.0 } else { 11.0 };
    let (left, top) = (if cell < 20.0 { 50.0 } else { 70.0 }, 10.0);
    let size = cell * k as f64;
    let bar = (left + size + 14.0, 12.0);
    let (width, height) = (
        bar.0 + bar.1 + 56.0,
        top + size + if cell < 20.0 { 34.0 } else { 45.0 },
    );
    let scale = metric.display_scale();
    let decimals = metric.display_decimals();
    let fmt = |v: f64| format!("{:.*}", decimals, v * scale);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-size=\"{font}\" role=\"img\">\n"
    );
    let grid = match kind {
        Kind::Raw(_) => &m.mean,
        Kind::Deviation(_) => &m.deviation,
    };
    // Row `i` from the bottom.
    let y_of = |i: usize| top + cell * (k - 1 - i) as f64;
    for i in 0..k {
        for j in 0..k {
            let (x, y) = (left + cell * j as f64, y_of(i));
            let Some(v) = grid.get(i, j) else {
                out.push_str(&format!(
                    "<rect x=\"{x}\" y=\"{y}\" width=\"{cell}\" height=\"{cell}\" fill=\"{}\"/>\n",
                    colors::EMPTY.hex()
                ));
                continue;
            };
            let colour = kind.colour(kind.position(v));
            let n = m
                .seed_grids
                .iter()
                .filter(|s| s.grid.get(i, j).is_some())
                .count();
            let sd = m.std.get(i, j).map_or("-".into(), fmt);
            let what = match kind {
                Kind::Raw(_) => format!("{} (sd {sd}, n {n})", fmt(v)),
                Kind::Deviation(_) => format!(
                    "{:+.*} from the cohort mean (cell {}, sd {sd}, n {n})",
                    decimals,
                    v * scale,
                    m.mean.get(i, j).map_or("-".into(), fmt)
                ),
            };
            out.push_str(&format!(
                "<rect class=\"cell\" x=\"{x}\" y=\"{y}\" width=\"{cell}\" height=\"{cell}\" fill=\"{}\">\
                 <title>{}: trained through {}, evaluated on {}: {}</title></rect>\n",
                colour.hex(),
                html_escape(&m.model),
                html_escape(&slices[i]),
                html_escape(&slices[j]),
                what
            ));
        }
    }
    out.push_str(&format!(
        "<line x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{top}\" stroke=\"#fff\" stroke-dasharray=\"4 3\"/>\n",
        top + size,
        left + size,
    ));
    // Every label when they fit, else every other one.
    let every = if cell < 20.0 { 2 } else { 1 };
    for (n, label) in slices.iter().enumerate().filter(|(n, _)| n % every == 0) {
        let c = cell * n as f64 + cell / 2.0;
        out.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>\n",
            left - 4.0,
            y_of(n) + cell / 2.0,
            html_escape(label)
        ));
        out.push_str(&format!(
            "<text transform=\"translate({},{}) rotate(-45)\" text-anchor=\"end\">{}</text>\n",
            left + c,
            top + size + 8.0,
            html_escape(label)
        ));
    }
    out.push_str(&colour_bar(kind, bar, top, size, &fmt));
    out.push_str("</svg>");
    out
}

/// A vertical colour bar of `kind` at `(x, width)`, from `top` down `size` pixels, low
/// values at the bottom, its ends and middle labelled.
fn colour_bar(
    kind: Kind,
    (x, width): (f64, f64),
    top: f64,
    size: f64,
    fmt: &dyn Fn(f64) -> String,
) -> String {
    const STEPS: usize = 24;
    let mut out = String::new();
    let h = size / STEPS as f64;
    for n in 0..STEPS {
        let t = (n as f64 + 0.5) / STEPS as f64;
        out.push_str(&format!(
            "<rect x=\"{x}\" y=\"{}\" width=\"{width}\" height=\"{}\" fill=\"{}\"/>\n",
            top + size - h * (n + 1) as f64,
            h + 0.5,
            kind.colour(t).hex()
        ));
    }
    let (lo, hi) = kind.ends();
    let signed = |v: f64| match kind {
        Kind::Deviation(_) if v > 0.0 => format!("+{}", fmt(v)),
        _ => fmt(v),
    };
    for (y, v) in [
        (top + size, lo),
        (top + size / 2.0, (lo + hi) / 2.0),
        (top, hi),
    ] {
        out.push_str(&format!(
            "<text x=\"{}\" y=\"{y}\" dominant-baseline=\"middle\">{}</text>\n",
            x + width + 3.0,
            html_escape(&signed(v))
        ));
    }
    out
}

/// The HTML of every table of a study, in order.
pub fn tables_html(tables: &[Table]) -> Vec<String> {
    tables.iter().map(Table::html_styled).collect()
}
