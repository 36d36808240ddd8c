//! The local executor: runs a plan's selected items on this machine, up to `jobs` at
//! once, each as its own `drift` process with its own libtorch thread count, an item only
//! after every item it needs has finished.
//!
//! Processes, not threads: libtorch's thread count is per process, and a process that
//! ends takes its memory with it. Each child is tied to this process
//! (`PR_SET_PDEATHSIG`), so a killed `drift study` leaves no orphan holding a run's lock;
//! every finished item is valid and the rest resume when the study is started again.
//! Each item's output goes to `<out>/.study/logs/<item>.log`; a failed item is recorded
//! in `<out>/.study/failed.json` (shown by `drift study --plan`) and the items after it
//! are not run.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::disk_state::cutoffs_done;
use super::failures::{failures, write_failures};
use super::item::{Item, State, Work};
use super::plan::StudyPlan;
use super::timings::seconds;
use crate::output::errln;
use crate::{Error, Result};

/// How to run the items.
#[derive(Clone, Debug)]
pub struct LocalOptions {
    /// Items at once.
    pub jobs: usize,
    /// libtorch threads of each item.
    pub threads: u32,
    /// `--device` of each run.
    pub device: String,
    /// Draw progress bars (else one line per finished item).
    pub progress: bool,
    /// The `drift` binary the items run.
    pub drift: PathBuf,
}

/// What became of the selected items.
#[derive(Clone, Debug, Default)]
pub struct ExecutionOutcome {
    /// Finished.
    pub done: Vec<String>,
    /// Failed: (item, how).
    pub failed: Vec<(String, String)>,
    /// Not run because an item they need failed: (item, which).
    pub skipped: Vec<(String, String)>,
}

enum Status {
    Waiting,
    Running {
        child: Child,
        started: Instant,
        bar: ProgressBar,
    },
    Finished,
    Failed,
}

/// The log file of an item.
pub fn log_path(plan: &StudyPlan, id: &str) -> PathBuf {
    plan.state_dir()
        .join("logs")
        .join(format!("{}.log", id.replace('/', "__")))
}

/// Runs the `selected` items of `plan` (indices, in plan order).
pub fn execute(
    plan: &StudyPlan,
    selected: &[usize],
    options: &LocalOptions,
) -> Result<ExecutionOutcome> {
    let logs = plan.state_dir().join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| Error::io(&logs, e))?;
    let mut execution = Execution::new(plan, selected, options)?;
    let mut last_tick = Instant::now();
    loop {
        // Reading a run's cutoff records for its bar twice a second is plenty.
        let tick = options.progress && last_tick.elapsed() >= Duration::from_millis(500);
        if tick {
            last_tick = Instant::now();
        }
        execution.reap(tick)?;
        execution.skip_blocked();
        execution.start_ready()?;
        execution.show_time_left();
        if !execution.active() {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    execution.progress.overall.finish_and_clear();
    Ok(execution.outcome)
}

/// The progress display: one bar per running item above the overall one, or, without
/// bars, one line per finished item.
struct Progress {
    multi: MultiProgress,
    overall: ProgressBar,
    bars: bool,
}

impl Progress {
    fn new(items: usize, bars: bool) -> Progress {
        let multi = MultiProgress::with_draw_target(if bars {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        });
        let overall = multi.add(ProgressBar::new(items as u64));
        overall.set_style(
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} items, {elapsed} {msg}")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        overall.set_prefix("study");
        Progress {
            multi,
            overall,
            bars,
        }
    }

    /// Prints a line above the bars (or to stderr without them).
    fn say(&self, line: String) {
        if self.bars {
            self.multi.println(line).ok();
        } else {
            errln!("{line}");
        }
    }
}

/// One execution of a plan's selected items: where each stands, and what it came to.
struct Execution<'a> {
    plan: &'a StudyPlan,
    options: &'a LocalOptions,
    /// Items at once (at least one).
    jobs: usize,
    progress: Progress,
    /// How many items wait on each item ([`dependents`]).
    dependents: Vec<usize>,
    status: BTreeMap<usize, Status>,
    /// The failure records, rewritten whenever an item ends.
    failed: BTreeMap<String, String>,
    outcome: ExecutionOutcome,
}

