//! The Slurm executor: a plan's selected items as one job array per stage, each stage
//! `afterok` on the ones before it, submitted with `sbatch --parsable`.
//!
//! A submission writes, under `<out>/.study/slurm/submit-<n>/`, per stage a plan file
//! `<stage>.tasks` (line `k` is the command of array task `k`, so the script text stays
//! short) and a script `<k>-<stage>.sbatch` whose task reads its line and runs it: the
//! same `drift` command line the local executor runs, with `--threads
//! $SLURM_CPUS_PER_TASK`. The job ids and which item each task is are recorded in
//! `<out>/.study/slurm/jobs.json`. The state of an item comes from its output on disk,
//! then from `squeue` (no accounting database assumed): a resubmission submits only what
//! is neither done nor queued nor running.
//!
//! The CLI is wrapped rather than libslurm bound: the `slurm` crates bind a 2017 Slurm
//! and say themselves that they are unmaintained, and `sbatch`/`squeue` text is the
//! interface that stays stable across versions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::item::{Stage, State};
use super::plan::StudyPlan;
use crate::files::write_atomic;
use crate::{Error, Result};

/// What the jobs ask of Slurm.
#[derive(Clone, Debug, Default)]
pub struct SlurmOptions {
    /// `--partition`.
    pub partition: Option<String>,
    /// `--time` of each task.
    pub time: Option<String>,
    /// `--cpus-per-task`, which is also each task's libtorch thread count.
    pub cpus: u32,
    /// `--mem` of each task.
    pub mem: Option<String>,
    /// GPUs per task (`--gres=gpu:N`); the runs then use `--device cuda`.
    pub gpus: u32,
    /// The `%N` throttle of each array: at most N tasks at once.
    pub max_parallel: Option<u32>,
    /// The `drift` binary the tasks run (an absolute path the nodes can see).
    pub drift: PathBuf,
}

/// One submitted job array.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlurmJob {
    /// Its stage.
    pub stage: Stage,
    /// The job id `sbatch --parsable` printed.
    pub id: String,
    /// The item of each array task, by task index.
    pub items: Vec<String>,
    /// Its script.
    pub script: PathBuf,
}

/// `jobs.json`: every submission, oldest first.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Jobs {
    /// One list of jobs per submission.
    pub submissions: Vec<Vec<SlurmJob>>,
}

/// A task's state as `squeue` reports it.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskState {
    /// Waiting (the reason, e.g. `Dependency`).
    Pending(String),
    /// Running.
    Running,
    /// Ended with exit code 0.
    Completed,
    /// Ended otherwise (the Slurm state, e.g. `FAILED`, `TIMEOUT`).
    Failed(String),
    /// Cancelled (the reason; `DependencyNeverSatisfied` when a job it waited for failed).
    Cancelled(String),
}

/// One stage's script and plan file, before submission.
#[derive(Clone, Debug)]
pub struct Script {
    /// Its stage.
    pub stage: Stage,
    /// The script's path.
    pub path: PathBuf,
    /// The script.
    pub text: String,
    /// The plan file's path.
    pub tasks_path: PathBuf,
    /// The plan file: one command per line.
    pub tasks: String,
    /// The item of each task.
    pub items: Vec<usize>,
}

fn slurm_dir(plan: &StudyPlan) -> PathBuf {
    plan.state_dir().join("slurm")
}

