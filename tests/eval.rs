//! From model outputs to cells: what each metric reads, worked by hand.

use drift::Metric;
use drift::data::Targets;
use drift::eval::{Outputs, matrix_row, score, seen_classes_row};
use drift::slices::{Regime, SliceSplit};

/// Unstratified splits, one per slice, from each slice's (train, test) rows.
fn splits(parts: &[(&[usize], &[usize])]) -> Vec<SliceSplit> {
    parts
        .iter()
        .map(|(train, test)| SliceSplit {
            train: train.to_vec(),
            test: test.to_vec(),
            stratified: false,
        })
        .collect()
}

fn outputs(width: usize, rows: &[&[f32]]) -> Outputs {
    Outputs {
        width,
        values: rows.concat(),
    }
}

#[test]
fn class_logits_give_the_argmax_and_softmax_scores() {
    let targets = Targets::Classes {
        classes: 2,
        labels: vec![0, 1, 1, 0],
    };
    // Predicted classes 0, 1, 0, 0 (a tie goes to the first class, as torch.argmax).
    let out = outputs(2, &[&[2.0, 1.0], &[0.0, 3.0], &[1.0, 1.0], &[5.0, -5.0]]);
    let all = [0, 1, 2, 3];
    assert_eq!(
        score(Metric::Accuracy, &targets, &out, &all).unwrap(),
        Some(0.75)
    );
    assert_eq!(
        score(Metric::Accuracy, &targets, &out, &[1, 2]).unwrap(),
        Some(0.5)
    );
    // P(class 1) = 0.269, 0.953, 0.5, 0.000045: both positives outrank both negatives.
    assert_eq!(
        score(Metric::MacroAuc, &targets, &out, &all).unwrap(),
        Some(1.0)
    );
    assert_eq!(score(Metric::Accuracy, &targets, &out, &[]).unwrap(), None);
}

#[test]
fn multi_class_auc_is_one_vs_rest_on_softmax() {
    let targets = Targets::Classes {
        classes: 3,
        labels: vec![0, 1, 2, 2],
    };
    let out = outputs(
        3,
        &[
            &[3.0, 0.0, 0.0],
            &[0.0, 3.0, 0.0],
            &[0.0, 0.0, 3.0],
            &[3.0, 0.0, 0.0],
        ],
    );
    // Softmax gives p = 0.909 to the 3.0 logit and 0.045 to the others. Class 0: positive
    // row 0 (0.909) against rows 1, 2, 3 (0.045, 0.045, 0.909): 1, 1, 0.5. Class 1: row 1
    // beats all: 1. Class 2: rows 2 (0.909) and 3 (0.045) against rows 0, 1 (0.045 each):
    // 1, 1, 0.5, 0.5 -> 0.75.
    let expected = (2.5 / 3.0 + 1.0 + 0.75) / 3.0;
    let got = score(Metric::MacroAuc, &targets, &out, &[0, 1, 2, 3])
        .unwrap()
        .unwrap();
    assert!((got - expected).abs() < 1e-12, "{got} vs {expected}");
}

#[test]
fn multi_label_and_regression_outputs() {
    let targets = Targets::MultiLabel {
        classes: 2,
        labels: vec![true, false, false, true, true, true],
    };
    let out = outputs(2, &[&[2.0, -1.0], &[-2.0, 0.5], &[1.0, 0.0]]);
    // Label 0: positives 2.0, 1.0 over negative -2.0: 1. Label 1: positives 0.5, 0.0 over
    // negative -1.0: 1.
    assert_eq!(
        score(Metric::MacroAuc, &targets, &out, &[0, 1, 2]).unwrap(),
        Some(1.0)
    );

    let targets = Targets::Values(vec![1.0, 5.0]);
    let out = outputs(1, &[&[2.0], &[4.0]]);
    assert_eq!(
        score(Metric::Mse, &targets, &out, &[0, 1]).unwrap(),
        Some(1.0)
    );
    assert_eq!(
        score(Metric::Accuracy, &targets, &out, &[0])
            .unwrap_err()
            .to_string(),
        "metric accuracy cannot be computed from regression values"
    );
}

#[test]
fn a_matrix_row_follows_the_id_ood_rule() {
    let targets = Targets::Classes {
        classes: 2,
        labels: vec![0, 0, 1, 1, 1, 0],
    };
    // The model always says class 1.
    let out = outputs(2, &[&[0.0f32, 1.0][..]; 6]);
    let splits = splits(&[(&[0, 1], &[2]), (&[3, 4], &[5])]);
    // Cutoff 0 trained on slice 0: its test part (row 2, correct); slice 1 whole (2 of 3).
    let row = matrix_row(
        Metric::Accuracy,
        &targets,
        &out,
        &Regime::Cumulative,
        &splits,
        0,
    );
    assert_eq!(row.unwrap(), [Some(1.0), Some(2.0 / 3.0)]);
}

