//! `drift verify-paper` on the small study of `build_report`: the PDF carries its proof,
//! and an altered attachment, a printed hash that disagrees with it, a checkout at another
//! commit and a re-stamped copy each get their verdict.

use std::fs;
use std::path::Path;
use std::process::Output;

use lopdf::{Document, Object};

use crate::build_report::{build, built, stderr};
use crate::support::drift;

fn verify(pdf: &Path, repo: Option<&Path>) -> (bool, String) {
    let mut command = drift();
    command.arg("verify-paper").arg(pdf);
    if let Some(repo) = repo {
        command.arg("--repo").arg(repo);
    }
    let o: Output = command.output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &stderr(&o);
    (o.status.success(), out)
}

/// The lines of `out` that start with FAIL.
fn failures(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.starts_with("FAIL")).collect()
}

/// Rewrites the attachment named `name` (its last path component) with `edit`.
fn edit_attachment(doc: &mut Document, name: &str, edit: impl Fn(&str) -> String) {
    let catalog = doc.catalog().unwrap();
    let names = doc
        .dereference(catalog.get(b"Names").unwrap())
        .unwrap()
        .1
        .as_dict()
        .unwrap();
    let tree = doc
        .dereference(names.get(b"EmbeddedFiles").unwrap())
        .unwrap()
        .1
        .as_dict()
        .unwrap();
    let pairs = doc
        .dereference(tree.get(b"Names").unwrap())
        .unwrap()
        .1
        .as_array()
        .unwrap()
        .clone();
    for pair in pairs.chunks(2) {
        let key = String::from_utf8_lossy(pair[0].as_str().unwrap()).to_string();
        if !key.ends_with(name) {
            continue;
        }
        let spec = doc.dereference(&pair[1]).unwrap().1.as_dict().unwrap();
        let ef = doc
            .dereference(spec.get(b"EF").unwrap())
            .unwrap()
            .1
            .as_dict()
            .unwrap();
        let id = ef.get(b"F").unwrap().as_reference().unwrap();
        let Object::Stream(stream) = doc.get_object_mut(id).unwrap() else {
            panic!("an attachment is a stream")
        };
        let text = String::from_utf8(stream.decompressed_content().unwrap()).unwrap();
        stream.dict.remove(b"Filter");
        stream.dict.remove(b"DecodeParms");
        // The attachment's recorded size and checksum stay as they were: a forger's slip.
        stream.set_content(edit(&text).into_bytes());
        return;
    }
    panic!("no attachment {name}");
}

fn save(doc: &mut Document, path: &Path) {
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    fs::write(path, bytes).unwrap();
}

/// Changes the first hash digit of the first line of a `SHA256SUMS` text.
fn alter_first_hash(sums: &str) -> String {
    let first = sums.chars().next().unwrap();
    let other = if first == '0' { '1' } else { '0' };
    format!("{other}{}", &sums[1..])
}

#[test]
fn an_intact_paper_verifies_alone_and_against_its_checkout() {
    let dir = built();
    let root = dir.path();
    let pdf = root.join("report/build/paper.pdf");
    let (ok, out) = verify(&pdf, None);
    assert!(ok, "{out}");
    assert!(
        out.contains("the last page prints the attached manifest's SHA-256"),
        "{out}"
    );
    let (ok, out) = verify(&pdf, Some(root));
    assert!(ok, "{out}");
    for says in [
        "the checkout's checksums/ lists the attached manifest's",
        "the checkout's code is the code that built the paper",
        "outputs on disk match the checkout's checksums/",
        "the PDF's bytes are the ones the checkout's checksums/ lists",
    ] {
        assert!(out.contains(says), "{says}: {out}");
    }
    // The attachments are the proof files the build wrote, and listed in checksums/.
    let sums = fs::read_to_string(root.join("report/build/proof/SHA256SUMS")).unwrap();
    let printed = drift::checksum::sha256_hex(sums.as_bytes());
    assert!(out.contains(&printed), "{out}");
    let manifest = fs::read_to_string(root.join("checksums/SHA256SUMS")).unwrap();
    assert!(manifest.contains("  report/build/proof/provenance.json\n"));
    assert!(!sums.contains("report/build/paper.") && !sums.contains("report/build/proof/"));
    assert!(!sums.contains("report/build/supplement."));
    // The supplement attaches the same proof and is checked the same way, its bytes
    // against its own line of checksums/.
    let supplement = root.join("report/build/supplement.pdf");
    let (ok, out) = verify(&supplement, Some(root));
    assert!(ok, "{out}");
    assert!(
        out.contains("the PDF's bytes are the ones the checkout's checksums/ lists for report/build/supplement.pdf"),
        "{out}"
    );
    assert!(out.contains(&printed), "{out}");
}

