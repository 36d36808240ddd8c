//! The model registry against protocol.md §4: parameter counts, gradients reaching every
//! parameter, padding invariance of the text models, seeded determinism, error messages.
#![cfg(feature = "torch")]

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use drift::models::{self, Input, InputKind, InputShape, ModelConfig};
use tch::{Device, Kind, Tensor, nn};

/// protocol.md §4, reference shapes (images 3x32x32 -> 2, text 768-d -> 7 outputs).
const REFERENCE_COUNTS: [(&str, i64); 24] = [
    ("mlp_s", 98_402),
    ("mlp_m", 410_114),
    ("mlp_l", 2_099_714),
    ("cnn_s", 93_954),
    ("cnn_m", 542_402),
    ("cnn_l", 2_144_514),
    ("resnet_s", 97_940),
    ("resnet_m", 400_162),
    ("resnet_l", 2_125_818),
    ("vit_s", 74_562),
    ("vit_m", 545_154),
    ("vit_l", 2_248_514),
    ("ffn_s", 99_335),
    ("ffn_m", 397_319),
    ("ffn_l", 1_589_255),
    ("textcnn_s", 88_615),
    ("textcnn_m", 461_975),
    ("textcnn_l", 1_919_559),
    ("bigru_s", 100_039),
    ("bilstm_m", 537_447),
    ("bilstm_attn_l", 2_190_056),
    ("tx_s", 83_143),
    ("tx_m", 493_255),
    ("tx_l", 1_880_519),
];

/// protocol.md §4, the FFNs with one output (Amazon regression).
const ONE_OUTPUT_COUNTS: [(&str, i64); 3] =
    [("ffn_s", 98_561), ("ffn_m", 394_241), ("ffn_l", 1_576_961)];

/// Small shapes for the tensor tests: text D = 32, up to 7 tokens, 3 outputs.
const DIM: i64 = 32;
const TOKENS: i64 = 7;
const OUTPUTS: i64 = 3;
/// One row per padding situation: none, some, most, all but one token.
const LENGTHS: [i64; 4] = [7, 5, 3, 1];

fn small_config(kind: InputKind) -> ModelConfig {
    let input = match kind {
        // The architectures fix 32x32 (five poolings in cnn_l, 4x4 patches).
        InputKind::Image => InputShape::Image {
            channels: 3,
            height: 32,
            width: 32,
        },
        InputKind::Tokens => InputShape::Tokens {
            dim: DIM,
            max_tokens: 16,
        },
        InputKind::Embedding => InputShape::Embedding { dim: DIM },
        InputKind::EncoderIds => unreachable!("no registry model reads encoder ids"),
    };
    ModelConfig {
        input,
        outputs: OUTPUTS,
        dropout: 0.1,
        positional_embedding: false,
        channels_last: false,
    }
}

/// Every registry model plus the text Transformers with a position embedding and the
/// convolutional image models channels-last.
fn variants() -> Vec<(&'static str, ModelConfig)> {
    let mut all: Vec<_> = models::registry()
        .iter()
        .map(|m| (m.key, small_config(m.input)))
        .collect();
    for key in ["tx_s", "tx_m", "tx_l"] {
        let config = ModelConfig {
            positional_embedding: true,
            ..small_config(InputKind::Tokens)
        };
        all.push((key, config));
    }
    for key in [
        "cnn_s", "cnn_m", "cnn_l", "resnet_s", "resnet_m", "resnet_l",
    ] {
        let config = ModelConfig {
            channels_last: true,
            ..small_config(InputKind::Image)
        };
        all.push((key, config));
    }
    all
}

/// libtorch has one global generator: tests that seed it or draw from it take turns, or
/// another test thread's draws would land between a seed and the draws it should fix.
fn serial() -> MutexGuard<'static, ()> {
    static RNG: Mutex<()> = Mutex::new(());
    RNG.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn mask_of(lengths: &[i64], tokens: i64) -> Tensor {
    let positions = Tensor::arange(tokens, (Kind::Int64, Device::Cpu)).unsqueeze(0);
    positions.lt_tensor(&Tensor::from_slice(lengths).unsqueeze(1))
}

