//! Hand-worked drift matrices for every analysis the library exports (protocol.md §3).
//!
//! Every expected number is worked out by hand in the comment beside it. In the grid
//! literals below `E` marks an empty cell (`None`); rows are "trained through i", columns
//! "evaluated on j".

use std::path::Path;

use drift::analysis::{
    self, CutoffRow, FamilyRow, ForgettingPoint, ModelCutoffs, Ranked, Robustness, eval_fix,
    eval_stream, middle_cutoff,
};
use drift::{Direction, DriftMatrix, Error, Grid, Metric};

const TOL: f64 = 1e-12;
/// An empty cell in the grid literals.
const E: f64 = f64::NAN;

/// A grid from literal rows; `E` (NaN) becomes `None`.
fn grid(rows: &[&[f64]]) -> Grid {
    let rows: Vec<Vec<Option<f64>>> = rows
        .iter()
        .map(|r| r.iter().map(|&v| (!v.is_nan()).then_some(v)).collect())
        .collect();
    Grid::from_rows(&rows).unwrap()
}

fn labels(k: usize) -> Vec<String> {
    (0..k).map(|n| format!("{}", 2000 + n)).collect()
}

/// A matrix over `grids[0].k()` slices with seeds 0, 1, ... in order.
fn matrix(metric: Metric, grids: Vec<Grid>) -> DriftMatrix {
    let mut m = DriftMatrix::new(labels(grids[0].k()), metric);
    for (seed, g) in grids.into_iter().enumerate() {
        m.add_seed(seed as u64, g).unwrap();
    }
    m
}

#[track_caller]
fn assert_close(actual: f64, expected: f64) {
    assert!(
        (actual - expected).abs() <= TOL,
        "expected {expected}, got {actual}"
    );
}

#[track_caller]
fn assert_opt(actual: Option<f64>, expected: Option<f64>) {
    match (actual, expected) {
        (Some(a), Some(e)) => assert_close(a, e),
        (None, None) => {}
        _ => panic!("expected {expected:?}, got {actual:?}"),
    }
}

#[track_caller]
fn assert_robustness(actual: Robustness, id: Option<f64>, future: Option<f64>, decay: Option<f64>) {
    assert_opt(actual.id, id);
    assert_opt(actual.future, future);
    assert_opt(actual.decay, decay);
}

/// Compares a grid cell by cell with literal rows (`E` = must be empty).
#[track_caller]
fn assert_grid(actual: &Grid, expected: &[&[f64]]) {
    assert_eq!(actual.k(), expected.len(), "grid size");
    for (i, row) in expected.iter().enumerate() {
        for (j, &e) in row.iter().enumerate() {
            let e = (!e.is_nan()).then_some(e);
            match (actual.get(i, j), e) {
                (Some(a), Some(e)) => assert!((a - e).abs() <= TOL, "cell ({i},{j}): {a} vs {e}"),
                (None, None) => {}
                (a, e) => panic!("cell ({i},{j}): expected {e:?}, got {a:?}"),
            }
        }
    }
}

#[track_caller]
fn assert_sorted_close(mut actual: Vec<f64>, mut expected: Vec<f64>) {
    actual.sort_by(f64::total_cmp);
    expected.sort_by(f64::total_cmp);
    assert_eq!(actual.len(), expected.len(), "{actual:?} vs {expected:?}");
    for (a, e) in actual.iter().zip(&expected) {
        assert!((a - e).abs() <= TOL, "{actual:?} vs {expected:?}");
    }
}

// ---------------------------------------------------------------------------------------
// robustness: ID, future, decay
// ---------------------------------------------------------------------------------------

#[test]
fn robustness_uses_only_filled_diagonal_and_upper_cells() {
    // ID  = mean(0.9, 0.85)            = 0.875  (M_22 empty, not 0)
    // Fut = mean(M_01, M_12) = (0.8+0.6)/2 = 0.7  (M_02 empty; 0.1 and 0.2 below the
    //       diagonal must not enter)
    // Dec = ID - Fut = 0.175 (accuracy: higher is better)
    let g = grid(&[&[0.9, 0.8, E], &[0.1, 0.85, 0.6], &[0.2, E, E]]);
    let r = analysis::robustness(&g, Direction::HigherIsBetter);
    assert_robustness(r, Some(0.875), Some(0.7), Some(0.175));
    assert_eq!(r, analysis::robustness(&g, Metric::Accuracy.direction()));
}

#[test]
fn robustness_decay_is_future_minus_id_for_balanced_mse() {
    // Balanced MSE, lower is better.
    // ID  = (1 + 2 + 3)/3 = 2; Fut = (2 + 4 + 3)/3 = 3 (lower-triangle 9s ignored)
    // Dec = Fut - ID = +1 (worse on the future); the same numbers as accuracy give -1.
    let g = grid(&[&[1.0, 2.0, 4.0], &[9.0, 2.0, 3.0], &[9.0, 9.0, 3.0]]);
    assert_eq!(Metric::BalancedMse.direction(), Direction::LowerIsBetter);
    let r = analysis::robustness(&g, Metric::BalancedMse.direction());
    assert_robustness(r, Some(2.0), Some(3.0), Some(1.0));
    let r = analysis::robustness(&g, Direction::HigherIsBetter);
    assert_robustness(r, Some(2.0), Some(3.0), Some(-1.0));
}

#[test]
fn decay_function_orients_by_direction_and_needs_both_scores() {
    assert_opt(
        analysis::decay(Some(0.9), Some(0.6), Direction::HigherIsBetter),
        Some(0.3),
    );
    assert_opt(
        analysis::decay(Some(0.9), Some(0.6), Direction::LowerIsBetter),
        Some(-0.3),
    );
    assert_eq!(
        analysis::decay(None, Some(0.6), Direction::HigherIsBetter),
        None
    );
    assert_eq!(
        analysis::decay(Some(0.9), None, Direction::LowerIsBetter),
        None
    );
}

#[test]
fn robustness_without_future_cells_has_no_future_and_no_decay() {
    // Only diagonal and lower triangle filled: ID = (0.8 + 0.6 + 0.7)/3 = 0.7.
    let g = grid(&[&[0.8, E, E], &[0.5, 0.6, E], &[0.4, 0.3, 0.7]]);
    let r = analysis::robustness(&g, Direction::HigherIsBetter);
    assert_robustness(r, Some(0.7), None, None);
    // A wholly empty grid has nothing at all.
    let r = analysis::robustness(&Grid::empty(3), Direction::HigherIsBetter);
    assert_robustness(r, None, None, None);
}

// ---------------------------------------------------------------------------------------
// per_cutoff, spread_cutoffs
// ---------------------------------------------------------------------------------------

#[test]
fn per_cutoff_rows_for_accuracy_with_empty_cells() {
    // row 0: ID 0.9, Fut (0.8+0.7+0.6)/3 = 0.7, Dec 0.2
    // row 1: ID 0.9, Fut 0.5 ((1,2) empty), Dec 0.4
    // row 2: ID empty, Fut 0.8, Dec none
    // row 3: ID 1.0, no future (last slice), Dec none
    let g = grid(&[
        &[0.9, 0.8, 0.7, 0.6],
        &[0.3, 0.9, E, 0.5],
        &[0.3, 0.3, E, 0.8],
        &[0.3, 0.3, 0.3, 1.0],
    ]);
    let rows = analysis::per_cutoff(&g, Direction::HigherIsBetter);
    assert_eq!(rows.len(), 4);
    let cutoffs: Vec<usize> = rows.iter().map(|r| r.cutoff).collect();
    assert_eq!(cutoffs, [0, 1, 2, 3]);
    assert_robustness(rows[0].scores, Some(0.9), Some(0.7), Some(0.2));
    assert_robustness(rows[1].scores, Some(0.9), Some(0.5), Some(0.4));
    assert_robustness(rows[2].scores, None, Some(0.8), None);
    assert_robustness(rows[3].scores, Some(1.0), None, None);
}

#[test]
fn per_cutoff_decay_for_lower_is_better() {
    // Balanced MSE: row 0: ID 1, Fut (3+5)/2 = 4, Dec 4-1 = 3; row 1: ID 2, Fut 1, Dec -1.
    let g = grid(&[&[1.0, 3.0, 5.0], &[E, 2.0, 1.0], &[E, E, 4.0]]);
    let rows = analysis::per_cutoff(&g, Metric::BalancedMse.direction());
    assert_robustness(rows[0].scores, Some(1.0), Some(4.0), Some(3.0));
    assert_robustness(rows[1].scores, Some(2.0), Some(1.0), Some(-1.0));
    assert_robustness(rows[2].scores, Some(4.0), None, None);
}

