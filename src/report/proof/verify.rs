//! `drift verify-paper`: the checks of a PDF's proof, each a function of its own, run in
//! the order of [`ALONE`] and then, with a checkout, of [`AGAINST_CHECKOUT`].

use std::path::Path;

use super::format::{PRINTED, PaperProvenance, is_proved};
use super::pdf::{canonical, printed_hash, read_pdf};
use crate::checksum::sha256_hex;
use crate::report::layout::{OUTPUT_DIRS, PAPER_PDF, SUPPLEMENT_PDF, code_hash};
use crate::report::manifest::{self, Manifest};
use crate::{Error, Result};

/// One finding of [`verify`]: what was checked, and whether it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Whether it holds.
    pub holds: bool,
    /// What holds, or what does not and why, in one line.
    pub says: String,
}

impl Finding {
    fn new(holds: bool, says: impl Into<String>) -> Self {
        Finding {
            holds,
            says: says.into(),
        }
    }
}

/// The PDF under check and what it attaches, each attachment parsed once.
struct Attached<'a> {
    /// The PDF's path, for errors.
    pdf: &'a Path,
    /// Its bytes.
    bytes: &'a [u8],
    /// The text of its last page.
    last_page: &'a str,
    /// SHA-256 of the attached `SHA256SUMS`.
    manifest_sha256: String,
    /// The attached `SHA256SUMS` and `inputs.json`, read as one manifest.
    manifest: Result<Manifest>,
    /// The attached `provenance.json`.
    provenance: serde_json::Result<PaperProvenance>,
}

/// The checkout a PDF is checked against, and its manifest.
struct Checkout<'a> {
    /// Its root.
    repo: &'a Path,
    /// Its `checksums/`.
    committed: Manifest,
}

/// A check of the PDF alone: its finding, or none where it does not apply.
type Check = fn(&Attached) -> Option<Finding>;

/// A check against a checkout: its finding, or none where it does not apply.
type CheckoutCheck = fn(&Attached, &Checkout) -> Result<Option<Finding>>;

/// The checks of the PDF alone, in the order their findings are listed.
const ALONE: [Check; 4] = [
    attached_manifest_is_consistent,
    attached_provenance_parses,
    provenance_records_the_manifest,
    last_page_prints_the_manifest_hash,
];

/// The checks against a checkout, after [`ALONE`].
const AGAINST_CHECKOUT: [CheckoutCheck; 4] = [
    checkout_lists_the_attached_manifest,
    checkout_code_built_the_paper,
    outputs_on_disk_match,
    pdf_bytes_are_the_listed_ones,
];

/// Checks the PDF at `pdf` alone and, with `repo`, against a checkout: one finding per
/// check, in order. Errors only when the PDF cannot be read at all.
pub fn verify(pdf: &Path, repo: Option<&Path>) -> Result<Vec<Finding>> {
    let bytes = std::fs::read(pdf).map_err(|e| Error::io(pdf, e))?;
    let carried = read_pdf(pdf, &bytes)?;
    let attached = |name: &str| carried.attachments.get(name).map(Vec::as_slice);
    let (Some(sums), Some(inputs), Some(provenance)) = (
        attached("SHA256SUMS"),
        attached("inputs.json"),
        attached("provenance.json"),
    ) else {
        let names: Vec<&str> = carried.attachments.keys().map(String::as_str).collect();
        return Ok(vec![Finding::new(
            false,
            format!(
                "the PDF does not attach SHA256SUMS, inputs.json and provenance.json (it attaches: {})",
                if names.is_empty() {
                    "nothing".to_string()
                } else {
                    names.join(", ")
                }
            ),
        )]);
    };
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let attached = Attached {
        pdf,
        bytes: &bytes,
        last_page: &carried.last_page,
        manifest_sha256: sha256_hex(sums),
        manifest: Manifest::parse(&text(sums), &text(inputs)),
        provenance: serde_json::from_slice(provenance),
    };
    let mut findings: Vec<Finding> = ALONE.iter().filter_map(|c| c(&attached)).collect();
    let Some(repo) = repo else {
        return Ok(findings);
    };
    let committed = match Manifest::read(repo) {
        Ok(m) => m,
        Err(e) => {
            findings.push(Finding::new(false, format!("the checkout's manifest: {e}")));
            return Ok(findings);
        }
    };
    let checkout = Checkout { repo, committed };
    for check in AGAINST_CHECKOUT {
        findings.extend(check(&attached, &checkout)?);
    }
    Ok(findings)
}

