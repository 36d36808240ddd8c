//! The static gallery under `report/build/site/`: `index.html`, an index of the studies,
//! and one page per study (`<study>.html`) with every model's raw and deviation matrix as
//! inline SVG and the study's tables as HTML.
//!
//! Each filled matrix cell is a `<rect class="cell">` whose `<title>` (shown on hover)
//! says what the cell is: trained through, evaluated on, the seed-mean value, the seeds'
//! sample standard deviation and how many seeds filled it. The pages are self-contained:
//! one style sheet inline, no script, no image or font fetched from anywhere, every
//! string from data escaped ([`html_escape`]). They are outputs of the build like the
//! figures, listed in the manifest.
//!
//! Written by hand rather than with plotters, whose SVG cannot carry a `<title>` per
//! element, and rather than a template engine, since the pages are a handful of loops.

use crate::analysis::ModelAnalysis;
use crate::artifacts::ModelRuns;
use crate::format::html_escape;
use crate::matrix::Grid;
use crate::metrics::Metric;
use crate::report::figures::colors;
use crate::report::study::LoadedStudy;
use crate::report::tables::Table;

/// The gallery's folder, relative to the report root.
pub const DIR: &str = "report/build/site";

/// The style sheet of every page.
const STYLE: &str = "body{font-family:sans-serif;margin:1.5em auto;max-width:70em;\
color:#222;padding:0 1em}nav a{margin-right:1em}h2{margin-top:2em;border-bottom:1px solid #ccc}\
.pair{display:flex;flex-wrap:wrap;gap:2em}figure{margin:0}figcaption{font-size:90%;color:#555;max-width:22em}\
rect.cell:hover{stroke:#000;stroke-width:2}table{border-collapse:collapse;margin:1em 0 2em;\
font-size:85%}caption{text-align:left;color:#555;padding-bottom:.3em}th,td{padding:2px 8px;\
border-bottom:1px solid #eee}td.n,th.n{text-align:right}td.t,th.t{text-align:left}";

/// A page: title, navigation and body.
fn page(title: &str, nav: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<nav>{nav}</nav>\n{body}</body>\n</html>\n",
        html_escape(title)
    )
}

/// The page file of a study, relative to the gallery folder.
pub fn study_file(name: &str) -> String {
    format!("{name}.html")
}

/// The navigation bar: the index, then every study.
fn nav(studies: &[LoadedStudy]) -> String {
    let mut out = String::from("<a href=\"index.html\">Index</a>");
    for s in studies {
        out.push_str(&format!(
            "<a href=\"{}\">{}</a>",
            html_escape(&study_file(&s.spec.name)),
            html_escape(&s.spec.title)
        ));
    }
    out
}

/// `index.html`: every study with its models, seeds and slices, linked to its page.
pub fn index_page(studies: &[LoadedStudy]) -> String {
    let mut body = String::from(
        "<h1>Drift matrices</h1>\n<p>One page per study of the paper (<a href=\"../paper.pdf\">\
         paper.pdf</a>): every model's seed-mean drift matrix and its deviation from the \
         cohort mean (hover a cell for its value, the seeds' standard deviation and how many \
         seeds filled it), then the study's tables.</p>\n<table>\n<thead><tr>\
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
        "<h1>{}</h1>\n<p>{} models, slices {} to {}, {} ×{} ({}). Rows: trained through; \
         columns: evaluated on; the dashed line is the diagonal; grey: no value.</p>\n",
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
        }
    );
    let shown = |v: f64| {
        format!(
            "{:.*}",
            metric.display_decimals(),
            v * metric.display_scale()
        )
    };
    // One colour scale per page and kind, so that cells compare across models; set by
    // the trained models (a counting baseline's far-off cells would wash out theirs) and
    // clamped at its ends for the baseline.
    let trained = || a.models.iter().filter(|m| !m.baseline);
    let raw_range = range(trained().map(|m| &m.mean));
    let dev_bound = trained()
        .flat_map(|m| m.deviation.filled().map(|(_, _, v)| v.abs()))
        .fold(0.0f64, f64::max);
    for (m, runs) in a.models.iter().zip(&study.runs) {
        body.push_str(&format!(
            "<h2 id=\"{}\">{}</h2>\n<div class=\"pair\">\n",
            html_escape(&m.model),
            html_escape(&m.model)
        ));
        body.push_str(&format!(
            "<figure>{}<figcaption>Seed mean ({} seed{}); colour from {} (purple) to {} \
             (yellow), one scale for the page's trained models.</figcaption></figure>\n",
            matrix_svg(&a.slices, m, runs, metric, Kind::Raw(raw_range)),
            m.seeds.len(),
            if m.seeds.len() == 1 { "" } else { "s" },
            shown(raw_range.0),
            shown(raw_range.1)
        ));
        body.push_str(&format!(
            "<figure>{}<figcaption>Deviation from the cohort mean; colour from −{b} (red) \
             to +{b} (blue), one scale for the page's trained models.</figcaption></figure>\n",
            matrix_svg(&a.slices, m, runs, metric, Kind::Deviation(dev_bound)),
            b = shown(dev_bound)
        ));
        body.push_str("</div>\n");
    }
    body.push_str("<h2 id=\"tables\">Tables</h2>\n");
    for t in tables {
        body.push_str(t);
    }
    page(&study.spec.title, &nav(studies), &body)
}

