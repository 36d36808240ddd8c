//! Label-free drift detectors of one run: for each checkpoint `i` and every later slice `j`,
//! what a deployment could have measured on slice `j` without its labels, stored beside the
//! drift matrix, which says what the shift really cost.
//!
//! Three kinds ([`DETECTORS`] lists them, in file order):
//!
//! - **Representation shift** between the rows cutoff `i` trained on and slice `j`'s rows
//!   ([`crate::shift`]'s MMD, per-dimension KS and classifier two-sample test, each
//!   statistic with its p-value), on a fixed representation of the input
//!   ([`Representation`]): a frozen encoder's embedding as it is, token states averaged
//!   over the real tokens, images averaged over blocks down to at most 8 x 8 per channel.
//!   They do not depend on the model, so a preset computes them once per cutoff and shares
//!   them between its models. The kernel and classifier tests read at most
//!   [`SAMPLE_ROWS`] rows a side, drawn without replacement (ChaCha20 keyed by the cutoff
//!   and slice), with [`PERMUTATIONS`] shuffles for MMD's p-value; the KS tests (here and
//!   on the outputs) read [`KS_ROWS`] or the smaller side's rows from each side, equal
//!   sizes, whose exact p-value costs O(n) where unequal sizes cost O(n1 n2) per
//!   dimension: on full rows (up to 9,800 training rows against 600) the detectors took 45
//!   times the evaluation of an `ffn_s` on MiniLM states (`benches/detectors.rs`).
//! - **Output shift** between the checkpoint's outputs on its own held-out ID rows and on
//!   slice `j`: KS on the predicted scores (class probabilities per class, Bonferroni; a
//!   regression's predictions), chi-square on the predicted classes, and the label prior
//!   by black-box shift estimation (its total-variation distance from the ID prior; the
//!   estimated priors are kept too).
//! - **Performance estimates**: the average confidence and ATC's estimated accuracy
//!   (threshold fitted on the ID rows), next to the true accuracy on slice `j`'s evaluated
//!   rows for the estimates' errors.
//!
//! Classification only: chi-square, BBSE, confidence and ATC (a regression has no classes
//! and no confidence; its output KS reads the predictions); a multi-label task gets the
//! representation detectors and the output KS of its logits. An input without a fixed
//! representation (the token ids a fine-tuned encoder reads) gets no representation
//! detectors.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::data::{Dataset, Targets};
use crate::eval::{Outputs, argmax, id_test_rows, softmax};
use crate::shift::{self, Atc, Sample};
use crate::slices::{Regime, SliceSplit, shuffle, stream};
use crate::{Error, Result};

mod representation;

pub use representation::Representation;

/// The detector file's schema.
pub const SCHEMA: u32 = 1;
/// Rows per side of the kernel and classifier tests.
pub const SAMPLE_ROWS: usize = 256;
/// Rows per side of the KS tests (both sides drawn to the same size).
pub const KS_ROWS: usize = 1024;
/// Shuffles for MMD's permutation p-value.
pub const PERMUTATIONS: usize = 200;

/// What a detector measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DetectorKind {
    /// Shift of the input representation (model-independent).
    Representation,
    /// Shift of the model's outputs.
    Output,
    /// An estimate of the accuracy on the new slice.
    Estimate,
}

/// One detector: its name in `detectors.json`, its kind, and which way means "shifted".
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Detector {
    /// The key in `detectors.json`.
    pub name: &'static str,
    /// What it measures.
    pub kind: DetectorKind,
    /// In words, for tables.
    pub about: &'static str,
    /// `true` when a larger value means more shift (statistics); `false` when a smaller
    /// one does (p-values, estimated accuracy).
    pub larger_means_shift: bool,
}

const fn detector(
    name: &'static str,
    kind: DetectorKind,
    about: &'static str,
    larger_means_shift: bool,
) -> Detector {
    Detector {
        name,
        kind,
        about,
        larger_means_shift,
    }
}