/// The attached `SHA256SUMS` and `inputs.json` list the same outputs, each with the key of
/// its inputs.
fn attached_manifest_is_consistent(a: &Attached) -> Option<Finding> {
    Some(match &a.manifest {
        Ok(m) => Finding::new(
            true,
            format!(
                "the attached SHA256SUMS and inputs.json list the same {} outputs, each with the key of its inputs",
                m.len()
            ),
        ),
        Err(e) => Finding::new(false, format!("the attached manifest is inconsistent: {e}")),
    })
}

/// The attached `provenance.json` parses (a finding only when it does not).
fn attached_provenance_parses(a: &Attached) -> Option<Finding> {
    let e = a.provenance.as_ref().err()?;
    Some(Finding::new(
        false,
        format!("the attached provenance.json does not parse: {e}"),
    ))
}

/// `provenance.json` records the attached manifest's SHA-256 and output count.
fn provenance_records_the_manifest(a: &Attached) -> Option<Finding> {
    let p = a.provenance.as_ref().ok()?;
    let outputs = a.manifest.as_ref().ok().map(Manifest::len);
    Some(if p.manifest_sha256 != a.manifest_sha256 {
        Finding::new(
            false,
            format!(
                "provenance.json records manifest SHA-256 {}, but the attached SHA256SUMS hashes to {}",
                p.manifest_sha256, a.manifest_sha256
            ),
        )
    } else if outputs.is_some_and(|n| n != p.outputs) {
        Finding::new(
            false,
            format!(
                "provenance.json counts {} outputs, the attached manifest lists {}",
                p.outputs,
                outputs.unwrap_or(0)
            ),
        )
    } else {
        Finding::new(
            true,
            "provenance.json records the attached manifest's SHA-256 and output count",
        )
    })
}

/// The last page prints the attached manifest's SHA-256 after [`PRINTED`].
fn last_page_prints_the_manifest_hash(a: &Attached) -> Option<Finding> {
    let manifest_sha256 = &a.manifest_sha256;
    Some(match printed_hash(a.last_page) {
        Some(h) if h == *manifest_sha256 => Finding::new(
            true,
            format!("the last page prints the attached manifest's SHA-256, {h}"),
        ),
        Some(h) => Finding::new(
            false,
            format!(
                "the last page prints manifest SHA-256 {h}, but the attached SHA256SUMS hashes to {manifest_sha256}"
            ),
        ),
        None => Finding::new(
            false,
            format!("the last page prints no \"{PRINTED} <64 hex digits>\""),
        ),
    })
}

/// The checkout's `checksums/` lists the attached manifest's outputs with the same bytes
/// and inputs.
fn checkout_lists_the_attached_manifest(a: &Attached, c: &Checkout) -> Result<Option<Finding>> {
    let proved = c.committed.filtered(is_proved);
    Ok(Some(match &a.manifest {
        Ok(m) if *m == proved => Finding::new(
            true,
            format!(
                "the checkout's checksums/ lists the attached manifest's {} outputs with the same bytes and inputs",
                m.len()
            ),
        ),
        Ok(m) => {
            let differences = manifest::verify(m, &proved);
            let shown: Vec<String> = differences
                .iter()
                .take(3)
                .map(ToString::to_string)
                .collect();
            Finding::new(
                false,
                format!(
                    "the checkout's checksums/ differs from the attached manifest in {} outputs, e.g. {}",
                    differences.len(),
                    shown.join("; ")
                ),
            )
        }
        Err(_) => Finding::new(
            false,
            "the checkout's manifest cannot be compared with an inconsistent attached one",
        ),
    }))
}

