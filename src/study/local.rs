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

use super::{Plan, State, Work, failures, seconds, write_failures};
use crate::output::errln;
use crate::{Error, Result};

/// How to run the items.
#[derive(Clone, Debug)]
pub struct Options {
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
pub struct Outcome {
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
pub fn log_path(plan: &Plan, id: &str) -> PathBuf {
    plan.state_dir()
        .join("logs")
        .join(format!("{}.log", id.replace('/', "__")))
}

/// Runs the `selected` items of `plan` (indices, in plan order).
pub fn execute(plan: &Plan, selected: &[usize], options: &Options) -> Result<Outcome> {
    let jobs = options.jobs.max(1);
    let logs = plan.state_dir().join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| Error::io(&logs, e))?;
    let multi = MultiProgress::with_draw_target(if options.progress {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    });
    let overall = multi.add(ProgressBar::new(selected.len() as u64));
    overall.set_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} items, {elapsed} {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    overall.set_prefix("study");
    let dependents = dependents(plan);
    let mut status: BTreeMap<usize, Status> =
        selected.iter().map(|&i| (i, Status::Waiting)).collect();
    let mut failed = failures(&plan.out)?;
    let mut outcome = Outcome::default();
    let say = |line: String| {
        if options.progress {
            multi.println(line).ok();
        } else {
            errln!("{line}");
        }
    };
    let mut last_tick = Instant::now();
    loop {
        // Reading a run's cutoff records for its bar twice a second is plenty.
        let tick = options.progress && last_tick.elapsed() >= Duration::from_millis(500);
        if tick {
            last_tick = Instant::now();
        }
        // Finished children.
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
                bar.set_position(super::cutoffs_done(dir) as u64);
            }
            let Some(exit) = child
                .try_wait()
                .map_err(|e| Error::io(Path::new(&item.id), e))?
            else {
                continue;
            };
            let took = started.elapsed().as_secs_f64();
            bar.finish_and_clear();
            multi.remove(bar);
            overall.inc(1);
            changed = true;
            if exit.success() {
                failed.remove(&item.id);
                outcome.done.push(item.id.clone());
                say(format!("done    {} in {}", item.id, seconds(took)));
                *s = Status::Finished;
            } else {
                let log = log_path(plan, &item.id);
                let how = format!("{exit}: {}", last_line(&log));
                say(format!(
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
            write_failures(&plan.out, &failed)?;
        }
        // Items that can no longer run: one they need failed or was skipped.
        let blocked: Vec<(usize, String)> = status
            .iter()
            .filter(|(_, s)| matches!(s, Status::Waiting))
            .filter_map(|(&i, _)| {
                plan.items[i]
                    .deps
                    .iter()
                    .find(|d| matches!(status.get(d), Some(Status::Failed)))
                    .map(|&d| (i, plan.items[d].id.clone()))
            })
            .collect();
        for (i, dep) in blocked {
            say(format!(
                "skipped {} (needs {dep}, which failed)",
                plan.items[i].id
            ));
            outcome.skipped.push((plan.items[i].id.clone(), dep));
            overall.inc(1);
            status.insert(i, Status::Failed);
        }
        // Start what is ready.
        let running = status
            .values()
            .filter(|s| matches!(s, Status::Running { .. }))
            .count();
        let mut ready: Vec<usize> = status
            .iter()
            .filter(|(_, s)| matches!(s, Status::Waiting))
            .map(|(&i, _)| i)
            .filter(|&i| {
                plan.items[i].deps.iter().all(|d| match status.get(d) {
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
                let long = matches!(item.work, Work::Run { .. } | Work::Cache { .. });
                (dependents[i], item.estimate.unwrap_or(0.0), long)
            };
            let (ka, kb) = (key(a), key(b));
            kb.0.cmp(&ka.0)
                .then(kb.1.total_cmp(&ka.1))
                .then(kb.2.cmp(&ka.2))
                .then(a.cmp(&b))
        });
        ready.truncate(jobs.saturating_sub(running));
        for i in ready {
            let item = &plan.items[i];
            let bar = multi.insert_before(&overall, item_bar(item));
            let child = spawn(plan, i, options)?;
            status.insert(
                i,
                Status::Running {
                    child,
                    started: Instant::now(),
                    bar,
                },
            );
        }
        let left: Vec<f64> = status
            .iter()
            .filter(|(_, s)| matches!(s, Status::Waiting | Status::Running { .. }))
            .filter_map(|(&i, _)| plan.items[i].estimate)
            .collect();
        if !left.is_empty() {
            overall.set_message(format!(
                "about {} left",
                seconds(left.iter().sum::<f64>() / jobs as f64)
            ));
        }
        let active = status
            .values()
            .any(|s| matches!(s, Status::Waiting | Status::Running { .. }));
        if !active {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    overall.finish_and_clear();
    Ok(outcome)
}

/// How many items wait, directly or not, on each item.
fn dependents(plan: &Plan) -> Vec<usize> {
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

fn item_bar(item: &super::Item) -> ProgressBar {
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

fn spawn(plan: &Plan, i: usize, options: &Options) -> Result<Child> {
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
