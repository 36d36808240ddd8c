//! The appendix tables: values against hand computations, ranking order with ties,
//! significance marks, exact Typst and CSV output (data cannot inject Typst code), the
//! models-listing parser's errors, and byte-identical output across calls and input orders.

use drift::analysis::{StudyAnalysis, StudyModel, default_family, wilcoxon};
use drift::artifacts::{ModelRuns, RunProvenance, WallTimes};
use drift::report::tables::{
    Format, ModelListing, Table, bootstrap_table, collapsed_table, compute_table, cutoff_tables,
    family_table, health_table, parse_models_listing, retraining_table, robustness, roster,
    temporal_effects_table, typst_string, wild_time_table,
};
use drift::table::{Column, Values};
use drift::{DriftMatrix, Grid, Metric};

const E: Option<f64> = None;

fn provenance(model: &str, seed: u64, device: &str) -> RunProvenance {
    RunProvenance {
        device: device.into(),
        ..crate::support::provenance(model, seed)
    }
}

/// One model's runs: seeds 1, 2, .. with the given grids, devices and timings.
fn model(
    key: &str,
    slices: &[&str],
    grids: &[Vec<Vec<Option<f64>>>],
    devices: &[&str],
    timing: &[Option<WallTimes>],
) -> ModelRuns {
    let mut matrix = DriftMatrix::new(
        slices.iter().map(|s| s.to_string()).collect(),
        Metric::Accuracy,
    );
    let mut provenance_ = Vec::new();
    for (n, rows) in grids.iter().enumerate() {
        let seed = n as u64 + 1;
        matrix
            .add_seed(seed, Grid::from_rows(rows).unwrap())
            .unwrap();
        provenance_.push(provenance(key, seed, devices[n]));
    }
    ModelRuns {
        preset: "tiny".into(),
        model: key.into(),
        matrix,
        provenance: provenance_,
        timing: timing.to_vec(),
        health: vec![None; grids.len()],
        detectors: vec![None; grids.len()],
        history: vec![None; grids.len()],
    }
}

const SLICES: [&str; 3] = ["2001", "2002", "2003"];

fn wall(train: f64, eval: f64) -> Option<WallTimes> {
    Some(WallTimes {
        train,
        eval,
        host: None,
        detectors: None,
        epochs: None,
    })
}

/// Four models over 3 slices, 2 seeds each, with empty cells:
/// - `cnn_s` seed mean `[[.75 .5 .375] [– 1 .625] [– – .75]]`: ID 83.33, future 50, decay 33.33;
/// - `mlp_m`: the same cells (a tie with `cnn_s` on every score);
/// - `mlp_s` `[[.5 .75 .75] [– .5 .75] [– – –]]`: ID 50, future 75, decay −25;
/// - `linear`: the diagonal only (.5 .25 .5): ID 41.67, no future.
fn study() -> Vec<ModelRuns> {
    let cnn = vec![
        vec![
            vec![Some(0.75), Some(0.5), Some(0.25)],
            vec![E, Some(1.0), Some(0.5)],
            vec![E, E, Some(0.75)],
        ],
        vec![
            vec![Some(0.75), Some(0.5), Some(0.5)],
            vec![E, Some(1.0), Some(0.75)],
            vec![E, E, Some(0.75)],
        ],
    ];
    let mlp_s = vec![
        vec![
            vec![Some(0.5), Some(0.75), Some(0.75)],
            vec![E, Some(0.5), Some(0.75)],
            vec![E, E, E],
        ];
        2
    ];
    let linear = vec![
        vec![
            vec![Some(0.5), E, E],
            vec![E, Some(0.25), E],
            vec![E, E, Some(0.5)],
        ];
        2
    ];
    vec![
        model(
            "mlp_s",
            &SLICES,
            &mlp_s,
            &["cuda:0", "cpu"],
            &[wall(100.0, 2.5), None],
        ),
        model(
            "cnn_s",
            &SLICES,
            &cnn,
            &["cuda:0", "cuda:0"],
            &[wall(12.5, 0.25), wall(10.0, 0.5)],
        ),
        model("linear", &SLICES, &linear, &["cpu", "cpu"], &[None, None]),
        model(
            "mlp_m",
            &SLICES,
            &cnn,
            &["cuda:0", "cuda:0"],
            &[wall(3600.0, 36.0), wall(3600.0, 36.0)],
        ),
    ]
}

/// A study design of one regime.
fn design(regime: &str, downsampled: bool) -> drift::report::study::Design {
    drift::report::study::Design {
        regimes: vec![regime.into()],
        downsampled,
    }
}

/// The registry's family of a model, as a preset resolves it; else the key's stem.
fn family(model: &str) -> String {
    drift::models::info(model)
        .map(|i| i.family.to_string())
        .unwrap_or_else(|_| default_family(model).to_string())
}