#[test]
fn an_altered_attachment_is_found() {
    let dir = built();
    let root = dir.path();
    let mut doc = Document::load(root.join("report/build/paper.pdf")).unwrap();
    edit_attachment(&mut doc, "SHA256SUMS", alter_first_hash);
    let altered = root.join("altered.pdf");
    save(&mut doc, &altered);
    let (ok, out) = verify(&altered, None);
    assert!(!ok, "{out}");
    let failed = failures(&out);
    assert!(
        failed
            .iter()
            .any(|l| l.contains("provenance.json records manifest SHA-256")),
        "{out}"
    );
    assert!(
        failed
            .iter()
            .any(|l| l.contains("the last page prints manifest SHA-256")),
        "{out}"
    );
    // Against the checkout: its manifest is not the attached one, nor is the content.
    let (ok, out) = verify(&altered, Some(root));
    assert!(!ok, "{out}");
    let failed = failures(&out);
    assert!(
        failed
            .iter()
            .any(|l| l.contains("differs from the attached manifest in 1 outputs")),
        "{out}"
    );
    assert!(
        failed.iter().any(|l| l.contains("content differs")),
        "{out}"
    );
}

#[test]
fn a_printed_hash_that_disagrees_with_the_attachments_is_found() {
    let dir = built();
    let root = dir.path();
    let mut doc = Document::load(root.join("report/build/paper.pdf")).unwrap();
    // A consistent forgery of the attachments: the manifest and the provenance's record
    // of its hash agree with each other, but not with the hash on the last page.
    let sums = fs::read_to_string(root.join("report/build/proof/SHA256SUMS")).unwrap();
    let forged = alter_first_hash(&sums);
    let old = drift::checksum::sha256_hex(sums.as_bytes());
    let new = drift::checksum::sha256_hex(forged.as_bytes());
    edit_attachment(&mut doc, "SHA256SUMS", |_| forged.clone());
    edit_attachment(&mut doc, "provenance.json", |t| t.replace(&old, &new));
    let forged_pdf = root.join("forged.pdf");
    save(&mut doc, &forged_pdf);
    let (ok, out) = verify(&forged_pdf, None);
    assert!(!ok, "{out}");
    assert_eq!(
        failures(&out),
        vec![format!("FAIL the last page prints manifest SHA-256 {old}, but the attached SHA256SUMS hashes to {new}").as_str()],
        "{out}"
    );
}

#[test]
fn a_checkout_at_another_commit_is_told_apart() {
    let dir = built();
    let root = dir.path();
    let pdf = root.join("paper.pdf");
    fs::copy(root.join("report/build/paper.pdf"), &pdf).unwrap();
    // Another commit: the template changed, the paper was rebuilt and its manifest updated.
    let template = root.join("report/paper.typ");
    let text = fs::read_to_string(&template).unwrap();
    fs::write(&template, text + "\n// another commit\n").unwrap();
    let o = build(root, &["--update"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (ok, out) = verify(&pdf, Some(root));
    assert!(!ok, "{out}");
    let failed = failures(&out);
    assert!(
        failed
            .iter()
            .any(|l| l.contains("the checkout's code hashes to")),
        "{out}"
    );
    assert!(
        failed
            .iter()
            .any(|l| l.contains("differs from the attached manifest")),
        "{out}"
    );
    // Its own outputs are consistent: only the paper is not this checkout's.
    assert!(
        out.contains("outputs on disk match the checkout's checksums/"),
        "{out}"
    );
    // The PDF by itself is still consistent.
    assert!(verify(&pdf, None).0);
}

#[test]
fn a_restamped_copy_differs_in_metadata_only() {
    let dir = built();
    let root = dir.path();
    let mut doc = Document::load(root.join("report/build/paper.pdf")).unwrap();
    // A publisher's stamp: another producer, dates and file identifier.
    let mut info = lopdf::Dictionary::new();
    info.set(
        "Producer",
        Object::string_literal("A publisher's pipeline 9.1"),
    );
    info.set("ModDate", Object::string_literal("D:20270101120000Z"));
    let info = doc.add_object(info);
    doc.trailer.set("Info", info);
    doc.trailer.set(
        "ID",
        Object::Array(vec![
            Object::string_literal("restamped-1"),
            Object::string_literal("restamped-2"),
        ]),
    );
    let stamped = root.join("stamped.pdf");
    save(&mut doc, &stamped);
    assert_ne!(
        fs::read(&stamped).unwrap(),
        fs::read(root.join("report/build/paper.pdf")).unwrap()
    );
    let (ok, out) = verify(&stamped, Some(root));
    assert!(ok, "{out}");
    assert!(out.contains("in metadata only (re-stamped)"), "{out}");
}

#[test]
fn a_file_that_is_not_a_pdf_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("paper.pdf");
    fs::write(&path, b"%PDF-1.7 not really").unwrap();
    let (ok, out) = verify(&path, None);
    assert!(!ok);
    assert!(out.contains("paper.pdf: not a readable PDF"), "{out}");
}
