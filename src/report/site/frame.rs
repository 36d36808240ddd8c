//! What every gallery page shares: the style sheet, the page around a body, the
//! navigation bar, the pages' file names and the colour scales of a study's matrices (the
//! static pages and the explorer colour a study's cells alike).

use crate::analysis::ModelAnalysis;
use crate::format::html_escape;
use crate::report::study::LoadedStudy;

/// The explorer's file, relative to the gallery folder.
pub const EXPLORER: &str = "explorer.html";

/// The style sheet of every page.
pub(super) const STYLE: &str = "body{font-family:sans-serif;margin:1.5em auto;max-width:70em;\
color:#222;padding:0 1em}nav a{margin-right:1em}h2{margin-top:2em;border-bottom:1px solid #ccc}\
.pair{display:flex;flex-wrap:wrap;gap:2em}figure{margin:0}figcaption{font-size:90%;color:#555;max-width:22em}\
rect.cell:hover{stroke:#000;stroke-width:2}.baseline figure{opacity:.9}table{border-collapse:collapse;margin:1em 0 2em;\
font-size:85%}caption{text-align:left;color:#555;padding-bottom:.3em}th,td{padding:2px 8px;\
border-bottom:1px solid #eee}td.n,th.n{text-align:right}td.t,th.t{text-align:left}";

/// A page: title, navigation and body.
pub(super) fn page(title: &str, nav: &str, body: &str) -> String {
    page_with(title, nav, STYLE, body)
}

/// A page with its own style sheet.
pub(super) fn page_with(title: &str, nav: &str, style: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{style}</style>\n</head>\n<body>\n<nav>{nav}</nav>\n{body}</body>\n</html>\n",
        html_escape(title)
    )
}

/// The page file of a study, relative to the gallery folder.
pub fn study_file(name: &str) -> String {
    format!("{name}.html")
}

/// The navigation bar: the index, the explorer, then every study.
pub(super) fn nav(studies: &[LoadedStudy]) -> String {
    let mut out = format!(
        "<a href=\"index.html\">Index</a><a href=\"{}\">Explorer</a>",
        html_escape(EXPLORER)
    );
    for s in studies {
        out.push_str(&format!(
            "<a href=\"{}\">{}</a>",
            html_escape(&study_file(&s.spec.name)),
            html_escape(&s.spec.title)
        ));
    }
    out
}

/// The colour scales of a study's trained models: the raw range and the deviation bound
/// (a counting baseline's far-off cells would wash out theirs). The static pages and the
/// explorer share them.
pub fn scales(models: &[ModelAnalysis]) -> ((f64, f64), f64) {
    let trained = || models.iter().filter(|m| !m.baseline);
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for (_, _, v) in trained().flat_map(|m| m.mean.filled()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    let range = if lo > hi { (0.0, 1.0) } else { (lo, hi) };
    let bound = trained()
        .flat_map(|m| m.deviation.filled().map(|(_, _, v)| v.abs()))
        .fold(0.0f64, f64::max);
    (range, bound)
}