impl<'a> Execution<'a> {
    fn new(
        plan: &'a StudyPlan,
        selected: &[usize],
        options: &'a LocalOptions,
    ) -> Result<Execution<'a>> {
        let progress = Progress::new(selected.len(), options.progress);
        let dependents = dependents(plan);
        let status = selected.iter().map(|&i| (i, Status::Waiting)).collect();
        let failed = failures(&plan.out)?;
        Ok(Execution {
            plan,
            options,
            jobs: options.jobs.max(1),
            progress,
            dependents,
            status,
            failed,
            outcome: ExecutionOutcome::default(),
        })
    }

    /// Collects the children that finished (moving each run's bar on a `tick`), records
    /// how each ended, and rewrites the failure records when any did.
    fn reap(&mut self, tick: bool) -> Result<()> {
        let Execution {
            plan,
            progress,
            status,
            failed,
            outcome,
            ..
        } = self;
        let mut changed = false;
        for (&i, s) in status.iter_mut() {
            let Status::Running {
                child,
                started,
                bar,
            } = s
            else {
                continue;
            };
            let item = &plan.items[i];
            if let Work::Run { dir, .. } = &item.work
                && tick
            {
                bar.set_position(cutoffs_done(dir) as u64);
            }
            let Some(exit) = child
                .try_wait()
                .map_err(|e| Error::io(Path::new(&item.id), e))?
            else {
                continue;
            };
            let took = started.elapsed().as_secs_f64();
            bar.finish_and_clear();
            progress.multi.remove(bar);
            progress.overall.inc(1);
            changed = true;
            if exit.success() {
                failed.remove(&item.id);
                outcome.done.push(item.id.clone());
                progress.say(format!("done    {} in {}", item.id, seconds(took)));
                *s = Status::Finished;
            } else {
                let log = log_path(plan, &item.id);
                let how = format!("{exit}: {}", last_line(&log));
                progress.say(format!(
                    "FAILED  {} after {}: {how} (log: {})",
                    item.id,
                    seconds(took),
                    log.display()
                ));
                failed.insert(item.id.clone(), how.clone());
                outcome.failed.push((item.id.clone(), how));
                *s = Status::Failed;
            }
        }
        if changed {
            write_failures(&plan.out, failed)?;
        }
        Ok(())
    }

    /// Marks as skipped the items that can no longer run: one they need failed or was
    /// skipped.
    fn skip_blocked(&mut self) {
        let plan = self.plan;
        let blocked: Vec<(usize, String)> = self
            .status
            .iter()
            .filter(|(_, s)| matches!(s, Status::Waiting))
            .filter_map(|(&i, _)| {
                plan.items[i]
                    .deps
                    .iter()
                    .find(|d| matches!(self.status.get(d), Some(Status::Failed)))
                    .map(|&d| (i, plan.items[d].id.clone()))
            })
            .collect();
        for (i, dep) in blocked {
            self.progress.say(format!(
                "skipped {} (needs {dep}, which failed)",
                plan.items[i].id
            ));
            self.outcome.skipped.push((plan.items[i].id.clone(), dep));
            self.progress.overall.inc(1);
            self.status.insert(i, Status::Failed);
        }
    }

    /// Starts the ready items, as many as free slots allow, in [`Execution::ready`]'s
    /// order.
    fn start_ready(&mut self) -> Result<()> {
        let running = self
            .status
            .values()
            .filter(|s| matches!(s, Status::Running { .. }))
            .count();
        let mut ready = self.ready();
        ready.truncate(self.jobs.saturating_sub(running));
        for i in ready {
            let item = &self.plan.items[i];
            let bar = self
                .progress
                .multi
                .insert_before(&self.progress.overall, item_bar(item));
            let child = spawn(self.plan, i, self.options)?;
            self.status.insert(
                i,
                Status::Running {
                    child,
                    started: Instant::now(),
                    bar,
                },
            );
        }
        Ok(())
    }

    /// The waiting items whose every dependency has finished (or was done before), in
    /// the order to start them.
    fn ready(&self) -> Vec<usize> {
        let plan = self.plan;
        let mut ready: Vec<usize> = self
            .status
            .iter()
            .filter(|(_, s)| matches!(s, Status::Waiting))
            .map(|(&i, _)| i)
            .filter(|&i| {
                plan.items[i].deps.iter().all(|d| match self.status.get(d) {
                    Some(s) => matches!(s, Status::Finished),
                    None => plan.items[*d].state == State::Done,
                })
            })
            .collect();
        // Items that others wait for first, then the longest (runs and caches before the
        // quick baselines, listing and maps when nothing was timed yet): a map waiting on
        // one run does not end up alone at the end, and short items fill the last gaps.
        ready.sort_by(|&a, &b| {
            let key = |i: usize| {
                let item = &plan.items[i];
                let long = matches!(
                    item.work,
                    Work::Run { .. } | Work::Detect { .. } | Work::Cache { .. }
                );
                (self.dependents[i], item.estimate.unwrap_or(0.0), long)
            };
            let (ka, kb) = (key(a), key(b));
            kb.0.cmp(&ka.0)
                .then(kb.1.total_cmp(&ka.1))
                .then(kb.2.cmp(&ka.2))
                .then(a.cmp(&b))
        });
        ready
    }

    /// The estimated time left, from the estimates of the items not yet finished.
    fn show_time_left(&self) {
        let left: Vec<f64> = self
            .status
            .iter()
            .filter(|(_, s)| matches!(s, Status::Waiting | Status::Running { .. }))
            .filter_map(|(&i, _)| self.plan.items[i].estimate)
            .collect();
        if !left.is_empty() {
            self.progress.overall.set_message(format!(
                "about {} left",
                seconds(left.iter().sum::<f64>() / self.jobs as f64)
            ));
        }
    }

    /// Whether any item is still waiting or running.
    fn active(&self) -> bool {
        self.status
            .values()
            .any(|s| matches!(s, Status::Waiting | Status::Running { .. }))
    }
}