/// The analyses of `runs`, every model in its registry family.
fn try_analysed(runs: &[ModelRuns]) -> drift::Result<StudyAnalysis> {
    let families: Vec<String> = runs.iter().map(|r| family(&r.model)).collect();
    let models: Vec<StudyModel> = runs
        .iter()
        .zip(&families)
        .map(|(r, f)| StudyModel {
            model: &r.model,
            key: &r.model,
            family: f,
            matrix: &r.matrix,
            baseline: false,
            detectors: None,
        })
        .collect();
    StudyAnalysis::new(&models)
}

fn analysed(runs: &[ModelRuns]) -> StudyAnalysis {
    try_analysed(runs).unwrap()
}

fn strs(table: &Table, column: &str) -> Vec<Option<String>> {
    match &table.column(column).unwrap().values {
        Values::Text(v) => v.iter().map(|s| Some(s.clone())).collect(),
        other => panic!("{column} is not text: {other:?}"),
    }
}

fn ints(table: &Table, column: &str) -> Vec<Option<i64>> {
    match &table.column(column).unwrap().values {
        Values::Int(v) => v.clone(),
        other => panic!("{column} is not integers: {other:?}"),
    }
}

fn floats(table: &Table, column: &str) -> Vec<Option<f64>> {
    match &table.column(column).unwrap().values {
        Values::Float(v) => v.clone(),
        other => panic!("{column} is not floats: {other:?}"),
    }
}

fn assert_close(actual: &[Option<f64>], expected: &[Option<f64>]) {
    assert_eq!(actual.len(), expected.len(), "{actual:?} vs {expected:?}");
    for (a, e) in actual.iter().zip(expected) {
        match (a, e) {
            (Some(a), Some(e)) => assert!((a - e).abs() < 1e-9, "{actual:?} vs {expected:?}"),
            (None, None) => {}
            _ => panic!("{actual:?} vs {expected:?}"),
        }
    }
}

fn names(v: &[&str]) -> Vec<Option<String>> {
    v.iter().map(|s| Some(s.to_string())).collect()
}

#[test]
fn robustness_values_ranks_and_ties() {
    let t = robustness(&analysed(&study())).unwrap();
    assert_eq!(t.name, "robustness");
    let columns: Vec<&str> = t.columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        columns,
        [
            "rank",
            "model",
            "family",
            "seeds",
            "ID",
            "ID sd",
            "ID min",
            "ID max",
            "future",
            "future sd",
            "future min",
            "future max",
            "decay",
            "decay sd",
            "decay min",
            "decay max",
            "margin",
            "tied"
        ]
    );
    // Best future first; cnn_s and mlp_m tie and go by key; no future score: last, unranked.
    assert_eq!(ints(&t, "rank"), [Some(1), Some(2), Some(3), None]);
    assert_eq!(
        strs(&t, "model"),
        names(&["mlp_s", "cnn_s", "mlp_m", "linear"])
    );
    assert_eq!(
        strs(&t, "family"),
        names(&["mlp", "cnn", "mlp", "linear-probe"])
    );
    assert_eq!(ints(&t, "seeds"), [Some(2); 4]);
    assert_close(
        &floats(&t, "ID"),
        &[
            Some(50.0),
            Some(250.0 / 3.0),
            Some(250.0 / 3.0),
            Some(125.0 / 3.0),
        ],
    );
    assert_close(
        &floats(&t, "future"),
        &[Some(75.0), Some(50.0), Some(50.0), None],
    );
    assert_close(
        &floats(&t, "decay"),
        &[Some(-25.0), Some(100.0 / 3.0), Some(100.0 / 3.0), None],
    );
    // Per seed, cnn_s (and mlp_m) score future 5/12 and 7/12 (decay 5/12 and 1/4): sd
    // sqrt(2 (1/12)^2) = 11.79; mlp_s's seeds agree; linear has no future.
    let sd = 100.0 * (2.0f64).sqrt() / 12.0;
    assert_close(
        &floats(&t, "future sd"),
        &[Some(0.0), Some(sd), Some(sd), None],
    );
    assert_close(
        &floats(&t, "future min"),
        &[Some(75.0), Some(500.0 / 12.0), Some(500.0 / 12.0), None],
    );
    assert_close(
        &floats(&t, "decay max"),
        &[Some(-25.0), Some(500.0 / 12.0), Some(500.0 / 12.0), None],
    );
    assert_close(&floats(&t, "ID sd"), &[Some(0.0); 4]);
    // No baseline in this study: no margin. cnn_s and mlp_m have the same seed range of
    // future scores: tied; mlp_s's [75, 75] is above cnn_s's [41.67, 58.33].
    assert_eq!(floats(&t, "margin"), [None; 4]);
    assert_eq!(strs(&t, "tied"), names(&["", "tied", "", ""]));
    assert!(t.caption.contains("accuracy ×100"), "{}", t.caption);
    assert_eq!(
        t.typst(),
        r#"#table(
  columns: 9,
  align: (right, left, left, right, right, right, right, right, left),
  table.header(strong("rank"), strong("model"), strong("family"), strong("seeds"), strong("ID"), strong("future"), strong("decay"), strong("margin"), strong("tied")),
  "1", "mlp_s", "mlp", "2", "50.00 ± 0.00\n[50.00, 50.00]", "75.00 ± 0.00\n[75.00, 75.00]", "−25.00 ± 0.00\n[−25.00, −25.00]", "–", "",
  "2", "cnn_s", "cnn", "2", "83.33 ± 0.00\n[83.33, 83.33]", "50.00 ± 11.79\n[41.67, 58.33]", "33.33 ± 11.79\n[25.00, 41.67]", "–", "tied",
  "3", "mlp_m", "mlp", "2", "83.33 ± 0.00\n[83.33, 83.33]", "50.00 ± 11.79\n[41.67, 58.33]", "33.33 ± 11.79\n[25.00, 41.67]", "–", "",
  "–", "linear", "linear-probe", "2", "41.67 ± 0.00\n[41.67, 41.67]", "–", "–", "–", "",
)
"#
    );
}

