//! What the notebook display (`drift::notebook`) sends to Jupyter for each type: the MIME
//! types, the pictures and the tables with the values of the matrix, escaped HTML, and
//! clear errors for a malformed table or an empty matrix.

use drift::analysis::{self, Summary};
use drift::notebook::{Bundle, Figure, Table, number, p_value};
use drift::report::figures::Curve;
use drift::{DriftMatrix, Grid, Metric};

fn matrix() -> DriftMatrix {
    let slices: Vec<String> = (2001..=2004).map(|y| y.to_string()).collect();
    let mut m = DriftMatrix::new(slices, Metric::Accuracy);
    for (seed, shift) in [(0u64, 0.0), (1, 0.02)] {
        let rows: Vec<Vec<Option<f64>>> = (0..4)
            .map(|i| {
                (0..4)
                    .map(|j| (j >= i).then(|| 0.9 - 0.1 * (j - i) as f64 + shift))
                    .collect()
            })
            .collect();
        m.add_seed(seed, Grid::from_rows(&rows).unwrap()).unwrap();
    }
    m
}

fn mimes(bundle: &Bundle) -> Vec<&str> {
    bundle.iter().map(|(mime, _)| *mime).collect()
}

fn content<'a>(bundle: &'a Bundle, mime: &str) -> &'a str {
    &bundle.iter().find(|(m, _)| *m == mime).unwrap().1
}

#[test]
fn a_matrix_shows_its_heatmap_and_its_seed_mean_cells() {
    let m = matrix();
    let bundle = m.bundle();
    assert_eq!(mimes(&bundle), ["text/html", "image/svg+xml", "text/plain"]);
    let svg = content(&bundle, "image/svg+xml");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    // 10 filled cells and 6 empty ones, one rect each, plus the background and colour bar.
    assert!(svg.matches("<rect").count() >= 16);
    let html = content(&bundle, "text/html");
    assert!(
        html.contains(svg.trim_end()),
        "the HTML inlines the same heatmap"
    );
    // Cell (0, 0) is 0.90 and 0.92 over the seeds: the table shows the mean.
    assert!(html.contains("<td>0.910</td>"), "{html}");
    assert!(html.contains("<td>·</td>"), "empty cells are marked");
    let text = content(&bundle, "text/plain");
    assert!(text.starts_with("accuracy over 4 slices, mean over seeds 0, 1"));
    let first_row = text.lines().nth(2).unwrap();
    let cells: Vec<&str> = first_row.split_whitespace().collect();
    assert_eq!(cells, ["2001", "0.910", "0.810", "0.710", "0.610"]);
}

#[test]
fn an_empty_matrix_shows_its_table_without_a_picture() {
    let m = DriftMatrix::new(vec!["a".into(), "b".into()], Metric::Mse);
    let bundle = m.bundle();
    assert_eq!(mimes(&bundle), ["text/html", "text/plain"]);
    assert_eq!(m.table().rows()[0], ["a", "·", "·"]);
    assert!(content(&bundle, "text/plain").starts_with("mse over 2 slices"));
}

#[test]
fn a_summary_shows_id_future_decay_the_scores_and_the_cutoffs() {
    let m = matrix();
    let summary: Summary = analysis::summarize(&m);
    let bundle = summary.bundle();
    assert_eq!(mimes(&bundle), ["text/html", "text/plain"]);
    let html = content(&bundle, "text/html");
    assert_eq!(html.matches("<table>").count(), 3);
    assert!(html.contains(&format!("<td>{}</td>", number(summary.id, 4))));
    assert!(html.contains(&format!("<td>{}</td>", number(summary.decay, 4))));
    // One row per cutoff; the last cutoff has no future.
    let cutoffs = summary.cutoffs();
    assert_eq!(cutoffs.rows().len(), 4);
    assert_eq!(cutoffs.rows()[3], ["2004", "0.9100", "–", "–"]);
    assert_eq!(summary.effects().rows().len(), 4);
}