fn tokens(states: &Tensor, mask: &Tensor) -> Input {
    Input::Tokens {
        states: states.shallow_clone(),
        mask: mask.shallow_clone(),
    }
}

fn batch(kind: InputKind) -> Input {
    let rows = LENGTHS.len() as i64;
    match kind {
        InputKind::Image => Input::Images(Tensor::randn([rows, 3, 32, 32], tch::kind::FLOAT_CPU)),
        InputKind::Tokens => {
            let states = Tensor::randn([rows, TOKENS, DIM], tch::kind::FLOAT_CPU);
            tokens(&states, &mask_of(&LENGTHS, TOKENS))
        }
        InputKind::Embedding => Input::Embeddings(Tensor::randn([rows, DIM], tch::kind::FLOAT_CPU)),
        InputKind::EncoderIds => unreachable!("no registry model reads encoder ids"),
    }
}

fn max_abs(t: &Tensor) -> f64 {
    t.abs().max().double_value(&[])
}

/// Trainable variables by name, in a fixed order.
fn trainable(store: &nn::VarStore) -> BTreeMap<String, Tensor> {
    store
        .variables()
        .into_iter()
        .filter(|(_, t)| t.requires_grad())
        .collect()
}

/// Gradients of `sum(logits²)` for every trainable variable.
fn gradients(key: &str, config: &ModelConfig, train: bool) -> BTreeMap<String, Tensor> {
    let store = nn::VarStore::new(Device::Cpu);
    let model = models::build(key, &store.root(), config).unwrap();
    let logits = model.forward_t(&batch(config.input.kind()), train);
    assert_eq!(logits.size(), [LENGTHS.len() as i64, OUTPUTS], "{key}");
    logits.square().sum(Kind::Float).backward();
    trainable(&store)
        .into_iter()
        .map(|(name, var)| (name, var.grad()))
        .collect()
}

#[test]
fn parameter_counts_match_the_protocol_exactly() {
    let _rng = serial();
    let mut checks = Vec::new();
    for (key, expected) in REFERENCE_COUNTS {
        let config = match models::info(key).unwrap().input {
            InputKind::Image => ModelConfig::reference_image(),
            _ => ModelConfig::reference_text(),
        };
        checks.push((key, config, expected));
    }
    for (key, expected) in ONE_OUTPUT_COUNTS {
        let config = ModelConfig {
            outputs: 1,
            ..ModelConfig::reference_text()
        };
        checks.push((key, config, expected));
    }
    checks.push(("linear", ModelConfig::reference_embedding(), 768 * 2 + 2));
    let positional = ModelConfig {
        positional_embedding: true,
        ..ModelConfig::reference_text()
    };
    checks.push(("tx_s", positional, 83_143 + 256 * 64));

    for (key, config, expected) in checks {
        let count = models::parameter_count(key, &config).unwrap();
        println!(
            "{key:>14} {} outputs: {count:>9} (protocol {expected})",
            config.outputs
        );
        assert_eq!(count, expected, "{key} with {} outputs", config.outputs);
    }
}

#[test]
fn registry_lists_every_protocol_model_once() {
    let keys: Vec<_> = models::registry().iter().map(|m| m.key).collect();
    let mut protocol: Vec<_> = REFERENCE_COUNTS.iter().map(|(k, _)| *k).collect();
    protocol.push("linear");
    assert_eq!(keys, protocol);
    let family = |key| models::info(key).unwrap().family;
    assert_eq!(family("bilstm_attn_l"), "rnn");
    assert_eq!(family("tx_m"), "transformer");
    assert_eq!(family("linear"), "linear-probe");
}