#[test]
fn one_table_per_spread_cutoff() {
    // K = 3: spread_cutoffs(3, 4) = [0, 1] (the last slice has no future).
    let ts = cutoff_tables(&analysed(&study())).unwrap();
    let names_: Vec<&str> = ts.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names_, ["cutoff-1", "cutoff-2"]);
    assert!(
        ts[0].caption.contains("trained through 2001"),
        "{}",
        ts[0].caption
    );
    assert!(
        ts[1].caption.contains("trained through 2002"),
        "{}",
        ts[1].caption
    );

    // Cutoff 2001: cnn_s/mlp_m row 0 = .75 | .5 .375; mlp_s .5 | .75 .75; linear .5 | – –.
    let t = &ts[0];
    assert_eq!(ints(t, "rank"), [Some(1), Some(2), Some(3), None]);
    assert_eq!(
        strs(t, "model"),
        names(&["mlp_s", "cnn_s", "mlp_m", "linear"])
    );
    assert_close(
        &floats(t, "ID"),
        &[Some(50.0), Some(75.0), Some(75.0), Some(50.0)],
    );
    assert_close(
        &floats(t, "future"),
        &[Some(75.0), Some(43.75), Some(43.75), None],
    );
    assert_close(
        &floats(t, "decay"),
        &[Some(-25.0), Some(31.25), Some(31.25), None],
    );

    // Cutoff 2002: cnn_s/mlp_m 1 | .625; mlp_s .5 | .75; linear .25 | –.
    let t = &ts[1];
    assert_eq!(
        strs(t, "model"),
        names(&["mlp_s", "cnn_s", "mlp_m", "linear"])
    );
    assert_close(
        &floats(t, "ID"),
        &[Some(50.0), Some(100.0), Some(100.0), Some(25.0)],
    );
    assert_close(
        &floats(t, "future"),
        &[Some(75.0), Some(62.5), Some(62.5), None],
    );
    assert_close(
        &floats(t, "decay"),
        &[Some(-25.0), Some(37.5), Some(37.5), None],
    );
    // Per seed cnn_s's row 2002 scores future .5 and .75 (sd 17.68); mlp_s's [75, 75]
    // touches cnn_s's [50, 75], so the two are tied, as are cnn_s and mlp_m.
    assert_eq!(strs(t, "tied"), names(&["tied", "tied", "", ""]));
    assert_eq!(
        t.typst(),
        r#"#table(
  columns: 6,
  align: (right, left, right, right, right, left),
  table.header(strong("rank"), strong("model"), strong("ID"), strong("future"), strong("decay"), strong("tied")),
  "1", "mlp_s", "50.00 ± 0.00\n[50.00, 50.00]", "75.00 ± 0.00\n[75.00, 75.00]", "−25.00 ± 0.00\n[−25.00, −25.00]", "tied",
  "2", "cnn_s", "100.00 ± 0.00\n[100.00, 100.00]", "62.50 ± 17.68\n[50.00, 75.00]", "37.50 ± 17.68\n[25.00, 50.00]", "tied",
  "3", "mlp_m", "100.00 ± 0.00\n[100.00, 100.00]", "62.50 ± 17.68\n[50.00, 75.00]", "37.50 ± 17.68\n[25.00, 50.00]", "",
  "–", "linear", "25.00 ± 0.00\n[25.00, 25.00]", "–", "–", "",
)
"#
    );
}