/// Every detector, in file order.
pub const DETECTORS: &[Detector] = &[
    detector(
        "mmd",
        DetectorKind::Representation,
        "MMD^2 of the representation",
        true,
    ),
    detector(
        "mmd_p",
        DetectorKind::Representation,
        "MMD permutation p-value",
        false,
    ),
    detector(
        "ks",
        DetectorKind::Representation,
        "largest per-dimension KS distance",
        true,
    ),
    detector(
        "ks_p",
        DetectorKind::Representation,
        "per-dimension KS p-value, Bonferroni",
        false,
    ),
    detector(
        "c2st",
        DetectorKind::Representation,
        "classifier two-sample AUC",
        true,
    ),
    detector(
        "c2st_p",
        DetectorKind::Representation,
        "classifier two-sample p-value",
        false,
    ),
    detector(
        "score_ks",
        DetectorKind::Output,
        "largest KS distance of the predicted scores",
        true,
    ),
    detector(
        "score_ks_p",
        DetectorKind::Output,
        "KS p-value of the predicted scores, Bonferroni",
        false,
    ),
    detector(
        "chi2",
        DetectorKind::Output,
        "chi-square of the predicted classes",
        true,
    ),
    detector(
        "chi2_p",
        DetectorKind::Output,
        "chi-square p-value of the predicted classes",
        false,
    ),
    detector(
        "bbse",
        DetectorKind::Output,
        "BBSE label-prior shift (total variation)",
        true,
    ),
    detector(
        "confidence",
        DetectorKind::Estimate,
        "average confidence (estimated accuracy)",
        false,
    ),
    detector(
        "atc",
        DetectorKind::Estimate,
        "ATC estimated accuracy",
        false,
    ),
];

/// Looks a detector up by name.
pub fn detector_named(name: &str) -> Option<&'static Detector> {
    DETECTORS.iter().find(|d| d.name == name)
}

/// One detector's values for the slices of one cutoff (`None` where it does not apply or
/// for slices not after the cutoff).
pub type DetectorRow = BTreeMap<String, Vec<Option<f64>>>;

/// The detectors of one cutoff: its row of every detector, the true accuracy beside the
/// estimates, and BBSE's priors.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CutoffDetectors {
    /// Detector name to its values per slice.
    pub values: DetectorRow,
    /// Accuracy on each slice's evaluated rows (classification; the ground truth of the
    /// estimates).
    pub accuracy: Option<Vec<Option<f64>>>,
    /// The label prior of the ID rows' true labels (classification).
    pub id_prior: Option<Vec<f64>>,
    /// BBSE's estimated label prior of each slice (`None` where not identified).
    pub estimated_priors: Option<Vec<Option<Vec<f64>>>>,
}

/// The slices after cutoff `i` with rows to evaluate.
fn later(regime: &Regime, splits: &[SliceSplit], i: usize) -> Vec<(usize, Vec<usize>)> {
    (i + 1..splits.len())
        .map(|j| (j, regime.eval_rows(splits, i, j)))
        .filter(|(_, rows)| !rows.is_empty())
        .collect()
}

/// At most `limit` of `rows`, drawn without replacement by `purpose`'s stream, in row order.
fn subsample(rows: &[usize], limit: usize, purpose: &str, seed: u64, label: &str) -> Vec<usize> {
    if rows.len() <= limit {
        return rows.to_vec();
    }
    let mut order = rows.to_vec();
    shuffle(&mut stream(purpose, seed, label), &mut order);
    order.truncate(limit);
    order.sort_unstable();
    order
}

/// Equal-size draws of at most [`KS_ROWS`] rows from `a` and `b` for the KS tests.
fn ks_draws(a: &[usize], b: &[usize], seed: u64, label: &str) -> (Vec<usize>, Vec<usize>) {
    let n = KS_ROWS.min(a.len()).min(b.len());
    (
        subsample(a, n, "detectors-ks-a", seed, label),
        subsample(b, n, "detectors-ks-b", seed, label),
    )
}