#[test]
fn every_parameter_gets_a_finite_nonzero_gradient() {
    let _rng = serial();
    tch::manual_seed(0);
    for (key, config) in variants() {
        let train = gradients(key, &config, true);
        // A conv bias right before a BatchNorm in training mode is cancelled by the batch
        // mean, so its gradient is zero up to rounding; in eval mode (running statistics)
        // it is live, which is where the check below looks for it.
        let eval = gradients(key, &config, false);
        for (name, grad) in &train {
            assert!(grad.defined(), "{key}: {name} has no gradient");
            let finite = grad.isfinite().all().int64_value(&[]) == 1;
            assert!(finite, "{key}: {name} has a non-finite gradient");
            // The attention-pooling score bias shifts every score of a row equally, which
            // the softmax ignores: its gradient is zero for every batch (as in the reference).
            if name == "attention.bias" {
                continue;
            }
            let grad = if name.ends_with("conv.bias") && key.starts_with("cnn") {
                &eval[name]
            } else {
                grad
            };
            assert!(max_abs(grad) > 0.0, "{key}: {name} gets no gradient");
        }
    }
}

#[test]
fn text_models_ignore_padding() {
    let _rng = serial();
    tch::manual_seed(1);
    let rows = LENGTHS.len() as i64;
    for (key, config) in variants() {
        if config.input.kind() != InputKind::Tokens {
            continue;
        }
        let store = nn::VarStore::new(Device::Cpu);
        let model = models::build(key, &store.root(), &config).unwrap();
        let run = |states: &Tensor, mask: &Tensor| model.forward_t(&tokens(states, mask), false);

        let mask = mask_of(&LENGTHS, TOKENS);
        let states = Tensor::randn([rows, TOKENS, DIM], tch::kind::FLOAT_CPU);
        let reference = run(&states, &mask);

        // Other values at the padded positions.
        let noise = Tensor::randn([rows, TOKENS, DIM], tch::kind::FLOAT_CPU) * 10.0;
        let repadded = states.where_self(&mask.unsqueeze(-1), &noise);
        let diff = max_abs(&(run(&repadded, &mask) - &reference));
        assert!(
            diff < 1e-5,
            "{key}: new padding values moved the output by {diff}"
        );

        // Three more padded positions.
        let extra = Tensor::randn([rows, 3, DIM], tch::kind::FLOAT_CPU);
        let longer = Tensor::cat(&[&states, &extra], 1);
        let longer_mask = mask_of(&LENGTHS, TOKENS + 3);
        let diff = max_abs(&(run(&longer, &longer_mask) - &reference));
        assert!(
            diff < 1e-5,
            "{key}: extra padding moved the output by {diff}"
        );

        // Each row alone, without any padding.
        for (row, &length) in LENGTHS.iter().enumerate() {
            let alone = states.narrow(0, row as i64, 1).narrow(1, 0, length);
            let out = run(&alone, &mask_of(&[length], length));
            let diff = max_abs(&(out - reference.narrow(0, row as i64, 1)));
            assert!(diff < 1e-5, "{key}: row {row} alone differs by {diff}");
        }
    }
}

/// drift's CPU recurrence (`models::packed_recurrence`) against libtorch's packed GRU and
/// LSTM: outputs and every weight's gradient bit-identical, two stacked bidirectional layers,
/// on small rows of every length situation and at `bigru_s`'s width on 64 rows of 32 to 128
/// tokens. Equal gradients for the same weights and batch make equal training.
#[test]
fn the_packed_recurrence_matches_libtorch_bit_for_bit() {
    let _guard = serial();
    tch::manual_seed(7);
    let mut reference: Vec<i64> = (0..64).map(|i| 128 - (i * 37) % 97).collect();
    reference.sort_unstable_by(|a, b| b.cmp(a));
    for (hidden, lengths) in [(6, vec![7, 7, 5, 3, 3, 1]), (64, reference)] {
        for cell in [models::RnnCell::Gru, models::RnnCell::Lstm] {
            compare_recurrences(cell, hidden, &lengths);
        }
    }
}

