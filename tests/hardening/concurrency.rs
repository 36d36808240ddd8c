//! Two writers at once: a second `drift study` on a results folder that a first one is
//! writing is refused, naming the lock, and the first finishes to the bytes of a study
//! run alone; a `build-report` while a run writes one of its run folders is refused,
//! naming the folder, and changes nothing.

#[cfg(feature = "torch")]
#[test]
fn a_second_study_on_the_same_results_is_refused_and_the_first_finishes() {
    use std::path::Path;
    use std::process::{Command, Stdio};
    use std::time::Duration;

    let reference = crate::study::reference();
    let dir = crate::study::study_folder(&["smoke-single", "smoke-finetune"]);
    let study = |dir: &Path| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_drift"));
        c.current_dir(dir).env("OMP_WAIT_POLICY", "passive").args([
            "study",
            "studies.toml",
            "--jobs",
            "2",
            "-q",
            "--out",
            "results",
        ]);
        c
    };
    let mut first = study(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once a run holds its folder's lock, the first study holds the study's.
    let running = dir.path().join("results/smoke-single/mlp_s/seed-0/.lock");
    while !running.exists() {
        assert!(
            first.try_wait().unwrap().is_none(),
            "the first study ended early"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let second = study(dir.path()).output().unwrap();
    let message = crate::support::stderr(&second);
    assert!(!second.status.success(), "the second study ran: {message}");
    assert!(
        message.contains("another drift study is running on this results folder")
            && message.contains(".study/lock"),
        "{message}"
    );
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success(), "{}", crate::support::stderr(&first));
    crate::support::assert_same_tree(&reference.join("results"), &dir.path().join("results"));
}

#[cfg(feature = "paper")]
#[test]
fn a_build_while_a_run_writes_is_refused_naming_the_run_and_changes_nothing() {
    let dir = crate::build_report::built();
    let root = dir.path();
    let before = super::files(root, &["results", "figures", "report", "checksums"]);
    let run = root.join("results/tiny/cnn_s/seed-0");
    // What a writing `drift run` holds for as long as it writes the folder.
    let lock = drift::files::lock_exclusive(&run.join(".lock"), || "held".into()).unwrap();
    for args in [&[][..], &["--update"], &["--force"]] {
        let o = crate::build_report::build(root, args);
        let message = crate::support::stderr(&o);
        assert!(!o.status.success(), "build-report {args:?} ran: {message}");
        assert!(
            message.contains("a drift process is writing this run folder now")
                && message.contains("tiny/cnn_s/seed-0"),
            "{message}"
        );
        assert!(
            super::files(root, &["results", "figures", "report", "checksums"]) == before,
            "build-report {args:?} wrote"
        );
    }
    drop(lock);
    let o = crate::build_report::build(root, &[]);
    assert!(o.status.success(), "{}", crate::support::stderr(&o));
}