#[test]
fn a_study_shows_each_model_its_ranks_the_cohort_and_the_families() {
    let (m, n) = (matrix(), matrix());
    let study = analysis::StudyAnalysis::new(&[
        analysis::StudyModel {
            model: "n",
            key: "n",
            family: "g",
            matrix: &n,
            baseline: false,
            detectors: None,
        },
        analysis::StudyModel {
            model: "m",
            key: "m",
            family: "f",
            matrix: &m,
            baseline: false,
            detectors: None,
        },
    ])
    .unwrap();
    // Seed mean .91 - .1 lag: ID .91, future (3 × .81 + 2 × .71 + .61)/6 = .7433,
    // decay .1667; a tie on every score ranks by name.
    let table = study.table();
    assert_eq!(
        table.rows(),
        [
            ["n", "g", "2", "0.9100", "0.7433", "0.1667", "2", "2"],
            ["m", "f", "2", "0.9100", "0.7433", "0.1667", "1", "1"],
            ["cohort mean", "", "", "0.9100", "0.7433", "0.1667", "", ""],
        ]
    );
    // The spread cutoffs (the three with a future) and their mean per family, by name.
    assert_eq!(study.spread, [0, 1, 2]);
    let families = study.families_table();
    assert_eq!(families.rows().len(), 8);
    assert_eq!(families.rows()[0][..3], ["f", "2001", "1"]);
    assert_eq!(families.rows()[3][..2], ["f", "mean"]);
    assert_eq!(families.rows()[4][..2], ["g", "2001"]);
    let bundle = study.bundle();
    assert_eq!(mimes(&bundle), ["text/html", "text/plain"]);
    assert_eq!(content(&bundle, "text/html").matches("<table>").count(), 3);
    // drift-happens' robustness family, trained models ranked by H.
    let scores = study.robustness_scores_table();
    assert_eq!(scores.rows().len(), 2);
    assert_eq!(scores.rows()[0].len(), 11);
}

#[test]
fn temporal_effects_show_scores_p_values_and_seed_range() {
    let effects = analysis::temporal_effects(&matrix());
    let table = effects.table();
    assert_eq!(table.rows().len(), 4);
    let rows = table.rows();
    let det = &rows[0];
    assert_eq!(det[0], "deterioration, consecutive");
    // Every consecutive difference is -0.1 on both seeds.
    assert_eq!(det[2], "-0.1000");
    assert_eq!(det[4], "3");
    assert_eq!((det[5].as_str(), det[6].as_str()), ("-0.1000", "-0.1000"));
    assert_eq!(det[3], p_value(effects.deterioration_consecutive.p_value));
    assert_eq!(mimes(&effects.bundle()), ["text/html", "text/plain"]);
}

#[test]
fn figures_and_curves_show_as_svg() {
    let m = matrix();
    let curve = Curve::from_matrix("model", &m);
    assert_eq!(mimes(&curve.bundle()), ["image/svg+xml", "text/plain"]);
    assert!(content(&curve.bundle(), "text/plain").starts_with("lag 0: 0.9100"));
    let fig = Figure::curves(&[curve], m.metric(), "title").unwrap();
    assert_eq!(mimes(&fig.bundle()), ["image/svg+xml"]);
    assert!(fig.svg().contains("\ntitle\n</text>"));
    let heat = Figure::heatmap(&m.mean(), m.slices(), m.metric(), "").unwrap();
    assert!(heat.svg().starts_with("<svg"));
    // A cohort of one deviates by zero everywhere: still a picture, not an error.
    let zero = analysis::deviation(&m.mean(), &m.mean());
    assert!(Figure::deviation(&zero, m.slices(), m.metric(), "zero").is_ok());
    let empty = Grid::empty(4);
    let err = Figure::heatmap(&empty, m.slices(), m.metric(), "none").unwrap_err();
    assert!(err.to_string().contains("no filled cell"), "{err}");
}

#[test]
fn tables_escape_html_and_reject_ragged_rows() {
    let t = Table::new(
        "a <b> & 'c'",
        &["x", "y"],
        vec![vec!["<script>".into(), "\"q\"".into()]],
    )
    .unwrap();
    let html = t.html();
    assert!(html.contains("<caption>a &lt;b&gt; &amp; &#39;c&#39;</caption>"));
    assert!(html.contains("<td>&lt;script&gt;</td><td>&quot;q&quot;</td>"));
    assert!(!html.contains("<script>"));
    assert_eq!(t.text(), "a <b> & 'c'\n       x    y\n<script>  \"q\"");
    let err = Table::new("t", &["x", "y"], vec![vec!["1".into()]]).unwrap_err();
    assert!(
        err.to_string().contains("row 0 has 1 cells, the header 2"),
        "{err}"
    );
}

#[test]
fn a_header_may_name_two_columns_alike() {
    // Notebook 02's ranking shows "model" twice (by future score, by decay); the one table
    // type refused it once, and the notebook failed.
    let t = Table::new(
        "ranking",
        &["rank", "model", "future", "model", "decay"],
        vec![vec![
            "1".into(),
            "a".into(),
            "0.9".into(),
            "b".into(),
            "0.1".into(),
        ]],
    )
    .unwrap();
    assert!(
        t.html()
            .contains("<th>model</th><th>future</th><th>model</th>")
    );
}

#[test]
fn numbers_and_p_values() {
    assert_eq!(number(None, 3), "–");
    assert_eq!(number(Some(-0.00001), 3), "0.000");
    assert_eq!(p_value(Some(0.0004)), "<0.001");
    assert_eq!(p_value(Some(0.0123)), "0.012");
    assert_eq!(p_value(None), "–");
}