fn compare_recurrences(cell: models::RnnCell, hidden: i64, lengths: &[i64]) {
    let (layers, rows) = (2, lengths.len() as i64);
    let gates = match cell {
        models::RnnCell::Gru => 3,
        models::RnnCell::Lstm => 4,
    };
    let states = Tensor::randn([rows, lengths[0], hidden], tch::kind::FLOAT_CPU);
    let (data, batch_sizes) =
        states.internal_pack_padded_sequence(&Tensor::from_slice(lengths), true);
    let sizes = Vec::<i64>::try_from(&batch_sizes).unwrap();
    // Per layer, per direction: w_ih, w_hh, b_ih, b_hh (gru_data's order).
    let weights: Vec<Tensor> = (0..layers)
        .flat_map(|layer| {
            let inputs = if layer == 0 { hidden } else { 2 * hidden };
            let direction = [
                vec![gates * hidden, inputs],
                vec![gates * hidden, hidden],
                vec![gates * hidden],
                vec![gates * hidden],
            ];
            [direction.clone(), direction].concat()
        })
        .map(|shape| {
            let bound = 1.0 / (hidden as f64).sqrt();
            (Tensor::rand(&shape, tch::kind::FLOAT_CPU) * 2.0 * bound - bound)
                .set_requires_grad(true)
        })
        .collect();
    let run = |ours: bool| {
        for w in &weights {
            let _ = w.grad().defined().then(|| w.grad().zero_());
        }
        let out = if ours {
            models::packed_recurrence(cell, &data, &sizes, &weights)
        } else {
            let h0 = Tensor::zeros([2 * layers, rows, hidden], tch::kind::FLOAT_CPU);
            let (biases, dropout, train, bidirectional) = (true, 0.0, true, true);
            match cell {
                models::RnnCell::Gru => {
                    Tensor::gru_data(
                        &data,
                        &batch_sizes,
                        &h0,
                        &weights,
                        biases,
                        layers,
                        dropout,
                        train,
                        bidirectional,
                    )
                    .0
                }
                models::RnnCell::Lstm => {
                    Tensor::lstm_data(
                        &data,
                        &batch_sizes,
                        &[h0.shallow_clone(), h0],
                        &weights,
                        biases,
                        layers,
                        dropout,
                        train,
                        bidirectional,
                    )
                    .0
                }
            }
        };
        // A loss that weighs every output differently.
        let weighting = Tensor::arange(out.numel() as i64, tch::kind::FLOAT_CPU)
            .reshape(out.size())
            .sin();
        (&out * weighting).sum(Kind::Float).backward();
        let grads: Vec<Tensor> = weights.iter().map(|w| w.grad().copy()).collect();
        (out.detach(), grads)
    };
    let (ours, our_grads) = run(true);
    let (theirs, their_grads) = run(false);
    let what = format!("{cell:?}, hidden {hidden}, {rows} rows");
    assert!(
        ours.equal(&theirs),
        "{what}: outputs differ by {}",
        max_abs(&(&ours - &theirs))
    );
    for (i, (a, b)) in our_grads.iter().zip(&their_grads).enumerate() {
        assert!(
            a.equal(b),
            "{what}: the gradient of weight {i} differs by {}",
            max_abs(&(a - b))
        );
        assert!(max_abs(a) > 0.0, "{what}: weight {i} got no gradient");
    }
}