#[test]
fn family_averages_over_the_cutoffs() {
    let t = family_table(&analysed(&study())).unwrap();
    assert_eq!(t.name, "families");
    assert!(t.caption.contains("2001, 2002"), "{}", t.caption);
    assert_eq!(
        strs(&t, "family"),
        names(&[
            "cnn",
            "cnn",
            "cnn",
            "linear-probe",
            "linear-probe",
            "linear-probe",
            "mlp",
            "mlp",
            "mlp"
        ])
    );
    assert_eq!(
        strs(&t, "cutoff"),
        names(&[
            "2001", "2002", "mean", "2001", "2002", "mean", "2001", "2002", "mean"
        ])
    );
    assert_eq!(ints(&t, "models"), [1, 1, 1, 1, 1, 1, 2, 2, 2].map(Some));
    // mlp at 2001: mlp_m (75, 43.75, 31.25) and mlp_s (50, 75, −25);
    // at 2002: mlp_m (100, 62.5, 37.5) and mlp_s (50, 75, −25); mean over all four rows.
    assert_close(
        &floats(&t, "ID"),
        &[75.0, 100.0, 87.5, 50.0, 25.0, 37.5, 62.5, 75.0, 68.75].map(Some),
    );
    assert_close(
        &floats(&t, "future"),
        &[
            Some(43.75),
            Some(62.5),
            Some(53.125),
            None,
            None,
            None,
            Some(59.375),
            Some(68.75),
            Some(64.0625),
        ],
    );
    assert_close(
        &floats(&t, "decay"),
        &[
            Some(31.25),
            Some(37.5),
            Some(34.375),
            None,
            None,
            None,
            Some(3.125),
            Some(6.25),
            Some(4.6875),
        ],
    );
}

/// Six slices, cells `0.5 + i/128 - (j - i) * slope` above and on the diagonal (exact in
/// binary), slope 1/16 for seed 1 and 1/64 for seed 2, empty below.
fn sloped(key: &str) -> ModelRuns {
    let grid = |slope: f64| -> Vec<Vec<Option<f64>>> {
        (0..6)
            .map(|i| {
                (0..6)
                    .map(|j| (j >= i).then(|| 0.5 + i as f64 / 128.0 - (j - i) as f64 * slope))
                    .collect()
            })
            .collect()
    };
    model(
        key,
        &["a", "b", "c", "d", "e", "f"],
        &[grid(1.0 / 16.0), grid(1.0 / 64.0)],
        &["cpu", "cpu"],
        &[None, None],
    )
}