/// The smallest and largest filled cell of `grids`.
fn range<'a>(grids: impl Iterator<Item = &'a Grid>) -> (f64, f64) {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for (_, _, v) in grids.flat_map(Grid::filled) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi { (0.0, 1.0) } else { (lo, hi) }
}

/// Which matrix a picture shows, with its colour scale.
#[derive(Clone, Copy)]
enum Kind {
    /// The seed mean, coloured from the page's smallest to its largest cell.
    Raw((f64, f64)),
    /// The deviation, coloured symmetrically within ± the bound.
    Deviation(f64),
}

/// One model's matrix as SVG: a square per cell, labels of the slices, a `<title>` per
/// filled cell.
fn matrix_svg(
    slices: &[String],
    m: &ModelAnalysis,
    runs: &ModelRuns,
    metric: Metric,
    kind: Kind,
) -> String {
    let k = slices.len();
    let cell = if k > 12 { 22.0 } else { 34.0 };
    let (left, top) = (70.0, 20.0);
    let size = cell * k as f64;
    let (width, height) = (left + size + 10.0, top + size + 45.0);
    let sd = runs.matrix.std();
    let scale = metric.display_scale();
    let decimals = metric.display_decimals();
    let fmt = |v: f64| format!("{:.*}", decimals, v * scale);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-size=\"11\" role=\"img\">\n"
    );
    let grid = match kind {
        Kind::Raw(_) => &m.mean,
        Kind::Deviation(_) => &m.deviation,
    };
    for i in 0..k {
        for j in 0..k {
            let (x, y) = (left + cell * j as f64, top + cell * i as f64);
            let Some(v) = grid.get(i, j) else {
                out.push_str(&format!(
                    "<rect x=\"{x}\" y=\"{y}\" width=\"{cell}\" height=\"{cell}\" fill=\"{}\"/>\n",
                    colors::EMPTY.hex()
                ));
                continue;
            };
            let t = match kind {
                Kind::Raw((lo, hi)) if hi > lo => (v - lo) / (hi - lo),
                Kind::Raw(_) => 0.5,
                Kind::Deviation(b) if b > 0.0 => 0.5 + v / (2.0 * b),
                Kind::Deviation(_) => 0.5,
            };
            let colour = match kind {
                Kind::Raw(_) => colors::sequential(t),
                Kind::Deviation(_) => colors::diverging(t),
            };
            let n = runs
                .matrix
                .grids()
                .iter()
                .filter(|g| g.get(i, j).is_some())
                .count();
            let sd = sd.get(i, j).map_or("-".into(), fmt);
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
        "<line x1=\"{left}\" y1=\"{top}\" x2=\"{}\" y2=\"{}\" stroke=\"#fff\" stroke-dasharray=\"4 3\"/>\n",
        left + size,
        top + size
    ));
    for (n, label) in slices.iter().enumerate() {
        let c = cell * n as f64 + cell / 2.0;
        out.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>\n",
            left - 4.0,
            top + c,
            html_escape(label)
        ));
        out.push_str(&format!(
            "<text transform=\"translate({},{}) rotate(-45)\" text-anchor=\"end\">{}</text>\n",
            left + c,
            top + size + 8.0,
            html_escape(label)
        ));
    }
    out.push_str("</svg>");
    out
}

/// The HTML of every table of a study, in order.
pub fn tables_html(tables: &[Table]) -> Vec<String> {
    tables.iter().map(Table::html_styled).collect()
}
