//! `drift summarize`: the analyses of one long-form drift-matrix CSV, or of the artifacts
//! of one model (every seed), with the cutoffs whose checkpoints collapsed.

use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;

use crate::analysis::{
    RobustnessScores, SCORE_NAMES, STREAM_K, ScoreParameters, SelfLabelling, Summary,
    TemporalScore, over_seeds, scores_per_seed, summarize_with,
};
use crate::artifacts::{ModelRuns, load_all};
use crate::format;
use crate::metrics::{Direction, Metric};
use crate::output::{out, outln};
use crate::table::{Pad, Table, TextLayout};
use crate::{Result, matrix};

/// How a command prints its result.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum OutputFormat {
    /// One JSON object.
    Json,
    /// A table for people.
    Table,
}

/// Arguments of `drift summarize`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Long-form CSV with columns train_slice,eval_slice,value and optionally seed and
    /// metric. Slices are integers or labels (1978, 2017-H1, 2017-Q3, 1850s) and are put in
    /// timeline order; other labels keep their order of first appearance. A missing row or
    /// an empty value is an empty cell. Or a folder of one model's run artifacts
    /// (<preset>/<model>, or one seed-<n> of it): every seed is read through the checked
    /// loader, the metric comes from the artifacts, and the cutoffs whose checkpoint
    /// collapsed are listed per seed.
    pub matrix: PathBuf,
    /// The metric of the values (its direction orients decay); needed for a CSV, and must
    /// agree with the artifacts when given with a folder.
    #[arg(long, value_enum)]
    pub metric: Option<Metric>,
    /// Keep the rows of collapsed checkpoints in the analyses (artifacts only). By default
    /// they are left out: a checkpoint that did not learn measures nothing about drift.
    #[arg(long)]
    pub include_collapsed: bool,
    /// With a self-label run's folder: the folder of the same model trained on gold labels
    /// (a `single` run over the same slices). Prints Agarwal & Nenkova's Table 9: the
    /// anchor-adaptation score of both, against the self-label anchor's row.
    #[arg(long, value_name = "DIR")]
    pub gold: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Json)]
    pub format: OutputFormat,
    /// Wild-Time's Eval-Fix split: the slice whose model is scored on its held-out parts
    /// (slices up to it, as a cumulative regime trains) and on every later slice (default:
    /// the middle slice).
    #[arg(long, value_name = "LABEL")]
    pub eval_fix: Option<String>,
    /// Wild-Time's Eval-Stream horizon: each row's next K slices.
    #[arg(long, value_name = "K", default_value_t = STREAM_K as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub stream_k: u64,
    /// drift-happens' robustness family (`robustness_scores`): the power of the diagonal
    /// in DRS_alpha (1 gives R_rel, 0 the mean future utility).
    #[arg(long, default_value_t = 1.0)]
    pub alpha: f64,
    /// The share of worst retentions CVaR_tau averages, in (0, 1).
    #[arg(long, value_name = "TAU", default_value_t = 0.1)]
    pub cvar_tau: f64,
    /// The weight of the strength S in J_lambda = lambda S + (1 - lambda) R_rel, in [0, 1].
    #[arg(long, default_value_t = 0.5)]
    pub lambda: f64,
    /// The decay rate of the future pairs' weights exp(-beta (j - i)) over slice-index
    /// gaps (0: every pair alike).
    #[arg(long, default_value_t = 0.0)]
    pub beta: f64,
    /// Backtest the runs' label-free drift detectors (`drift run --detectors`) against the
    /// matrix: each detector's Spearman correlation with the true drop, the accuracy
    /// estimates' errors, and retrains against realised performance with each detector as
    /// a retraining trigger, beside the fixed schedules (artifacts only).
    #[arg(long)]
    pub detectors: bool,
}

