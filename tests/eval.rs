//! From model outputs to cells: what each metric reads, worked by hand.

use drift::Metric;
use drift::data::Targets;
use drift::eval::{Outputs, matrix_row, score};
use drift::slices::{Regime, SliceSplit};

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
    let splits = [
        SliceSplit {
            train: vec![0, 1],
            test: vec![2],
            stratified: false,
        },
        SliceSplit {
            train: vec![3, 4],
            test: vec![5],
            stratified: false,
        },
    ];
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
