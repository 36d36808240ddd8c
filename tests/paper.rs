//! The paper stage: minijinja templates filled from a context and compiled to a
//! reproducible PDF by `drift::report::paper`, inside a temporary report root.

use std::path::Path;
use std::process::Command;

use drift::Grid;
use drift::report::figures::{HeatmapOptions, Scale, heatmap};
use drift::report::paper::{compile_pdf, render_template};
use serde_json::json;

const TEMPLATE: &str = r#"#set document(title: {{ title | typst_str }})
#set page(width: 16cm, height: 20cm)
= #{{ title | typst_str }}
The mean decay is {{ decay | fixed(3) }}; signed #{{ -decay | fixed(3) | typst_str }}, the model
is #text({{ model | typst_str }}).

#figure(image("figures/heatmap.svg", width: 80%), caption: [Drift matrix.]) <fig>

#pagebreak()
Page two, dated #datetime.today().display().
"#;

fn heatmap_svg() -> String {
    let grid = Grid::from_rows(&[
        vec![Some(0.90), Some(0.85), Some(0.80)],
        vec![None, Some(0.91), Some(0.86)],
        vec![None, None, Some(0.92)],
    ])
    .unwrap();
    let labels = ["2000", "2001", "2002"].map(String::from);
    let scale = Scale::shared_sequential(&[&grid]).unwrap();
    let opts = HeatmapOptions {
        title: Some("mlp".into()),
        value_label: "accuracy".into(),
        ..HeatmapOptions::default()
    };
    heatmap(&grid, &labels, scale, &opts).unwrap()
}

/// A report root with `paper.typ` rendered from [`TEMPLATE`] and the heatmap figure.
fn paper_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let context = json!({
        "title": "Drift \"happens\"",
        "decay": 0.041_666,
        "model": "mlp\\cnn",
    });
    let typ = render_template(TEMPLATE, "paper.typ", &context).unwrap();
    std::fs::write(dir.path().join("paper.typ"), typ).unwrap();
    std::fs::create_dir(dir.path().join("figures")).unwrap();
    std::fs::write(dir.path().join("figures/heatmap.svg"), heatmap_svg()).unwrap();
    dir
}

fn write(root: &Path, name: &str, text: &str) {
    std::fs::write(root.join(name), text).unwrap();
}