#[test]
fn seen_classes_cells_leave_out_the_classes_training_never_saw() {
    // Class 2 starts in slice 1; cutoff 0 trained on rows 0 and 1 (classes 0 and 1).
    let targets = Targets::Classes {
        classes: 3,
        labels: vec![0, 1, 0, 2, 1, 2, 0],
    };
    // The model says class 0 for rows 0, 2, 3 and 6, class 1 for 1, 4 and 5.
    let zero = &[1.0f32, 0.0, 0.0][..];
    let one = &[0.0f32, 1.0, 0.0][..];
    let out = outputs(3, &[zero, one, zero, zero, one, one, zero]);
    let splits = splits(&[(&[0, 1], &[2]), (&[3, 4], &[5, 6])]);
    let regime = Regime::Cumulative;
    let all = matrix_row(Metric::Accuracy, &targets, &out, &regime, &splits, 0).unwrap();
    // Slice 1 whole: rows 3..6, right on 4 and 6 only.
    assert_eq!(all, [Some(1.0), Some(0.5)]);
    let seen = seen_classes_row(
        Metric::Accuracy,
        &targets,
        &out,
        &regime,
        &splits,
        0,
        &[0, 1],
    )
    .unwrap();
    // Without class 2's rows 3 and 5: rows 4 and 6, both right.
    assert_eq!(seen, [Some(1.0), Some(1.0)]);
    // Cutoff 1 trained on every class: the same cells as the matrix row.
    let full = [0, 1, 3, 4];
    assert_eq!(
        seen_classes_row(Metric::Accuracy, &targets, &out, &regime, &splits, 1, &full).unwrap(),
        matrix_row(Metric::Accuracy, &targets, &out, &regime, &splits, 1).unwrap()
    );
    // A slice with only unseen classes is an empty cell.
    let only =
        seen_classes_row(Metric::Accuracy, &targets, &out, &regime, &splits, 0, &[]).unwrap();
    assert_eq!(only, [None, None]);
    // Anything but single-label classes is refused.
    let e = seen_classes_row(
        Metric::Accuracy,
        &Targets::Values(vec![0.0; 7]),
        &outputs(1, &[&[0.0f32][..]; 7]),
        &regime,
        &splits,
        0,
        &[0],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("seen_classes scores single-label classes"),
        "{e}"
    );
}

/// `predict` gives every row its own output, whatever the batch size and the order the
/// rows are batched in (longest token rows first), and NaN to rows it did not evaluate.
#[cfg(feature = "torch")]
#[test]
fn predictions_are_per_row_whatever_the_batching() {
    use drift::models::{self, InputShape, ModelConfig};
    use drift::train::DataTensors;
    use tch::{Device, nn};

    let data = drift::data::load(
        &drift::data::DataSpec::Source(drift::data::TOY_TOKENS.into()),
        &Default::default(),
        std::path::Path::new("."),
    )
    .unwrap();
    let drift::data::Inputs::Tokens { tokens, dim, .. } = &data.inputs else {
        panic!("toy-tokens gives token states")
    };
    let config = ModelConfig {
        input: InputShape::Tokens {
            dim: *dim as i64,
            max_tokens: *tokens as i64,
        },
        outputs: 3,
        ..ModelConfig::reference_text()
    };
    let vs = nn::VarStore::new(Device::Cpu);
    let model = models::build("tx_s", &vs.root(), &config).unwrap();
    let tensors = DataTensors::new(&data).unwrap();
    let rows: Vec<usize> = (0..data.rows()).filter(|r| r % 3 != 1).collect();
    let predict = |batch| {
        drift::eval::predict(
            model.as_ref(),
            &tensors,
            data.rows(),
            &rows,
            batch,
            Device::Cpu,
        )
        .unwrap()
    };
    let one = predict(1);
    assert_eq!(one.width, 3);
    assert_eq!(one.values.len(), data.rows() * 3);
    for r in 0..data.rows() {
        let row = &one.values[r * 3..(r + 1) * 3];
        if r % 3 == 1 {
            assert!(row.iter().all(|v| v.is_nan()), "row {r} was not evaluated");
            continue;
        }
        // Batch of one: the row alone, cut to its own length.
        let alone = tch::no_grad(|| model.forward_t(&tensors.input(&[r], Device::Cpu), false));
        assert_eq!(row, Vec::<f32>::try_from(alone.reshape([-1])).unwrap());
    }
    for batch in [7, 64, 1000] {
        let batched = predict(batch);
        let largest = one
            .values
            .iter()
            .zip(&batched.values)
            .filter(|(a, _)| !a.is_nan())
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(largest < 1e-5, "batch {batch}: outputs move by {largest}");
    }
}

