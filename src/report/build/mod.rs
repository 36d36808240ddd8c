//! The build: the studies' artifacts in, every output (figures, tables, the filled Typst
//! sources, the PDF) out, each with the inputs it was made from, then compared with the
//! committed manifest.
//!
//! Every output's inputs are the artifact files it reads plus `src` (the SHA-256 of every
//! file under `src/`, `report/` templates and `Cargo.lock`): the code that renders an
//! output decides its bytes, so a code change is an input change, never mistaken for
//! non-determinism. An output whose inputs and file are unchanged is not rendered again
//! unless forced.

mod figure_jobs;

use std::collections::BTreeMap;
use std::path::Path;

use crate::analysis::ModelAnalysis;
use crate::artifacts::ModelRuns;
use crate::checksum::{Sums, sha256_hex};
use crate::files::write_atomic;
use crate::report::claims::Outcome;
use crate::report::manifest::{self, Inputs, Manifest};
use crate::report::study::Study;
use crate::report::{paper, tables};
use crate::{Error, Result};
pub use figure_jobs::figure_jobs;

/// Where the committed artifacts are, relative to the root.
pub const RESULTS: &str = "results";
/// The model listing (`drift models --params`), written by `scripts/make-results`.
pub const MODELS: &str = "results/models.txt";
/// The paper's template, and where its filled source and PDF go.
pub const PAPER_TEMPLATE: &str = "report/paper.typ";
/// The filled paper source.
pub const PAPER_SOURCE: &str = "report/build/paper.typ";
/// The PDF.
pub const PAPER_PDF: &str = "report/build/paper.pdf";
/// The study list.
pub const STUDIES: &str = "report/studies.toml";
/// The folders every output is written under (and nothing else is).
pub const OUTPUT_DIRS: [&str; 2] = ["figures", "report/build"];

/// One output: where it goes, what it is made from, and how to make it.
pub struct Job {
    /// Path relative to the root.
    pub path: String,
    /// Input path (or `src`) to SHA-256.
    pub inputs: Inputs,
    render: Box<dyn Fn() -> Result<Vec<u8>> + Send + Sync>,
}

impl Job {
    fn new(
        path: String,
        inputs: Inputs,
        render: impl Fn() -> Result<Vec<u8>> + Send + Sync + 'static,
    ) -> Self {
        Job {
            path,
            inputs,
            render: Box::new(render),
        }
    }

    /// Renders the output's bytes.
    pub fn render(&self) -> Result<Vec<u8>> {
        (self.render)().map_err(|e| Error::Invalid(format!("{}: {e}", self.path)))
    }
}