/// Reads `jobs.json` (empty when there is none).
pub fn read_jobs(plan: &StudyPlan) -> Result<Jobs> {
    let path = slurm_dir(plan).join("jobs.json");
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| Error::Invalid(format!("{}: not a job record: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Jobs::default()),
        Err(e) => Err(Error::io(&path, e)),
    }
}

fn write_jobs(plan: &StudyPlan, jobs: &Jobs) -> Result<()> {
    let path = slurm_dir(plan).join("jobs.json");
    let text = serde_json::to_string_pretty(jobs).expect("jobs serialise") + "\n";
    write_atomic(&path, text.as_bytes())
}

/// Single-quotes a word for bash (hand-written: one rule, no dependency needed).
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Stands for `$SLURM_CPUS_PER_TASK` in a command until it is written out.
const THREADS: &str = "\u{0}threads";

/// The scripts of the `selected` items, for submission number `n`.
pub fn scripts(
    plan: &StudyPlan,
    selected: &[usize],
    options: &SlurmOptions,
    n: usize,
) -> Result<Vec<Script>> {
    let dir = slurm_dir(plan).join(format!("submit-{n}"));
    let cwd = std::env::current_dir().map_err(|e| Error::io(Path::new("."), e))?;
    let absolute = |p: &Path| {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            cwd.join(p)
        }
    };
    let device = if options.gpus > 0 { "cuda" } else { "cpu" };
    let mut out = Vec::new();
    for stage in Stage::ALL {
        let items: Vec<usize> = selected
            .iter()
            .copied()
            .filter(|&i| plan.items[i].stage == stage)
            .collect();
        if items.is_empty() {
            continue;
        }
        let tasks: String = items
            .iter()
            .map(|&i| {
                let argv = plan.items[i].command(&options.drift, &plan.out, THREADS, device);
                let words: Vec<String> = argv
                    .iter()
                    .map(|a| {
                        if a == THREADS {
                            "\"$SLURM_CPUS_PER_TASK\"".to_string()
                        } else {
                            quote(a)
                        }
                    })
                    .collect();
                words.join(" ") + "\n"
            })
            .collect();
        let k = out.len() + 1;
        let name = stage.name();
        let path = dir.join(format!("{k}-{name}.sbatch"));
        let tasks_path = dir.join(format!("{name}.tasks"));
        let throttle = options
            .max_parallel
            .map_or(String::new(), |m| format!("%{m}"));
        let mut head = vec![
            format!("--job-name=drift-{name}"),
            format!("--array=0-{}{throttle}", items.len() - 1),
            format!("--cpus-per-task={}", options.cpus.max(1)),
            format!("--chdir={}", quote(&cwd.display().to_string())),
            format!(
                "--output={}",
                quote(
                    &absolute(&dir)
                        .join(format!("{name}-%A_%a.log"))
                        .display()
                        .to_string()
                )
            ),
        ];
        if let Some(p) = &options.partition {
            head.push(format!("--partition={}", quote(p)));
        }
        if let Some(t) = &options.time {
            head.push(format!("--time={}", quote(t)));
        }
        if let Some(m) = &options.mem {
            head.push(format!("--mem={}", quote(m)));
        }
        if options.gpus > 0 {
            head.push(format!("--gres=gpu:{}", options.gpus));
        }
        let mut text = format!(
            "#!/bin/bash\n# drift study, stage {name}: {} task(s), task k runs line k+1 of {name}.tasks.\n",
            items.len()
        );
        for h in head {
            text += &format!("#SBATCH {h}\n");
        }
        text += &format!(
            "set -euo pipefail\n\
             export OMP_WAIT_POLICY=passive\n\
             task=\"$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" {})\"\n\
             echo \"drift study: task $SLURM_ARRAY_TASK_ID: $task\"\n\
             eval \"$task\"\n",
            quote(&absolute(&tasks_path).display().to_string())
        );
        out.push(Script {
            stage,
            path,
            text,
            tasks_path,
            tasks,
            items,
        });
    }
    Ok(out)
}

/// Submits the `selected` items that are not queued or running already, stage after
/// stage, and records the jobs. Returns the jobs of this submission (none when nothing
/// was left to submit).
pub fn submit(
    plan: &StudyPlan,
    selected: &[usize],
    options: &SlurmOptions,
) -> Result<Vec<SlurmJob>> {
    let mut jobs = read_jobs(plan)?;
    let states = task_states(&jobs)?;
    let before = jobs.clone();
    let live = |id: &str| {
        latest(&before, &states, id)
            .is_some_and(|(_, s)| matches!(s, TaskState::Pending(_) | TaskState::Running))
    };
    // The job of an older submission still holding item `id`.
    let holder = |id: &str| {
        live(id)
            .then(|| latest(&before, &states, id))
            .flatten()
            .map(|(job, _)| job.id.clone())
    };
    let todo: Vec<usize> = selected
        .iter()
        .copied()
        .filter(|&i| !live(&plan.items[i].id))
        .collect();
    if todo.is_empty() {
        return Ok(Vec::new());
    }
    let n = jobs.submissions.len() + 1;
    let scripts = scripts(plan, &todo, options, n)?;
    let dir = slurm_dir(plan).join(format!("submit-{n}"));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    jobs.submissions.push(Vec::new());
    let mut submitted: Vec<String> = Vec::new();
    for script in &scripts {
        write_atomic(&script.tasks_path, script.tasks.as_bytes())?;
        write_atomic(&script.path, script.text.as_bytes())?;
        let after = waits_for(plan, script, &submitted, holder);
        let job = SlurmJob {
            stage: script.stage,
            id: sbatch(&sbatch_command(&script.path, &after), &script.path)?,
            items: script
                .items
                .iter()
                .map(|&i| plan.items[i].id.clone())
                .collect(),
            script: script.path.clone(),
        };
        submitted.push(job.id.clone());
        jobs.submissions.last_mut().expect("pushed above").push(job);
        write_jobs(plan, &jobs)?;
    }
    Ok(jobs.submissions.pop().expect("pushed above"))
}

