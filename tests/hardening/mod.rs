//! Hardening: faults a user will meet sooner or later (a closed pipe, damaged files,
//! hostile input, a full disk, a kill, two writers at once) end in a clear error or a
//! clean exit, never in a panic, lost work or a damaged file silently used. Each module is
//! one kind of fault; each runs in a bounded form in the test command and in full with
//! `DRIFT_HARDEN=full` (`scripts/harden`).

#[cfg(any(feature = "paper", feature = "torch"))]
mod concurrency;
#[cfg(feature = "paper")]
mod damage;
#[cfg(feature = "paper")]
mod disk;
mod fuzz;
mod hostile;
#[cfg(all(feature = "torch", feature = "paper"))]
mod kills;
mod pipes;

#[cfg(any(feature = "paper", feature = "torch"))]
/// Whether the harness runs in full (`DRIFT_HARDEN=full`, as `scripts/harden` sets it)
/// rather than in the bounded form of the test command.
pub fn full() -> bool {
    std::env::var("DRIFT_HARDEN").is_ok_and(|v| v == "full")
}

#[cfg(any(feature = "paper", feature = "torch"))]
/// Every file under `dir/sub` by path relative to `dir`, but for wall times, lock files
/// and `drift study`'s own folder (logs of the attempts), which no two runs share.
pub fn files(
    dir: &std::path::Path,
    subs: &[&str],
) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut found = std::collections::BTreeMap::new();
    for sub in subs {
        if !dir.join(sub).exists() {
            continue;
        }
        let walk = walkdir::WalkDir::new(dir.join(sub)).into_iter();
        for entry in walk.filter_entry(|e| e.file_name() != ".study") {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy();
            if !entry.file_type().is_file() || name.ends_with("timing.json") || name == ".lock" {
                continue;
            }
            let rel = entry.path().strip_prefix(dir).unwrap().to_path_buf();
            found.insert(rel, std::fs::read(entry.path()).unwrap());
        }
    }
    found
}

#[cfg(any(feature = "paper", feature = "torch"))]
/// The temporary files under `dir` that an interrupted write left: `write_atomic`'s
/// `.<name>.tmp-<pid>`, by path.
pub fn temporaries(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(drift::files::is_temporary)
        })
        .map(|e| e.into_path())
        .collect()
}

#[cfg(any(feature = "paper", feature = "torch"))]
/// A seeded stream of numbers: all this needs, so no RNG crate (splitmix64).
pub struct Stream(pub u64);

#[cfg(any(feature = "paper", feature = "torch"))]
impl Stream {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// `drift run` of the smoke preset (`presets/smoke-single.toml`, relative to `cwd`) into
/// `out`, on the CPU, quietly: the run the kill, disk and damage checks start from.
#[cfg(feature = "torch")]
pub fn smoke_run(cwd: &std::path::Path, out: &std::path::Path) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_drift"));
    c.current_dir(cwd)
        .env("OMP_WAIT_POLICY", "passive")
        .args([
            "run",
            "presets/smoke-single.toml",
            "--device",
            "cpu",
            "-q",
            "--out",
        ])
        .arg(out);
    c
}
