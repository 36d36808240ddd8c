//! The crate's modules follow the data flow: a stage imports only the stages before it
//! (`src/lib.rs` lists them), so there is no import loop and no lower stage knows a higher
//! one. This reads every `crate::` path under `src/` and checks it against that order.

use std::collections::BTreeSet;
use std::path::Path;

/// The top-level modules of `src/`, each stage after the ones it may import.
const ORDER: &[&str] = &[
    "error",
    "output",
    "files",
    "checksum",
    "format",
    "table",
    "csv_table",
    "packages",
    "device",
    "metrics",
    "slices",
    "data",
    "encoders",
    "text",
    "models",
    "train",
    "eval",
    "matrix",
    "analysis",
    "preset",
    "artifacts",
    "baseline",
    "run",
    "saliency",
    "report",
    "study",
    "notebook",
    "cli",
];

/// What the crate root re-exports, by the module that defines it.
fn home(name: &str) -> &str {
    match name {
        "Error" | "Result" => "error",
        "DriftMatrix" | "Grid" => "matrix",
        "Metric" | "Direction" => "metrics",
        other => other,
    }
}

/// The first path segment of every `crate::` path in `code` (`crate::{a::x, b}` gives
/// `a` and `b`).
fn crate_imports(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // `$crate::`, `my_crate::`
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group, split at commas outside nested braces.
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.insert(ident(&group[start..i]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(ident(&group[start..i]));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

/// Code without `//` comments (doc links name later stages on purpose: "see ...").
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_module_imports_a_later_stage() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rank = |m: &str| ORDER.iter().position(|o| *o == m);
    let mut violations = Vec::new();
    let mut files = 0;
    for entry in walkdir::WalkDir::new(&src).sort_by_file_name() {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(&src).unwrap();
        let Some(top) = rel.components().next() else {
            continue;
        };
        let top = top.as_os_str().to_str().unwrap().trim_end_matches(".rs");
        if !entry.file_type().is_file() || matches!(top, "lib" | "main" | "bin") {
            continue; // the crate root and the binaries sit above every stage
        }
        files += 1;
        let own = rank(top).unwrap_or_else(|| panic!("src/{top} is not in ORDER"));
        let code = without_comments(&std::fs::read_to_string(entry.path()).unwrap());
        for import in crate_imports(&code) {
            let target = home(&import);
            let other = rank(target).unwrap_or_else(|| {
                panic!("src/{}: crate::{import} is not a module", rel.display())
            });
            if other > own {
                violations.push(format!("src/{} ({top}) imports {target}", rel.display()));
            }
        }
    }
    assert!(files > 50, "{files} files under src/");
    assert!(
        violations.is_empty(),
        "imports of later stages:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_import_reader_sees_groups_and_skips_other_crates() {
    let code = "use crate::{data::{self, Dataset}, Error, text::load};\n\
                let x = crate::packages::cache_dir(); $crate::y; other_crate::z;";
    let found: Vec<String> = crate_imports(code).into_iter().collect();
    assert_eq!(found, ["Error", "data", "packages", "text"]);
}