/// The jobs a stage's array waits for (`afterok`): this submission's `earlier` stages,
/// and the older jobs still holding an item it needs (`holder` names an item's live job,
/// if any).
fn waits_for(
    plan: &StudyPlan,
    script: &Script,
    earlier: &[String],
    holder: impl Fn(&str) -> Option<String>,
) -> Vec<String> {
    let mut after = earlier.to_vec();
    for &i in &script.items {
        for &d in &plan.items[i].deps {
            if let Some(job) = holder(&plan.items[d].id)
                && !after.contains(&job)
            {
                after.push(job);
            }
        }
    }
    after
}

/// The `sbatch` command line that submits `script` after the jobs `after` (their ids,
/// or in a dry run the shell variables that will hold them): the one home of what
/// [`submit`] runs and [`submission_commands`] prints.
fn sbatch_command(script: &Path, after: &[String]) -> Vec<String> {
    let mut argv = vec!["sbatch".to_string(), "--parsable".to_string()];
    if !after.is_empty() {
        argv.push(format!("--dependency=afterok:{}", after.join(":")));
        argv.push("--kill-on-invalid-dep=yes".to_string());
    }
    argv.push(script.display().to_string());
    argv
}

/// Runs an [`sbatch_command`] and returns the job id it printed.
fn sbatch(argv: &[String], script: &Path) -> Result<String> {
    let output = Command::new(&argv[0])
        .args(&argv[1..])
        .output()
        .map_err(|e| Error::Invalid(format!("cannot run sbatch: {e} (is Slurm installed?)")))?;
    if !output.status.success() {
        return Err(Error::Invalid(format!(
            "sbatch {} failed ({}): {}",
            script.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    // `--parsable` prints `id` or `id;cluster`.
    let printed = String::from_utf8_lossy(&output.stdout);
    let id = printed.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::Invalid(format!(
            "sbatch {} printed {printed:?}, not a job id",
            script.display()
        )));
    }
    Ok(id)
}

/// The shell lines that submit `scripts` by hand as [`submit`] would on a first
/// submission, each stage after the ones before it, the job ids not yet known kept in
/// shell variables: `JOB_1=$(sbatch --parsable …/1-runs.sbatch)`, then
/// `JOB_2=$(sbatch --parsable --dependency=afterok:$JOB_1 … …/2-saliency.sbatch)`.
pub fn submission_commands(plan: &StudyPlan, scripts: &[Script]) -> Vec<String> {
    let mut earlier: Vec<String> = Vec::new();
    let mut lines = Vec::new();
    for (k, script) in scripts.iter().enumerate() {
        let after = waits_for(plan, script, &earlier, |_| None);
        let words: Vec<String> = sbatch_command(&script.path, &after)
            .iter()
            .map(|w| {
                // Its ids are variables to expand: `$JOB_<k>` needs no quotes.
                if w.starts_with("--dependency=") {
                    w.clone()
                } else {
                    quote(w)
                }
            })
            .collect();
        let variable = format!("JOB_{}", k + 1);
        lines.push(format!("{variable}=$({})", words.join(" ")));
        earlier.push(format!("${variable}"));
    }
    lines
}

/// The newest job that holds item `id`, with the task's state (when squeue knows it).
fn latest<'a>(
    jobs: &'a Jobs,
    states: &'a BTreeMap<(String, usize), TaskState>,
    id: &str,
) -> Option<(&'a SlurmJob, &'a TaskState)> {
    for submission in jobs.submissions.iter().rev() {
        for job in submission {
            if let Some(k) = job.items.iter().position(|i| i == id) {
                return states.get(&(job.id.clone(), k)).map(|s| (job, s));
            }
        }
    }
    None
}

/// Every recorded task's state from `squeue -r -t all` (tasks Slurm has forgotten, after
/// `MinJobAge`, are absent).
fn task_states(jobs: &Jobs) -> Result<BTreeMap<(String, usize), TaskState>> {
    let ids: Vec<&str> = jobs
        .submissions
        .iter()
        .flatten()
        .map(|j| j.id.as_str())
        .collect();
    let mut states = BTreeMap::new();
    if ids.is_empty() {
        return Ok(states);
    }
    for id in ids {
        let output = Command::new("squeue")
            .args(["-h", "-r", "-t", "all", "-o", "%i %T %r", "-j", id])
            .output()
            .map_err(|e| Error::Invalid(format!("cannot run squeue: {e} (is Slurm installed?)")))?;
        // An id Slurm no longer knows is an error for squeue: nothing to report.
        if !output.status.success() {
            continue;
        }
        states.extend(parse_squeue(&String::from_utf8_lossy(&output.stdout)));
    }
    Ok(states)
}

/// Parses `squeue -h -r -o "%i %T %r"` lines (`<job>_<task> <STATE> <reason>`).
pub fn parse_squeue(text: &str) -> BTreeMap<(String, usize), TaskState> {
    let mut states = BTreeMap::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let (Some(task), Some(state)) = (words.next(), words.next()) else {
            continue;
        };
        let reason = words.collect::<Vec<_>>().join(" ");
        let Some((job, k)) = task.split_once('_') else {
            continue;
        };
        let Ok(k) = k.parse::<usize>() else {
            continue;
        };
        let state = match state {
            "PENDING" | "CONFIGURING" | "REQUEUED" | "RESIZING" | "SUSPENDED" => {
                TaskState::Pending(reason)
            }
            "RUNNING" | "COMPLETING" => TaskState::Running,
            "COMPLETED" => TaskState::Completed,
            "CANCELLED" => TaskState::Cancelled(reason),
            other => TaskState::Failed(other.to_string()),
        };
        states.insert((job.to_string(), k), state);
    }
    states
}