/// The representation detectors of cutoff `i` (model-independent; `seed` keys the draws).
pub fn representation_row(
    representation: &Representation,
    regime: &Regime,
    splits: &[SliceSplit],
    i: usize,
    seed: u64,
) -> Result<DetectorRow> {
    let k = splits.len();
    let mut row: DetectorRow = ["mmd", "mmd_p", "ks", "ks_p", "c2st", "c2st_p"]
        .into_iter()
        .map(|name| (name.to_string(), vec![None; k]))
        .collect();
    let trained = regime.training_rows(splits, i);
    if trained.is_empty() {
        return Ok(row);
    }
    let (mut ba, mut bb) = (Vec::new(), Vec::new());
    for (j, rows) in later(regime, splits, i) {
        let label = format!("{i}:{j}");
        let a_rows = subsample(&trained, SAMPLE_ROWS, "detectors-a", seed, &label);
        let b_rows = subsample(&rows, SAMPLE_ROWS, "detectors-b", seed, &label);
        let (ks_a, ks_b) = ks_draws(&trained, &rows, seed, &label);
        let ks = shift::ks(
            representation.sample(&ks_a, &mut ba),
            representation.sample(&ks_b, &mut bb),
        )?;
        let a = representation.sample(&a_rows, &mut ba);
        let b = representation.sample(&b_rows, &mut bb);
        let mut set = |name: &str, value: f64| {
            row.get_mut(name).expect("declared above")[j] = Some(value);
        };
        set("ks", ks.test.statistic);
        set("ks_p", ks.test.p_value);
        // A representation whose points mostly coincide has no median-heuristic kernel, and
        // a sample too small for five folds no classifier test: those cells stay empty.
        if let Ok(mmd) = shift::mmd(a, b, PERMUTATIONS, seed) {
            set("mmd", mmd.test.statistic);
            set("mmd_p", mmd.test.p_value);
        }
        if a.rows() >= shift::FOLDS && b.rows() >= shift::FOLDS {
            let c2st = shift::c2st(a, b)?;
            set("c2st", c2st.statistic);
            set("c2st_p", c2st.p_value);
        }
    }
    Ok(row)
}

