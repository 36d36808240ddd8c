//! Gradient saliency: the formula on a model whose gradient is known, and maps of a real
//! smoke-run checkpoint that are saved, checked on load, and look where the cue is.
#![cfg(feature = "torch")]

use std::fs;
use std::process::Command;

use drift::models::{Input, Model};
use drift::saliency::{self, Request, gradient_saliency};
use tch::{Kind, Tensor};

/// `logits = flatten(x) W^T`: the gradient of logit `y` is row `y` of `W`.
#[derive(Debug)]
struct Linear(Tensor);

impl Model for Linear {
    fn forward_t(&self, input: &Input, _train: bool) -> Tensor {
        let Input::Images(x) = input else {
            panic!("images")
        };
        x.flatten(1, -1).matmul(&self.0.tr())
    }
}

#[test]
fn saliency_is_the_normalised_channel_max_of_the_logit_gradient() {
    let (c, h, w) = (2usize, 3usize, 4usize);
    let d = c * h * w;
    // Two classes with known, distinct weights (some negative, to test the absolute value).
    let weights: Vec<f32> = (0..2 * d)
        .map(|k| ((k * 7 % 11) as f32 - 5.0) / 3.0)
        .collect();
    let model = Linear(Tensor::from_slice(&weights).reshape([2, d as i64]));
    let images = Tensor::rand(
        [3, c as i64, h as i64, w as i64],
        (Kind::Float, tch::Device::Cpu),
    );
    let labels = [0i64, 1, 1];
    let map = gradient_saliency(&model, &images, &Tensor::from_slice(&labels));
    assert_eq!(map.size(), [h as i64, w as i64]);
    let got = Vec::<f32>::try_from(map.reshape([-1])).unwrap();

    let per_class = |y: usize| -> Vec<f32> {
        let g: Vec<f32> = (0..h * w)
            .map(|p| {
                (0..c)
                    .map(|ch| weights[y * d + ch * h * w + p].abs())
                    .fold(0.0, f32::max)
            })
            .collect();
        let (lo, hi) = g
            .iter()
            .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        g.iter().map(|v| (v - lo) / (hi - lo)).collect()
    };
    let (m0, m1) = (per_class(0), per_class(1));
    for p in 0..h * w {
        let expected = (m0[p] + 2.0 * m1[p]) / 3.0;
        assert!(
            (got[p] - expected).abs() < 1e-6,
            "pixel {p}: {} vs {expected}",
            got[p]
        );
    }
}

#[test]
fn a_model_blind_to_its_input_gives_a_zero_map_and_nan_is_never_saved() {
    // Zero weights: every gradient is 0, the normalisation range is 0.
    let model = Linear(Tensor::zeros(
        [2, 2 * 3 * 4],
        (Kind::Float, tch::Device::Cpu),
    ));
    let images = Tensor::rand([2, 2, 3, 4], (Kind::Float, tch::Device::Cpu));
    let map = gradient_saliency(&model, &images, &Tensor::from_slice(&[0i64, 1]));
    let got = Vec::<f32>::try_from(map.reshape([-1])).unwrap();
    assert!(got.iter().all(|&v| v == 0.0), "{got:?}");

    let dir = tempfile::tempdir().unwrap();
    let bad = saliency::SaliencyMap {
        schema: saliency::SCHEMA,
        preset: "p".into(),
        model: "m".into(),
        seed: 0,
        cutoff: "a".into(),
        slice: "b".into(),
        rows: vec![0],
        checkpoint_sha256: "0".repeat(64),
        values: vec![vec![0.5, f64::NAN]],
    };
    let e = saliency::save(dir.path(), &bad).unwrap_err();
    assert!(e.to_string().contains("not in [0, 1]"), "{e}");
    assert!(!dir.path().join("saliency").exists());
}

#[test]
fn a_checkpoint_map_is_saved_checked_and_looks_at_the_cue() {
    let out = tempfile::tempdir().unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_drift"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "run",
            "presets/smoke.toml",
            "--models",
            "cnn_s",
            "--seeds",
            "0",
        ])
        .args(["--threads", "1", "--device", "cpu", "-q", "--out"])
        .arg(out.path())
        .status()
        .unwrap();
    assert!(status.success());
    let run_dir = out.path().join("smoke/cnn_s/seed-0");
    let request = Request {
        run_dir: run_dir.clone(),
        preset: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/presets/smoke.toml").into()),
        cutoff: "2000".into(),
        slice: "2000".into(),
        count: 12,
    };
    let path = saliency::saliency_for_run(&request).unwrap();
    assert_eq!(path, run_dir.join("saliency/2000-on-2000.json"));
    let map = saliency::load(&path).unwrap();
    assert_eq!((map.values.len(), map.values[0].len()), (32, 32));
    assert_eq!(map.rows.len(), 12);

    // toy-images puts the class cue of 2000 at rows 12..20, columns 0..8.
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    for (y, row) in map.values.iter().enumerate() {
        for (x, &v) in row.iter().enumerate() {
            if (12..20).contains(&y) && x < 8 {
                inside.push(v)
            } else {
                outside.push(v)
            }
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    assert!(
        mean(&inside) > 1.5 * mean(&outside),
        "{} vs {}",
        mean(&inside),
        mean(&outside)
    );

    // The same request gives the same bytes; a damaged map is refused.
    let bytes = fs::read(&path).unwrap();
    saliency::saliency_for_run(&request).unwrap();
    assert_eq!(fs::read(&path).unwrap(), bytes);
    fs::write(
        &path,
        String::from_utf8(bytes).unwrap().replacen("0.", "1.", 1),
    )
    .unwrap();
    let message = saliency::load(&path).unwrap_err().to_string();
    assert!(
        message.contains("is not the") && message.contains("recorded in SHA256SUMS"),
        "{message}"
    );

    // Unknown slices are named.
    let bad = Request {
        slice: "1999".into(),
        ..request
    };
    assert_eq!(
        saliency::saliency_for_run(&bad).unwrap_err().to_string(),
        "no slice \"1999\" in this run (slices: 2000, 2001, 2002, 2003, 2004, 2005)"
    );
}
