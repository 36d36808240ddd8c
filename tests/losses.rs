#![cfg(feature = "torch")]
//! The training losses and their weights against PyTorch: tests/fixtures/losses.json holds
//! `torch.nn.functional`'s cross-entropy, BCE with logits and `pos_weight`, and weighted
//! MSE on seeded float32 inputs, with the weights computed independently in Python
//! (`scripts/loss_fixtures.py`, run by `scripts/make-fixtures`).
//!
//! Losses must agree to 1e-6 (absolute, relative above 1), the weight helpers to 1e-12
//! (relative). The largest error of each kind is printed (`--nocapture`).

use drift::data::DataSource;
use drift::data::{Dataset, Inputs, Targets};
use drift::slices::Timestamp;
use drift::train::Loss;
use drift::train::loss::{
    LossFn, cross_entropy, pos_weights, value_weights, weighted_bce, weighted_mse,
};
use drift::train::{DataTensors, index};
use serde_json::Value;
use tch::{Device, Kind, Tensor};

const LOSS_TOL: f64 = 1e-6;
const WEIGHT_TOL: f64 = 1e-12;

fn fixture() -> Value {
    crate::support::fixture("losses.json")
}

/// The fixture's cases of one loss (named as in presets), at least `min` of them.
fn cases(loss: &str, min: usize) -> Vec<Value> {
    let json = fixture();
    let all = json["cases"].as_array().unwrap();
    let some: Vec<Value> = all.iter().filter(|c| c["loss"] == loss).cloned().collect();
    assert!(some.len() >= min, "{} {loss} cases", some.len());
    some
}

