//! A full disk and a read-only folder: `drift run` and `build-report` writing into a small
//! tmpfs that fills up mid-write, and into one remounted read-only. Each ends in a clear
//! error naming the file and the cause; nothing half-written is left looking finished
//! (every checked file there is byte-identical to an uninterrupted run's, and no
//! temporary file remains); given space (or write access) again, the next run resumes to
//! the uninterrupted run's bytes.
//!
//! Mounting a tmpfs needs root with CAP_SYS_ADMIN. Without it, the full disk is a file
//! size limit (RLIMIT_FSIZE: a write past it fails with EFBIG mid-write, as ENOSPC would)
//! and the read-only folder one without write permission; a root that may not mount
//! bypasses permissions, so there the read-only case is reported as not run.
//! `DRIFT_HARDEN_NO_MOUNT=1` takes that way where mounting would work.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::{files, temporaries};
use crate::support::stderr;

/// Where a command writes: a tmpfs whose size and write access the test sets, or, where
/// mounting is not allowed, a plain folder and a file size limit.
struct Space {
    dir: tempfile::TempDir,
    mounted: bool,
    /// The file size limit of the fallback.
    limit: Option<u64>,
}

const ROOMY: u64 = 256 << 20;

impl Space {
    fn new() -> Space {
        let dir = tempfile::tempdir().unwrap();
        let mounted = std::env::var_os("DRIFT_HARDEN_NO_MOUNT").is_none()
            && Command::new("mount")
                .args(["-t", "tmpfs", "-o", &format!("size={ROOMY}"), "tmpfs"])
                .arg(dir.path())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!(
                "disk: cannot mount a tmpfs here (not root with CAP_SYS_ADMIN): file size limits stand in for a full disk"
            );
        }
        Space {
            dir,
            mounted,
            limit: None,
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn remount(&self, options: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(self.path())
            .status()
            .unwrap();
        assert!(status.success(), "mount -o remount,{options} failed");
    }

    /// Room for half of what the uninterrupted run wrote in `reference`: the tmpfs
    /// resized to what is used now plus half its usage, or (fallback) no file may grow
    /// past half of its largest file.
    fn half_of(&mut self, reference: &[PathBuf]) {
        if self.mounted {
            let needed: u64 = reference.iter().map(|d| usage(d)).sum();
            self.remount(&format!("size={}", usage(self.path()) + needed / 2));
        } else {
            let largest = reference
                .iter()
                .flat_map(walkdir::WalkDir::new)
                .map(|e| e.unwrap().metadata().unwrap().len())
                .max()
                .unwrap();
            self.limit = Some(largest / 2);
        }
    }

    fn roomy(&mut self) {
        if self.mounted {
            self.remount(&format!("size={ROOMY}"));
        }
        self.limit = None;
    }

    /// Makes `folder` (in the space) read-only, or says why it cannot.
    fn read_only(&self, folder: &Path, yes: bool) -> bool {
        if self.mounted {
            self.remount(if yes { "ro" } else { "rw" });
            return true;
        }
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            return false;
        }
        let mode = if yes { 0o555 } else { 0o755 };
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(mode)).unwrap();
        true
    }

    /// Runs `command` under the space's file size limit, if any.
    fn run(&self, mut command: Command) -> Output {
        if let Some(limit) = self.limit {
            // SAFETY: only async-signal-safe calls between fork and exec.
            unsafe {
                command.pre_exec(move || {
                    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                    let rlim = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: libc::RLIM_INFINITY,
                    };
                    if libc::setrlimit(libc::RLIMIT_FSIZE, &rlim) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        command.output().unwrap()
    }
}

impl Drop for Space {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg("-l").arg(self.path()).status();
        }
    }
}

/// The space the files under `dir` take on a tmpfs: each in whole 4 KiB pages.
fn usage(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().unwrap().len().div_ceil(4096) * 4096)
        .sum()
}

/// The error a full disk (or the fallback's size limit) gives.
fn out_of_space(message: &str) -> bool {
    message.contains("No space left on device") || message.contains("File too large")
}

fn read_only_error(message: &str) -> bool {
    message.contains("Read-only file system") || message.contains("Permission denied")
}