/// `train.channels_last` changes the memory layout, not the model: the same weights give
/// the same outputs and gradients up to float rounding, and the same bits twice.
#[test]
fn channels_last_convolutions_compute_the_same_model() {
    let _guard = serial();
    for key in ["cnn_s", "resnet_s"] {
        let images = batch(InputKind::Image);
        let run = |channels_last: bool| {
            let config = ModelConfig {
                channels_last,
                ..small_config(InputKind::Image)
            };
            tch::manual_seed(3);
            let store = nn::VarStore::new(Device::Cpu);
            let model = models::build(key, &store.root(), &config).unwrap();
            let logits = model.forward_t(&images, true);
            logits.square().sum(Kind::Float).backward();
            let grads: Vec<Tensor> = trainable(&store).values().map(|v| v.grad()).collect();
            (logits.detach(), grads)
        };
        let (plain, plain_grads) = run(false);
        let (last, last_grads) = run(true);
        let (again, again_grads) = run(true);
        assert!(
            last.equal(&again),
            "{key}: channels-last outputs differ between runs"
        );
        assert!(max_abs(&(&last - &plain)) < 1e-4, "{key}: outputs differ");
        for ((a, b), c) in last_grads.iter().zip(&plain_grads).zip(&again_grads) {
            assert!(
                a.equal(c),
                "{key}: channels-last gradients differ between runs"
            );
            let scale = max_abs(b).max(1.0);
            assert!(max_abs(&(a - b)) < 1e-3 * scale, "{key}: gradients differ");
        }
    }
}

#[test]
fn seeded_builds_are_identical() {
    let _rng = serial();
    for (key, config) in variants() {
        let build = || {
            tch::manual_seed(7);
            let store = nn::VarStore::new(Device::Cpu);
            models::build(key, &store.root(), &config).unwrap();
            store
        };
        let (first, second) = (trainable(&build()), trainable(&build()));
        assert_eq!(
            first.keys().collect::<Vec<_>>(),
            second.keys().collect::<Vec<_>>()
        );
        for (name, value) in &first {
            assert!(value.equal(&second[name]), "{key}: {name} differs");
        }
    }
}

#[test]
fn parameter_names_follow_pytorch() {
    let _rng = serial();
    let names = |key: &str, config: ModelConfig| {
        let store = nn::VarStore::new(Device::Cpu);
        models::build(key, &store.root(), &config).unwrap();
        trainable(&store).into_keys().collect::<Vec<_>>()
    };
    let tx = names("tx_s", ModelConfig::reference_text());
    for name in [
        "encoder.layers.0.self_attn.in_proj_weight",
        "encoder.layers.0.self_attn.out_proj.bias",
        "encoder.layers.0.linear2.weight",
        "encoder.layers.0.norm1.weight",
    ] {
        assert!(tx.contains(&name.to_string()), "{name} missing from {tx:?}");
    }
    let lstm = names("bilstm_attn_l", ModelConfig::reference_text());
    assert!(
        lstm.contains(&"rnn.weight_hh_l1_reverse".to_string()),
        "{lstm:?}"
    );
    let resnet = names("resnet_s", ModelConfig::reference_image());
    assert!(
        resnet.contains(&"layer2.0.downsample.0.weight".to_string()),
        "{resnet:?}"
    );
}

#[test]
fn unknown_keys_and_mismatched_inputs_are_rejected() {
    let _rng = serial();
    let message = |e: drift::Error| e.to_string();
    let unknown = message(models::info("cnn_xl").unwrap_err());
    let keys: Vec<_> = models::registry().iter().map(|m| m.key).collect();
    let expected = format!(
        "unknown model \"cnn_xl\" (expected one of {})",
        keys.join(", ")
    );
    assert_eq!(unknown, expected);
    assert!(unknown.starts_with("unknown model \"cnn_xl\" (expected one of mlp_s, mlp_m,"));

    let store = nn::VarStore::new(Device::Cpu);
    let build = |key, config| message(models::build(key, &store.root(), &config).unwrap_err());
    assert_eq!(build("cnn_xl", ModelConfig::reference_image()), expected);
    assert_eq!(
        build("cnn_s", ModelConfig::reference_text()),
        "model cnn_s reads images, but the data gives token states"
    );
    assert_eq!(
        build("tx_s", ModelConfig::reference_embedding()),
        "model tx_s reads token states, but the data gives pooled embeddings"
    );
    assert_eq!(
        build("linear", ModelConfig::reference_image()),
        "model linear reads pooled embeddings, but the data gives images"
    );
    let odd_image = ModelConfig {
        input: InputShape::Image {
            channels: 3,
            height: 30,
            width: 30,
        },
        ..ModelConfig::reference_image()
    };
    assert_eq!(
        build("vit_s", odd_image),
        "model vit_s: image sides must be multiples of the patch size 4, got 30x30"
    );
    let no_outputs = ModelConfig {
        outputs: 0,
        ..ModelConfig::reference_image()
    };
    assert_eq!(
        build("mlp_s", no_outputs),
        "a model needs at least one output, got 0"
    );
    assert!(models::parameter_count("nope", &ModelConfig::reference_text()).is_err());
}