/// The output detectors and estimates of cutoff `i` from the checkpoint's `outputs` on
/// every row (`seed` keys the KS draws).
pub fn output_row(
    targets: &Targets,
    outputs: &Outputs,
    regime: &Regime,
    splits: &[SliceSplit],
    i: usize,
    seed: u64,
) -> Result<CutoffDetectors> {
    let k = splits.len();
    let names = match targets {
        Targets::Classes { .. } => vec![
            "score_ks",
            "score_ks_p",
            "chi2",
            "chi2_p",
            "bbse",
            "confidence",
            "atc",
        ],
        Targets::MultiLabel { .. } | Targets::Values(_) => vec!["score_ks", "score_ks_p"],
    };
    let mut out = CutoffDetectors {
        values: names
            .into_iter()
            .map(|n| (n.to_string(), vec![None; k]))
            .collect(),
        ..CutoffDetectors::default()
    };
    let id_rows = id_test_rows(regime, splits, i);
    if id_rows.is_empty() || regime.trained_slices(i).is_empty() {
        return Ok(out);
    }
    // Scores: class probabilities (classes), logits (multi-label), predictions (values).
    let scores = |rows: &[usize]| -> (Vec<f32>, usize) {
        let width = outputs.width;
        let values = match targets {
            Targets::Classes { .. } => rows
                .iter()
                .flat_map(|&r| softmax(outputs.row(r)).into_iter().map(|p| p as f32))
                .collect(),
            _ => rows
                .iter()
                .flat_map(|&r| outputs.row(r).iter().copied())
                .collect(),
        };
        (values, width)
    };
    let classified = match targets {
        Targets::Classes { classes, labels } => {
            let predicted: Vec<u32> = id_rows.iter().map(|&r| argmax(outputs.row(r))).collect();
            let truth: Vec<u32> = id_rows.iter().map(|&r| labels[r]).collect();
            let confidence: Vec<f64> = id_rows
                .iter()
                .map(|&r| max_probability(outputs, r))
                .collect();
            let correct: Vec<bool> = predicted.iter().zip(&truth).map(|(p, t)| p == t).collect();
            let mut prior = vec![0.0; *classes];
            for &t in &truth {
                prior[t as usize] += 1.0 / truth.len() as f64;
            }
            out.id_prior = Some(prior);
            out.accuracy = Some(vec![None; k]);
            out.estimated_priors = Some(vec![None; k]);
            Some((
                *classes,
                labels,
                predicted,
                truth,
                Atc::fit(&confidence, &correct)?,
            ))
        }
        _ => None,
    };
    for (j, rows) in later(regime, splits, i) {
        let mut set = |name: &str, value: f64| {
            out.values.get_mut(name).expect("declared above")[j] = Some(value);
        };
        let (ks_a, ks_b) = ks_draws(&id_rows, &rows, seed, &format!("{i}:{j}"));
        let ((id_scores, width), (target_scores, _)) = (scores(&ks_a), scores(&ks_b));
        let ks = shift::ks(
            Sample {
                values: &id_scores,
                dims: width,
            },
            Sample {
                values: &target_scores,
                dims: width,
            },
        )?;
        set("score_ks", ks.test.statistic);
        set("score_ks_p", ks.test.p_value);
        let Some((classes, labels, predicted, truth, atc)) = &classified else {
            continue;
        };
        let target: Vec<u32> = rows.iter().map(|&r| argmax(outputs.row(r))).collect();
        let chi2 = shift::chi_square(predicted, &target, *classes)?;
        set("chi2", chi2.statistic);
        set("chi2_p", chi2.p_value);
        let confidence: Vec<f64> = rows.iter().map(|&r| max_probability(outputs, r)).collect();
        if let Some(v) = shift::average_confidence(&confidence) {
            set("confidence", v);
        }
        if let Some(v) = atc.estimate(&confidence) {
            set("atc", v);
        }
        let estimate = shift::bbse(truth, predicted, &target, *classes)?;
        if let Some(e) = &estimate {
            set("bbse", e.distance);
        }
        out.estimated_priors.as_mut().expect("classification")[j] = estimate.map(|e| e.target);
        let right = rows
            .iter()
            .zip(&target)
            .filter(|&(&r, &p)| labels[r] == p)
            .count();
        out.accuracy.as_mut().expect("classification")[j] = Some(right as f64 / rows.len() as f64);
    }
    Ok(out)
}

fn max_probability(outputs: &Outputs, r: usize) -> f64 {
    softmax(outputs.row(r)).into_iter().fold(0.0, f64::max)
}

/// `detectors.json` of a run: every cutoff's detectors, as matrices.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DetectorMatrices {
    /// [`SCHEMA`].
    pub schema: u32,
    /// The slice labels (rows: checkpoints, columns: slices).
    pub slices: Vec<String>,
    /// Rows per side of the kernel and classifier tests, and MMD's shuffles.
    pub sample_rows: usize,
    /// MMD's shuffles.
    pub permutations: usize,
    /// Detector name to its K x K matrix (cells after the diagonal).
    pub detectors: BTreeMap<String, Vec<Vec<Option<f64>>>>,
    /// The true accuracy of each cell (classification).
    pub accuracy: Option<Vec<Vec<Option<f64>>>>,
    /// Each checkpoint's ID label prior (classification).
    pub id_priors: Option<Vec<Option<Vec<f64>>>>,
    /// BBSE's estimated prior per cell (classification).
    pub estimated_priors: Option<Vec<Vec<Option<Vec<f64>>>>>,
}