fn compile_err(root: &Path, main: &str) -> String {
    match compile_pdf(root, main, "drift-test") {
        Ok(_) => panic!("{main} compiled but should not have"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn template_fills_values_through_the_filters() {
    let ctx = json!({"title": "Drift", "decay": 0.041_666, "model": "mlp"});
    let typ = render_template(TEMPLATE, "paper.typ", &ctx).unwrap();
    assert!(
        typ.starts_with("#set document(title: \"Drift\")\n"),
        "{typ}"
    );
    assert!(typ.contains("= #\"Drift\"\n"), "{typ}");
    assert!(
        typ.contains("The mean decay is 0.042; signed #\"-0.042\", the model"),
        "{typ}"
    );
    assert!(typ.contains("#text(\"mlp\")"), "{typ}");
    assert!(typ.ends_with('\n'), "the trailing newline is kept");
}

#[test]
fn missing_variable_is_an_error_naming_template_and_variable() {
    let err = render_template(
        "x {{ decay | fixed(2) }} {{ nope }}",
        "intro.typ",
        &json!({"decay": 1}),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("intro.typ"), "{err}");
    assert!(err.contains("nope"), "{err}");
    let err = render_template("{{ study.decay }}", "t.typ", &json!({"study": {}}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("study.decay"), "{err}");
}

#[test]
fn typst_str_escapes_a_malicious_string() {
    let evil = "\"); #read(\"/etc/passwd\") // \\";
    let typ = render_template(
        "#let s = {{ v | typst_str }}\n#s",
        "t.typ",
        &json!({"v": evil}),
    )
    .unwrap();
    assert_eq!(
        typ,
        "#let s = \"\\\"); #read(\\\"/etc/passwd\\\") // \\\\\"\n#s"
    );
    // Typst parses it back as the same string: the paper shows it as text, reads nothing.
    let dir = tempfile::tempdir().unwrap();
    let check = render_template(
        "#let s = {{ v | typst_str }}\n#assert.eq(s, {{ w | typst_str }})\n#s\n",
        "t.typ",
        &json!({"v": evil, "w": evil}),
    )
    .unwrap();
    write(dir.path(), "t.typ", &check);
    let out = compile_pdf(dir.path(), "t.typ", "t").unwrap();
    assert_eq!(out.pages, 1);
    // Numbers, booleans and newlines become literals too.
    let typ = render_template(
        "{{ a | typst_str }} {{ b | typst_str }} {{ c | typst_str }}",
        "t",
        &json!({"a": 1.5, "b": true, "c": "x\ny"}),
    )
    .unwrap();
    assert_eq!(typ, r#""1.5" "true" "x\ny""#);
}

#[test]
fn fixed_refuses_non_numbers() {
    let err = render_template("{{ v | fixed(2) }}", "t.typ", &json!({"v": "0.5"}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a number"), "{err}");
    let ok = render_template(
        "{{ v | fixed(2) }} {{ w | fixed(1) }}",
        "t",
        &json!({"v": 3, "w": -0.01}),
    )
    .unwrap();
    assert_eq!(ok, "3.00 0.0");
}

#[test]
fn paper_compiles_to_a_reproducible_pdf_with_its_figure() {
    let root = paper_root();
    let a = compile_pdf(root.path(), "paper.typ", "drift-test").unwrap();
    assert!(a.pdf.starts_with(b"%PDF"), "not a PDF");
    assert_eq!(a.pages, 2);
    assert_eq!(a.images, 1, "the heatmap is placed on the page");
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);

    // Byte-identical on a second compile (fresh world, same inputs) ...
    let b = compile_pdf(root.path(), "paper.typ", "drift-test").unwrap();
    assert!(a.pdf == b.pdf, "two compiles differ");
    // ... and from a copy of the root elsewhere: no path leaks into the PDF.
    let copy = paper_root();
    let c = compile_pdf(copy.path(), "paper.typ", "drift-test").unwrap();
    assert!(a.pdf == c.pdf, "the root's location changes the PDF");
    // The identifier is what distinguishes documents.
    let d = compile_pdf(root.path(), "paper.typ", "other-ident").unwrap();
    assert!(a.pdf != d.pdf);

    // No creator, the fixed creation date.
    let text = String::from_utf8_lossy(&a.pdf);
    assert!(
        !text.contains("Typst 0."),
        "a creator names the typst version"
    );
    assert!(
        text.contains("2026-01-01") || text.contains("D:20260101"),
        "no fixed date"
    );

    // The figure is embedded: without it the PDF has no Figure element and is smaller.
    let without = TEMPLATE.replace(
        r#"#figure(image("figures/heatmap.svg", width: 80%), caption: [Drift matrix.]) <fig>"#,
        "",
    );
    let ctx = json!({"title": "Drift \"happens\"", "decay": 0.041_666, "model": "mlp\\cnn"});
    write(
        root.path(),
        "bare.typ",
        &render_template(&without, "bare.typ", &ctx).unwrap(),
    );
    let bare = compile_pdf(root.path(), "bare.typ", "drift-test").unwrap();
    assert_eq!(bare.images, 0);
    // typst-pdf draws an SVG straight into the page's content stream (no XObject) and
    // tags it as a Figure structure element of the tagged PDF: one per image.
    assert_eq!(
        count(&a.pdf, b"/S/Figure"),
        1,
        "the figure is not in the PDF"
    );
    assert_eq!(count(&bare.pdf, b"/S/Figure"), 0);
    assert!(
        a.pdf.len() > bare.pdf.len() + 2000,
        "the figure adds almost nothing"
    );
}

fn count(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .filter(|w| *w == needle)
        .count()
}

#[test]
fn page_one_renders_with_pdftoppm_when_available() {
    if Command::new("pdftoppm").arg("-v").output().is_err() {
        eprintln!("pdftoppm not installed: page rendering not checked");
        return;
    }
    let root = paper_root();
    let out = compile_pdf(root.path(), "paper.typ", "drift-test").unwrap();
    let pdf = root.path().join("paper.pdf");
    std::fs::write(&pdf, &out.pdf).unwrap();
    let prefix = root.path().join("page");
    let status = Command::new("pdftoppm")
        .args(["-png", "-r", "50", "-f", "1", "-l", "1", "-singlefile"])
        .arg(&pdf)
        .arg(&prefix)
        .status()
        .unwrap();
    assert!(status.success());
    let png = std::fs::read(root.path().join("page.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(
        png.len() > 1000,
        "page 1 is (nearly) empty: {} bytes",
        png.len()
    );
}

#[test]
fn files_outside_the_root_are_refused() {
    let outer = tempfile::tempdir().unwrap();
    write(outer.path(), "secret.txt", "secret");
    let root = outer.path().join("report");
    std::fs::create_dir(&root).unwrap();

    write(&root, "up.typ", "#read(\"../secret.txt\")\n");
    let err = compile_err(&root, "up.typ");
    assert!(err.contains("up.typ:1:"), "{err}");
    assert!(err.contains("escape the project root"), "{err}");

    // An absolute path means the root's own folder, never the file system's.
    write(&root, "abs.typ", "#read(\"/etc/passwd\")\n");
    let err = compile_err(&root, "abs.typ");
    assert!(err.contains("abs.typ:1:"), "{err}");
    assert!(err.contains("not found"), "{err}");
    let img = "#image(\"/etc/hostname\")\n";
    write(&root, "img.typ", img);
    assert!(compile_err(&root, "img.typ").contains("not found"));

    // A symbolic link out of the root is refused too.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outer.path().join("secret.txt"), root.join("link.txt")).unwrap();
        write(&root, "link.typ", "#read(\"link.txt\")\n");
        let err = compile_err(&root, "link.typ");
        assert!(err.contains("outside the report root"), "{err}");
    }

    // The main file itself is served from the root only.
    let err = compile_err(&root, "../secret.txt");
    assert!(err.contains("escapes"), "{err}");
}

#[test]
fn packages_are_refused_without_download() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pkg.typ",
        "#import \"@preview/cetz:0.4.2\": canvas\nHello\n",
    );
    let err = compile_err(dir.path(), "pkg.typ");
    assert!(err.contains("pkg.typ:1:"), "{err}");
    assert!(err.contains("packages are not available"), "{err}");
    assert!(err.contains("@preview/cetz:0.4.2"), "{err}");
}

#[test]
fn typst_errors_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "main.typ", "ok\n#include \"part.typ\"\n");
    write(dir.path(), "part.typ", "line one\n#undefined-thing\n");
    let err = compile_err(dir.path(), "main.typ");
    assert!(err.contains("part.typ:2:"), "{err}");
    assert!(err.contains("unknown variable"), "{err}");
}