/// Runs only where libtorch sees a GPU: every model trains a step on CUDA and agrees with
/// its CPU copy in eval mode.
#[test]
fn models_run_on_cuda_when_present() {
    let _rng = serial();
    if !tch::Cuda::is_available() {
        println!("no CUDA device; skipped");
        return;
    }
    let cuda = Device::Cuda(0);
    for (key, config) in variants() {
        tch::manual_seed(3);
        let cpu_store = nn::VarStore::new(Device::Cpu);
        let cpu_model = models::build(key, &cpu_store.root(), &config).unwrap();
        let mut gpu_store = nn::VarStore::new(cuda);
        let gpu_model = models::build(key, &gpu_store.root(), &config).unwrap();
        gpu_store.copy(&cpu_store).unwrap();

        let input = batch(config.input.kind());
        let on_gpu = match &input {
            Input::Images(x) => Input::Images(x.to_device(cuda)),
            Input::Tokens { states, mask } => {
                tokens(&states.to_device(cuda), &mask.to_device(cuda))
            }
            Input::Embeddings(x) => Input::Embeddings(x.to_device(cuda)),
            Input::EncoderIds { .. } => unreachable!("no registry model reads encoder ids"),
        };
        let expected = cpu_model.forward_t(&input, false);
        let got = gpu_model.forward_t(&on_gpu, false).to_device(Device::Cpu);
        let diff = max_abs(&(got - &expected));
        // TF32 convolutions and matmuls on the GPU round to about 1e-3.
        assert!(
            diff < 1e-2 * (1.0 + max_abs(&expected)),
            "{key}: CPU and CUDA differ by {diff}"
        );

        let logits = gpu_model.forward_t(&on_gpu, true);
        logits.square().sum(Kind::Float).backward();
        for (name, var) in trainable(&gpu_store) {
            let grad = var.grad();
            assert!(grad.defined(), "{key}: {name} has no gradient on CUDA");
            let finite = grad.isfinite().all().int64_value(&[]) == 1;
            assert!(finite, "{key}: {name} has a non-finite gradient on CUDA");
        }
    }
}

/// `device::without_denormals` (the gradients' norm in `train::optimise`) flushes denormal
/// results to zero inside its closure only, also when the closure panics, and leaves a
/// norm whose squares are normal bit-identical.
#[test]
fn denormals_are_flushed_inside_without_denormals_only() {
    use drift::device::without_denormals;
    let square = |x: f32| std::hint::black_box(x) * std::hint::black_box(x);
    let tiny = 1e-20f32;
    assert!(square(tiny) > 0.0);
    let inside = without_denormals(|| square(tiny));
    if cfg!(target_arch = "x86_64") {
        assert_eq!(inside, 0.0);
    }
    assert!(square(tiny) > 0.0, "the mode is restored");
    let panicked = std::panic::catch_unwind(|| without_denormals(|| panic!("inside")));
    assert!(panicked.is_err());
    assert!(square(tiny) > 0.0, "the mode is restored after a panic");
    tch::manual_seed(0);
    let grads = Tensor::randn([512, 300], (Kind::Float, Device::Cpu));
    let outside = f32::try_from(grads.norm()).unwrap();
    let flushed = f32::try_from(without_denormals(|| grads.norm())).unwrap();
    assert_eq!(outside.to_bits(), flushed.to_bits());
}
