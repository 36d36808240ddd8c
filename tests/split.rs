//! The once-per-slice split: pinned exactly, stratified when it can be, and the fallbacks
//! of protocol.md §1.

use drift::slices::{
    Regime, Slice, SplitConfig, Stratify, Timestamp, downsample_slices, split_slice,
};

fn digest(split: &drift::slices::SliceSplit) -> String {
    let join = |v: &[usize]| v.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    drift::checksum::sha256_hex(
        format!("train:{};test:{}", join(&split.train), join(&split.test)).as_bytes(),
    )
}

/// The exact split of a fixed input, pinned by hash: a change here changes every
/// published matrix, so it must be deliberate (and the algorithm version bumped).
#[test]
fn split_is_pinned() {
    let rows: Vec<usize> = (0..1000).map(|r| r * 3 + 1).collect();
    let labels: Vec<u32> = (0..1000).map(|r| (r * 7 % 3) as u32).collect();
    let config = SplitConfig::default();
    let stratified = split_slice(&rows, Some(&labels), &config, "1978");
    assert!(stratified.stratified);
    assert_eq!((stratified.train.len(), stratified.test.len()), (700, 300));
    assert_eq!(
        digest(&stratified),
        "24a07af97346cb3a1f8a070ccd4828ede8ebfa2c1950cd17cece3681206fe9a5"
    );
    let never = SplitConfig {
        stratify: Stratify::Never,
        ..config
    };
    let plain = split_slice(&rows, Some(&labels), &never, "1978");
    assert!(!plain.stratified);
    assert_eq!(
        digest(&plain),
        "99f4762a63f1ad5065eddcd85d54e8327e1775b2d5a7d1000a285e053e53cd6c"
    );
    // The same call always gives the same split.
    assert_eq!(
        split_slice(&rows, Some(&labels), &config, "1978"),
        stratified
    );
}

/// The exact splits of varied inputs, as computed from the module doc's algorithm by an
/// independent pure-Python implementation (`scripts/split_reference.py`, its own ChaCha20
/// block function from RFC 8439), committed as tests/fixtures/split.json.
#[test]
fn split_matches_independent_reference() {
    let json = crate::support::fixture("split.json");
    let usizes = |v: &serde_json::Value| -> Vec<usize> {
        let items = v.as_array().unwrap().iter();
        items.map(|x| x.as_u64().unwrap() as usize).collect()
    };
    let cases = json["cases"].as_array().unwrap();
    assert!(cases.len() >= 6);
    for (k, case) in cases.iter().enumerate() {
        let rows = usizes(&case["rows"]);
        let labels: Option<Vec<u32>> = case["labels"]
            .as_array()
            .map(|ls| ls.iter().map(|x| x.as_u64().unwrap() as u32).collect());
        let config = SplitConfig {
            train_fraction: case["train_fraction"].as_f64().unwrap(),
            seed: case["seed"].as_u64().unwrap(),
            stratify: match case["stratify"].as_str().unwrap() {
                "auto" => Stratify::Auto,
                "never" => Stratify::Never,
                other => panic!("case {k}: unknown stratify {other:?}"),
            },
        };
        let slice_label = case["slice_label"].as_str().unwrap();
        let split = split_slice(&rows, labels.as_deref(), &config, slice_label);
        assert_eq!(split.train, usizes(&case["train"]), "case {k}: train");
        assert_eq!(split.test, usizes(&case["test"]), "case {k}: test");
        assert_eq!(
            split.stratified,
            case["stratified"].as_bool().unwrap(),
            "case {k}: stratified"
        );
    }
}

#[test]
fn seed_and_slice_label_change_the_split() {
    let rows: Vec<usize> = (0..50).collect();
    let config = SplitConfig::default();
    let base = split_slice(&rows, None, &config, "2001");
    let other_seed = split_slice(&rows, None, &SplitConfig { seed: 1, ..config }, "2001");
    let other_slice = split_slice(&rows, None, &config, "2002");
    assert_ne!(base.test, other_seed.test);
    assert_ne!(base.test, other_slice.test);
    assert_eq!(base.train.len(), 35);
}

#[test]
fn stratified_split_keeps_class_proportions() {
    let rows: Vec<usize> = (0..200).collect();
    let labels: Vec<u32> = rows.iter().map(|&r| u32::from(r % 4 == 0)).collect();
    let split = split_slice(&rows, Some(&labels), &SplitConfig::default(), "x");
    assert!(split.stratified);
    let positives = |side: &[usize]| side.iter().filter(|&&r| labels[r] == 1).count();
    assert_eq!(positives(&split.test), 15, "a quarter of 60 test rows");
    assert_eq!(positives(&split.train), 35);
    let mut all = [split.train.clone(), split.test.clone()].concat();
    all.sort_unstable();
    assert_eq!(all, rows, "every row lands on exactly one side");
}

#[test]
fn fallbacks_of_the_protocol() {
    let config = SplitConfig::default();
    // Fewer than 3 rows: all to train.
    let tiny = split_slice(&[4, 9], Some(&[0, 1]), &config, "x");
    assert_eq!(
        (tiny.train, tiny.test, tiny.stratified),
        (vec![4, 9], vec![], false)
    );
    // A class with a single row: unstratified.
    let rows: Vec<usize> = (0..10).collect();
    let labels = [0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    assert!(!split_slice(&rows, Some(&labels), &config, "x").stratified);
    // One class only: unstratified.
    assert!(!split_slice(&rows, Some(&[0; 10]), &config, "x").stratified);
    // Test side smaller than the number of classes (3 rows, 3 test needed): unstratified.
    let rows: Vec<usize> = (0..8).collect();
    let labels = [0, 0, 1, 1, 2, 2, 3, 3];
    let split = split_slice(&rows, Some(&labels), &config, "x");
    assert_eq!(split.test.len(), 3);
    assert!(!split.stratified);
    // Three rows: two train, one test.
    let three = split_slice(&[0, 1, 2], None, &config, "x");
    assert_eq!((three.train.len(), three.test.len()), (2, 1));
}

#[test]
fn downsampling_equalises_slices() {
    let slice = |label: &str, n: usize| Slice {
        label: label.into(),
        start: Timestamp(0),
        end: None,
        rows: (0..n).map(|r| r * 2).collect(),
    };
    let mut slices = vec![slice("a", 10), slice("b", 4), slice("c", 7)];
    downsample_slices(&mut slices, 0);
    assert!(slices.iter().all(|s| s.rows.len() == 4));
    assert_eq!(slices[1].rows, vec![0, 2, 4, 6]);
    assert!(slices[0].rows.windows(2).all(|w| w[0] < w[1]));
    let mut again = vec![slice("a", 10), slice("b", 4), slice("c", 7)];
    downsample_slices(&mut again, 0);
    assert_eq!(again, slices);
}

#[test]
fn cumulative_cells_never_leak() {
    let rows: Vec<usize> = (0..30).collect();
    let splits: Vec<_> = (0..3)
        .map(|k| {
            split_slice(
                &rows[k * 10..k * 10 + 10],
                None,
                &SplitConfig::default(),
                &k.to_string(),
            )
        })
        .collect();
    for i in 0..3 {
        let train = Regime::Cumulative.training_rows(&splits, i);
        for j in 0..3 {
            let eval = Regime::Cumulative.eval_rows(&splits, i, j);
            assert!(
                eval.iter().all(|r| !train.contains(r)),
                "cell ({i},{j}) leaks"
            );
            assert_eq!(eval.len(), if j <= i { 3 } else { 10 });
        }
    }
}
