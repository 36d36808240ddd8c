//! The gallery (`report/build/site/`) of the small study of `build_report`, in headless
//! Chromium: every page loads with no console message, the matrix cells with a title are
//! exactly the filled cells of every model's two matrices, and a screenshot is not blank.
//!
//! Chromium comes from `scripts/chromium-env` (Debian's package), which the test command
//! runs and which sets `DRIFT_CHROMIUM`: then a missing or failing Chromium fails the test.
//! Without the variable the test looks for `chromium` on the PATH and, when there is none,
//! says so and returns. Set `DRIFT_GALLERY_SHOTS` to a folder to keep the screenshots.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build_report::built;

fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("DRIFT_CHROMIUM") {
        return Some(path.into());
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("chromium"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        eprintln!(
            "gallery: no Chromium here; the test command installs it (eval \"$(scripts/chromium-env)\")"
        );
    }
    found
}

/// Runs headless Chromium on `page` with `args`; returns (stdout, the console lines of
/// its log).
fn headless(chromium: &Path, profile: &Path, page: &Path, args: &[&str]) -> (String, Vec<String>) {
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", chromium.display()));
    assert!(
        out.status.success(),
        "chromium on {}: {}",
        page.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let log = String::from_utf8_lossy(&out.stderr);
    let console = log
        .lines()
        .filter(|l| l.contains("CONSOLE"))
        .map(String::from)
        .collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), console)
}

/// How many `<rect class="cell">` of a DOM carry a `<title>`.
fn titled_cells(dom: &str) -> usize {
    dom.split("<rect class=\"cell\"")
        .skip(1)
        .filter(|rest| {
            let end = rest.find("</rect>").unwrap_or(rest.len());
            rest[..end].contains("<title>")
        })
        .count()
}

/// Whether a PNG is not blank: at least 0.2% of its pixels differ from its first (a page
/// of a few lines of text on white is about 1%).
fn not_blank(png_path: &Path) -> bool {
    let decoder = png::Decoder::new(std::io::BufReader::new(fs::File::open(png_path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bytes = &buf[..info.buffer_size()];
    let px = info.color_type.samples();
    let first = &bytes[..px];
    let other = bytes.chunks(px).filter(|p| *p != first).count();
    other * 500 > bytes.len() / px
}

#[test]
fn every_gallery_page_loads_cleanly_with_a_title_on_every_filled_cell() {
    let Some(chromium) = chromium() else {
        return;
    };
    let dir = built();
    let root = dir.path();
    let site = root.join("report/build/site");
    let profile = tempfile::tempdir().unwrap();
    let shots = std::env::var_os("DRIFT_GALLERY_SHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("shots"));
    fs::create_dir_all(&shots).unwrap();

    // The filled cells, from the artifacts: each model's seed mean and deviation.
    let specs = drift::report::study::read_specs(&root.join("report/studies.toml")).unwrap();
    let studies = drift::report::study::load(root, "results", &specs).unwrap();
    let filled: usize = studies[0]
        .analysis
        .models
        .iter()
        .map(|m| m.mean.filled().count() + m.deviation.filled().count())
        .sum();
    assert!(filled > 0);

    let mut pages: Vec<PathBuf> = fs::read_dir(&site)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pages.sort();
    let names: Vec<String> = pages
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["index.html", "tiny.html"]);
    for page in &pages {
        let (dom, console) = headless(&chromium, profile.path(), page, &["--dump-dom"]);
        assert!(console.is_empty(), "{}: {console:?}", page.display());
        assert!(dom.contains("</nav>"), "{}: {dom}", page.display());
        let shot = shots.join(page.with_extension("png").file_name().unwrap());
        let size = "--window-size=1280,1600";
        let (_, console) = headless(
            &chromium,
            profile.path(),
            page,
            &[&format!("--screenshot={}", shot.display()), size],
        );
        assert!(console.is_empty(), "{}: {console:?}", page.display());
        assert!(not_blank(&shot), "{} is blank", shot.display());
        if names.iter().any(|n| page.ends_with(n) && n == "tiny.html") {
            assert_eq!(titled_cells(&dom), filled, "{}", page.display());
            // The title says what the cell is.
            assert!(
                dom.contains("<title>cnn_s: trained through 2001, evaluated on 2002: "),
                "{dom}"
            );
        }
    }

    // The check can fail: a page that logs an error and asks for a missing file is caught.
    let bad = root.join("bad.html");
    fs::write(
        &bad,
        "<!DOCTYPE html><html><body><img src=\"missing.png\"><script>console.error(\"broken\")</script></body></html>",
    )
    .unwrap();
    let (_, console) = headless(&chromium, profile.path(), &bad, &["--dump-dom"]);
    assert!(console.iter().any(|l| l.contains("broken")), "{console:?}");
}