#[test]
fn spread_cutoffs_of_the_papers_timelines() {
    // round(t (K-2) / 3), t = 0..4:
    // arXiv K=26: 24/3 = 8 -> 0, 8, 16, 24 (2000/2008/2016/2024)
    assert_eq!(analysis::spread_cutoffs(26, 4), [0, 8, 16, 24]);
    // Amazon K=20: 18/3 = 6 -> 0, 6, 12, 18 (slices 28/34/40/46)
    assert_eq!(analysis::spread_cutoffs(20, 4), [0, 6, 12, 18]);
    // Yearbook K=104: 102/3 = 34 -> 0, 34, 68, 102
    assert_eq!(analysis::spread_cutoffs(104, 4), [0, 34, 68, 102]);
}

#[test]
fn spread_cutoffs_small_k_edge_cases() {
    // K < 2: no cutoff has a future.
    assert_eq!(analysis::spread_cutoffs(0, 4), Vec::<usize>::new());
    assert_eq!(analysis::spread_cutoffs(1, 4), Vec::<usize>::new());
    // K = 2: only cutoff 0 has a future.
    assert_eq!(analysis::spread_cutoffs(2, 4), [0]);
    // No cutoffs asked for; one cutoff is the first.
    assert_eq!(analysis::spread_cutoffs(26, 0), Vec::<usize>::new());
    assert_eq!(analysis::spread_cutoffs(26, 1), [0]);
    // K = 3 (last = 1): t/3 = 0, 1/3, 2/3, 1 -> round 0, 0, 1, 1 -> dedup 0, 1
    assert_eq!(analysis::spread_cutoffs(3, 4), [0, 1]);
    // K = 4 (last = 2): 2t/3 = 0, 0.67, 1.33, 2 -> 0, 1, 1, 2 -> 0, 1, 2
    assert_eq!(analysis::spread_cutoffs(4, 4), [0, 1, 2]);
    // K = 4, 5 cutoffs: 2t/4 = 0, 0.5, 1, 1.5, 2 -> halves up: 0, 1, 1, 2, 2 -> 0, 1, 2
    assert_eq!(analysis::spread_cutoffs(4, 5), [0, 1, 2]);
    // K = 6 (last = 4), 3 cutoffs: 0, 2, 4
    assert_eq!(analysis::spread_cutoffs(6, 3), [0, 2, 4]);
    // K = 5 (last = 3), 3 cutoffs: 0, 1.5 -> 2, 3
    assert_eq!(analysis::spread_cutoffs(5, 3), [0, 2, 3]);
}

// ---------------------------------------------------------------------------------------
// family_averages, default_family
// ---------------------------------------------------------------------------------------

#[test]
fn default_family_strips_the_size_suffix() {
    assert_eq!(analysis::default_family("cnn_s"), "cnn");
    assert_eq!(analysis::default_family("cnn_m"), "cnn");
    assert_eq!(analysis::default_family("cnn_l"), "cnn");
    assert_eq!(analysis::default_family("bilstm_attn_l"), "bilstm_attn");
    assert_eq!(analysis::default_family("mlp"), "mlp");
    assert_eq!(analysis::default_family("resnet_xl"), "resnet_xl");
}

#[test]
fn family_averages_of_two_families() {
    // cnn_s: row 0: ID .9, Fut (.7+.5)/2 = .6, Dec .3; row 1: ID .8, Fut .6, Dec .2
    let cnn_s = grid(&[&[0.9, 0.7, 0.5], &[E, 0.8, 0.6], &[E, E, 0.7]]);
    // cnn_l: row 0: ID .7, Fut (.5+.5)/2 = .5, Dec .2; row 1: ID .6, Fut .4, Dec .2
    let cnn_l = grid(&[&[0.7, 0.5, 0.5], &[E, 0.6, 0.4], &[E, E, 0.5]]);
    // mlp_m: row 0: ID .8, no future, no decay; row 1: ID .6, Fut .3, Dec .3
    let mlp_m = grid(&[&[0.8, E, E], &[E, 0.6, 0.3], &[E, E, E]]);
    let dir = Direction::HigherIsBetter;
    let (rs, rl, rm) = (
        analysis::per_cutoff(&cnn_s, dir),
        analysis::per_cutoff(&cnn_l, dir),
        analysis::per_cutoff(&mlp_m, dir),
    );
    let models = [
        ModelCutoffs {
            model: "cnn_s",
            family: analysis::default_family("cnn_s"),
            rows: &rs,
        },
        ModelCutoffs {
            model: "mlp_m",
            family: analysis::default_family("mlp_m"),
            rows: &rm,
        },
        ModelCutoffs {
            model: "cnn_l",
            family: analysis::default_family("cnn_l"),
            rows: &rl,
        },
    ];
    let out: Vec<FamilyRow> = analysis::family_averages(&models, &[0, 1]);
    // Families in first-seen order (cnn, mlp); per family: cutoff 0, cutoff 1, overall.
    let keys: Vec<(&str, Option<usize>, usize)> = out
        .iter()
        .map(|r| (r.family.as_str(), r.cutoff, r.models))
        .collect();
    assert_eq!(
        keys,
        [
            ("cnn", Some(0), 2),
            ("cnn", Some(1), 2),
            ("cnn", None, 2),
            ("mlp", Some(0), 1),
            ("mlp", Some(1), 1),
            ("mlp", None, 1),
        ]
    );
    // cnn @0: ID (.9+.7)/2 = .8, Fut (.6+.5)/2 = .55, Dec (.3+.2)/2 = .25
    assert_robustness(out[0].scores, Some(0.8), Some(0.55), Some(0.25));
    // cnn @1: ID (.8+.6)/2 = .7, Fut (.6+.4)/2 = .5, Dec (.2+.2)/2 = .2
    assert_robustness(out[1].scores, Some(0.7), Some(0.5), Some(0.2));
    // cnn overall: ID (.9+.7+.8+.6)/4 = .75, Fut (.6+.5+.6+.4)/4 = .525,
    //              Dec (.3+.2+.2+.2)/4 = .225
    assert_robustness(out[2].scores, Some(0.75), Some(0.525), Some(0.225));
    // mlp @0: ID .8, no future, no decay
    assert_robustness(out[3].scores, Some(0.8), None, None);
    // mlp @1: ID .6, Fut .3, Dec .3
    assert_robustness(out[4].scores, Some(0.6), Some(0.3), Some(0.3));
    // mlp overall: ID (.8+.6)/2 = .7, Fut .3, Dec .3 (each over where defined)
    assert_robustness(out[5].scores, Some(0.7), Some(0.3), Some(0.3));
}

#[test]
fn family_averages_of_hand_built_rows_for_lower_is_better() {
    // Rows built directly; a family of one model reproduces its own figures, and the
    // overall row is the mean over the selected cutoffs only (cutoff 1 is not selected).
    let row = |cutoff, id, future, decay| CutoffRow {
        cutoff,
        scores: Robustness {
            id: Some(id),
            future: Some(future),
            decay: Some(decay),
        },
    };
    let rows = [
        row(0, 1.0, 3.0, 2.0),
        row(1, 100.0, 100.0, 0.0),
        row(2, 2.0, 2.0, 0.0),
    ];
    let models = [ModelCutoffs {
        model: "gru",
        family: "gru",
        rows: &rows,
    }];
    let out = analysis::family_averages(&models, &[0, 2]);
    assert_eq!(out.len(), 3);
    assert_eq!(out[0].cutoff, Some(0));
    assert_robustness(out[0].scores, Some(1.0), Some(3.0), Some(2.0));
    assert_eq!(out[1].cutoff, Some(2));
    assert_robustness(out[1].scores, Some(2.0), Some(2.0), Some(0.0));
    // overall: ID (1+2)/2 = 1.5, Fut (3+2)/2 = 2.5, Dec (2+0)/2 = 1
    assert_eq!(out[2].cutoff, None);
    assert_robustness(out[2].scores, Some(1.5), Some(2.5), Some(1.0));
}

// ---------------------------------------------------------------------------------------
// cohort, deviation
// ---------------------------------------------------------------------------------------

/// Models a and b have seeds 0 and 1; c has only seed 0.
fn cohort_models() -> (DriftMatrix, DriftMatrix, DriftMatrix) {
    // a seed-mean: (0,0) (.8+1)/2 = .9, (0,1) (.6+.8)/2 = .7, (0,2) .4 (seed 0 only),
    //              (1,0) .7, (1,1) (.9+.7)/2 = .8, (1,2) .5, (2,2) (1+.8)/2 = .9
    let a = matrix(
        Metric::Accuracy,
        vec![
            grid(&[&[0.8, 0.6, 0.4], &[0.7, 0.9, 0.5], &[E, E, 1.0]]),
            grid(&[&[1.0, 0.8, E], &[E, 0.7, 0.5], &[E, E, 0.8]]),
        ],
    );
    // b seed-mean: (0,0) .7, (0,1) .5, (0,2) .3, (1,1) .5, (1,2) .3, (2,2) .7 (seed 0)
    let b = matrix(
        Metric::Accuracy,
        vec![
            grid(&[&[0.6, 0.5, 0.2], &[E, 0.6, 0.3], &[E, E, 0.7]]),
            grid(&[&[0.8, 0.5, 0.4], &[E, 0.4, 0.3], &[E, E, E]]),
        ],
    );
    // c: all zeros, seed 0 only -> would drag every mean down if it entered.
    let c = matrix(
        Metric::Accuracy,
        vec![grid(&[&[0.0; 3], &[0.0; 3], &[0.0; 3]])],
    );
    (a, b, c)
}