/// The SHA-256 of the code that renders outputs: every file under `src/` and `report/`
/// (templates and study list; not `report/build/`) and `Cargo.lock`, by sorted path.
pub fn code_hash(root: &Path) -> Result<String> {
    let mut listing = Sums::new();
    for dir in ["src", "report"] {
        if !root.join(dir).is_dir() {
            continue;
        }
        for entry in walkdir::WalkDir::new(root.join(dir)).sort_by_file_name() {
            let entry =
                entry.map_err(|e| Error::io(e.path().unwrap_or(root).to_path_buf(), e.into()))?;
            let rel = entry
                .path()
                .strip_prefix(root)
                .expect("walked under the root")
                .to_string_lossy()
                .replace('\\', "/");
            if !entry.file_type().is_file() || rel.starts_with("report/build/") {
                continue;
            }
            let bytes = std::fs::read(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
            listing.add(rel, &bytes);
        }
    }
    let lock = root.join("Cargo.lock");
    if lock.is_file() {
        let bytes = std::fs::read(&lock).map_err(|e| Error::io(&lock, e))?;
        listing.add("Cargo.lock", &bytes);
    }
    Ok(sha256_hex(listing.to_text().as_bytes()))
}

/// Every input of the build, hashed once: each study's files (artifacts and presets), the
/// model listing and the code ([`code_hash`]). Jobs take their inputs from here.
pub struct Hashed {
    studies: Vec<Inputs>,
    models: Inputs,
    code: String,
}

impl Hashed {
    /// Hashes the inputs of `studies` under `root`.
    pub fn new(root: &Path, studies: &[Study]) -> Result<Self> {
        Ok(Hashed {
            studies: studies
                .iter()
                .map(|s| manifest::hash_files(root, &s.inputs))
                .collect::<Result<_>>()?,
            models: manifest::hash_files(root, &[MODELS])?,
            code: code_hash(root)?,
        })
    }

    /// The SHA-256 of the code.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The inputs of an output made from the studies at `at` (their files and the code).
    pub fn of(&self, at: impl IntoIterator<Item = usize>) -> Inputs {
        let mut inputs = Inputs::new();
        for i in at {
            inputs.extend(self.studies[i].iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        inputs.insert("src".into(), self.code.clone());
        inputs
    }

    /// As [`Hashed::of`], plus the model listing.
    pub fn with_models(&self, at: impl IntoIterator<Item = usize>) -> Inputs {
        let mut inputs = self.of(at);
        inputs.extend(self.models.iter().map(|(k, v)| (k.clone(), v.clone())));
        inputs
    }

    /// Every input: all studies, the model listing and the code.
    pub fn all(&self) -> Inputs {
        self.with_models(0..self.studies.len())
    }
}

fn svg(text: Result<String>) -> Result<Vec<u8>> {
    text.map(String::into_bytes)
}

/// What a build did.
#[derive(Debug, Default)]
pub struct Built {
    /// The manifest of the outputs as built.
    pub manifest: Manifest,
    /// Outputs rendered this time.
    pub rendered: Vec<String>,
    /// Outputs kept because their inputs and file were unchanged.
    pub kept: Vec<String>,
    /// The committed bytes of each output rendered with other bytes, as they were on disk
    /// before it was written again (only when they matched the manifest), for
    /// [`super::explain`].
    pub previous: BTreeMap<String, Vec<u8>>,
}

/// Renders every job whose output is not fresh (or all, with `force`), in parallel, then
/// writes each file atomically in job order and adds it to `built`. Jobs of one call must
/// not read each other's files (the paper's PDF is a later call than the figures).
pub fn run_jobs(
    root: &Path,
    jobs: &[Job],
    committed: &Manifest,
    force: bool,
    built: &mut Built,
) -> Result<()> {
    use rayon::prelude::*;
    let mut todo = Vec::new();
    for job in jobs {
        if built.manifest.get(&job.path).is_some() {
            return Err(Error::Invalid(format!(
                "{}: two outputs share this path",
                job.path
            )));
        }
        if !force && committed.is_fresh(root, &job.path, &job.inputs)? {
            let entry = committed
                .get(&job.path)
                .expect("fresh outputs are in the manifest");
            built
                .manifest
                .add_hashed(&job.path, entry.sha256.clone(), job.inputs.clone())?;
            built.kept.push(job.path.clone());
        } else {
            todo.push(job);
        }
    }
    let rendered: Vec<Result<Vec<u8>>> = todo.par_iter().map(|job| job.render()).collect();
    for (job, bytes) in todo.into_iter().zip(rendered) {
        let bytes = bytes?;
        let path = root.join(&job.path);
        if let Some(entry) = committed.get(&job.path)
            && entry.sha256 != sha256_hex(&bytes)
            && let Ok(old) = std::fs::read(&path)
            && sha256_hex(&old) == entry.sha256
        {
            built.previous.insert(job.path.clone(), old);
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        write_atomic(&path, &bytes)?;
        built.manifest.add(&job.path, &bytes, job.inputs.clone())?;
        built.rendered.push(job.path.clone());
    }
    Ok(())
}

/// The table jobs: per study, every table of [`tables`] as Typst (for the paper) and CSV.
/// Tables are cheap, so they are computed here; the jobs only hand out the bytes.
pub fn table_jobs(
    root: &Path,
    studies: &[Study],
    hashed: &Hashed,
) -> Result<(Vec<Job>, serde_json::Value, Vec<Vec<String>>)> {
    let listing_path = root.join(MODELS);
    let listing_text =
        std::fs::read_to_string(&listing_path).map_err(|e| Error::io(&listing_path, e))?;
    let listing = tables::parse_models_listing(&listing_text)
        .map_err(|e| Error::Invalid(format!("{}: {e}", listing_path.display())))?;
    let mut jobs = Vec::new();
    let mut context = serde_json::Map::new();
    let mut html = Vec::new();
    for (at, study) in studies.iter().enumerate() {
        let name = &study.spec.name;
        let inputs = hashed.with_models([at]);
        let analysis = &study.analysis;
        let mut all = vec![
            tables::roster(&listing, analysis)?,
            tables::robustness(analysis)?,
        ];
        all.extend(tables::cutoff_tables(analysis)?);
        all.push(tables::family_table(analysis)?);
        all.push(tables::temporal_effects_table(analysis, &study.design)?);
        all.push(tables::wild_time_table(analysis)?);
        all.push(tables::retraining_table(analysis)?);
        all.push(tables::bootstrap_table(analysis)?);
        all.push(tables::collapsed_table(&study.runs)?);
        all.push(tables::health_table(&study.runs)?);
        all.push(tables::compute_table(&study.runs)?);
        html.push(super::site::tables_html(&all)?);
        let mut listed = Vec::new();
        for table in &all {
            let stem = format!("report/build/tables/{name}-{}", table.name);
            for (ext, text) in [
                ("typ", tables::to_typst(table)?),
                ("csv", tables::to_csv(table)?),
            ] {
                jobs.push(Job::new(
                    format!("{stem}.{ext}"),
                    inputs.clone(),
                    move || Ok(text.clone().into_bytes()),
                ));
            }
            // One row per checkpoint is too long for the paper: it is the CSV's.
            if table.name == "health" {
                continue;
            }
            listed.push(serde_json::json!({
                "name": table.name,
                "what": table_what(&table.name),
                "caption": table.caption,
                "path": format!("/{stem}.typ"),
            }));
        }
        context.insert(name.clone(), serde_json::Value::Array(listed));
    }
    Ok((jobs, serde_json::Value::Object(context), html))
}

/// The gallery's pages ([`super::site`]): the index, made from every study's inputs, and
/// one page per study, made from its own; `tables` holds each study's tables as HTML.
pub fn site_jobs(studies: &[Study], tables: Vec<Vec<String>>, hashed: &Hashed) -> Vec<Job> {
    let studies = std::sync::Arc::new(studies.to_vec());
    let mut jobs = Vec::new();
    for (at, (study, tables)) in studies.iter().zip(tables).enumerate() {
        let pages = std::sync::Arc::clone(&studies);
        jobs.push(Job::new(
            format!(
                "{}/{}",
                super::site::DIR,
                super::site::study_file(&study.spec.name)
            ),
            hashed.with_models([at]),
            move || Ok(super::site::study_page(&pages, at, &tables).into_bytes()),
        ));
    }
    let pages = std::sync::Arc::clone(&studies);
    jobs.push(Job::new(
        format!("{}/index.html", super::site::DIR),
        hashed.all(),
        move || Ok(super::site::index_page(&pages).into_bytes()),
    ));
    jobs
}

/// The paper-wide tables, as Typst and CSV under `report/build/tables/`: the
/// hyperparameters of every preset, one side-by-side table per group of studies, and the
/// claims. Each is made from the inputs of the studies it reads.
pub fn paper_table_jobs(
    studies: &[Study],
    outcomes: &[Outcome],
    hashed: &Hashed,
) -> Result<Vec<Job>> {
    let every = || hashed.of(0..studies.len());
    let mut presets: Vec<&crate::preset::LoadedPreset> = Vec::new();
    for p in studies.iter().flat_map(|s| &s.presets) {
        if !presets.iter().any(|q| q.path == p.path) {
            presets.push(p);
        }
    }
    let mut tables = vec![(tables::claims_table(outcomes)?, every())];
    for table in tables::hyperparameters(&presets)? {
        tables.push((table, every()));
    }
    tables.push((tables::data_table(&presets)?, every()));
    for group in groups(studies) {
        let members = group_members(studies, &group);
        let named: Vec<(&str, &crate::analysis::StudyAnalysis)> = members
            .iter()
            .map(|s| (s.spec.name.as_str(), &s.analysis))
            .collect();
        let at = studies
            .iter()
            .enumerate()
            .filter(|(_, s)| s.spec.group.as_deref() == Some(group.as_str()))
            .map(|(i, _)| i);
        tables.push((tables::group_table(&group, &named)?, hashed.of(at)));
    }
    let mut jobs = Vec::new();
    for (table, inputs) in tables {
        for (ext, text) in [
            ("typ", tables::to_typst(&table)?),
            ("csv", tables::to_csv(&table)?),
        ] {
            jobs.push(Job::new(
                format!("report/build/tables/{}.{ext}", table.name),
                inputs.clone(),
                move || Ok(text.clone().into_bytes()),
            ));
        }
    }
    Ok(jobs)
}

/// What the paper's reproducibility section and last page print, from the proof the PDF
/// attaches: the commits the runs were made at (with whether the tree was clean), every
/// preset's data identity, and the SHA-256 of the proved outputs' manifest
/// ([`super::proof`]), which `sha256sum report/build/proof/SHA256SUMS` prints.
pub fn provenance_context(proof: &super::proof::Provenance) -> serde_json::Value {
    let mut data: Vec<serde_json::Value> = Vec::new();
    for preset in proof.studies.iter().flat_map(|s| &s.presets) {
        let entry = serde_json::json!({
            "preset": preset.name,
            "name": preset.data.name,
            "version": preset.data.version,
            "sha256": preset.data.sha256,
        });
        if !data.contains(&entry) {
            data.push(entry);
        }
    }
    serde_json::json!({
        "commits": proof.commits,
        "data": data,
        "outputs_sha256": proof.manifest_sha256,
        "outputs": proof.outputs,
        "code_sha256": proof.code_sha256,
    })
}

/// The groups of the studies (`group` in `report/studies.toml`), sorted.
fn groups(studies: &[Study]) -> Vec<String> {
    let mut groups: Vec<String> = studies
        .iter()
        .filter_map(|s| s.spec.group.clone())
        .collect();
    groups.sort();
    groups.dedup();
    groups
}

/// The studies of `group`, in study order.
fn group_members<'a>(studies: &'a [Study], group: &str) -> Vec<&'a Study> {
    studies
        .iter()
        .filter(|s| s.spec.group.as_deref() == Some(group))
        .collect()
}

/// A figure as the paper places it: its path (from the report root) and its printed
/// width in points, read from the rendered SVG ([`crate::report::figures::printed_width`]).
fn placed(root: &Path, path: &str) -> Result<serde_json::Value> {
    let file = root.join(path.trim_start_matches('/'));
    let svg = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
    let width = crate::report::figures::printed_width(&svg)
        .map_err(|e| Error::Invalid(format!("{}: {e}", file.display())))?;
    Ok(serde_json::json!({"path": path, "width": (width * 10.0).round() / 10.0}))
}

/// The claims as the paper's text quotes them: by name, the sentence, and each value on
/// the display scale.
fn claims_context(outcomes: &[Outcome]) -> serde_json::Value {
    let map: serde_json::Map<String, serde_json::Value> = outcomes
        .iter()
        .map(|o| {
            let values: Vec<serde_json::Value> = o
                .values
                .iter()
                .zip(&o.claim.quantities)
                .map(|(v, q)| {
                    serde_json::json!({
                        "label": v.label,
                        "value": v.shown,
                        "p": v.p_value,
                        "study": q.study,
                        "model": q.model,
                        "family": q.family,
                    })
                })
                .collect();
            (
                o.claim.name.clone(),
                serde_json::json!({
                    "says": o.claim.says,
                    // The bound of `above` / `below`, on the display scale of the first
                    // quantity's study.
                    "bound": o.claim.value.zip(o.values.first()).map(|(b, v)| b * v.scale),
                    "holds": o.holds,
                    "values": values,
                    "seed_paper": o.claim.seed_paper,
                    "agrees": o.claim.agrees,
                }),
            )
        })
        .collect();
    serde_json::Value::Object(map)
}

/// What a study's table holds, in a few words, for the sentence that references it.
fn table_what(name: &str) -> String {
    match name {
        "roster" => "the models and their parameters".into(),
        "robustness" => "ID, future and decay with their seed ranges".into(),
        "families" => "the family averages".into(),
        "temporal-effects" => "the Agarwal and Nenkova scores".into(),
        "wild-time" => "Wild-Time's Eval-Fix and Eval-Stream".into(),
        "retraining" => "the retraining policies".into(),
        "bootstrap" => "bootstrap intervals".into(),
        "collapsed" => "the collapsed checkpoints".into(),
        "compute" => "the compute".into(),
        other => match other.strip_prefix("cutoff-") {
            Some(n) => format!("the ranking at spread cutoff {n}"),
            None => other.replace('-', " "),
        },
    }
}

/// The numbers the paper's text quotes, per study, read from its analyses, and the
/// claims.
pub fn paper_context(
    root: &Path,
    studies: &[Study],
    tables: &serde_json::Value,
    outcomes: &[Outcome],
) -> Result<serde_json::Value> {
    let mut out = Vec::new();
    for study in studies {
        let a = &study.analysis;
        let metric = a.metric;
        let c = a.cohort_overall;
        let (best, steady) = (&a.by_future, &a.by_decay);
        let name = &study.spec.name;
        let figure = |file: &str| placed(root, &format!("/figures/{name}/{file}.svg"));
        // The text quotes values on the tables' scale (×100 for metrics in [0, 1]).
        let scale = metric.display_scale();
        let scaled = |v: Option<f64>| v.map(|v| v * scale);
        let unit = metric.display_unit();
        let saliency_figure = match &study.saliency {
            Some(_) => Some(figure("saliency")?),
            None => None,
        };
        let saliency = study.saliency.as_ref().map(|m| {
            serde_json::json!({
                "figure": saliency_figure,
                "models": m.rows,
                "columns": m.columns,
                "seeds_min": m.seeds.0,
                "seeds_max": m.seeds.1,
                "images_min": m.images.0,
                "images_max": m.images.1,
                "blind": m.blind,
            })
        });
        let trained: Vec<&ModelAnalysis> = a.models.iter().filter(|m| !m.baseline).collect();
        let baseline = a.models.iter().find(|m| m.baseline);
        let health = health_counts(&study.runs);
        // The leader and the runner-up by future score, and whether the seeds or the
        // bootstrap separate them.
        // The text compares trained models; the baseline's place is in the tables.
        let place = |ranking: &[crate::analysis::Ranked],
                     n: usize,
                     pick: crate::analysis::PickSpread| {
            let trained: Vec<&ModelAnalysis> = ranking
                .iter()
                .filter_map(|r| a.model(&r.model))
                .filter(|m| !m.baseline)
                .collect();
            let value =
                |m: &ModelAnalysis| ranking.iter().find(|r| r.model == m.model).map(|r| r.value);
            trained.get(n).map(|m| {
                // Tied with the next trained model: their seed ranges overlap.
                let tied = trained.get(n + 1).is_some_and(|next| {
                    pick(&m.spread)
                        .zip(pick(&next.spread))
                        .is_some_and(|(x, y)| x.overlaps(&y))
                });
                serde_json::json!({
                    "model": m.model,
                    "value": scaled(value(m)),
                    "tied_with_next": tied,
                })
            })
        };
        let runner_up_vs_best = best
            .iter()
            .filter_map(|r| a.model(&r.model))
            .filter(|m| !m.baseline)
            .nth(1)
            .and_then(|m| m.bootstrap.future_vs_best)
            .map(|i| {
                serde_json::json!({
                    "low": i.low * scale,
                    "high": i.high * scale,
                    "excludes_zero": i.excludes_zero(),
                })
            });
        let margins: Vec<serde_json::Value> = trained
            .iter()
            .map(|m| {
                serde_json::json!({
                    "model": m.model,
                    "future": scaled(m.margin.and_then(|r| r.future)),
                })
            })
            .collect();
        let below_baseline: Vec<String> = trained
            .iter()
            .filter(|m| m.margin.and_then(|r| r.future).is_some_and(|v| v <= 0.0))
            .map(|m| m.model.clone())
            .collect();
        out.push(serde_json::json!({
            "name": name,
            "title": study.spec.title,
            "metric": metric.name(),
            "models": trained.iter().map(|m| m.model.clone()).collect::<Vec<_>>(),
            // Every model of the figures, the baseline included, in figure order.
            "models_all": a.models.iter().map(|m| m.model.clone()).collect::<Vec<_>>(),
            "seeds": trained.first().map_or(0, |m| m.seeds.len()),
            "baseline": baseline.map(|b| serde_json::json!({
                "model": b.model,
                "id": scaled(b.overall.id),
                "future": scaled(b.overall.future),
                // A constant score under an AUC: 0.5 in every cell.
                "constant_score": metric == crate::metrics::Metric::MacroAuc,
            })),
            "margin_min": scaled(trained.iter().filter_map(|m| m.margin.and_then(|r| r.future)).reduce(f64::min)),
            "margin_max": scaled(trained.iter().filter_map(|m| m.margin.and_then(|r| r.future)).reduce(f64::max)),
            "margins": margins,
            "below_baseline": below_baseline,
            "health": health,
            "health_csv": format!("report/build/tables/{name}-health.csv"),
            "collapsed_excluded": study.spec.collapsed == crate::report::study::Collapsed::Exclude,
            "first_place": place(best, 0, |s| s.future),
            "second_place": place(best, 1, |s| s.future),
            "first_steady": place(steady, 0, |s| s.decay),
            "second_steady": place(steady, 1, |s| s.decay),
            "runner_up_vs_best": runner_up_vs_best,
            "slices": a.slices.len(),
            "first_slice": a.slices.first(),
            "last_slice": a.slices.last(),
            "unit": unit,
            "cohort_id": scaled(c.id),
            "cohort_future": scaled(c.future),
            "cohort_decay": scaled(c.decay),
            "raw": a.models.iter().map(|m| figure(&format!("{}-raw", m.model))).collect::<Result<Vec<_>>>()?,
            "deviation": a.models.iter().map(|m| figure(&format!("{}-deviation", m.model))).collect::<Result<Vec<_>>>()?,
            "cohort_mean": figure("cohort-mean")?,
            "forgetting_models": figure("forgetting-models")?,
            "forgetting_families": figure("forgetting-families")?,
            "ranking_future": figure("ranking-future")?,
            "ranking_decay": figure("ranking-decay")?,
            "temporal_effects": figure("temporal-effects")?,
            "group": study.spec.group,
            "agarwal_nenkova_design": study.design.is_agarwal_nenkova(),
            "design": study.design.describe(),
            "retraining": figure("retraining")?,
            "retraining_drops": if scale == 100.0 {
                "1, 2, 5 or 10 points"
            } else {
                "1%, 2%, 5% or 10% of the mean ID score"
            },
            "saliency": saliency,
            "tables": tables.get(name.as_str()).cloned().unwrap_or_default(),
        }));
    }
    let by_name: serde_json::Map<String, serde_json::Value> = out
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or_default().to_string(),
                s.clone(),
            )
        })
        .collect();
    let mut group_map = serde_json::Map::new();
    for group in groups(studies) {
        let in_group = group_members(studies, &group);
        let members: Vec<&str> = in_group.iter().map(|s| s.spec.name.as_str()).collect();
        // Health and the baseline margins over every study of the group.
        let (mut checkpoints, mut collapsed) = (0, 0);
        for s in &in_group {
            let h = health_counts(&s.runs);
            checkpoints += h["checkpoints"].as_u64().unwrap_or(0);
            collapsed += h["collapsed"].as_u64().unwrap_or(0);
        }
        let margins: Vec<f64> = in_group
            .iter()
            .flat_map(|s| {
                let scale = s.analysis.metric.display_scale();
                s.analysis
                    .models
                    .iter()
                    .filter(|m| !m.baseline)
                    .filter_map(move |m| m.margin.and_then(|r| r.id).map(|v| v * scale))
            })
            .collect();
        group_map.insert(
            group.clone(),
            serde_json::json!({
                "studies": members,
                "checkpoints": checkpoints,
                "collapsed": collapsed,
                "collapsed_percent": if checkpoints > 0 { 100.0 * collapsed as f64 / checkpoints as f64 } else { 0.0 },
                "margin_id_min": margins.iter().copied().reduce(f64::min),
                "margin_id_max": margins.iter().copied().reduce(f64::max),
                "cohort_means": placed(root, &format!("/figures/cohort-means-{group}.svg"))?,
                "table": format!("/report/build/tables/group-{group}.typ"),
            }),
        );
    }
    Ok(serde_json::json!({
        "studies": out,
        "study": by_name,
        "groups": group_map,
        "claims": claims_context(outcomes),
        // The claims that test one of the seed paper's, in file order.
        "seed_paper_claims": outcomes
            .iter()
            .filter(|o| o.claim.seed_paper.is_some())
            .map(|o| serde_json::json!({
                "name": o.claim.name,
                "seed_paper": o.claim.seed_paper,
                "says": o.claim.says,
                "agrees": o.claim.agrees,
            }))
            .collect::<Vec<_>>(),
        "claims_table": "/report/build/tables/claims.typ",
        "presets_table": "/report/build/tables/presets.typ",
        "training_table": "/report/build/tables/training.typ",
        "data_table": "/report/build/tables/data.typ",
    }))
}