/// Each item's state for `drift study --status`: done on disk, else what Slurm says of
/// its newest task; (state, detail) in plan order.
pub fn status(plan: &StudyPlan) -> Result<Vec<(String, String)>> {
    let jobs = read_jobs(plan)?;
    let states = task_states(&jobs)?;
    Ok(plan
        .items
        .iter()
        .map(|item| {
            if item.state == State::Done {
                return ("done".to_string(), String::new());
            }
            let disk = || {
                (
                    item.state.name().to_string(),
                    item.state.detail().to_string(),
                )
            };
            match latest(&jobs, &states, &item.id) {
                None => disk(),
                Some((job, state)) => {
                    let at = |what: &str| format!("{what} (job {})", job.id);
                    match state {
                        TaskState::Pending(why) => ("queued".into(), at(why)),
                        TaskState::Running => ("running".into(), at("")),
                        TaskState::Completed => (
                            "failed".into(),
                            at(&format!(
                                "the task ended, but its output is {}: {}",
                                item.state.name(),
                                item.state.detail()
                            )),
                        ),
                        TaskState::Failed(s) => ("failed".into(), at(s)),
                        TaskState::Cancelled(why) if why.contains("DependencyNeverSatisfied") => {
                            ("missing".into(), at("not run: a job it needs failed"))
                        }
                        TaskState::Cancelled(why) => {
                            ("failed".into(), at(&format!("cancelled {why}")))
                        }
                    }
                }
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squeue_lines_become_task_states() {
        let text = "12_0 COMPLETED None\n12_1 FAILED NonZeroExitCode\n13_0 PENDING Dependency\n\
                    13_1 CANCELLED DependencyNeverSatisfied\n14_2 RUNNING None\n15 RUNNING None\n";
        let states = parse_squeue(text);
        let at = |job: &str, k| states.get(&(job.to_string(), k)).cloned();
        assert_eq!(at("12", 0), Some(TaskState::Completed));
        assert_eq!(at("12", 1), Some(TaskState::Failed("FAILED".into())));
        assert_eq!(at("13", 0), Some(TaskState::Pending("Dependency".into())));
        assert_eq!(
            at("13", 1),
            Some(TaskState::Cancelled("DependencyNeverSatisfied".into()))
        );
        assert_eq!(at("14", 2), Some(TaskState::Running));
        // Not an array task: not one of ours.
        assert_eq!(states.len(), 5);
    }

    #[test]
    fn words_are_quoted_only_when_bash_needs_it() {
        assert_eq!(quote("presets/a-b.toml"), "presets/a-b.toml");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$HOME"), "'$HOME'");
    }
}