/// Health flags from outputs by hand: the majority share and the 99% rule, the most
/// frequent label set, the variance rule, and an empty ID test set.
#[test]
fn health_flags_collapsed_checkpoints() {
    use drift::eval::health;
    let classes = Targets::Classes {
        classes: 3,
        labels: vec![0; 200],
    };
    // 199 of 200 rows predict class 2 (99.5% >= 99%): collapsed.
    let mut values = Vec::new();
    for r in 0..200 {
        values.extend(if r == 7 {
            [1.0, 0.0, 0.0]
        } else {
            [0.0, 0.0, 1.0]
        });
    }
    let outputs = Outputs { width: 3, values };
    let rows: Vec<usize> = (0..200).collect();
    let h = health(&classes, &outputs, &rows, "2001", Some(0.25));
    assert_eq!((h.rows, h.majority_class), (200, Some(2)));
    assert_eq!(h.majority_share, Some(0.995));
    assert!(h.collapsed);
    assert_eq!(h.final_loss, Some(0.25));
    // The first 98 rows and row 7: 97 of 98 predict 2 (98.98%): not collapsed.
    let h = health(&classes, &outputs, &rows[..98], "2001", None);
    assert_eq!(h.majority_share, Some(97.0 / 98.0));
    assert!(!h.collapsed);
    // Equal counts: the lower class, as argmax breaks ties.
    let tie = Outputs {
        width: 3,
        values: vec![0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
    };
    let h = health(&classes, &tie, &[0, 1], "2001", None);
    assert_eq!((h.majority_class, h.majority_share), (Some(1), Some(0.5)));

    // Multi-label: the label sets {0}, {0}, {0, 1} (logits above 0): 2 of 3 share one.
    let multi = Targets::MultiLabel {
        classes: 2,
        labels: vec![false; 6],
    };
    let sets = Outputs {
        width: 2,
        values: vec![0.5, -1.0, 2.0, -0.1, 0.3, 0.2],
    };
    let h = health(&multi, &sets, &[0, 1, 2], "2001", None);
    assert_eq!(
        (h.majority_class, h.majority_share),
        (None, Some(2.0 / 3.0))
    );
    assert!(!h.collapsed);

    // Regression: predictions 1.0, 1.0, 1.0 + 1e-4 on targets 1, 2, 3 (variance 2/3):
    // prediction variance 2.2e-9 < 1e-6 * 2/3: collapsed.
    let values = Targets::Values(vec![1.0, 2.0, 3.0]);
    let flat = Outputs {
        width: 1,
        values: vec![1.0, 1.0, 1.0001],
    };
    let h = health(&values, &flat, &[0, 1, 2], "2001", None);
    assert!((h.target_variance.unwrap() - 2.0 / 3.0).abs() < 1e-12);
    assert!(h.prediction_variance.unwrap() < 1e-6 * 2.0 / 3.0);
    assert!(h.collapsed);
    let spread = Outputs {
        width: 1,
        values: vec![1.0, 2.0, 2.5],
    };
    assert!(!health(&values, &spread, &[0, 1, 2], "2001", None).collapsed);

    // No ID test rows: nothing to judge, not collapsed.
    let h = health(&classes, &outputs, &[], "2001", None);
    assert_eq!((h.rows, h.majority_share, h.collapsed), (0, None, false));
}

/// The counting baselines fitted by hand.
#[test]
fn baselines_fit_by_counting() {
    use drift::baseline::Baseline;
    let classes = Targets::Classes {
        classes: 3,
        labels: vec![2, 1, 2, 1, 0],
    };
    // Rows 0..4: two 2s and two 1s: the lower class wins the tie.
    assert_eq!(
        Baseline::Majority.fit(&classes, &[0, 1, 2, 3]).unwrap(),
        [0.0, 1.0, 0.0]
    );
    assert_eq!(
        Baseline::Majority.fit(&classes, &[0, 2, 4]).unwrap(),
        [0.0, 0.0, 1.0]
    );
    // Priors 3/4 and 0 (clamped to 1e-6) as logits.
    let multi = Targets::MultiLabel {
        classes: 2,
        labels: vec![true, false, true, false, false, false, true, false],
    };
    let prior = Baseline::LabelPrior.fit(&multi, &[0, 1, 2, 3]).unwrap();
    assert!((f64::from(prior[0]) - 3f64.ln()).abs() < 1e-6);
    assert!((f64::from(prior[1]) - (1e-6f64 / (1.0 - 1e-6)).ln()).abs() < 1e-3);
    let values = Targets::Values(vec![1.0, 2.0, 6.0]);
    assert_eq!(
        Baseline::MeanTarget.fit(&values, &[0, 1, 2]).unwrap(),
        [3.0]
    );
    assert_eq!(Baseline::for_targets(&values), Baseline::MeanTarget);
    assert_eq!(Baseline::from_key("majority"), Some(Baseline::Majority));
    assert_eq!(Baseline::from_key("cnn_s"), None);
    // No rows, or the wrong task, is an error naming the baseline.
    let e = Baseline::Majority
        .fit(&classes, &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("baseline majority: no training rows"), "{e}");
    let e = Baseline::Majority
        .fit(&values, &[0])
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not fit regression targets"), "{e}");
}