/// What the paper says about checkpoint health: trained checkpoints (cutoffs of every
/// model's every seed, baselines left out), how many collapsed, the runs with at least one
/// collapsed cutoff, the filled cells those rows hold, and whether every run recorded
/// its health.
fn health_counts(runs: &[ModelRuns]) -> serde_json::Value {
    let (mut checkpoints, mut collapsed, mut cells, mut runs_hit) = (0, 0, 0, 0);
    let trained = runs
        .iter()
        .filter(|r| crate::baseline::Baseline::from_key(&r.model).is_none());
    let mut recorded = true;
    for r in trained {
        recorded &= r.has_health();
        for (health, grid) in r.health.iter().zip(r.matrix.grids()) {
            let Some(health) = health else { continue };
            checkpoints += health.len();
            let hit: Vec<usize> = (0..health.len()).filter(|&i| health[i].collapsed).collect();
            collapsed += hit.len();
            runs_hit += usize::from(!hit.is_empty());
            cells += grid.filled().filter(|(i, _, _)| hit.contains(i)).count();
        }
    }
    serde_json::json!({
        "recorded": recorded,
        "checkpoints": checkpoints,
        "collapsed": collapsed,
        "runs": runs_hit,
        "cells": cells,
    })
}

/// The jobs that write the proof files ([`super::proof`]), made from the same inputs as
/// the paper.
pub fn proof_jobs(proof: super::proof::ProofFiles, inputs: &Inputs) -> Vec<Job> {
    proof
        .files
        .into_iter()
        .map(|(path, bytes)| Job::new(path.into(), inputs.clone(), move || Ok(bytes.clone())))
        .collect()
}