/// How many items wait, directly or not, on each item.
fn dependents(plan: &StudyPlan) -> Vec<usize> {
    let n = plan.items.len();
    // Items come after their dependencies, so one pass from the end sees every
    // dependent of an item before the item.
    let mut below: Vec<std::collections::BTreeSet<usize>> = vec![Default::default(); n];
    for i in (0..n).rev() {
        let mine = below[i].clone();
        for &d in &plan.items[i].deps {
            below[d].insert(i);
            below[d].extend(mine.iter().copied());
        }
    }
    below.iter().map(|s| s.len()).collect()
}

fn item_bar(item: &Item) -> ProgressBar {
    let bar = match &item.work {
        Work::Run { cutoffs, .. } if *cutoffs > 0 => {
            let bar = ProgressBar::new(*cutoffs as u64);
            bar.set_style(
                ProgressStyle::with_template("  {prefix} [{bar:20}] {pos}/{len} cutoffs {elapsed}")
                    .expect("a valid template")
                    .progress_chars("=> "),
            );
            bar
        }
        _ => {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("  {prefix} {spinner} {elapsed}")
                    .expect("a valid template"),
            );
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        }
    };
    bar.set_prefix(item.id.clone());
    bar
}

fn spawn(plan: &StudyPlan, i: usize, options: &LocalOptions) -> Result<Child> {
    let item = &plan.items[i];
    let argv = item.command(
        &options.drift,
        &plan.out,
        &options.threads.to_string(),
        &options.device,
    );
    let log = log_path(plan, &item.id);
    let file = File::create(&log).map_err(|e| Error::io(&log, e))?;
    let err = file.try_clone().map_err(|e| Error::io(&log, e))?;
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .env("OMP_WAIT_POLICY", "passive");
    tie_to_parent(&mut command);
    command.spawn().map_err(|e| {
        Error::Invalid(format!(
            "{}: cannot start {}: {e}{}",
            item.id,
            argv[0],
            if matches!(item.work, Work::Report { .. }) {
                " (build it: cargo build --release --bin build-report)"
            } else {
                ""
            }
        ))
    })
}

/// The child gets SIGKILL when this process ends, however it ends.
#[cfg(target_os = "linux")]
fn tie_to_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: prctl, getppid and _exit are async-signal-safe and touch only the child.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died before the prctl took hold: nobody would kill this child.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn tie_to_parent(_: &mut Command) {}

/// The last non-empty line of a log, for the failure record.
fn last_line(log: &Path) -> String {
    std::fs::read_to_string(log)
        .ok()
        .and_then(|t| {
            t.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(str::to_string)
        })
        .unwrap_or_else(|| "no output".into())
}
