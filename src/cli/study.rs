//! `drift study`: plan a studies file's work and run it, locally or on Slurm.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::output::{errln, out, outln};
use crate::study::{self, Rerun, Setup, StudyPlan, local, slurm};
use crate::{Error, Result};

/// Where the items run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Executor {
    /// On this machine, `--jobs` at a time.
    #[default]
    Local,
    /// As Slurm job arrays, one per stage.
    Slurm,
}

/// Arguments of `drift study`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The studies file.
    #[arg(default_value = "report/studies.toml")]
    pub studies: PathBuf,
    /// Root of the artifact folders, as for `drift run`.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// The folder of the preset files (`<presets>/<name>.toml`) [default: the studies
    /// file's `presets`, else `presets`].
    #[arg(long)]
    pub presets: Option<PathBuf>,
    /// Print every item with its state and estimated cost, and run nothing.
    #[arg(long, conflicts_with = "status")]
    pub plan: bool,
    /// Print every item's state from the disk and, for submitted items, from squeue.
    #[arg(long)]
    pub status: bool,
    /// Redo results that exist: `stale` ones (made for another preset or data, or
    /// damaged), or `all`. By default stale results are an error, never reused.
    #[arg(long, value_enum, default_value_t = Rerun::None)]
    pub rerun: Rerun,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = Executor::Local)]
    pub executor: Executor,
    /// Local: items at once.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Local: libtorch threads of each item (results are bit-identical only for the
    /// same count). On Slurm each task uses `--cpus`.
    #[arg(long, default_value_t = 1)]
    pub threads: u32,
    /// Local: the device of every run (`cpu`, `auto`, `cuda`, `cuda:N`). On Slurm, `cuda`
    /// with `--gpus`, else `cpu`.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Slurm: `--partition`.
    #[arg(long)]
    pub partition: Option<String>,
    /// Slurm: `--time` of each task, e.g. `2:00:00`.
    #[arg(long)]
    pub time: Option<String>,
    /// Slurm: CPUs per task, which is also its libtorch thread count.
    #[arg(long, default_value_t = 1)]
    pub cpus: u32,
    /// Slurm: `--mem` of each task, e.g. `8G`.
    #[arg(long)]
    pub mem: Option<String>,
    /// Slurm: GPUs per task.
    #[arg(long, default_value_t = 0)]
    pub gpus: u32,
    /// Slurm: at most this many tasks of an array at once (`--array=...%N`).
    #[arg(long)]
    pub max_parallel: Option<u32>,
    /// Run and write nothing; print what would run: with Slurm, the scripts, their plan
    /// files and the `sbatch` lines that submit them; here, the items (as `--plan`).
    #[arg(long)]
    pub dry_run: bool,
    /// Leave the paper out of the plan.
    #[arg(long)]
    pub no_report: bool,
    /// The paper item rewrites `checksums/` (`build-report --update`) instead of checking
    /// against it.
    #[arg(long)]
    pub update_report: bool,
    /// No progress bars.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `drift study`.
pub fn run(args: Args) -> Result<ExitCode> {
    // A relative results folder belongs to this tree; a symbolic link must not take the
    // runs elsewhere (an absolute --out is the user's explicit choice).
    if args.out.is_relative() {
        crate::files::inside(std::path::Path::new("."), &args.out)?;
    }
    let setup = Setup {
        report: cfg!(feature = "paper")
            && !args.no_report
            && study::is_the_papers(&args.studies, &args.out),
        studies: args.studies.clone(),
        presets: match &args.presets {
            Some(dir) => dir.clone(),
            None => crate::report::study::read_studies(&args.studies)?
                .presets
                .unwrap_or_else(|| PathBuf::from("presets")),
        },
        out: args.out.clone(),
        update_report: args.update_report,
    };
    let plan = StudyPlan::new(&setup)?;
    if args.status {
        return status(&plan);
    }
    if args.plan {
        // A listing never fails on stale items: it is how one finds them.
        let selected = plan
            .selected(args.rerun)
            .or_else(|_| plan.selected(Rerun::Stale))?;
        out!("{}", plan.describe(&selected))?;
        return Ok(ExitCode::SUCCESS);
    }
    let selected = plan.selected(args.rerun)?;
    if args.dry_run && args.executor == Executor::Local {
        // What this machine would run: nothing runs, nothing is cleared or locked.
        out!("{}", plan.describe(&selected))?;
        return Ok(ExitCode::SUCCESS);
    }
    // A dry run writes nothing, not even the lock.
    let _lock = (!args.dry_run)
        .then(|| study::lock(&args.out))
        .transpose()?;
    let drift = std::env::current_exe().map_err(|e| Error::io(std::path::Path::new("drift"), e))?;
    match args.executor {
        Executor::Local => run_local(&plan, &selected, args, drift),
        Executor::Slurm => run_slurm(&plan, &selected, args, drift),
    }
}

