//! The paper's claims (`report/claims.toml`): every qualitative sentence of the findings
//! ("concept drift costs most", "the CNN decays fastest") is a named statistical test over
//! the studies' per-seed values, with Holm's correction over the claims of its family.
//! `build-report` evaluates them after the studies load; a claim written as a finding
//! whose outcome is not the one it states stops the build, naming the claim, its values,
//! its test statistics and its adjusted p. A claim written as a question passes whatever
//! its outcome, and the paper words its answer from the outcome.
//!
//! # The file
//!
//! ```toml
//! level = 0.05                          # family-wise error rate (default 0.05)
//!
//! [kinds]                               # the kind of every data source claims name
//! "synthetic-portraits" = "synthetic face images"
//! Yearbook = "photographs of faces"
//!
//! [[claims]]
//! name = "concept-costs-most"           # lower-case letters, digits and '-'; unique
//! says = "Concept drift costs the cohort more than covariate or label drift."
//! check = "largest"
//! form = "finding"                      # or "question" (default "finding")
//! quantities = [
//!   { study = "drift-concept", stat = "decay" },
//!   { study = "drift-covariate", stat = "decay" },
//! ]
//! ```
//!
//! A quantity is one number of one study: `stat` of the cohort (no `model` or `family`), of
//! one model, or the mean of it over a family's trained models. Stats: `id`, `future`,
//! and decay under three definitions that can order models differently, so a claim about
//! decay names the one it uses: `decay` (pooled ID minus pooled future), `decay-matched`
//! (per cutoff, its diagonal minus its own future, averaged over the cutoffs with one) and
//! `retention` (the share of ID kept on the future, oriented for errors; higher is
//! better); `robust = true` requires the claim under all three. `margin-id`,
//! `margin-future`, `margin-decay` are a model's lead over the study's counting baseline;
//! the four Agarwal & Nenkova scores (`deterioration-consecutive`, ...) take `significant`
//! or `above` / `below` 0.
//!
//! # The tests, and why they fit
//!
//! A quantity's per-seed values are the statistic of each seed's grid on its own (a seed
//! varies a replication: initialisation and batch order, and with `vary` the split and
//! generated data); a family's seed value is its members' mean at that seed, the
//! cohort's the statistic of that seed's cohort grid. Values are compared as the analyses
//! hold them (metrics in `[0, 1]`).
//!
//! - `largest` / `smallest`: Welch's t-test of the first quantity against each other one;
//!   `separated`: the same, either direction; `overlapping`: the same, and the claim is
//!   that none is significant ("no significant difference", which is absence of evidence,
//!   never a tie); `above` / `below`: the one-sample t-test of each quantity against
//!   `value`; `significant`: each Agarwal & Nenkova score's two-sided Wilcoxon
//!   signed-rank test over its cells (their own test), and `above` / `below` 0 the same
//!   test with the score's sign as its direction.
//! - `correlated`: the quantities are pairs `(x, y)` of one study and model (or family)
//!   each, for instance `id` and `decay-matched`; every seed of every pair is a point,
//!   and the test is Spearman's rank correlation over all the points with scipy's
//!   `spearmanr` t-test (`n - 2` degrees of freedom), either sign. Ranks, because ID and
//!   decay need not be related linearly; pooling runs of several studies asks whether a
//!   run's ID says anything about its decay across the settings, not within one.
//! - Why Welch: a study has 3 to 5 seeds. Every rank or permutation test on so few values
//!   has a floor on its p-value: with 3 seeds a side, the exact permutation test's
//!   smallest two-sided p is 2/20 = 0.1 (paired sign-flips: 2/8 = 0.25), so no such test
//!   can ever reject at 0.05, let alone after a correction. The t-test's p has no floor:
//!   it can reach any level when the seeds agree closely, at the price of assuming a
//!   seed's value is roughly normal about its model's mean, which suits a mean over many
//!   cells (a sum of many small per-cell effects). Welch's form does not assume equal
//!   variances: a model that collapses on some seeds spreads far more than one that does
//!   not. It is unpaired: two studies share no seeds' randomness, and within a study
//!   pairing by seed would only add power, not validity.
//! - A claim with several comparisons states all of them, so its p-value is the largest
//!   of theirs (an intersection-union test, exact without a correction inside the
//!   claim) when all go the stated way; when any goes against it, the claim is tested for
//!   contradiction with Bonferroni's bound over its comparisons. `robust` combines the
//!   three definitions the same way.
//! - Holm's step-down correction over the claims of each family (`family`, default
//!   `paper`) holds the chance of any false finding in the family to `level`, whatever the
//!   dependence between claims. A claim's outcome is `holds` (adjusted p under `level`,
//!   stated direction), `contradicted` (significant the other way), or `inconclusive`;
//!   one significant before the correction but not after is reported so.
//!
//! # Verdicts against a seed paper
//!
//! `seed_paper` names a reproduced paper's claim, `seed_data` the data it was measured on,
//! `agrees` whether this claim, holding, says the same. The verdict is `not comparable`
//! unless every data source of the claim's studies (from their runs' provenance) is of a
//! kind of the seed's data (`[kinds]`); otherwise `agrees`, `contradicts` (the opposite of
//! the seed's statement holds), or `inconclusive` (no significant result: an overlap of
//! seed ranges is never a contradiction).

mod decide;
mod file;
mod outcome;
mod values;

pub use decide::{ClaimTest, Comparison, all_of, combine, test};
pub use file::{
    CLAIMS, Check, Claim, ClaimsFile, DEFAULT_FAMILY, DEFAULT_LEVEL, Form, Quantity, Stat, read,
};
pub use outcome::{
    ClaimOutcome, Outcome, SeedVerdict, Verdict, evaluate, p_value, require, stated,
};
pub use values::{Value, data_sources, value};