impl DetectorMatrices {
    /// The matrices of `cutoffs` (one per slice, in order; an empty default for a cutoff
    /// without a model).
    pub fn assemble(slices: Vec<String>, cutoffs: &[CutoffDetectors]) -> Result<Self> {
        let k = slices.len();
        if cutoffs.len() != k {
            return Err(Error::Invalid(format!(
                "{} cutoffs of detectors for {k} slices",
                cutoffs.len()
            )));
        }
        let mut detectors: BTreeMap<String, Vec<Vec<Option<f64>>>> = BTreeMap::new();
        for (i, cutoff) in cutoffs.iter().enumerate() {
            for (name, row) in &cutoff.values {
                detectors
                    .entry(name.clone())
                    .or_insert_with(|| vec![vec![None; k]; k])[i] = row.clone();
            }
        }
        let classified = cutoffs.iter().any(|c| c.accuracy.is_some());
        Ok(DetectorMatrices {
            schema: SCHEMA,
            slices,
            sample_rows: SAMPLE_ROWS,
            permutations: PERMUTATIONS,
            detectors,
            accuracy: classified.then(|| {
                cutoffs
                    .iter()
                    .map(|c| c.accuracy.clone().unwrap_or_else(|| vec![None; k]))
                    .collect()
            }),
            id_priors: classified.then(|| cutoffs.iter().map(|c| c.id_prior.clone()).collect()),
            estimated_priors: classified.then(|| {
                cutoffs
                    .iter()
                    .map(|c| c.estimated_priors.clone().unwrap_or_else(|| vec![None; k]))
                    .collect()
            }),
        })
    }

    /// Every matrix is K x K with values only after the diagonal, every name a detector,
    /// every value finite; what a loaded file must satisfy.
    pub fn check(&self) -> std::result::Result<(), String> {
        let k = self.slices.len();
        if self.schema != SCHEMA {
            return Err(format!(
                "schema {} (this drift reads {SCHEMA})",
                self.schema
            ));
        }
        let square = |name: &str, m: &Vec<Vec<Option<f64>>>| -> std::result::Result<(), String> {
            if m.len() != k || m.iter().any(|r| r.len() != k) {
                return Err(format!("{name} is not {k} x {k}"));
            }
            for (i, row) in m.iter().enumerate() {
                for (j, v) in row.iter().enumerate() {
                    match v {
                        Some(_) if j <= i => {
                            return Err(format!("{name}[{i}][{j}] is on or before the diagonal"));
                        }
                        Some(v) if !v.is_finite() => {
                            return Err(format!("{name}[{i}][{j}] is not finite"));
                        }
                        _ => {}
                    }
                }
            }
            Ok(())
        };
        for (name, m) in &self.detectors {
            if detector_named(name).is_none() {
                return Err(format!("{name:?} is not a detector"));
            }
            square(name, m)?;
        }
        if let Some(m) = &self.accuracy {
            square("accuracy", m)?;
        }
        Ok(())
    }
}

/// Bump when what the representation detectors compute changes: it keys their cache
/// ([`SharedDetectors::with_cache`]), so that rows of an older computation are not read.
pub const REPRESENTATION_VERSION: u32 = 2;

/// The representation detectors of one data set and plan, computed once per cutoff and
/// shared by every model that trains on them, within a process and, with a cache folder,
/// across the processes of a study (each run of `drift study` is its own). The
/// representation itself is built on first use, so its cost counts in the detectors'
/// time of the run that needs it first.
pub struct SharedDetectors<'a> {
    /// The data, while detectors are on.
    data: Option<&'a Dataset>,
    representation: std::cell::OnceCell<Option<Representation>>,
    /// Keys the draws: the seed the data and plan were made for.
    seed: u64,
    rows: std::cell::RefCell<BTreeMap<usize, DetectorRow>>,
    /// The cache folder and the key its files must hold.
    cache: Option<(std::path::PathBuf, String)>,
}

/// A cached row of the representation detectors: `<cache>/<cutoff>.json`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CachedRow {
    key: String,
    row: DetectorRow,
}

/// The row cached at `path` for `key`; `None` when there is none, it does not parse or it
/// was made for another key (a cache is never trusted beyond its key).
pub fn cached_row(path: &Path, key: &str) -> Option<DetectorRow> {
    let text = std::fs::read_to_string(path).ok()?;
    let cached: CachedRow = serde_json::from_str(&text).ok()?;
    (cached.key == key).then_some(cached.row)
}