/// Runs the `selected` items here, `--jobs` at a time.
fn run_local(plan: &StudyPlan, selected: &[usize], args: Args, drift: PathBuf) -> Result<ExitCode> {
    if selected.is_empty() {
        outln!("drift study: all {} items done", plan.items.len())?;
        return Ok(ExitCode::SUCCESS);
    }
    plan.clear(selected, args.rerun)?;
    let options = local::LocalOptions {
        jobs: args.jobs,
        threads: args.threads,
        device: args.device,
        progress: !args.quiet && std::io::stderr().is_terminal(),
        drift,
    };
    errln!(
        "drift study: {} of {} items to run, {} at a time",
        selected.len(),
        plan.items.len(),
        options.jobs.max(1)
    );
    let outcome = local::execute(plan, selected, &options)?;
    outln!(
        "drift study: {} done, {} failed, {} not run",
        outcome.done.len(),
        outcome.failed.len(),
        outcome.skipped.len()
    )?;
    for (id, how) in &outcome.failed {
        outln!("failed  {id}: {how}")?;
    }
    Ok(if outcome.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Submits the `selected` items as Slurm job arrays, or with `--dry-run` prints the
/// scripts and the lines that would submit them.
fn run_slurm(plan: &StudyPlan, selected: &[usize], args: Args, drift: PathBuf) -> Result<ExitCode> {
    let options = slurm::SlurmOptions {
        partition: args.partition,
        time: args.time,
        cpus: args.cpus,
        mem: args.mem,
        gpus: args.gpus,
        max_parallel: args.max_parallel,
        drift,
    };
    if args.dry_run {
        let n = slurm::read_jobs(plan)?.submissions.len() + 1;
        let scripts = slurm::scripts(plan, selected, &options, n)?;
        for s in &scripts {
            outln!("# {}\n{}", s.path.display(), s.text)?;
            outln!("# {}\n{}", s.tasks_path.display(), s.tasks)?;
        }
        if !scripts.is_empty() {
            outln!(
                "# The submission, each stage after the ones before it (to submit by \
                 hand, save the files above at their paths, then run these lines):"
            )?;
            for line in slurm::submission_commands(plan, &scripts) {
                outln!("{line}")?;
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    plan.clear(selected, args.rerun)?;
    let jobs = slurm::submit(plan, selected, &options)?;
    if jobs.is_empty() {
        outln!("drift study: nothing to submit (every item is done, queued or running)")?;
    }
    for job in &jobs {
        outln!(
            "submitted {} job {} ({} task(s))",
            job.stage.name(),
            job.id,
            job.items.len()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn status(plan: &StudyPlan) -> Result<ExitCode> {
    let states = slurm::status(plan)?;
    let width = plan.items.iter().map(|i| i.id.len()).max().unwrap_or(0);
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for (item, (state, detail)) in plan.items.iter().zip(&states) {
        outln!("{:<width$}  {state:<7}  {detail}", item.id)?;
        *counts.entry(state.as_str()).or_default() += 1;
    }
    let tally: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    outln!("{} items: {}", plan.items.len(), tally.join(", "))?;
    Ok(ExitCode::SUCCESS)
}