#[test]
fn temporal_effects_with_p_values_marks_and_seed_range() {
    let runs = vec![sloped("tx_s")];
    let t = temporal_effects_table(&analysed(&runs), &design("cumulative", false)).unwrap();
    assert_eq!(t.name, "temporal-effects");
    // A cumulative study is not their design: the caption says so; their own design is
    // named as such.
    assert!(
        t.caption
            .contains("Caution: the scores are defined for single-slice"),
        "{}",
        t.caption
    );
    assert!(
        t.caption
            .contains("this study uses cumulative training on slices of their natural size"),
        "{}",
        t.caption
    );
    let theirs = temporal_effects_table(&analysed(&runs), &design("single", true)).unwrap();
    assert!(
        theirs.caption.ends_with(
            "The study follows their design: single-slice training on equal-size slices."
        ),
        "{}",
        theirs.caption
    );
    assert_eq!(strs(&t, "model"), names(&["tx_s"; 4]));
    assert_eq!(
        strs(&t, "score"),
        names(&drift::analysis::SCORES.map(|s| s.0))
    );
    // With 6 slices every vector has 10 differences.
    assert_eq!(ints(&t, "N"), [Some(10); 4]);

    // Deterioration, consecutive: every difference is -slope: seed 1 -1/16, seed 2 -1/64,
    // the seed mean -5/128. Adaptation, consecutive: 1/128 + slope: 9/128, 3/128, 6/128.
    let value = floats(&t, "value");
    let (min, max) = (floats(&t, "min"), floats(&t, "max"));
    assert_close(&value[0..1], &[Some(-500.0 / 128.0)]);
    assert_close(&min[0..1], &[Some(-6.25)]);
    assert_close(&max[0..1], &[Some(-100.0 / 64.0)]);
    assert_close(&value[2..3], &[Some(600.0 / 128.0)]);
    assert_close(&min[2..3], &[Some(300.0 / 128.0)]);
    assert_close(&max[2..3], &[Some(900.0 / 128.0)]);
    // Deterioration, anchor on the mean: -(j - i - 1) * 5/128 for i < j - 1.
    let mut anchor = Vec::new();
    for i in 0..6 {
        for j in i + 2..6 {
            anchor.push(-((j - i - 1) as f64) * 5.0 / 128.0);
        }
    }
    let mean = anchor.iter().sum::<f64>() / anchor.len() as f64;
    assert_close(&value[1..2], &[Some(mean * 100.0)]);

    // p-values are the library's Wilcoxon test of the seed-mean differences.
    let p = floats(&t, "p");
    let p0 = wilcoxon(&[-5.0 / 128.0; 10]).unwrap().p_value.unwrap();
    let p1 = wilcoxon(&anchor).unwrap().p_value.unwrap();
    assert_close(&p[0..2], &[Some(p0), Some(p1)]);
    assert!(p0 < 0.01, "{p0}");

    let typst = t.typst();
    let first = typst.lines().nth(4).unwrap();
    assert_eq!(
        first,
        format!(
            r#"  "tx_s", "deterioration, consecutive", "−3.91**", "{}", "10", "−6.25", "−1.56","#,
            if p0 < 0.0005 {
                "<0.001".to_string()
            } else {
                format!("{p0:.3}")
            }
        )
    );
    let third = typst.lines().nth(6).unwrap();
    assert!(
        third.starts_with(r#"  "tx_s", "adaptation, consecutive", "4.69**", "#),
        "{third}"
    );
    assert!(third.ends_with(r#", "10", "2.34", "7.03","#), "{third}");
}

fn marked_table(p: Vec<Option<f64>>, values: Vec<Option<f64>>) -> Table {
    Table::from_columns(
        "marks",
        "",
        vec![Column::floats("value", values), Column::floats("p", p)],
        vec![
            Format::Marked {
                decimals: 2,
                p_value: "p".into(),
            },
            Format::PValue,
        ],
    )
    .unwrap()
}

#[test]
fn significance_marks_at_their_thresholds() {
    let t = marked_table(
        vec![
            Some(0.0004),
            Some(0.0099),
            Some(0.01),
            Some(0.0499),
            Some(0.05),
            None,
            Some(0.001),
        ],
        vec![
            Some(1.0),
            Some(-2.0),
            Some(3.0),
            Some(4.0),
            Some(5.0),
            Some(6.0),
            None,
        ],
    );
    let rows: Vec<String> = t
        .typst()
        .lines()
        .skip(4)
        .take(7)
        .map(String::from)
        .collect();
    assert_eq!(
        rows,
        [
            r#"  "1.00**", "<0.001","#,
            r#"  "−2.00**", "0.010","#,
            r#"  "3.00*", "0.010","#,
            r#"  "4.00*", "0.050","#,
            r#"  "5.00", "0.050","#,
            r#"  "6.00", "–","#,
            r#"  "–", "0.001","#,
        ]
    );
}

#[test]
fn typst_output_escapes_data_exactly() {
    let columns = vec![
        Column::text(
            "model",
            vec![r#"a"]#exit()"#.to_string(), "b\\\n)#x[".to_string()],
        ),
        Column::ints("n", vec![Some(1234567i64), None]),
        Column::floats("v", vec![Some(-0.001), Some(f64::NAN)]),
        Column::ints("c", vec![Some(-7i64), Some(0)]),
    ];
    let formats = vec![
        Format::Text,
        Format::Grouped,
        Format::Fixed(2),
        Format::Integer,
    ];
    let t = Table::from_columns("small", "x", columns.clone(), formats.clone()).unwrap();
    assert_eq!(
        t.typst(),
        r#"#table(
  columns: 4,
  align: (left, right, right, right),
  table.header(strong("model"), strong("n"), strong("v"), strong("c")),
  "a\"]#exit()", "1,234,567", "0.00", "−7",
  "b\\\n)#x[", "–", "–", "0",
)
"#
    );
    assert_eq!(typst_string("tab\there\u{1}"), r#""tab\there\u{1}""#);
    assert_eq!(
        t.csv(),
        "model,n,v,c\n\"a\"\"]#exit()\",1234567,-0.001,-7\n\"b\\\n)#x[\",,,0\n"
    );
    // Formats must match the columns.
    let fewer = formats[..3].to_vec();
    assert!(
        Table::from_columns("small", "x", columns.clone(), fewer)
            .unwrap_err()
            .to_string()
            .contains("3 formats for 4 columns")
    );
    let err = Table::from_columns("small", "x", columns, vec![Format::Fixed(2); 4])
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"model\" does not fit"), "{err}");
}

#[test]
fn malicious_model_names_stay_string_literals() {
    let mut runs = study();
    runs[2].model = r#"a"]#exit()"#.into();
    let t = robustness(&analysed(&runs)).unwrap();
    let typst = t.typst();
    assert!(
        typst.contains(r#""a\"]#exit()", "a\"]#exit()", "2""#),
        "{typst}"
    );
    // Outside string literals only the fixed markup remains.
    let mut outside = String::new();
    let mut chars = typst.chars();
    while let Some(c) = chars.next() {
        if c == '"' {
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '"' => break,
                    _ => {}
                }
            }
            outside.push('S');
        } else {
            outside.push(c);
        }
    }
    assert!(!outside.contains("exit"), "{outside}");
}

#[test]
fn compute_names_the_hosts_and_thread_counts_of_the_runs() {
    // Runs made elsewhere (imported) record their host; older runs have none.
    let mut runs = study();
    let sorted: Vec<String> = runs.iter().map(|r| r.model.clone()).collect();
    let at = |key: &str| sorted.iter().position(|m| m == key).unwrap();
    let (cnn, mlp_m) = (at("cnn_s"), at("mlp_m"));
    runs[cnn].timing[0].as_mut().unwrap().host = Some("GPU box, 16 CPUs, x86_64".into());
    runs[cnn].timing[1].as_mut().unwrap().host = Some("laptop, 2 CPUs, aarch64".into());
    runs[mlp_m].timing[0].as_mut().unwrap().host = Some("laptop, 2 CPUs, aarch64".into());
    runs[mlp_m].provenance[1].threads = 4;
    let t = compute_table(&runs).unwrap();
    assert_eq!(strs(&t, "host"), names(&["H1, H2", "-", "H2", "-"]));
    assert_eq!(strs(&t, "threads"), names(&["1", "1", "1, 4", "1"]));
    assert!(
        t.caption
            .contains("Hosts: H1 = GPU box, 16 CPUs, x86_64; H2 = laptop, 2 CPUs, aarch64."),
        "{}",
        t.caption
    );
    assert!(
        compute_table(&study())
            .unwrap()
            .caption
            .contains("Hosts: none recorded.")
    );
}

#[test]
fn compute_from_provenance_and_timing() {
    let t = compute_table(&study()).unwrap();
    assert_eq!(t.name, "compute");
    assert_eq!(
        strs(&t, "model"),
        names(&["cnn_s", "linear", "mlp_m", "mlp_s"])
    );
    assert_eq!(
        strs(&t, "device"),
        names(&["cuda:0", "cpu", "cuda:0", "cpu, cuda:0"])
    );
    assert_eq!(ints(&t, "seeds"), [Some(2); 4]);
    assert_eq!(ints(&t, "timed"), [2, 0, 2, 1].map(Some));
    assert_close(
        &floats(&t, "train s"),
        &[Some(22.5), None, Some(7200.0), Some(100.0)],
    );
    assert_close(
        &floats(&t, "eval s"),
        &[Some(0.75), None, Some(72.0), Some(2.5)],
    );
    // 7322.5 s = 2.03 h of training, 75.25 s = 0.02 h of evaluation.
    assert!(
        t.caption.contains("2.03 h training and 0.02 h evaluation"),
        "{}",
        t.caption
    );
    let typst = t.typst();
    assert!(
        typst.contains(r#"  "linear", "cpu", "1", "-", "2", "0", "–", "–","#),
        "{typst}"
    );
    assert!(
        typst.contains(r#"  "mlp_m", "cuda:0", "1", "-", "2", "2", "7200.0", "72.0","#),
        "{typst}"
    );
    assert_eq!(
        t.csv(),
        "model,device,threads,host,seeds,timed,train s,eval s\n\
         cnn_s,cuda:0,1,-,2,2,22.5,0.75\n\
         linear,cpu,1,-,2,0,,\n\
         mlp_m,cuda:0,1,-,2,2,7200,72\n\
         mlp_s,\"cpu, cuda:0\",1,-,2,1,100,2.5\n"
    );
}

const LISTING: &str = "\
mlp_s          mlp           image      Flatten -> Linear+ReLU (32) -> Linear  98402
mlp_m          mlp           image      Flatten -> Linear+ReLU (128,128) -> Linear  410114

# comment
cnn_s          cnn           image      Conv3x3+BN+ReLU+MaxPool blocks (32,64,128), global average pool -> Linear  94018
linear         linear-probe  embedding  Linear head on a frozen encoder's pooled embedding  1538
tx_s           transformer   tokens     Linear (64) -> 1 post-LN encoder layer  1234
";

#[test]
fn parses_the_models_listing() {
    let listing = parse_models_listing(LISTING).unwrap();
    assert_eq!(listing.len(), 5);
    assert_eq!(
        listing[0],
        ModelListing {
            key: "mlp_s".into(),
            family: "mlp".into(),
            input: "image".into(),
            summary: "Flatten -> Linear+ReLU (32) -> Linear".into(),
            parameters: 98402,
        }
    );
    assert_eq!(listing[2].key, "cnn_s");
    assert_eq!(listing[2].parameters, 94018);
}

#[test]
fn listing_errors_name_the_line() {
    let err = |text: &str| parse_models_listing(text).unwrap_err().to_string();
    assert_eq!(
        err("mlp_s mlp image a 12\n\nmlp_m mlp image\n"),
        "models listing, line 3: expected `key family input summary… count`, got 3 \
         field(s): \"mlp_m mlp image\""
    );
    assert_eq!(
        err("mlp_s mlp image Flatten -> Linear\n"),
        "models listing, line 1: parameter count \"Linear\" is not a non-negative integer \
         (was it written by `drift models --params`?)"
    );
    assert!(err("a f image x -5\n").starts_with("models listing, line 1: parameter count \"-5\""),);
    assert_eq!(
        err("a f image x 5\nb f image y 6\na f image z 7\n"),
        "models listing, line 3: model \"a\" is listed twice (first on line 1)"
    );
    assert_eq!(err("\n# nothing\n"), "models listing: no models");
}

#[test]
fn roster_in_listing_order_with_grouped_counts() {
    let listing = parse_models_listing(LISTING).unwrap();
    let t = roster(&listing, &analysed(&study())).unwrap();
    assert_eq!(
        strs(&t, "model"),
        names(&["mlp_s", "mlp_m", "cnn_s", "linear"])
    );
    assert_eq!(
        ints(&t, "parameters"),
        [98402, 410114, 94018, 1538].map(Some)
    );
    let typst = t.typst();
    assert!(
        typst.contains(
            r#"  "linear", "linear-probe", "embedding", "Linear head on a frozen encoder's pooled embedding", "1,538","#
        ),
        "{typst}"
    );
    assert!(typst.contains(r#""410,114""#), "{typst}");

    let missing = parse_models_listing("cnn_s cnn image x 1\n").unwrap();
    assert_eq!(
        roster(&missing, &analysed(&study()))
            .unwrap_err()
            .to_string(),
        "table roster: model \"linear\" is not in the models listing"
    );
}

#[test]
fn output_is_byte_identical_across_calls_and_input_orders() {
    let render = |runs: &[ModelRuns]| {
        let mut out = String::new();
        let listing = parse_models_listing(LISTING).unwrap();
        let mut all = vec![
            roster(&listing, &analysed(runs)).unwrap(),
            robustness(&analysed(runs)).unwrap(),
            family_table(&analysed(runs)).unwrap(),
            temporal_effects_table(&analysed(runs), &design("single", true)).unwrap(),
            compute_table(runs).unwrap(),
        ];
        all.extend(cutoff_tables(&analysed(runs)).unwrap());
        for t in &all {
            out.push_str(&t.name);
            out.push_str(&t.caption);
            out.push_str(&t.typst());
            out.push_str(&t.csv());
        }
        out
    };
    let runs = study();
    let first = render(&runs);
    assert_eq!(first, render(&runs));
    let mut reversed = runs.clone();
    reversed.reverse();
    assert_eq!(first, render(&reversed));
}

#[test]
fn a_study_must_be_consistent() {
    let mut runs = study();
    runs.push(sloped("tx_s"));
    let err = try_analysed(&runs).unwrap_err().to_string();
    assert_eq!(
        err,
        "model tx_s has other slices or another metric than model mlp_s"
    );

    let mut runs = study();
    let mut dup = runs[0].clone();
    dup.preset = "other".into();
    runs.push(dup);
    let err = try_analysed(&runs).unwrap_err().to_string();
    assert_eq!(err, "model \"mlp_s\" appears twice in the study");

    assert_eq!(
        try_analysed(&[]).unwrap_err().to_string(),
        "a study needs at least one model"
    );
    assert_eq!(
        compute_table(&[]).unwrap_err().to_string(),
        "table compute: no model runs"
    );
}

#[test]
fn typst_compiles_every_table_with_hostile_data() {
    let mut runs = study();
    runs[2].model = "a\"]#exit()\\".into();
    for (n, r) in runs.iter_mut().enumerate() {
        r.provenance[0].device = format!("#panic(\"{n}\") ]) $ <x> @y");
    }
    let listing: Vec<ModelListing> = runs
        .iter()
        .map(|r| ModelListing {
            key: r.model.clone(),
            family: "f\"#x".into(),
            input: "image".into(),
            summary: "*bold* _em_ `raw` // comment".into(),
            parameters: 1234,
        })
        .collect();
    let study = analysed(&runs);
    let mut all = vec![
        roster(&listing, &study).unwrap(),
        robustness(&study).unwrap(),
        family_table(&study).unwrap(),
        temporal_effects_table(&study, &design("cumulative", false)).unwrap(),
        wild_time_table(&study).unwrap(),
        retraining_table(&study).unwrap(),
        bootstrap_table(&study).unwrap(),
        collapsed_table(&with_health(&runs)).unwrap(),
        health_table(&with_health(&runs)).unwrap(),
        compute_table(&runs).unwrap(),
    ];
    all.extend(cutoff_tables(&study).unwrap());
    let mut doc = String::new();
    for t in &all {
        doc.push_str(&format!(
            "#figure({}, caption: {})\n",
            t.typst().trim_start_matches('#').trim_end(),
            typst_string(&t.caption)
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tables.typ"), doc).unwrap();
    let compiled = drift::report::paper::compile_pdf(dir.path(), "tables.typ", "tables").unwrap();
    assert!(compiled.pages >= 1);
    assert!(compiled.warnings.is_empty(), "{:?}", compiled.warnings);
}

/// `runs` with a health record per seed: cutoff 0 of every model collapsed, the rest not.
fn with_health(runs: &[ModelRuns]) -> Vec<ModelRuns> {
    runs.iter()
        .map(|r| {
            let health = SLICES
                .iter()
                .enumerate()
                .map(|(i, label)| drift::eval::Health {
                    cutoff: label.to_string(),
                    rows: 10,
                    majority_class: Some(0),
                    majority_share: Some(if i == 0 { 1.0 } else { 0.6 }),
                    prediction_variance: None,
                    target_variance: None,
                    final_loss: Some(0.5),
                    collapsed: i == 0,
                })
                .collect();
            ModelRuns {
                health: vec![Some(health); r.provenance.len()],
                ..r.clone()
            }
        })
        .collect()
}

/// The health tables: one row per checkpoint in the CSV (columns as documented), one per
/// run in the paper, with the count in the caption.
#[test]
fn health_and_collapsed_tables() {
    let runs = with_health(&study());
    let t = health_table(&runs).unwrap();
    let columns: Vec<&str> = t.columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        columns[..5],
        ["model", "seed", "cutoff", "majority_share", "collapsed"]
    );
    // 4 models x 2 seeds x 3 cutoffs, models by key.
    assert_eq!(t.height(), 24);
    assert_eq!(strs(&t, "model")[0].as_deref(), Some("cnn_s"));
    assert!(
        t.caption.contains("8 of 24 trained checkpoints collapsed"),
        "{}",
        t.caption
    );
    let csv = t.csv();
    assert!(
        csv.starts_with(
            "model,seed,cutoff,majority_share,collapsed,prediction_variance,final_loss\n\
             cnn_s,1,2001,1,true,,0.5\ncnn_s,1,2002,0.6,false,,0.5\n"
        ),
        "{csv}"
    );
    let c = collapsed_table(&runs).unwrap();
    assert_eq!(c.height(), 8);
    assert_eq!(ints(&c, "collapsed"), [Some(1); 8]);
    assert_eq!(ints(&c, "cutoffs"), [Some(3); 8]);
    assert_eq!(strs(&c, "where")[0].as_deref(), Some("2001"));
    // Runs without a health record are left out.
    assert_eq!(collapsed_table(&study()).unwrap().height(), 0);
}

/// Wild-Time, retraining and bootstrap tables read the analyses they name.
#[test]
fn wild_time_retraining_and_bootstrap_tables() {
    let study = analysed(&study());
    let w = wild_time_table(&study).unwrap();
    // cnn_s (first by key): K = 3, Eval-Fix at the middle slice 2002: ID = mean of its
    // row's cells 0..=1 (empty, 1.0) = 100, OOD = its cell on 2003 = 62.5.
    assert_eq!(strs(&w, "fix at")[0].as_deref(), Some("2002"));
    assert_close(&floats(&w, "fix ID")[..1], &[Some(100.0)]);
    assert_close(&floats(&w, "fix OOD avg")[..1], &[Some(62.5)]);
    let r = retraining_table(&study).unwrap();
    assert_eq!(strs(&r, "policy")[0].as_deref(), Some("never"));
    // cnn_s never retrains: its row 0 on 2002 and 2003: (50 + 37.5) / 2.
    assert_eq!(strs(&r, "cnn_s")[0].as_deref(), Some("43.75 (0)"));
    let b = bootstrap_table(&study).unwrap();
    // mlp_s has the best future score: no difference to itself.
    let models = strs(&b, "model");
    let at = models
        .iter()
        .position(|m| m.as_deref() == Some("mlp_s"))
        .unwrap();
    assert_eq!(strs(&b, "future - best")[at].as_deref(), Some("–"));
}