#[test]
fn cohort_mean_is_defined_only_where_every_member_fills() {
    let (a, b, c) = cohort_models();
    let cohort = analysis::cohort(&[("a", &a), ("c", &c), ("b", &b)], &[0, 1]).unwrap();
    assert_eq!(cohort.members, ["a", "b"]);
    // M̄ = (a + b)/2 where both fill: (0,0) (.9+.7)/2 = .8, (0,1) (.7+.5)/2 = .6,
    // (0,2) (.4+.3)/2 = .35, (1,1) (.8+.5)/2 = .65, (1,2) (.5+.3)/2 = .4, (2,2) .8;
    // (1,0) is filled by a only -> empty.
    assert_grid(
        &cohort.mean,
        &[&[0.8, 0.6, 0.35], &[E, 0.65, 0.4], &[E, E, 0.8]],
    );
}

#[test]
fn cohort_excludes_a_model_missing_an_expected_seed_with_a_reason() {
    let (a, b, c) = cohort_models();
    let cohort = analysis::cohort(&[("a", &a), ("c", &c), ("b", &b)], &[0, 1]).unwrap();
    assert_eq!(cohort.excluded.len(), 1);
    assert_eq!(cohort.excluded[0].0, "c");
    assert!(
        cohort.excluded[0].1.contains("missing seeds 1"),
        "reason: {}",
        cohort.excluded[0].1
    );
    // Asking only for seed 0 lets c in: (0,0) = (.9 + .7 + 0)/3 = 1.6/3.
    let all = analysis::cohort(&[("a", &a), ("c", &c), ("b", &b)], &[0]).unwrap();
    assert_eq!(all.members, ["a", "c", "b"]);
    assert!(all.excluded.is_empty());
    assert_opt(all.mean.get(0, 0), Some(1.6 / 3.0));
}

#[test]
fn cohort_with_mismatched_slices_or_metric_is_an_error() {
    let (a, _, _) = cohort_models();
    let mut other_slices = DriftMatrix::new(
        vec!["2000".into(), "2001".into(), "2003".into()],
        Metric::Accuracy,
    );
    other_slices.add_seed(0, Grid::empty(3)).unwrap();
    other_slices.add_seed(1, Grid::empty(3)).unwrap();
    let err = analysis::cohort(&[("a", &a), ("x", &other_slices)], &[0, 1]).unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err:?}");

    let other_metric = matrix(Metric::MacroAuc, vec![Grid::empty(3), Grid::empty(3)]);
    let err = analysis::cohort(&[("a", &a), ("y", &other_metric)], &[0, 1]).unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err:?}");

    let fewer_slices = matrix(Metric::Accuracy, vec![Grid::empty(2), Grid::empty(2)]);
    assert!(analysis::cohort(&[("a", &a), ("z", &fewer_slices)], &[0, 1]).is_err());

    assert!(analysis::cohort(&[], &[0]).is_err());
}

#[test]
fn deviation_is_model_minus_cohort_mean_where_both_fill() {
    let (a, b, c) = cohort_models();
    let cohort = analysis::cohort(&[("a", &a), ("b", &b), ("c", &c)], &[0, 1]).unwrap();
    // Δ = a-mean - M̄: (0,0) .9-.8 = .1, (0,1) .7-.6 = .1, (0,2) .4-.35 = .05,
    // (1,1) .8-.65 = .15, (1,2) .5-.4 = .1, (2,2) .9-.8 = .1; (1,0) has no M̄.
    let dev = analysis::deviation(&a.mean(), &cohort.mean);
    assert_grid(&dev, &[&[0.1, 0.1, 0.05], &[E, 0.15, 0.1], &[E, E, 0.1]]);
    // b: (0,0) -.1, (0,1) -.1, (0,2) -.05, (1,1) -.15, (1,2) -.1, (2,2) -.1
    let dev = analysis::deviation(&b.mean(), &cohort.mean);
    assert_grid(
        &dev,
        &[&[-0.1, -0.1, -0.05], &[E, -0.15, -0.1], &[E, E, -0.1]],
    );
    // A model cell that is empty stays empty even where M̄ is filled.
    let sparse = grid(&[&[1.0, E, E], &[E, E, E], &[E, E, E]]);
    let dev = analysis::deviation(&sparse, &cohort.mean);
    assert_grid(&dev, &[&[0.2, E, E], &[E, E, E], &[E, E, E]]);
}

// ---------------------------------------------------------------------------------------
// forgetting_curve, forgetting_over_seeds
// ---------------------------------------------------------------------------------------

#[test]
fn forgetting_curve_means_each_lag_over_filled_cells() {
    // lag 0: (.9+.7+.8)/3 = .8; lag 1: (.8+.5)/2 = .65; lag 2: .6; below-diagonal ignored.
    let g = grid(&[&[0.9, 0.8, 0.6], &[0.1, 0.7, 0.5], &[0.1, 0.1, 0.8]]);
    let curve = analysis::forgetting_curve(&g);
    assert_eq!(curve.len(), 3);
    for ((lag, v), (el, ev)) in curve.iter().zip([(0, 0.8), (1, 0.65), (2, 0.6)]) {
        assert_eq!(*lag, el);
        assert_close(*v, ev);
    }
    // (1,2) empty -> lag 1 is .8 alone; (0,2) empty -> no lag 2 at all.
    let g = grid(&[&[0.9, 0.8, E], &[E, 0.7, E], &[E, E, 0.8]]);
    let curve = analysis::forgetting_curve(&g);
    assert_eq!(curve.len(), 2);
    assert_eq!(curve[0].0, 0);
    assert_close(curve[0].1, 0.8);
    assert_eq!(curve[1].0, 1);
    assert_close(curve[1].1, 0.8);
}

#[test]
fn forgetting_over_seeds_is_mean_and_sample_std_of_per_seed_curves() {
    let m = matrix(
        Metric::Accuracy,
        vec![
            // seed 0: F(0) = .8, F(1) = (.6+.6)/2 = .6, F(2) = .4
            grid(&[&[0.8, 0.6, 0.4], &[E, 0.8, 0.6], &[E, E, 0.8]]),
            // seed 1: F(0) = .9, F(1) = (.7+.5)/2 = .6, F(2) has no value
            grid(&[&[0.9, 0.7, E], &[E, 0.9, 0.5], &[E, E, 0.9]]),
            // seed 2: F(0) = 1, F(1) = .8, F(2) = .6
            grid(&[&[1.0, 0.8, 0.6], &[E, 1.0, 0.8], &[E, E, 1.0]]),
        ],
    );
    let points: Vec<ForgettingPoint> = analysis::forgetting_over_seeds(&m);
    assert_eq!(points.len(), 3);
    // lag 0: (.8, .9, 1.0): mean .9, std sqrt((.01 + 0 + .01)/2) = .1
    assert_eq!(points[0].lag, 0);
    assert_close(points[0].mean, 0.9);
    assert_opt(points[0].std, Some(0.1));
    // lag 1: (.6, .6, .8): mean 2/3; deviations -1/15, -1/15, 2/15,
    //        std sqrt((6/225)/2) = 1/sqrt(75)
    assert_eq!(points[1].lag, 1);
    assert_close(points[1].mean, 2.0 / 3.0);
    assert_opt(points[1].std, Some(1.0 / 75f64.sqrt()));
    // lag 2: only seeds 0 and 2 have one: (.4, .6): mean .5, std sqrt(.02/1) = sqrt(2)/10
    assert_eq!(points[2].lag, 2);
    assert_close(points[2].mean, 0.5);
    assert_opt(points[2].std, Some(2f64.sqrt() / 10.0));
}

#[test]
fn forgetting_over_one_seed_has_no_std() {
    let m = matrix(
        Metric::Accuracy,
        vec![grid(&[&[0.9, 0.8, 0.6], &[E, 0.7, 0.5], &[E, E, 0.8]])],
    );
    let points = analysis::forgetting_over_seeds(&m);
    let expected = [(0, 0.8), (1, 0.65), (2, 0.6)];
    assert_eq!(points.len(), 3);
    for (p, (lag, mean)) in points.iter().zip(expected) {
        assert_eq!(p.lag, lag);
        assert_close(p.mean, mean);
        assert_eq!(p.std, None);
    }
}

// ---------------------------------------------------------------------------------------
// StudyAnalysis
// ---------------------------------------------------------------------------------------