fn f64s(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// Float32 inputs: the fixture writes each float32 exactly, so the cast is lossless.
fn f32s(v: &Value) -> Vec<f32> {
    let out: Vec<f32> = f64s(v).into_iter().map(|x| x as f32).collect();
    for (a, b) in out.iter().zip(f64s(v)) {
        assert_eq!(f64::from(*a), b, "fixture input is not a float32");
    }
    out
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn usize_of(v: &Value) -> usize {
    v.as_u64().unwrap() as usize
}

fn scalar(t: &Tensor) -> f64 {
    assert_eq!(t.size(), Vec::<i64>::new(), "loss is not a scalar");
    assert_eq!(t.kind(), Kind::Float);
    t.double_value(&[])
}

/// Error of a loss: absolute, relative for references above 1; asserted within tolerance.
fn loss_error(case: &Value, got: f64) -> f64 {
    let want = case["value"].as_f64().unwrap();
    let err = (got - want).abs() / want.abs().max(1.0);
    assert!(
        err <= LOSS_TOL,
        "{} {}: drift {got} vs torch {want} (error {err:e})",
        case["loss"],
        case["name"]
    );
    err
}

/// Relative error of weight vectors; asserted within tolerance.
fn weight_error(what: &str, got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let mut worst = 0.0f64;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let err = if g == w { 0.0 } else { (g - w).abs() / w.abs() };
        assert!(err <= WEIGHT_TOL, "{what}[{i}]: drift {g} vs python {w}");
        worst = worst.max(err);
    }
    worst
}

/// Where a case's `b` rows sit in a data set padded with distractor rows: reversed, at odd
/// positions, so that row order, indexing and "only the given rows count" are all exercised.
fn embedded_rows(b: usize) -> Vec<usize> {
    (0..b).map(|i| 2 * (b - 1 - i) + 1).collect()
}

/// The size of that padded data set (distractors at every even position).
fn embedded_len(b: usize) -> usize {
    2 * b + 1
}

fn ce_inputs(case: &Value) -> (usize, usize, Tensor, Vec<u64>) {
    let (b, c) = (usize_of(&case["rows"]), usize_of(&case["classes"]));
    let logits = Tensor::from_slice(&f32s(&case["logits"])).reshape([b as i64, c as i64]);
    let labels = u64s(&case["labels"]);
    assert_eq!(labels.len(), b);
    (b, c, logits, labels)
}

fn bce_inputs(case: &Value) -> (usize, usize, Tensor, Vec<bool>) {
    let (b, c) = (usize_of(&case["rows"]), usize_of(&case["classes"]));
    let logits = Tensor::from_slice(&f32s(&case["logits"])).reshape([b as i64, c as i64]);
    let flags: Vec<bool> = u64s(&case["targets"]).iter().map(|&t| t == 1).collect();
    assert_eq!(flags.len(), b * c);
    (b, c, logits, flags)
}

#[test]
fn cross_entropy_matches_pytorch() {
    let mut worst = 0.0f64;
    let cases = cases("cross-entropy", 15);
    for case in &cases {
        let (_, _, logits, labels) = ce_inputs(case);
        let labels: Vec<i64> = labels.iter().map(|&l| l as i64).collect();
        let got = scalar(&cross_entropy(&logits, &Tensor::from_slice(&labels)));
        worst = worst.max(loss_error(case, got));
    }
    eprintln!(
        "cross-entropy: {} cases, largest error {worst:e}",
        cases.len()
    );
}

#[test]
fn weighted_bce_and_pos_weights_match_pytorch() {
    let (mut worst, mut worst_weight) = (0.0f64, 0.0f64);
    let cases = cases("weighted-bce", 15);
    for case in &cases {
        let (b, c, logits, flags) = bce_inputs(case);
        let want = f64s(&case["pos_weight"]);
        let name = format!("pos_weight of {}", case["name"]);
        let direct = pos_weights(&flags, c, &(0..b).collect::<Vec<_>>());
        worst_weight = worst_weight.max(weight_error(&name, &direct, &want));
        // The same rows inside a larger set whose other rows are all positive: only the
        // given rows count.
        let mut padded = vec![true; embedded_len(b) * c];
        let rows = embedded_rows(b);
        for (i, &r) in rows.iter().enumerate() {
            padded[r * c..(r + 1) * c].copy_from_slice(&flags[i * c..(i + 1) * c]);
        }
        let embedded = pos_weights(&padded, c, &rows);
        worst_weight = worst_weight.max(weight_error(&name, &embedded, &want));

        let targets: Vec<f32> = flags.iter().map(|&f| f32::from(u8::from(f))).collect();
        let targets = Tensor::from_slice(&targets).reshape([b as i64, c as i64]);
        let pos_weight = Tensor::from_slice(&direct).to_kind(Kind::Float);
        let got = scalar(&weighted_bce(&logits, &targets, &pos_weight));
        worst = worst.max(loss_error(case, got));
    }
    eprintln!(
        "weighted-bce: {} cases, largest error {worst:e}; pos_weight largest error {worst_weight:e}",
        cases.len()
    );
}

#[test]
fn weighted_mse_and_value_weights_match_pytorch() {
    let (mut worst, mut worst_weight) = (0.0f64, 0.0f64);
    let cases = cases("weighted-mse", 15);
    for case in &cases {
        let values = f64s(&case["targets"]);
        let b = values.len();
        let want = f64s(&case["weights"]);
        let name = format!("weights of {}", case["name"]);
        let direct = value_weights(&values, &(0..b).collect::<Vec<_>>());
        worst_weight = worst_weight.max(weight_error(&name, &direct, &want));
        // Inside a larger set whose other rows repeat values of the case (and one that it
        // lacks): the weights follow `rows`, in their order, and count only them.
        let mut padded: Vec<f64> = (0..embedded_len(b))
            .map(|r| if r % 4 == 0 { 2.5 } else { values[r % b] })
            .collect();
        let rows = embedded_rows(b);
        for (i, &r) in rows.iter().enumerate() {
            padded[r] = values[i];
        }
        let embedded = value_weights(&padded, &rows);
        worst_weight = worst_weight.max(weight_error(&name, &embedded, &want));

        let predictions = Tensor::from_slice(&f32s(&case["predictions"]));
        let targets = Tensor::from_slice(&f32s(&case["targets"]));
        let weights = Tensor::from_slice(&direct).to_kind(Kind::Float);
        // Regression heads give [B, 1]; both shapes must give the same loss.
        for shape in [vec![b as i64], vec![b as i64, 1]] {
            let got = scalar(&weighted_mse(
                &predictions.reshape(&shape),
                &targets,
                &weights,
            ));
            worst = worst.max(loss_error(case, got));
        }
    }
    eprintln!(
        "weighted-mse: {} cases, largest error {worst:e}; weights largest error {worst_weight:e}",
        cases.len()
    );
}

/// A data set of `targets` with dummy inputs and timestamps, so that the batch targets come
/// from [`DataTensors`] exactly as in training.
fn dataset(targets: Targets, rows: usize) -> Dataset {
    let data = Dataset {
        source: DataSource::new("loss-fixture", "1", "0".repeat(64)),
        timestamps: vec![Timestamp(0); rows],
        inputs: Inputs::Embeddings {
            dim: 1,
            values: vec![0.0; rows],
        },
        targets,
        class_names: Vec::new(),
    };
    data.check().unwrap();
    data
}

/// `LossFn::new` on the training rows of a padded data set, then `compute` on the batch of
/// exactly those rows (targets gathered by [`DataTensors`]), against the reference.
fn bound_loss(kind: Loss, case: &Value, targets: Targets, rows: &[usize], outputs: &Tensor) -> f64 {
    let n = embedded_len(rows.len());
    let data = dataset(targets, n);
    let loss = LossFn::new(kind, &data.targets, rows, Device::Cpu).unwrap();
    let batch_targets = DataTensors::new(&data).unwrap().targets(rows, Device::Cpu);
    let got = scalar(&loss.compute(outputs, &batch_targets, &index(rows)));
    loss_error(case, got)
}

#[test]
fn loss_fn_binds_training_weights_and_matches_pytorch() {
    // Cross-entropy on a seven-class case.
    let case = cases("cross-entropy", 1)
        .into_iter()
        .find(|c| c["classes"] == 7 && usize_of(&c["rows"]) > 20)
        .unwrap();
    let (b, c, logits, labels) = ce_inputs(&case);
    let rows = embedded_rows(b);
    let mut all = vec![0u32; embedded_len(b)];
    for (i, &r) in rows.iter().enumerate() {
        all[r] = labels[i] as u32;
    }
    let targets = Targets::Classes {
        classes: c,
        labels: all,
    };
    let ce = bound_loss(Loss::CrossEntropy, &case, targets, &rows, &logits);

    // Weighted BCE on a case with an all-negative and an all-positive label; the padding
    // rows are all positive, so counting them would change every weight.
    let case = cases("weighted-bce", 1)
        .into_iter()
        .find(|c| c["name"] == "empty-and-full-columns" && c["classes"] == 7)
        .unwrap();
    let (b, c, logits, flags) = bce_inputs(&case);
    let rows = embedded_rows(b);
    let mut all = vec![true; embedded_len(b) * c];
    for (i, &r) in rows.iter().enumerate() {
        all[r * c..(r + 1) * c].copy_from_slice(&flags[i * c..(i + 1) * c]);
    }
    let targets = Targets::MultiLabel {
        classes: c,
        labels: all,
    };
    let bound = LossFn::new(Loss::WeightedBce, &targets, &rows, Device::Cpu).unwrap();
    let LossFn::WeightedBce(pos_weight) = &bound else {
        panic!("{bound:?}")
    };
    let pos_weight: Vec<f64> = Vec::try_from(pos_weight.to_kind(Kind::Double)).unwrap();
    let want: Vec<f64> = f64s(&case["pos_weight"])
        .iter()
        .map(|&w| w as f32 as f64)
        .collect();
    assert_eq!(pos_weight, want);
    let bce = bound_loss(Loss::WeightedBce, &case, targets, &rows, &logits);

    // Weighted MSE on a skewed case, with [B, 1] outputs like a regression head's.
    let case = cases("weighted-mse", 1)
        .into_iter()
        .find(|c| c["name"] == "skewed")
        .unwrap();
    let values = f64s(&case["targets"]);
    let b = values.len();
    let rows = embedded_rows(b);
    let mut all: Vec<f64> = (0..embedded_len(b)).map(|r| 1.0 + (r % 5) as f64).collect();
    for (i, &r) in rows.iter().enumerate() {
        all[r] = values[i];
    }
    let targets = Targets::Values(all);
    let bound = LossFn::new(Loss::WeightedMse, &targets, &rows, Device::Cpu).unwrap();
    let LossFn::WeightedMse(weights) = &bound else {
        panic!("{bound:?}")
    };
    let weights: Vec<f64> = Vec::try_from(weights.to_kind(Kind::Double)).unwrap();
    assert_eq!(weights.len(), embedded_len(b));
    for (r, w) in weights.iter().enumerate() {
        match rows.iter().position(|&x| x == r) {
            Some(i) => assert_eq!(*w, case["weights"][i].as_f64().unwrap() as f32 as f64),
            None => assert_eq!(*w, 0.0, "row {r} is not a training row"),
        }
    }
    let predictions = Tensor::from_slice(&f32s(&case["predictions"])).reshape([b as i64, 1]);
    let mse = bound_loss(Loss::WeightedMse, &case, targets, &rows, &predictions);

    eprintln!("LossFn: cross-entropy error {ce:e}, weighted-bce {bce:e}, weighted-mse {mse:e}");
}

#[test]
fn loss_fn_rejects_a_loss_that_does_not_fit_the_task() {
    let all = [
        Targets::Classes {
            classes: 3,
            labels: vec![0, 1, 2, 1],
        },
        Targets::MultiLabel {
            classes: 2,
            labels: vec![true, false, false, true, true, true, false, false],
        },
        Targets::Values(vec![1.0, 2.0, 5.0, 5.0]),
    ];
    let kinds = [
        (Loss::CrossEntropy, "cross-entropy"),
        (Loss::WeightedBce, "weighted-bce"),
        (Loss::WeightedMse, "weighted-mse"),
    ];
    let rows = [0, 1, 2, 3];
    for (k, (kind, name)) in kinds.into_iter().enumerate() {
        for (t, targets) in all.iter().enumerate() {
            let bound = LossFn::new(kind, targets, &rows, Device::Cpu);
            if k == t {
                bound.unwrap_or_else(|e| panic!("{name} on {}: {e}", targets.task()));
                continue;
            }
            let message = bound.expect_err(name).to_string();
            assert!(
                message.contains(targets.task()) && message.contains(name),
                "{name} on {}: {message}",
                targets.task()
            );
        }
    }
}