/// The checkout's code hashes to the code hash `provenance.json` records (when it parses).
fn checkout_code_built_the_paper(a: &Attached, c: &Checkout) -> Result<Option<Finding>> {
    let Ok(p) = &a.provenance else {
        return Ok(None);
    };
    let code = code_hash(c.repo)?;
    Ok(Some(if code == p.code_sha256 {
        Finding::new(true, "the checkout's code is the code that built the paper")
    } else {
        Finding::new(
            false,
            format!(
                "the checkout's code hashes to {code}, the paper was built by code {} (another commit?)",
                p.code_sha256
            ),
        )
    }))
}

/// Every output on disk in the checkout has the bytes its `checksums/` lists.
fn outputs_on_disk_match(_: &Attached, c: &Checkout) -> Result<Option<Finding>> {
    let on_disk = manifest::check(c.repo, &c.committed, &OUTPUT_DIRS)?;
    Ok(Some(if on_disk.is_empty() {
        Finding::new(
            true,
            format!(
                "all {} outputs on disk match the checkout's checksums/",
                c.committed.len()
            ),
        )
    } else {
        let shown: Vec<String> = on_disk.iter().take(3).map(ToString::to_string).collect();
        Finding::new(
            false,
            format!(
                "{} outputs on disk differ from the checkout's checksums/, e.g. {}",
                on_disk.len(),
                shown.join("; ")
            ),
        )
    }))
}

/// The PDF's bytes are the ones the checkout lists for [`PAPER_PDF`] or
/// [`SUPPLEMENT_PDF`] (both attach the proof), or differ from the checkout's copy of one
/// of them in metadata only ([`canonical`]).
fn pdf_bytes_are_the_listed_ones(a: &Attached, c: &Checkout) -> Result<Option<Finding>> {
    let own = sha256_hex(a.bytes);
    let listed = |doc: &str| c.committed.get(doc).map(|e| e.sha256.clone());
    if listed(PAPER_PDF).is_none() {
        return Ok(Some(Finding::new(
            false,
            format!("the checkout's checksums/ lists no {PAPER_PDF}"),
        )));
    }
    let documents = [PAPER_PDF, SUPPLEMENT_PDF];
    if let Some(doc) = documents
        .iter()
        .find(|d| listed(d).as_deref() == Some(own.as_str()))
    {
        return Ok(Some(Finding::new(
            true,
            format!("the PDF's bytes are the ones the checkout's checksums/ lists for {doc}"),
        )));
    }
    let mut compared = Vec::new();
    for doc in documents {
        let Some(listed) = listed(doc) else { continue };
        let built = c.repo.join(doc);
        let Ok(reference) = std::fs::read(&built) else {
            continue;
        };
        if sha256_hex(&reference) != listed {
            continue;
        }
        if canonical(&built, &reference)? == canonical(a.pdf, a.bytes)? {
            return Ok(Some(Finding::new(
                true,
                format!(
                    "the PDF differs from {doc} in metadata only (re-stamped): its pages and attachments are the listed ones"
                ),
            )));
        }
        compared.push(doc);
    }
    Ok(Some(Finding::new(
        false,
        if compared.is_empty() {
            format!(
                "the PDF hashes to {own}, which the checkout's checksums/ lists for neither {PAPER_PDF} nor {SUPPLEMENT_PDF}, and the checkout has no copy with the listed bytes to compare it with"
            )
        } else {
            format!(
                "the PDF's content differs from {}, not only its metadata",
                compared.join(" and ")
            )
        },
    )))
}