/// The paper jobs: the filled Typst source, then its PDF (compiled from the files on disk,
/// so it runs after every figure and table job).
pub fn paper_jobs(root: &Path, context: serde_json::Value, inputs: Inputs) -> Result<Vec<Job>> {
    let template_path = root.join(PAPER_TEMPLATE);
    let template =
        std::fs::read_to_string(&template_path).map_err(|e| Error::io(&template_path, e))?;
    // The template's partials: every other `report/paper-*.typ`, included by path.
    let mut partials = Vec::new();
    let dir = root.join("report");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| Error::io(&dir, e))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("paper-") && n.ends_with(".typ"))
        .collect();
    names.sort();
    for n in names {
        let path = dir.join(&n);
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        partials.push((format!("report/{n}"), text));
    }
    let source = paper::render_with_partials(&template, PAPER_TEMPLATE, &context, &partials)?;
    let root_owned = root.to_path_buf();
    let ident = format!(
        "drift-paper-{}",
        &inputs.get("src").cloned().unwrap_or_default()
    );
    Ok(vec![
        Job::new(PAPER_SOURCE.into(), inputs.clone(), move || {
            Ok(source.clone().into_bytes())
        }),
        Job::new(PAPER_PDF.into(), inputs, move || {
            let compiled = paper::compile_pdf(&root_owned, PAPER_SOURCE, &ident)?;
            if let Some(w) = compiled.warnings.first() {
                return Err(Error::Invalid(format!(
                    "the paper compiled with warnings: {w}"
                )));
            }
            Ok(compiled.pdf)
        }),
    ])
}