/// The study of the cohort models a, c, b (in that order): a and b in family `ab`, c in
/// `zero`.
fn cohort_study() -> analysis::StudyAnalysis {
    let (a, b, c) = cohort_models();
    let model = |model, family, matrix| analysis::StudyModel {
        model,
        key: model,
        family,
        matrix,
        baseline: false,
        detectors: None,
    };
    analysis::StudyAnalysis::new(&[
        model("a", "ab", &a),
        model("c", "zero", &c),
        model("b", "ab", &b),
    ])
    .unwrap()
}

/// A baseline in the study: kept out of the cohort, ranked, and every model's margin is
/// measured against it (positive = better than the baseline, decay included).
#[test]
fn a_baseline_is_ranked_but_not_in_the_cohort() {
    let (a, _, _) = cohort_models();
    let mut base = DriftMatrix::new(a.slices().to_vec(), Metric::Accuracy);
    let k = a.k();
    let flat: Vec<Vec<Option<f64>>> = (0..k).map(|_| vec![Some(0.5); k]).collect();
    base.add_seed(0, Grid::from_rows(&flat).unwrap()).unwrap();
    let model = |model, matrix, baseline| analysis::StudyModel {
        model,
        key: model,
        family: "f",
        matrix,
        baseline,
        detectors: None,
    };
    let study =
        analysis::StudyAnalysis::new(&[model("a", &a, false), model("majority", &base, true)])
            .unwrap();
    assert_eq!(study.cohort.members, ["a"]);
    assert!(study.by_future.iter().any(|r| r.model == "majority"));
    let a_ = study.model("a").unwrap();
    let m = a_.margin.unwrap();
    assert_opt(m.id, Some(a_.overall.id.unwrap() - 0.5));
    assert_opt(m.future, Some(a_.overall.future.unwrap() - 0.5));
    // The baseline's decay is 0: the margin on decay is minus a's decay.
    assert_opt(m.decay, Some(-a_.overall.decay.unwrap()));
    // A study of baselines only has no cohort.
    let e = analysis::StudyAnalysis::new(&[model("majority", &base, true)]).unwrap_err();
    assert!(e.to_string().contains("not a baseline"), "{e}");
}

#[test]
fn a_study_analysis_is_every_analysis_of_its_models_once() {
    let (a, b, c) = cohort_models();
    let study = cohort_study();
    let keys: Vec<&str> = study.models.iter().map(|m| m.model.as_str()).collect();
    assert_eq!(keys, ["a", "c", "b"], "models stay in the order given");
    // The cohort is over the first model's seeds (0, 1): c has seed 0 only.
    assert_eq!(
        study.cohort,
        analysis::cohort(&[("a", &a), ("c", &c), ("b", &b)], &[0, 1]).unwrap()
    );
    assert_eq!(study.cohort.members, ["a", "b"]);
    let direction = Direction::HigherIsBetter;
    assert_eq!(
        study.cohort_overall,
        analysis::robustness(&study.cohort.mean, direction)
    );
    for (m, matrix) in study.models.iter().zip([&a, &c, &b]) {
        let mean = matrix.mean();
        assert_eq!(m.mean, mean);
        assert_eq!(m.seeds, matrix.seeds());
        assert_eq!(m.deviation, analysis::deviation(&mean, &study.cohort.mean));
        assert_eq!(m.overall, analysis::robustness(&mean, direction));
        assert_eq!(m.per_cutoff, analysis::per_cutoff(&mean, direction));
        assert_eq!(m.forgetting, analysis::forgetting_over_seeds(matrix));
        assert_eq!(m.effects, analysis::temporal_effects(matrix));
        assert_eq!(m.spread, analysis::seed_spread(matrix));
        assert_eq!(
            m.eval_stream,
            eval_stream(&mean, direction, analysis::STREAM_K)
        );
        assert_eq!(m.eval_fix, Some(eval_fix(&mean, direction, 1, 0..2)));
        assert_eq!(m.retraining.len(), 9);
        assert_eq!(m.margin, None, "no baseline in this study");
    }
    let overall: Vec<(&str, Robustness)> = study
        .models
        .iter()
        .map(|m| (m.model.as_str(), m.overall))
        .collect();
    // The rankings, with each place marked tied when its seed range of the ranked value
    // overlaps the next place's.
    let with_ties = |mut ranking: Vec<Ranked>,
                     f: fn(&analysis::SeedSpread) -> Option<analysis::Spread>| {
        let spreads: Vec<_> = ranking
            .iter()
            .map(|r| f(&study.model(&r.model).unwrap().spread))
            .collect();
        for (r, t) in ranking.iter_mut().zip(analysis::ties_with_next(&spreads)) {
            r.tied_with_next = t;
        }
        ranking
    };
    assert_eq!(
        study.by_future,
        with_ties(analysis::rank_by_future(&overall, direction), |s| s.future)
    );
    assert_eq!(
        study.by_decay,
        with_ties(analysis::rank_by_decay(&overall), |s| s.decay)
    );
    // b's decays over its seeds reach a's: the two are tied in the decay ranking.
    assert!(study.by_decay[1].tied_with_next);
    assert_eq!(
        study.spread,
        analysis::spread_cutoffs(3, analysis::SPREAD_CUTOFFS)
    );
    for at in &study.cutoff_rankings {
        let rows: Vec<(&str, Robustness)> = study
            .models
            .iter()
            .map(|m| (m.model.as_str(), m.per_cutoff[at.cutoff].scores))
            .collect();
        assert_eq!(at.by_future, analysis::rank_by_future(&rows, direction));
    }
    // Family averages in family then model name order: ab (a, b), then zero (c).
    let tagged: Vec<ModelCutoffs> = [0, 2, 1]
        .iter()
        .map(|&n| ModelCutoffs {
            model: &study.models[n].model,
            family: &study.models[n].family,
            rows: &study.models[n].per_cutoff,
        })
        .collect();
    assert_eq!(
        study.families,
        analysis::family_averages(&tagged, &study.spread)
    );
}

#[test]
fn family_forgetting_means_the_members_curves_lag_by_lag() {
    let study = cohort_study();
    // a: seed 0 F = (.9, .55, .4), seed 1 F = (2.5/3, .65, –): means 13/15, .6, .4.
    // b: seed 0 F = (1.9/3, .4, .2), seed 1 F = (.6, .4, .4): means 37/60, .4, .3.
    // ab: lag 0 (13/15 + 37/60)/2 = 89/120, std |13/15 - 37/60|/sqrt 2 = .25/sqrt 2;
    //     lag 1 .5, std .2/sqrt 2; lag 2 .35, std .1/sqrt 2. zero: one member, no std.
    let names: Vec<&str> = study
        .family_forgetting
        .iter()
        .map(|(f, _)| f.as_str())
        .collect();
    assert_eq!(
        names,
        ["ab", "zero"],
        "families in order of first appearance"
    );
    let ab = &study.family_forgetting[0].1;
    let expected = [(89.0 / 120.0, 0.25), (0.5, 0.2), (0.35, 0.1)];
    assert_eq!(ab.len(), 3);
    for (lag, (p, (mean, spread))) in ab.iter().zip(expected).enumerate() {
        assert_eq!(p.lag, lag);
        assert_close(p.mean, mean);
        assert_opt(p.std, Some(spread / 2f64.sqrt()));
    }
    let zero = &study.family_forgetting[1].1;
    assert!(
        zero.iter().all(|p| p.mean == 0.0 && p.std.is_none()),
        "{zero:?}"
    );
}