/// After a failed write: every checked file there has the uninterrupted run's bytes (none
/// is half-written), and no temporary file is left.
fn nothing_half_written(
    what: &str,
    got: &std::collections::BTreeMap<PathBuf, Vec<u8>>,
    expected: &std::collections::BTreeMap<PathBuf, Vec<u8>>,
    dir: &Path,
) {
    for (path, bytes) in got {
        assert!(
            expected.get(path) == Some(bytes),
            "{what}: {} was left half-written or wrong",
            path.display()
        );
    }
    let left = temporaries(dir);
    assert!(left.is_empty(), "{what}: temporary files left: {left:?}");
}

#[cfg(feature = "torch")]
#[test]
fn a_run_on_a_full_or_read_only_disk_fails_clearly_and_resumes() {
    let work = crate::study::study_folder(&["smoke-single"]);
    let reference = work.path().join("reference");
    let o = super::smoke_run(work.path(), &reference).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let expected = files(&reference, &["."]);

    let mut space = Space::new();
    let out = space.path().join("results");
    space.half_of(std::slice::from_ref(&reference));
    let o = space.run(super::smoke_run(work.path(), &out));
    let message = stderr(&o);
    assert!(!o.status.success(), "the run fit in half its space");
    assert!(
        out_of_space(&message) && message.contains(&*out.to_string_lossy()),
        "{message}"
    );
    nothing_half_written(
        "drift run on a full disk",
        &files(&out, &["."]),
        &expected,
        space.path(),
    );
    space.roomy();
    let o = space.run(super::smoke_run(work.path(), &out));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(files(&out, &["."]) == expected, "the resumed run differs");

    let fresh = space.path().join("fresh");
    std::fs::create_dir(&fresh).unwrap();
    if !space.read_only(&fresh, true) {
        eprintln!("disk: read-only case not run (root without mount)");
        return;
    }
    let o = super::smoke_run(work.path(), &fresh).output().unwrap();
    let message = stderr(&o);
    assert!(
        !o.status.success() && read_only_error(&message),
        "{message}"
    );
    assert!(message.contains("fresh"), "{message}");
    assert!(files(&fresh, &["."]).is_empty());
    assert!(space.read_only(&fresh, false));
    let o = super::smoke_run(work.path(), &fresh).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(files(&fresh, &["."]) == expected);
}

#[cfg(feature = "paper")]
#[test]
fn a_build_on_a_full_or_read_only_disk_fails_clearly_and_resumes() {
    const OUTPUTS: [&str; 3] = ["figures", "report/build", "checksums"];
    let reference = crate::build_report::built();
    let expected = files(reference.path(), &OUTPUTS);

    let mut space = Space::new();
    let root = space.path().join("root");
    crate::build_report::study(&root);
    space.half_of(&OUTPUTS.map(|d| reference.path().join(d)));
    let o = space.run(build_command(&root, &["--update"]));
    let message = stderr(&o);
    assert!(!o.status.success(), "the build fit in half its space");
    assert!(out_of_space(&message), "{message}");
    nothing_half_written(
        "build-report on a full disk",
        &files(&root, &OUTPUTS),
        &expected,
        &root,
    );
    space.roomy();
    let o = space.run(build_command(&root, &["--update"]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        files(&root, &OUTPUTS) == expected,
        "the resumed build differs"
    );

    // A missing output to render again, on a read-only disk.
    let figure = root.join("figures/tiny/cnn_s-raw.svg");
    std::fs::remove_file(&figure).unwrap();
    if !space.read_only(&root.join("figures/tiny"), true) {
        eprintln!("disk: read-only case not run (root without mount)");
        return;
    }
    let o = build_command(&root, &[]).output().unwrap();
    let message = stderr(&o);
    assert!(
        !o.status.success() && read_only_error(&message),
        "{message}"
    );
    assert!(message.contains("cnn_s-raw.svg"), "{message}");
    assert!(space.read_only(&root.join("figures/tiny"), false));
    // Writable again: the build renders the file anew, and still reports that a committed
    // output was missing; then all checks.
    let o = build_command(&root, &[]).output().unwrap();
    let message = stderr(&o);
    assert!(
        message.contains("figures/tiny/cnn_s-raw.svg: in the manifest but missing on disk"),
        "{message}"
    );
    assert!(files(&root, &OUTPUTS) == expected);
    let o = build_command(&root, &["--check"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

fn build_command(root: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_build-report"));
    c.arg("--root").arg(root).args(args);
    c
}