/// Runs `drift summarize`.
pub fn run(args: Args) -> Result<ExitCode> {
    let (matrix, runs) = if args.matrix.is_dir() {
        let runs = model_runs(&args.matrix, args.metric)?;
        let matrix = if args.include_collapsed {
            runs.matrix.clone()
        } else {
            runs.matrix.without_rows(|seed, i| runs.collapsed(seed, i))
        };
        (matrix, Some(runs))
    } else {
        let Some(metric) = args.metric else {
            return Err(crate::Error::Invalid(format!(
                "{}: a CSV needs --metric (a folder of artifacts names its own)",
                args.matrix.display()
            )));
        };
        if args.include_collapsed {
            return Err(crate::Error::Invalid(format!(
                "--include-collapsed: {} is a CSV, which records no checkpoint health; give \
                 a folder of run artifacts",
                args.matrix.display()
            )));
        }
        (matrix::read_long_csv(&args.matrix, metric)?, None)
    };
    let eval_fix =
        match &args.eval_fix {
            None => None,
            Some(label) => Some(matrix.slices().iter().position(|s| s == label).ok_or_else(
                || {
                    crate::Error::Invalid(format!(
                        "--eval-fix {label}: {} has no slice {label} (it has {})",
                        args.matrix.display(),
                        matrix.slices().join(", ")
                    ))
                },
            )?),
        };
    let parameters = ScoreParameters {
        alpha: args.alpha,
        cvar_tau: args.cvar_tau,
        lambda: args.lambda,
        beta: args.beta,
    };
    parameters.check().map_err(crate::Error::Invalid)?;
    let summary = summarize_with(&matrix, eval_fix, args.stream_k as usize);
    let scores = RobustnessOutput::new(&matrix, &parameters);
    let collapsed = runs.as_ref().map(collapsed_of);
    // What the seeds varied (one preset's seeds all record the same).
    let varied: Option<Vec<&str>> = runs
        .as_ref()
        .and_then(|r| r.provenance.first())
        .map(|p| p.varied.iter().map(|v| v.name()).collect());
    let design = design_note(runs.as_ref());
    let backtest = match (&runs, args.detectors) {
        (_, false) => None,
        (Some(runs), true) => Some(super::backtest::Backtest::new(runs, &runs.matrix)?),
        (None, true) => {
            return Err(crate::Error::Invalid(format!(
                "--detectors: {} is a CSV, which holds no detectors; give a folder of run                  artifacts made with `drift run --detectors`",
                args.matrix.display()
            )));
        }
    };
    let self_labelling = match &args.gold {
        None => None,
        Some(gold) => Some(self_labelling_of(&args, runs.as_ref(), &matrix, gold)?),
    };
    match args.format {
        OutputFormat::Json => {
            let out = Output {
                summary: &summary,
                varied,
                collapsed,
                collapsed_excluded: runs.is_some() && !args.include_collapsed,
                robustness_scores: &scores.scores,
                robustness_parameters: parameters,
                temporal_effects_design: design,
                self_labelling,
                detectors: backtest,
            };
            outln!(
                "{}",
                serde_json::to_string_pretty(&out).expect("a summary serialises")
            )?;
        }
        OutputFormat::Table => {
            out!("{}", table(&summary, &design))?;
            if let Some(varied) = &varied {
                out!(
                    "varied   {} (what the seeds of these runs varied)\n\n",
                    varied.join(" ")
                )?;
            }
            out!("{}", scores.table(&parameters))?;
            if let Some(t) = &self_labelling {
                out!("{}", self_labelling_table(t, &summary.slices))?;
            }
            if let Some(seeds) = &collapsed {
                out!("{}", collapsed_table(seeds, !args.include_collapsed))?;
            }
            if let Some(b) = &backtest {
                out!("{}", b.table())?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The JSON output: the summary's fields, then (for artifacts) the collapsed cutoffs.
#[derive(Serialize)]
struct Output<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    /// What the runs' seeds varied (`init`, `split`, `data`); absent for a CSV.
    #[serde(skip_serializing_if = "Option::is_none")]
    varied: Option<Vec<&'static str>>,
    /// Per seed, the labels of the collapsed cutoffs; absent for a CSV.
    #[serde(skip_serializing_if = "Option::is_none")]
    collapsed: Option<Vec<SeedCollapsed>>,
    collapsed_excluded: bool,
    /// drift-happens' robustness family: one number per score for one seed, the mean and
    /// sample standard deviation over seeds (with a `seed` column) for several.
    robustness_scores: &'a serde_json::Value,
    /// The family's parameters.
    robustness_parameters: ScoreParameters,
    /// Whether the matrix has the design the Agarwal & Nenkova scores assume.
    temporal_effects_design: String,
    /// With `--gold`: Table 9, self-labelled against gold-label adaptation.
    #[serde(skip_serializing_if = "Option::is_none")]
    self_labelling: Option<SelfLabelling>,
    /// With `--detectors`: the detectors' backtest.
    #[serde(skip_serializing_if = "Option::is_none")]
    detectors: Option<super::backtest::Backtest>,
}

/// The preset the runs were made from, when its recorded path still holds it (same hash).
fn preset_of(runs: &ModelRuns) -> Option<crate::preset::LoadedPreset> {
    let p = runs.provenance.first()?;
    crate::preset::Preset::load(std::path::Path::new(&p.preset.path))
        .ok()
        .filter(|l| l.sha256 == p.preset.sha256)
}

/// Table 9 of the self-label runs (whose preset gives the anchor) against the gold runs
/// under `gold`.
fn self_labelling_of(
    args: &Args,
    runs: Option<&ModelRuns>,
    matrix: &crate::matrix::DriftMatrix,
    gold: &std::path::Path,
) -> Result<SelfLabelling> {
    let invalid = |m: String| crate::Error::Invalid(format!("--gold: {m}"));
    let runs = runs.ok_or_else(|| {
        invalid(format!(
            "{} is a CSV; give the self-label run's artifact folder",
            args.matrix.display()
        ))
    })?;
    let preset = preset_of(runs).ok_or_else(|| {
        invalid(format!(
            "the preset {} of the runs under {} cannot be read with its recorded hash, so \
             their anchor is unknown",
            runs.provenance[0].preset.path,
            args.matrix.display()
        ))
    })?;
    let anchor = preset.preset.regime.anchor().ok_or_else(|| {
        invalid(format!(
            "the runs under {} train {}, not self-label",
            args.matrix.display(),
            preset.preset.regime.name()
        ))
    })?;
    let gold_runs = model_runs(gold, Some(runs.matrix.metric()))?;
    // The gold runs' collapsed rows go as the self-labelled runs' do.
    let gold_matrix = if args.include_collapsed {
        gold_runs.matrix.clone()
    } else {
        gold_runs
            .matrix
            .without_rows(|seed, i| gold_runs.collapsed(seed, i))
    };
    crate::analysis::self_labelling(matrix, &gold_matrix, anchor).map_err(|e| {
        invalid(format!(
            "{} and {}: {e}",
            args.matrix.display(),
            gold.display()
        ))
    })
}

/// A number of the summary's tables: 4 decimals, [`format::MISSING`] when there is none.
fn cell(value: Option<f64>) -> String {
    format::fixed_or_missing(value, 4)
}

/// The layout of the score tables: the first column `first` wide, then the value, the
/// p-value (`p` wide), N, and the min and max over seeds.
fn scores_layout(first: usize, p: usize) -> TextLayout {
    TextLayout {
        indent: 2,
        gap: 1,
        pads: vec![
            Pad::LeftIn(first),
            Pad::RightIn(9),
            Pad::RightIn(p),
            Pad::RightIn(4),
            Pad::RightIn(15),
            Pad::RightIn(15),
        ],
    }
}

/// One score as a row of a score table; `p` is its p-value cell.
fn score_row(name: &str, s: &TemporalScore, p: String) -> Vec<String> {
    vec![
        name.to_string(),
        cell(s.score),
        p,
        s.n.to_string(),
        cell(s.min),
        cell(s.max),
    ]
}

/// Table 9 of Agarwal & Nenkova, with a blank line before it.
fn self_labelling_table(t: &SelfLabelling, slices: &[String]) -> String {
    let p = |s: &TemporalScore| format::p_value_or_missing(s.p_value);
    let table = Table::new(
        &format!(
            "Agarwal & Nenkova Table 9: adaptation against the anchor row {} (M_i^j - M_s^j)",
            slices[t.anchor]
        ),
        &[
            "labels",
            "value",
            "p-value",
            "n",
            "min over seeds",
            "max over seeds",
        ],
        vec![
            score_row("self-labelled", &t.self_labelled, p(&t.self_labelled)),
            score_row("gold", &t.gold, p(&t.gold)),
        ],
    )
    .expect("six cells a row");
    format!("\n{}\n", table.text_with(&scores_layout(14, 8)))
}

/// What the Agarwal & Nenkova scores of this input mean, from the runs' preset when it can
/// be read (its path as recorded, with the hash recorded).
fn design_note(runs: Option<&ModelRuns>) -> String {
    const DEFINED: &str = "the Agarwal & Nenkova scores are defined for single-slice \
        training on equal-size slices (regime single, downsample)";
    let Some(runs) = runs else {
        return format!("{DEFINED}; a CSV does not say how its models were trained");
    };
    let p = &runs.provenance[0];
    match preset_of(runs) {
        None => format!(
            "{DEFINED}; the runs' preset {} could not be read with the recorded hash, so \
             their design is unknown",
            p.preset.path
        ),
        Some(l) if l.preset.regime == crate::slices::Regime::Single && l.preset.downsample => {
            format!("{DEFINED}: these runs follow it")
        }
        Some(l) => format!(
            "{DEFINED}, but these runs train {}{}: the scores describe this matrix and \
             their p-values are no test of the paper's claims",
            l.preset.regime.name(),
            if l.preset.downsample {
                ""
            } else {
                " on slices of their natural size"
            }
        ),
    }
}

/// One seed's collapsed cutoffs (`null` when its run recorded no health).
#[derive(Serialize)]
struct SeedCollapsed {
    seed: u64,
    cutoffs: Option<Vec<String>>,
}

/// The one model's runs under `dir`, checked to hold `metric` when one is given.
fn model_runs(dir: &std::path::Path, metric: Option<Metric>) -> Result<ModelRuns> {
    let mut all = load_all(dir)?;
    if all.len() != 1 {
        let found: Vec<String> = all
            .iter()
            .map(|r| format!("{}/{}", r.preset, r.model))
            .collect();
        return Err(crate::Error::Invalid(format!(
            "{}: expected the runs of one model, found {} ({})",
            dir.display(),
            all.len(),
            found.join(", ")
        )));
    }
    let runs = all.remove(0);
    if let Some(metric) = metric
        && metric != runs.matrix.metric()
    {
        return Err(crate::Error::Invalid(format!(
            "--metric {metric}: the artifacts under {} hold {}",
            dir.display(),
            runs.matrix.metric()
        )));
    }
    Ok(runs)
}

fn collapsed_of(runs: &ModelRuns) -> Vec<SeedCollapsed> {
    runs.provenance
        .iter()
        .zip(&runs.health)
        .map(|(p, health)| SeedCollapsed {
            seed: p.seed,
            cutoffs: health.as_ref().map(|h| {
                h.iter()
                    .filter(|h| h.collapsed)
                    .map(|h| h.cutoff.clone())
                    .collect()
            }),
        })
        .collect()
}

fn collapsed_table(seeds: &[SeedCollapsed], excluded: bool) -> String {
    let mut out = format!(
        "\ncollapsed checkpoints ({})\n",
        if excluded {
            "their rows are left out of the figures above"
        } else {
            "their rows are included above (--include-collapsed)"
        }
    );
    for s in seeds {
        let cutoffs = match &s.cutoffs {
            None => "no health record".to_string(),
            Some(c) if c.is_empty() => "none".to_string(),
            Some(c) => c.join(" "),
        };
        out += &format!("  seed {:<4} {cutoffs}\n", s.seed);
    }
    out
}

/// The summary for people: the headline scores, the per-cutoff rows, the forgetting curve,
/// the Agarwal & Nenkova scores and Wild-Time's protocols.
fn table(s: &Summary, design: &str) -> String {
    let direction = match s.metric.direction() {
        Direction::HigherIsBetter => "higher is better",
        Direction::LowerIsBetter => "lower is better",
    };
    let seeds: Vec<String> = s.seeds.iter().map(u64::to_string).collect();
    let mut out = format!(
        "metric   {} ({direction})\nslices   {} ({} .. {})\nseeds    {}\n\nID       {}\nfuture   {}\ndecay    {}  (positive = worse on the future)\n",
        s.metric,
        s.slices.len(),
        s.slices.first().map_or("", String::as_str),
        s.slices.last().map_or("", String::as_str),
        seeds.join(" "),
        cell(s.id),
        cell(s.future),
        cell(s.decay),
    );
    let per_cutoff = s
        .per_cutoff
        .iter()
        .map(|row| {
            let scores = &row.row.scores;
            vec![
                row.slice.clone(),
                cell(scores.id),
                cell(scores.future),
                cell(scores.decay),
            ]
        })
        .collect();
    let per_cutoff = Table::new(
        "per cutoff",
        &["slice", "ID", "future", "decay"],
        per_cutoff,
    )
    .expect("four cells a row");
    let layout = TextLayout {
        indent: 2,
        gap: 1,
        pads: vec![
            Pad::LeftIn(12),
            Pad::RightIn(8),
            Pad::RightIn(8),
            Pad::RightIn(8),
        ],
    };
    out += &format!("\n{}\n", per_cutoff.text_with(&layout));
    let forgetting = s
        .forgetting
        .iter()
        .map(|p| vec![p.lag.to_string(), cell(Some(p.mean)), cell(p.std)])
        .collect();
    let forgetting = Table::new(
        "forgetting curve (mean over seeds of mean_i M[i][i+lag])",
        &["lag", "mean", "std"],
        forgetting,
    )
    .expect("three cells a row");
    let layout = TextLayout {
        indent: 2,
        gap: 1,
        pads: vec![Pad::RightIn(3), Pad::RightIn(9), Pad::RightIn(8)],
    };
    out += &format!("\n{}\n", forgetting.text_with(&layout));
    let effects = s
        .effects
        .named()
        .map(|(name, t)| {
            let mark = if t.p_value.is_some_and(|p| p < 0.05) {
                "*"
            } else {
                " "
            };
            let p = format::p_value_or_missing(t.p_value);
            score_row(name, &t, format!("{p}{mark}"))
        })
        .collect();
    // The p-value column holds each p-value and its mark (or a space): its header ends
    // with the space over the marks.
    let effects = Table::new(
        "Agarwal & Nenkova (mean raw difference, positive = metric went up)",
        &[
            "score",
            "value",
            "p-value ",
            "n",
            "min over seeds",
            "max over seeds",
        ],
        effects,
    )
    .expect("six cells a row");
    out += &format!("\n{}\n", effects.text_with(&scores_layout(27, 9)));
    out += "  (* p < 0.05, two-sided Wilcoxon signed-rank test)\n";
    out += &format!("  {design}\n");
    if let Some(f) = &s.eval_fix {
        out += &format!(
            "\nWild-Time Eval-Fix at {} (ID: mean of M[c][0..=c])\n  ID {}  OOD avg {}  OOD worst {}\n",
            s.slices[f.cutoff],
            cell(f.id),
            cell(f.ood_avg),
            cell(f.ood_worst)
        );
    }
    let e = &s.eval_stream;
    out += &format!(
        "Wild-Time Eval-Stream, K = {} ({} rows)\n  avg {}  worst {}  best {}\n",
        e.k,
        e.rows,
        cell(e.avg),
        cell(e.worst),
        cell(e.best)
    );
    out
}

/// drift-happens' robustness family of the matrix, as the JSON and the table print it.
struct RobustnessOutput {
    per_seed: Vec<(u64, RobustnessScores)>,
    scores: serde_json::Value,
}

impl RobustnessOutput {
    fn new(matrix: &crate::matrix::DriftMatrix, parameters: &ScoreParameters) -> Self {
        let per_seed = scores_per_seed(matrix, parameters);
        let scores = match per_seed.as_slice() {
            [(_, one)] => serde_json::to_value(one).expect("scores serialise"),
            _ => {
                let only: Vec<RobustnessScores> = per_seed.iter().map(|s| s.1).collect();
                let mut map = serde_json::Map::new();
                map.insert(
                    "seed".into(),
                    per_seed
                        .iter()
                        .map(|(seed, s)| {
                            let mut row = serde_json::to_value(s).expect("scores serialise");
                            row["seed"] = (*seed).into();
                            row
                        })
                        .collect(),
                );
                for (name, m) in over_seeds(&only) {
                    map.insert(name.into(), serde_json::to_value(m).expect("serialises"));
                }
                serde_json::Value::Object(map)
            }
        };
        RobustnessOutput { per_seed, scores }
    }

    /// One row per seed and, for several, the mean and sd over them, with a blank line
    /// before it.
    fn table(&self, p: &ScoreParameters) -> String {
        let mut header = vec!["seed"];
        header.extend(SCORE_NAMES.iter().map(|(name, _)| *name));
        let mut rows: Vec<Vec<String>> = self
            .per_seed
            .iter()
            .map(|(seed, s)| {
                let mut row = vec![seed.to_string()];
                row.extend(SCORE_NAMES.iter().map(|(_, pick)| cell(pick(s))));
                row
            })
            .collect();
        if self.per_seed.len() > 1 {
            let only: Vec<RobustnessScores> = self.per_seed.iter().map(|s| s.1).collect();
            let means = over_seeds(&only);
            let mut mean = vec!["mean".to_string()];
            mean.extend(means.iter().map(|(_, m)| cell(m.map(|m| m.mean))));
            let mut sd = vec!["sd".to_string()];
            sd.extend(means.iter().map(|(_, m)| cell(m.and_then(|m| m.sd))));
            rows.extend([mean, sd]);
        }
        let table = Table::new(
            &format!(
                "robustness scores of drift-happens (alpha {}, tau {}, lambda {}, beta {})",
                p.alpha, p.cvar_tau, p.lambda, p.beta
            ),
            &header,
            rows,
        )
        .expect("nine cells a row");
        let mut pads = vec![Pad::LeftIn(6)];
        pads.extend(std::iter::repeat_n(Pad::RightIn(9), SCORE_NAMES.len()));
        format!(
            "\n{}\n",
            table.text_with(&TextLayout {
                indent: 2,
                gap: 1,
                pads,
            })
        )
    }
}