#[test]
fn a_study_needs_consistent_models_each_once() {
    let (a, b, _) = cohort_models();
    let model = |model, matrix| analysis::StudyModel {
        model,
        key: model,
        family: "f",
        matrix,
        baseline: false,
        detectors: None,
    };
    let err = analysis::StudyAnalysis::new(&[model("a", &a), model("a", &b)]).unwrap_err();
    assert_eq!(err.to_string(), "model \"a\" appears twice in the study");
    let other = matrix(Metric::MacroAuc, vec![Grid::empty(3)]);
    let err = analysis::StudyAnalysis::new(&[model("a", &a), model("x", &other)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "model x has other slices or another metric than model a"
    );
    let err = analysis::StudyAnalysis::new(&[]).unwrap_err();
    assert_eq!(err.to_string(), "a study needs at least one model");
}

// ---------------------------------------------------------------------------------------
// rank_by_future, rank_by_decay
// ---------------------------------------------------------------------------------------

fn ranking_inputs() -> Vec<(&'static str, Robustness)> {
    let r = |future: Option<f64>, decay: Option<f64>| Robustness {
        id: Some(0.9),
        future,
        decay,
    };
    vec![
        ("b", r(Some(0.7), Some(0.1))),
        ("d", r(None, None)),
        ("c", r(Some(0.9), Some(0.1))),
        ("a", r(Some(0.7), Some(0.2))),
        ("e", r(Some(0.8), Some(-0.05))),
    ]
}

fn ranked(r: &[Ranked]) -> Vec<(usize, &str, f64)> {
    r.iter()
        .map(|x| (x.rank, x.model.as_str(), x.value))
        .collect()
}

#[test]
fn rank_by_future_higher_is_better_ties_by_name() {
    // Best first: c .9, e .8, then a and b tie at .7 -> name order a, b; d has no future.
    let out = analysis::rank_by_future(&ranking_inputs(), Direction::HigherIsBetter);
    assert_eq!(
        ranked(&out),
        [(1, "c", 0.9), (2, "e", 0.8), (3, "a", 0.7), (4, "b", 0.7)]
    );
}

#[test]
fn rank_by_future_lower_is_better_ties_by_name() {
    // Smallest error first: a and b tie at .7 -> a, b; then e .8, c .9.
    let out = analysis::rank_by_future(&ranking_inputs(), Direction::LowerIsBetter);
    assert_eq!(
        ranked(&out),
        [(1, "a", 0.7), (2, "b", 0.7), (3, "e", 0.8), (4, "c", 0.9)]
    );
}

#[test]
fn rank_by_decay_smallest_first_ties_by_name() {
    // e -.05 (improves), then b and c tie at .1 -> b, c; then a .2; d has no decay.
    let out = analysis::rank_by_decay(&ranking_inputs());
    assert_eq!(
        ranked(&out),
        [(1, "e", -0.05), (2, "b", 0.1), (3, "c", 0.1), (4, "a", 0.2)]
    );
}

// ---------------------------------------------------------------------------------------
// differences, temporal_effects, salient_cells (Agarwal & Nenkova)
// ---------------------------------------------------------------------------------------

/// Seed 0: `M_ij = 100 - 3 (j - i) + 2 i` for j >= i, empty below the diagonal. Then
/// - deterioration, consecutive: `M_i^j - M_i^{j-1} = -3` for every pair;
/// - deterioration, anchor: `M_i^j - M_i^{i+1} = -3 (j - i - 1)`;
/// - adaptation, consecutive: `M_i^j - M_{i-1}^j = +3 + 2 = 5`;
/// - adaptation, anchor: `M_i^j - M_0^j = 5 i`.
fn six_slices_seed0() -> Grid {
    grid(&[
        &[100.0, 97.0, 94.0, 91.0, 88.0, 85.0],
        &[E, 102.0, 99.0, 96.0, 93.0, 90.0],
        &[E, E, 104.0, 101.0, 98.0, 95.0],
        &[E, E, E, 106.0, 103.0, 100.0],
        &[E, E, E, E, 108.0, 105.0],
        &[E, E, E, E, E, 110.0],
    ])
}

/// Seed 1: `M_ij = 100 - 5 (j - i) + 2 i` for j >= i; below the diagonal filled with
/// zeros, which no difference may use. Deterioration consecutive -5, anchor
/// `-5 (j - i - 1)`; adaptation consecutive 7, anchor `7 i`.
fn six_slices_seed1() -> Grid {
    grid(&[
        &[100.0, 95.0, 90.0, 85.0, 80.0, 75.0],
        &[0.0, 102.0, 97.0, 92.0, 87.0, 82.0],
        &[0.0, 0.0, 104.0, 99.0, 94.0, 89.0],
        &[0.0, 0.0, 0.0, 106.0, 101.0, 96.0],
        &[0.0, 0.0, 0.0, 0.0, 108.0, 103.0],
        &[0.0, 0.0, 0.0, 0.0, 0.0, 110.0],
    ])
}

#[test]
fn differences_of_six_slices_have_ten_each() {
    let [det_c, det_a, ada_c, ada_a] = analysis::differences(&six_slices_seed0());
    // deterioration pairs (i, j > i+1): i=0: 4, i=1: 3, i=2: 2, i=3: 1 -> 10
    // adaptation pairs (j, 0 < i < j):  j=2: 1, j=3: 2, j=4: 3, j=5: 4 -> 10
    assert_eq!(
        [det_c.len(), det_a.len(), ada_c.len(), ada_a.len()],
        [10; 4]
    );
    assert_sorted_close(det_c, vec![-3.0; 10]);
    // -3 (j-i-1): i=0: -3,-6,-9,-12; i=1: -3,-6,-9; i=2: -3,-6; i=3: -3
    assert_sorted_close(
        det_a,
        vec![-3.0, -6.0, -9.0, -12.0, -3.0, -6.0, -9.0, -3.0, -6.0, -3.0],
    );
    assert_sorted_close(ada_c, vec![5.0; 10]);
    // 5 i: j=2: 5; j=3: 5,10; j=4: 5,10,15; j=5: 5,10,15,20
    assert_sorted_close(
        ada_a,
        vec![5.0, 5.0, 10.0, 5.0, 10.0, 15.0, 5.0, 10.0, 15.0, 20.0],
    );
}

#[test]
fn differences_skip_pairs_with_an_empty_cell() {
    // Empty M_1^3 (= 96). It is in two consecutive-deterioration pairs ((1,3)-(1,2) and
    // (1,4)-(1,3)), one anchor-deterioration pair ((1,3)-(1,2)), two consecutive-adaptation
    // pairs ((1,3)-(0,3) and (2,3)-(1,3)) and one anchor-adaptation pair ((1,3)-(0,3)).
    let mut g = six_slices_seed0();
    g.set(1, 3, None);
    let [det_c, det_a, ada_c, ada_a] = analysis::differences(&g);
    assert_sorted_close(det_c, vec![-3.0; 8]);
    // anchor: the i=1, j=3 difference (-3) is gone: sum -60 + 3 = -57 over 9
    assert_sorted_close(
        det_a,
        vec![-3.0, -6.0, -9.0, -12.0, -6.0, -9.0, -3.0, -6.0, -3.0],
    );
    assert_sorted_close(ada_c, vec![5.0; 8]);
    // anchor: the i=1, j=3 difference (5) is gone
    assert_sorted_close(
        ada_a,
        vec![5.0, 10.0, 5.0, 10.0, 15.0, 5.0, 10.0, 15.0, 20.0],
    );

    // An empty anchor M_0^1 removes every i=0 anchor-deterioration difference (4) and the
    // (0,2)-(0,1) consecutive one; adaptation never reads column 1 with i > 0.
    let mut g = six_slices_seed0();
    g.set(0, 1, None);
    let [det_c, det_a, ada_c, ada_a] = analysis::differences(&g);
    assert_eq!(
        [det_c.len(), det_a.len(), ada_c.len(), ada_a.len()],
        [9, 6, 10, 10]
    );
}

#[test]
fn temporal_effects_scores_on_seed_mean_with_min_max_over_seeds() {
    // Seed mean: M_ij = 100 - 4 (j - i) + 2 i on and above the diagonal (seed 1's zeros
    // below it make the mean 0 there, unused). Scores on the mean:
    //   deterioration consecutive -4; anchor -4 (j-i-1) -> -4 * 20 / 10 = -8
    //   adaptation consecutive 4 + 2 = 6; anchor 6 i -> 6 * 20 / 10 = 12
    // Per seed: seed 0 (-3, -6, 5, 10), seed 1 (-5, -10, 7, 14).
    let m = matrix(
        Metric::Accuracy,
        vec![six_slices_seed0(), six_slices_seed1()],
    );
    let te = analysis::temporal_effects(&m);
    let check = |s: analysis::TemporalScore, score: f64, min: f64, max: f64| {
        assert_eq!(s.n, 10);
        assert_opt(s.score, Some(score));
        assert_opt(s.min, Some(min));
        assert_opt(s.max, Some(max));
        // Ten non-zero differences all of one sign (with ties): exact permutation test,
        // p = 2 / 2^10 = 1/512.
        assert_opt(s.p_value, Some(1.0 / 512.0));
    };
    check(te.deterioration_consecutive, -4.0, -5.0, -3.0);
    check(te.deterioration_anchor, -8.0, -10.0, -6.0);
    check(te.adaptation_consecutive, 6.0, 5.0, 7.0);
    check(te.adaptation_anchor, 12.0, 10.0, 14.0);
}

#[test]
fn temporal_effects_p_value_of_a_small_mixed_sign_vector() {
    // K = 4. Consecutive deterioration: (0,2)-(0,1) = 11-10 = 1, (0,3)-(0,2) = 9-11 = -2,
    // (1,3)-(1,2) = 13-10 = 3 -> [1, -2, 3], mean 2/3. Ranks 1, 2, 3; r+ = 1 + 3 = 4.
    // Subset sums of {1,2,3}: 0,1,2,3,3,4,5,6 -> P(R >= 4) = 3/8, p = 2 * 3/8 = 0.75.
    let g = grid(&[
        &[20.0, 10.0, 11.0, 9.0],
        &[E, 20.0, 10.0, 13.0],
        &[E, E, 20.0, 12.0],
        &[E, E, E, 20.0],
    ]);
    let m = matrix(Metric::Accuracy, vec![g]);
    let te = analysis::temporal_effects(&m);
    let s = te.deterioration_consecutive;
    assert_eq!(s.n, 3);
    assert_opt(s.score, Some(2.0 / 3.0));
    assert_opt(s.p_value, Some(0.75));
    // One seed: min = max = the score.
    assert_opt(s.min, Some(2.0 / 3.0));
    assert_opt(s.max, Some(2.0 / 3.0));
    // Adaptation consecutive: j=2: (1,2)-(0,2) = 10-11 = -1; j=3: (1,3)-(0,3) = 13-9 = 4,
    // (2,3)-(1,3) = 12-13 = -1 -> mean 2/3, n 3.
    assert_eq!(te.adaptation_consecutive.n, 3);
    assert_opt(te.adaptation_consecutive.score, Some(2.0 / 3.0));
}

#[test]
fn temporal_effects_without_differences_are_empty() {
    // K = 2: no j > i + 1 and no 0 < i < j.
    let m = matrix(Metric::Accuracy, vec![grid(&[&[0.9, 0.8], &[E, 0.9]])]);
    let te = analysis::temporal_effects(&m);
    for s in [
        te.deterioration_consecutive,
        te.deterioration_anchor,
        te.adaptation_consecutive,
        te.adaptation_anchor,
    ] {
        assert_eq!(s.n, 0);
        assert_eq!(s.score, None);
        assert_eq!(s.p_value, None);
        assert_eq!(s.min, None);
        assert_eq!(s.max, None);
    }
}

#[test]
fn salient_cells_are_first_next_first_last_and_penultimate_last() {
    // M_s^{s+1} = (0,1) = 97, M_s^n = (0,5) = 85, M_{n-1}^n = (4,5) = 105
    let s = analysis::salient_cells(&six_slices_seed0());
    assert_eq!(s.first_on_next, Some(97.0));
    assert_eq!(s.first_on_last, Some(85.0));
    assert_eq!(s.penultimate_on_last, Some(105.0));
    // An empty cell stays empty; fewer than 2 slices has none.
    let mut g = six_slices_seed0();
    g.set(0, 1, None);
    assert_eq!(analysis::salient_cells(&g).first_on_next, None);
    let one = analysis::salient_cells(&grid(&[&[0.5]]));
    assert_eq!(
        (
            one.first_on_next,
            one.first_on_last,
            one.penultimate_on_last
        ),
        (None, None, None)
    );
    // K = 2: all three are the single future cell (0,1).
    let two = analysis::salient_cells(&grid(&[&[0.9, 0.7], &[E, 0.8]]));
    assert_eq!(
        (
            two.first_on_next,
            two.first_on_last,
            two.penultimate_on_last
        ),
        (Some(0.7), Some(0.7), Some(0.7))
    );
}

// ---------------------------------------------------------------------------------------
// summarize
// ---------------------------------------------------------------------------------------

#[test]
fn summarize_computes_scores_on_the_per_cell_seed_mean() {
    // Seeds added out of order: the summary lists them ascending.
    let mut m = DriftMatrix::new(labels(3), Metric::Accuracy);
    m.add_seed(1, grid(&[&[0.7, 0.5, E], &[0.8, 0.6, 0.4], &[E, E, 0.7]]))
        .unwrap();
    m.add_seed(
        0,
        grid(&[&[0.9, 0.7, 0.5], &[0.6, 0.8, 0.6], &[E, 0.5, 0.9]]),
    )
    .unwrap();
    let s = analysis::summarize(&m);
    assert_eq!(s.metric, Metric::Accuracy);
    assert_eq!(s.slices, labels(3));
    assert_eq!(s.seeds, [0, 1]);
    // Seed mean: (0,0) .8, (0,1) .6, (0,2) .5 (seed 0 only), (1,1) .7, (1,2) .5, (2,2) .8
    // ID  = (.8 + .7 + .8)/3 = 2.3/3
    // Fut = (.6 + .5 + .5)/3 = 1.6/3
    //   (not the mean of per-seed futures (.6 + .45)/2 = .525, nor the pooled .54)
    // Dec = 0.7/3
    assert_opt(s.id, Some(2.3 / 3.0));
    assert_opt(s.future, Some(1.6 / 3.0));
    assert_opt(s.decay, Some(0.7 / 3.0));
    // Per cutoff on the mean: row 0: ID .8, Fut (.6+.5)/2 = .55, Dec .25;
    // row 1: ID .7, Fut .5, Dec .2; row 2: ID .8, none.
    assert_eq!(s.per_cutoff.len(), 3);
    assert_eq!(s.per_cutoff[1].slice, "2001");
    assert_robustness(
        s.per_cutoff[0].row.scores,
        Some(0.8),
        Some(0.55),
        Some(0.25),
    );
    assert_robustness(s.per_cutoff[1].row.scores, Some(0.7), Some(0.5), Some(0.2));
    assert_robustness(s.per_cutoff[2].row.scores, Some(0.8), None, None);
    // Forgetting per seed: seed 0 F(0) = 2.6/3, F(1) = .65, F(2) = .5;
    // seed 1 F(0) = 2.0/3, F(1) = .45, no F(2).
    assert_eq!(s.forgetting.len(), 3);
    assert_close(s.forgetting[0].mean, 2.3 / 3.0);
    assert_opt(s.forgetting[0].std, Some(0.02f64.sqrt()));
    assert_close(s.forgetting[1].mean, 0.55);
    assert_opt(s.forgetting[1].std, Some(0.02f64.sqrt()));
    assert_close(s.forgetting[2].mean, 0.5);
    assert_eq!(s.forgetting[2].std, None);
    // Deterioration consecutive on the mean: (0,2)-(0,1) = .5-.6 = -.1, n 1; per seed only
    // seed 0 has it (.5-.7 = -.2), so min = max = -.2.
    let d = s.effects.deterioration_consecutive;
    assert_eq!(d.n, 1);
    assert_opt(d.score, Some(-0.1));
    assert_opt(d.min, Some(-0.2));
    assert_opt(d.max, Some(-0.2));
    // Adaptation consecutive on the mean: (1,2)-(0,2) = .5-.5 = 0; seed 0: .6-.5 = .1.
    let a = s.effects.adaptation_consecutive;
    assert_eq!(a.n, 1);
    assert_opt(a.score, Some(0.0));
    assert_opt(a.min, Some(0.1));
    // Salient cells on the mean: (0,1) .6, (0,2) .5, (1,2) .5
    assert_opt(s.salient.first_on_next, Some(0.6));
    assert_opt(s.salient.first_on_last, Some(0.5));
    assert_opt(s.salient.penultimate_on_last, Some(0.5));
}

// ---------------------------------------------------------------------------------------
// parse_long_csv
// ---------------------------------------------------------------------------------------

#[test]
fn parse_long_csv_orders_half_year_labels_and_reads_seeds() {
    // Slices appear as 2017-H2, 2018-H1, 2017-H1; timeline order is
    // 2017-H1 (0), 2017-H2 (1), 2018-H1 (2).
    let csv = "\
seed,train_slice,eval_slice,value,metric
1,2017-H2,2017-H2,0.8,accuracy
0,2017-H2,2018-H1,0.7,accuracy
0,2017-H1,2017-H1,0.9,accuracy
0,2017-H1,2017-H2,0.6,accuracy
0,2018-H1,2018-H1,,accuracy
1,2017-H1,2017-H2,nan,accuracy
1,2017-H1,2018-H1,0.4,accuracy
";
    let m = drift::matrix::parse_long_csv(csv.as_bytes(), Path::new("mem.csv"), Metric::Accuracy)
        .unwrap();
    assert_eq!(m.slices(), ["2017-H1", "2017-H2", "2018-H1"]);
    assert_eq!(m.seeds(), [0, 1]);
    assert_eq!(m.metric(), Metric::Accuracy);
    assert_grid(&m.grids()[0], &[&[0.9, 0.6, E], &[E, E, 0.7], &[E, E, E]]);
    assert_grid(&m.grids()[1], &[&[E, E, 0.4], &[E, 0.8, E], &[E, E, E]]);
}

#[test]
fn parse_long_csv_orders_integer_labels_numerically() {
    // Without a seed column every row is seed 0; "9" comes before "10" on the timeline.
    let csv = "train_slice,eval_slice,value\n10,10,0.5\n9,10,0.25\n9,9,0.75\n";
    let m =
        drift::matrix::parse_long_csv(csv.as_bytes(), Path::new("mem.csv"), Metric::Mse).unwrap();
    assert_eq!(m.slices(), ["9", "10"]);
    assert_eq!(m.seeds(), [0]);
    assert_grid(&m.grids()[0], &[&[0.75, 0.25], &[E, 0.5]]);
}

#[test]
fn parse_long_csv_keeps_zero_padded_integer_labels() {
    // Labels "01", "02", "10" are integers 1, 2, 10 and must keep their own spelling.
    let csv = "train_slice,eval_slice,value\n10,10,0.5\n02,10,0.25\n01,02,0.75\n";
    let m =
        drift::matrix::parse_long_csv(csv.as_bytes(), Path::new("mem.csv"), Metric::Mse).unwrap();
    assert_eq!(m.slices(), ["01", "02", "10"]);
    assert_grid(&m.grids()[0], &[&[E, 0.75, E], &[E, E, 0.25], &[E, E, 0.5]]);
}

#[test]
fn parse_long_csv_rejects_a_repeated_cell_and_a_wrong_metric() {
    let csv = "seed,train_slice,eval_slice,value\n0,a,a,0.5\n0,a,a,0.6\n";
    let err = drift::matrix::parse_long_csv(csv.as_bytes(), Path::new("m.csv"), Metric::Accuracy)
        .unwrap_err();
    assert!(matches!(err, Error::Csv { line: 3, .. }), "{err:?}");
    let csv = "train_slice,eval_slice,value,metric\na,a,0.5,mse\n";
    let err = drift::matrix::parse_long_csv(csv.as_bytes(), Path::new("m.csv"), Metric::Accuracy)
        .unwrap_err();
    assert!(matches!(err, Error::Csv { line: 2, .. }), "{err:?}");
}

/// Eval-Fix by hand: the split row's held-out cells (the slices it trained on), its future
/// cells and the worst of them, skipping empty cells; worst is the maximum for an error.
#[test]
fn eval_fix_reads_the_split_row() {
    let g = grid(&[
        &[0.9, 0.8, 0.7, 0.6],
        &[0.5, 0.85, E, 0.65],
        &[0.4, 0.45, 0.95, 0.75],
        &[0.3, 0.35, 0.4, 0.99],
    ]);
    // Split at row 1, trained on slices 0..=1: ID (0.5 + 0.85) / 2; future: 0.65 (the
    // empty cell is skipped).
    let f = eval_fix(&g, Direction::HigherIsBetter, 1, 0..2);
    assert_eq!(f.cutoff, 1);
    assert_opt(f.id, Some(0.675));
    assert_opt(f.ood_avg, Some(0.65));
    assert_opt(f.ood_worst, Some(0.65));
    // Row 0 trained on slice 0 only (a single regime gives the same range at row 0).
    let f = eval_fix(&g, Direction::HigherIsBetter, 0, 0..1);
    assert_opt(f.id, Some(0.9));
    assert_opt(f.ood_avg, Some(0.7));
    assert_opt(f.ood_worst, Some(0.6));
    // A lower-is-better metric: the worst future cell is the largest.
    let f = eval_fix(&g, Direction::LowerIsBetter, 0, 0..1);
    assert_opt(f.ood_worst, Some(0.8));
    // A single-regime split at row 2 reads only its own slice as ID.
    let f = eval_fix(&g, Direction::HigherIsBetter, 2, 2..3);
    assert_opt(f.id, Some(0.95));
    assert_opt(f.ood_avg, Some(0.75));
    // The last row has no future.
    let f = eval_fix(&g, Direction::HigherIsBetter, 3, 0..4);
    assert_opt(f.ood_avg, None);
    assert_opt(f.ood_worst, None);
    assert_eq!(middle_cutoff(4), 1);
    assert_eq!(middle_cutoff(5), 2);
    assert_eq!(middle_cutoff(1), 0);
}

/// Eval-Stream by hand: per row the mean, worst and best of the next `k` filled cells,
/// then averaged over the rows that have any.
#[test]
fn eval_stream_averages_each_rows_horizon() {
    let g = grid(&[
        &[0.9, 0.8, 0.7, 0.6],
        &[0.5, 0.85, E, 0.65],
        &[0.4, 0.45, 0.95, E],
        &[0.3, 0.35, 0.4, 0.99],
    ]);
    // k = 2: row 0 reads 0.8, 0.7; row 1 reads 0.65 (its next cell is empty); row 2 has
    // no filled cell ahead; row 3 has none at all.
    let s = eval_stream(&g, Direction::HigherIsBetter, 2);
    assert_eq!((s.k, s.rows), (2, 2));
    assert_opt(s.avg, Some((0.75 + 0.65) / 2.0));
    assert_opt(s.worst, Some((0.7 + 0.65) / 2.0));
    assert_opt(s.best, Some((0.8 + 0.65) / 2.0));
    // k = 1: row 0 reads 0.8; row 1's next cell is empty, so only row 0 counts.
    let s = eval_stream(&g, Direction::HigherIsBetter, 1);
    assert_eq!(s.rows, 1);
    assert_opt(s.avg, Some(0.8));
    // A horizon past the end reads to the last slice; an error swaps worst and best.
    let s = eval_stream(&g, Direction::LowerIsBetter, 10);
    assert_eq!(s.rows, 2);
    assert_opt(s.avg, Some(((0.8 + 0.7 + 0.6) / 3.0 + 0.65) / 2.0));
    assert_opt(s.worst, Some((0.8 + 0.65) / 2.0));
    assert_opt(s.best, Some((0.6 + 0.65) / 2.0));
    // No future cell anywhere: nothing to average.
    let s = eval_stream(&grid(&[&[0.9, E], &[E, 0.8]]), Direction::HigherIsBetter, 3);
    assert_eq!(s.rows, 0);
    assert_opt(s.avg, None);
}

/// Spread over seeds: mean, sample sd and range; ties where neighbouring ranges overlap.
#[test]
fn seed_spread_and_ties() {
    // Seed 0: ID (0.9 + 0.7) / 2 = 0.8, future 0.6; seed 1: ID 0.9, future 0.5
    // (its cell (0, 1) is empty: the future is (0.5) alone).
    let mut m = DriftMatrix::new(labels(2), Metric::Accuracy);
    m.add_seed(0, grid(&[&[0.9, 0.6], &[E, 0.7]])).unwrap();
    m.add_seed(1, grid(&[&[1.0, E], &[E, 0.8]])).unwrap();
    let s = analysis::seed_spread(&m);
    let id = s.id.unwrap();
    assert_eq!(id.n, 2);
    assert!((id.mean - 0.85).abs() < TOL);
    // sd of {0.8, 0.9} with ddof 1: sqrt(2 * 0.05^2 / 1) = 0.0707...
    assert!((id.sd.unwrap() - (0.005f64).sqrt()).abs() < TOL);
    assert_eq!((id.min, id.max), (0.8, 0.9));
    // Seed 1 has no future cell: the future spread has one seed and no sd.
    let future = s.future.unwrap();
    assert_eq!((future.n, future.sd), (1, None));
    assert!((future.mean - 0.6).abs() < TOL);
    // Decay of seed 0 only: 0.8 - 0.6.
    assert!((s.decay.unwrap().mean - 0.2).abs() < TOL);

    let spread = |min: f64, max: f64| analysis::Spread::of(&[min, max]);
    // [0.8, 0.9] overlaps [0.85, 0.95] (tied); [0.85, 0.95] does not reach [0.5, 0.6];
    // a touching range counts as overlapping; a missing spread ties with nothing.
    let ties = analysis::ties_with_next(&[
        spread(0.8, 0.9),
        spread(0.85, 0.95),
        spread(0.5, 0.6),
        spread(0.6, 0.7),
        None,
    ]);
    assert_eq!(ties, [true, false, true, false, false]);
}

/// The bootstrap agrees with numpy on the same resampling indices
/// (`scripts/bootstrap_fixtures.py`), with an empty cell and a lower-is-better metric;
/// the seeded draws are reproducible and in range.
#[test]
fn bootstrap_intervals_match_numpy_on_the_same_draws() {
    let fixture = crate::support::fixture("bootstrap.json");
    let p = &fixture["percentiles"];
    let values: Vec<f64> = serde_json::from_value(p["values"].clone()).unwrap();
    let qs: Vec<f64> = serde_json::from_value(p["q"].clone()).unwrap();
    let expected: Vec<f64> = serde_json::from_value(p["expected"].clone()).unwrap();
    for (q, e) in qs.iter().zip(&expected) {
        assert!((analysis::percentile(&values, *q).unwrap() - e).abs() < TOL);
    }
    assert_eq!(analysis::percentile(&[], 50.0), None);

    let cases = fixture["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for case in cases {
        let cells = |key: &str| -> Grid {
            let rows: Vec<Vec<Option<f64>>> = serde_json::from_value(case[key].clone()).unwrap();
            Grid::from_rows(&rows).unwrap()
        };
        let draws: Vec<Vec<usize>> = serde_json::from_value(case["draws"].clone()).unwrap();
        let direction = if case["higher_is_better"].as_bool().unwrap() {
            Direction::HigherIsBetter
        } else {
            Direction::LowerIsBetter
        };
        let b = analysis::bootstrap_with(&cells("grid"), Some(&cells("best")), &draws, direction);
        let name = case["name"].as_str().unwrap();
        for (field, got) in [
            ("id", b.id),
            ("future", b.future),
            ("decay", b.decay),
            ("future_vs_best", b.future_vs_best),
        ] {
            let want: [f64; 2] = serde_json::from_value(case[field].clone()).unwrap();
            let got = got.unwrap();
            assert!(
                (got.low - want[0]).abs() < TOL && (got.high - want[1]).abs() < TOL,
                "{name} {field}: {got:?} vs numpy {want:?}"
            );
        }
    }

    // One replicate by hand: rows 0, 0, 2 of a 3x3 grid. ID (0.9 + 0.9 + 0.7) / 3;
    // future pools row 0's two cells twice and row 2 has none: (0.8 + 0.6) * 2 / 4.
    let g = grid(&[&[0.9, 0.8, 0.6], &[E, 0.85, 0.7], &[E, E, 0.7]]);
    let r = analysis::resampled(&g, &[0, 0, 2], Direction::HigherIsBetter);
    assert_opt(r.id, Some(2.5 / 3.0));
    assert_opt(r.future, Some(0.7));
    assert_opt(r.decay, Some(2.5 / 3.0 - 0.7));
    // Seeded draws: the same for the same seed and label, other for another label.
    let a = analysis::bootstrap_draws(5, 50, 7, "cnn_s");
    assert_eq!(a, analysis::bootstrap_draws(5, 50, 7, "cnn_s"));
    assert_ne!(a, analysis::bootstrap_draws(5, 50, 7, "mlp_s"));
    assert!(a.iter().all(|d| d.len() == 5 && d.iter().all(|&i| i < 5)));
    // Against itself the difference is exactly 0 on every draw.
    let draws = analysis::bootstrap_draws(3, 50, 7, "cnn_s");
    let same = analysis::bootstrap_with(&g, Some(&g), &draws, Direction::HigherIsBetter);
    let zero = same.future_vs_best.unwrap();
    assert_eq!((zero.low, zero.high), (0.0, 0.0));
    assert!(!zero.excludes_zero());
}

/// Retraining policies on a hand-worked cumulative matrix, with an empty cell and an
/// error metric.
#[test]
fn retraining_policies_replay_the_matrix() {
    use analysis::{Policy, simulate};
    // Rows: trained through 0..=3; slice t is scored by the deployed model m < t.
    let g = grid(&[
        &[0.90, 0.80, 0.70, 0.60, 0.50],
        &[E, 0.92, 0.85, 0.75, 0.65],
        &[E, E, 0.93, E, 0.80],
        &[E, E, E, 0.94, 0.88],
        &[E, E, E, E, 0.95],
    ]);
    let hib = Direction::HigherIsBetter;
    // Never: model 0 on slices 1..4: 0.8, 0.7, 0.6, 0.5.
    let never = simulate(&g, hib, Policy::Never);
    assert_eq!(
        (never.retrains, never.deployed.clone()),
        (0, vec![0, 0, 0, 0])
    );
    assert_opt(never.mean, Some(0.65));
    assert_opt(never.worst, Some(0.5));
    // Every slice: M[0][1], M[1][2], M[2][3] (empty: skipped), M[3][4]; the retrain after
    // the last slice deploys nothing, so 3 retrains.
    let always = simulate(&g, hib, Policy::Every { k: 1 });
    assert_eq!(always.deployed, [0, 1, 2, 3]);
    assert_eq!(always.retrains, 3);
    assert_opt(always.mean, Some((0.8 + 0.85 + 0.88) / 3.0));
    // Every 2: retrain after slice 2 only (after 4 would deploy nothing): 0, 0, 2, 2.
    let every2 = simulate(&g, hib, Policy::Every { k: 2 });
    assert_eq!(
        (every2.deployed.clone(), every2.retrains),
        (vec![0, 0, 2, 2], 1)
    );
    assert_opt(every2.mean, Some((0.8 + 0.7 + 0.8) / 3.0));
    // On a drop of more than 0.15 below the deployed model's ID: model 0 scores 0.8
    // (drop 0.1), then 0.7 (drop 0.2 > 0.15): retrain after slice 2; model 2's cell on
    // slice 3 is empty (no alarm), then 0.8 on slice 4.
    let alarm = simulate(&g, hib, Policy::OnDrop { drop: 0.15 });
    assert_eq!(
        (alarm.deployed.clone(), alarm.retrains),
        (vec![0, 0, 2, 2], 1)
    );
    // Read as an error, the same cells only fall below model 0's 0.9: better, so no alarm,
    // and the worst deployed score is the largest, 0.8.
    let err = simulate(&g, Direction::LowerIsBetter, Policy::OnDrop { drop: 0.05 });
    assert_eq!(err.retrains, 0);
    assert_opt(err.worst, Some(0.8));
    let rising = grid(&[&[0.2, 0.3, 0.5], &[E, 0.2, 0.25], &[E, E, 0.2]]);
    let err = simulate(
        &rising,
        Direction::LowerIsBetter,
        Policy::OnDrop { drop: 0.05 },
    );
    // 0.3 is 0.1 above the ID 0.2: retrain after slice 1, then M[1][2] = 0.25.
    assert_eq!((err.deployed.clone(), err.retrains), (vec![0, 1], 1));
    assert_opt(err.mean, Some(0.275));
    assert_opt(err.worst, Some(0.3));
    // The standard set: never, every 1/2/3/5, four drops; names on the display scale.
    let policies = analysis::standard_policies(&g, 100.0);
    let names: Vec<String> = policies.iter().map(|p| p.name(100.0)).collect();
    assert_eq!(
        names,
        [
            "never",
            "every slice",
            "every 2",
            "every 3",
            "every 5",
            "drop > 1",
            "drop > 2",
            "drop > 5",
            "drop > 10"
        ]
    );
}

/// A self-labelling matrix leaves the rows before its anchor empty: the anchor scores are
/// taken against the first filled row, not against an empty row 0.
#[test]
fn adaptation_anchors_on_the_first_filled_row() {
    let g = grid(&[
        &[E, E, E, E],
        &[E, 0.9, 0.8, 0.7],
        &[E, E, 0.85, 0.75],
        &[E, E, E, 0.8],
    ]);
    let [_, _, consecutive, anchor] = analysis::differences(&g);
    // Anchor s = 1: j = 3, i = 2: M_2^3 - M_1^3 = 0.05; consecutive the same single pair.
    assert_eq!(anchor.len(), 1);
    assert!((anchor[0] - 0.05).abs() < TOL);
    assert_eq!(consecutive.len(), 1);
    assert!((consecutive[0] - 0.05).abs() < TOL);
}

/// Table 9 by hand: the anchor-adaptation score of a self-labelling matrix (anchor 1; row
/// 0 empty) next to a gold single-slice matrix's, both against row 1, so the gold
/// matrix's row 0 takes no part.
#[test]
fn self_labelling_is_set_against_gold_from_the_same_anchor() {
    let matrix = |rows: &[&[f64]]| {
        let mut m = DriftMatrix::new(labels(4), Metric::Accuracy);
        m.add_seed(0, grid(rows)).unwrap();
        m
    };
    let self_labelled = matrix(&[
        &[E, E, E, E],
        &[E, 0.9, 0.8, 0.7],
        &[E, 0.85, 0.9, 0.75],
        &[E, 0.8, 0.8, 0.9],
    ]);
    let gold = matrix(&[
        &[0.9, 0.8, 0.7, 0.6],
        &[0.7, 0.9, 0.8, 0.6],
        &[0.6, 0.7, 0.95, 0.8],
        &[0.5, 0.6, 0.7, 0.9],
    ]);
    let t = analysis::self_labelling(&self_labelled, &gold, 1).unwrap();
    // s = 1 < i = 2 < j = 3 is the one pair: 0.75 - 0.7 self-labelled, 0.8 - 0.6 gold.
    assert_eq!((t.anchor, t.self_labelled.n, t.gold.n), (1, 1, 1));
    assert_opt(t.self_labelled.score, Some(0.05));
    assert_opt(t.gold.score, Some(0.2));
    // The salient cells start at the first filled row too: M_1^2, M_1^3.
    let cells = analysis::salient_cells(&self_labelled.mean());
    assert_eq!(
        (
            cells.first_on_next,
            cells.first_on_last,
            cells.penultimate_on_last
        ),
        (Some(0.8), Some(0.7), Some(0.75))
    );
    assert!(analysis::self_labelling(&self_labelled, &gold, 4).is_err());
    let other = DriftMatrix::new(labels(3), Metric::Accuracy);
    assert!(analysis::self_labelling(&self_labelled, &other, 1).is_err());
}