impl<'a> SharedDetectors<'a> {
    /// The detectors of `data` for draws keyed by `seed`; nothing is computed unless
    /// `enabled`.
    pub fn new(data: &'a Dataset, seed: u64, enabled: bool) -> Self {
        SharedDetectors {
            data: enabled.then_some(data),
            representation: Default::default(),
            seed,
            rows: Default::default(),
            cache: None,
        }
    }

    /// Rows also read from and written to `folder` (one file per cutoff, written
    /// atomically), for the data and plan that `identity` names (the preset's hash, the
    /// data's, the seed: what decides the rows besides this code, whose
    /// [`REPRESENTATION_VERSION`] and sample sizes join the key). A file for another key,
    /// or one that does not parse, is not used: the row is computed and the file replaced.
    pub fn with_cache(mut self, folder: &Path, identity: &str) -> Self {
        let key = crate::checksum::sha256_hex(
            format!(
                "{identity}|seed {}|version {REPRESENTATION_VERSION}|schema {SCHEMA}|rows \
                 {SAMPLE_ROWS}|ks rows {KS_ROWS}|permutations {PERMUTATIONS}",
                self.seed
            )
            .as_bytes(),
        );
        self.cache = Some((folder.join(&key[..16]), key));
        self
    }

    /// [`representation_row`] of cutoff `i`, computed on first use (or read from the
    /// cache); empty without a representation.
    pub fn row(&self, regime: &Regime, splits: &[SliceSplit], i: usize) -> Result<DetectorRow> {
        let Some(data) = self.data.filter(|d| Representation::exists(d)) else {
            return Ok(DetectorRow::new());
        };
        if let Some(row) = self.rows.borrow().get(&i) {
            return Ok(row.clone());
        }
        let file = self
            .cache
            .as_ref()
            .map(|(dir, key)| (dir.join(format!("{i}.json")), key));
        let cached = file.as_ref().and_then(|(path, key)| cached_row(path, key));
        let row = match cached {
            Some(row) => row,
            None => {
                let representation = self
                    .representation
                    .get_or_init(|| Representation::of(data))
                    .as_ref()
                    .expect("it exists");
                let row = representation_row(representation, regime, splits, i, self.seed)?;
                if let Some((path, key)) = &file {
                    let dir = path.parent().expect("a file in the cache folder");
                    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
                    let cached = CachedRow {
                        key: key.to_string(),
                        row: row.clone(),
                    };
                    let text = serde_json::to_string(&cached).expect("rows serialise") + "\n";
                    crate::files::write_atomic(path, text.as_bytes())?;
                }
                row
            }
        };
        self.rows.borrow_mut().insert(i, row.clone());
        Ok(row)
    }
}

/// `checkpoints/<label>.detectors.json`: one cutoff's detectors, for its checkpoint.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CutoffFile {
    checkpoint_sha256: String,
    detectors: CutoffDetectors,
}

/// A cutoff's detectors from `path` if an earlier process wrote them for the checkpoint
/// `checkpoint_sha256`; `None` when there is no file or it was made for another checkpoint.
pub fn read_cutoff(path: &Path, checkpoint_sha256: &str) -> Result<Option<CutoffDetectors>> {
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let file: CutoffFile = serde_json::from_str(&text).map_err(|e| Error::Artifact {
        path: path.to_path_buf(),
        message: format!("not a cutoff's detectors: {e}"),
    })?;
    Ok((file.checkpoint_sha256 == checkpoint_sha256).then_some(file.detectors))
}

/// Writes a cutoff's detectors atomically, tied to its checkpoint.
pub fn write_cutoff(
    path: &Path,
    checkpoint_sha256: &str,
    detectors: &CutoffDetectors,
) -> Result<()> {
    let file = CutoffFile {
        checkpoint_sha256: checkpoint_sha256.to_string(),
        detectors: detectors.clone(),
    };
    crate::files::write_atomic(
        path,
        (serde_json::to_string(&file).expect("detectors serialise") + "\n").as_bytes(),
    )
}
