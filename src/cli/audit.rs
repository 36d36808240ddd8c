//! `drift audit`: retrain a random sample of the paper's rows and certify what it shows.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::Result;

/// Arguments of `drift audit`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The studies file whose runs are audited.
    #[arg(default_value = "report/studies.toml")]
    pub studies: PathBuf,
    /// Root of the committed run folders.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// The folder of the preset files [default: the studies file's `presets`, else
    /// `presets`, in the repository of the studies file].
    #[arg(long)]
    pub presets: Option<PathBuf>,
    /// Rows to draw at random, stratified by study.
    #[arg(long, required_unless_present = "items", conflicts_with = "items")]
    pub sample: Option<usize>,
    /// The draw's seed [default: fresh entropy, recorded in the certificate].
    #[arg(long)]
    pub seed: Option<u64>,
    /// A fixed draw instead: `PRESET/MODEL/seed-N/CUTOFF`, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub items: Vec<String>,
    /// libtorch threads [default: each run's recorded count, which bit-identical rows
    /// need].
    #[arg(long)]
    pub threads: Option<u32>,
    /// Refuse a draw expected to take longer (minutes, from the runs' recorded times).
    #[arg(long, default_value_t = 60.0)]
    pub budget: f64,
    /// Print the draw and its expected time, and retrain nothing.
    #[arg(long)]
    pub plan: bool,
    /// Where the certificate is written.
    #[arg(long, default_value = "audit.json")]
    pub certificate: PathBuf,
    /// No progress bars.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `drift audit`.
#[cfg(feature = "torch")]
pub fn run(args: Args) -> Result<ExitCode> {
    use std::io::IsTerminal;

    use crate::audit::{self, Certificate, Draw, Population};
    use crate::output::{errln, outln};
    use crate::{Error, artifacts};

    // The studies file names its presets folder relative to its repository.
    let presets = match &args.presets {
        Some(dir) => dir.clone(),
        None => root_of(&args.studies).join(
            crate::report::study::read_studies(&args.studies)?
                .presets
                .unwrap_or_else(|| PathBuf::from("presets")),
        ),
    };
    let population = Population::read(&args.studies, &presets, &args.results)?;
    let (chosen, seed) = if args.items.is_empty() {
        let n = args.sample.expect("clap requires --sample without --items");
        let seed = match args.seed {
            Some(seed) => (seed, "--seed"),
            None => (fresh_seed(), "fresh entropy"),
        };
        (population.draw(n, seed.0)?, Some(seed))
    } else {
        (population.named(&args.items)?, None)
    };
    let expected = audit::estimate(&population, &chosen);
    if let Some(seconds) = expected.filter(|s| *s > args.budget * 60.0) {
        return Err(Error::Invalid(format!(
            "the draw of {} rows is expected to take {:.0} minutes (from the runs' recorded \
             times), over --budget {}: draw fewer or raise the budget",
            chosen.len(),
            seconds / 60.0,
            args.budget
        )));
    }
    let draw = Draw::new(&population, &chosen, seed);
    outln!(
        "drift audit: {} of {} rows{}; expected {}",
        chosen.len(),
        population.items.len(),
        match seed {
            Some((s, from)) => format!(", stratified by study, seed {s} ({from})"),
            None => " named by --items".into(),
        },
        expected.map_or("unknown time (a run has no timing.json)".into(), |s| {
            format!("{:.1} minutes", s / 60.0)
        })
    )?;
    if args.plan {
        for &c in &chosen {
            let item = &population.items[c];
            outln!(
                "{:<40} {}",
                item.id(),
                item.estimate
                    .map_or("-".into(), |s| format!("{:.1} min", s / 60.0))
            )?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let started = std::time::Instant::now();
    let progress = !args.quiet && std::io::stderr().is_terminal();
    let items = audit::execute(
        &population,
        &chosen,
        &args.results,
        args.threads,
        progress,
        |r| {
            outln!(
                "{:<16} {}  {:.1} s{}",
                r.result,
                r.item,
                r.wall_s,
                r.why
                    .as_deref()
                    .map_or(String::new(), |w| format!(" ({w})"))
            )
        },
    )?;
    let passed = items.iter().all(|r| r.result != "differs");
    let certificate = Certificate {
        schema: audit::SCHEMA,
        studies_file: args.studies.display().to_string(),
        manifest_sha256: audit::manifest_sha256(&root_of(&args.studies))?,
        drawn: draw,
        host: artifacts::host_kind(),
        threads: args.threads,
        fraction_caught: audit::fraction_caught(chosen.len()),
        passed,
        wall_s: started.elapsed().as_secs_f64(),
        items,
    };
    let json = serde_json::to_string_pretty(&certificate).expect("a certificate serialises") + "\n";
    crate::files::write_atomic(&args.certificate, json.as_bytes())?;
    let count = |result: &str| {
        certificate
            .items
            .iter()
            .filter(|r| r.result == result)
            .count()
    };
    outln!(
        "{} rows retrained in {:.1} minutes: {} identical, {} within tolerance ({}), {} \
         differ. If a fraction f of the {} rows were not what training gives, a draw \
         like this one misses them all with probability at most (1 - f)^{}: it catches \
         f >= {:.3} with 95% probability. Certificate: {}",
        certificate.items.len(),
        certificate.wall_s / 60.0,
        count("identical"),
        count("within-tolerance"),
        audit::TOLERANCE,
        count("differs"),
        population.items.len(),
        chosen.len(),
        certificate.fraction_caught,
        args.certificate.display()
    )?;
    if passed {
        return Ok(ExitCode::SUCCESS);
    }
    for r in certificate.items.iter().filter(|r| r.result == "differs") {
        errln!(
            "drift audit: {} differs from the committed row (largest cell difference {:e})",
            r.item,
            r.largest_difference
        );
    }
    Ok(ExitCode::FAILURE)
}

/// Runs `drift audit`.
#[cfg(not(feature = "torch"))]
pub fn run(_args: Args) -> Result<ExitCode> {
    Err(crate::Error::Invalid(
        "cannot retrain rows: this drift was built without libtorch; build it with \
         `eval \"$(scripts/libtorch-env)\" && cargo build --release --features torch`"
            .into(),
    ))
}

/// A seed from the operating system's entropy: std's `RandomState` is keyed from it, so
/// hashing nothing with a fresh one gives an unpredictable `u64` without another crate.
#[cfg(feature = "torch")]
fn fresh_seed() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(std::time::SystemTime::now())
}

/// The repository a studies file belongs to: the folder above `report/` (where the
/// manifest's `checksums/` is), else the file's own folder.
#[cfg(feature = "torch")]
fn root_of(studies: &std::path::Path) -> PathBuf {
    use std::path::Path;

    let folder = studies.parent().unwrap_or(Path::new("."));
    let folder = if folder.as_os_str().is_empty() {
        Path::new(".")
    } else {
        folder
    };
    match folder.file_name() {
        Some(name) if name == "report" => folder.parent().unwrap_or(Path::new(".")).to_path_buf(),
        _ => folder.to_path_buf(),
    }
}
