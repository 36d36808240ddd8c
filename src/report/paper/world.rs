//! [`PaperWorld`]: the only I/O of a Typst compile.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use typst::diag::{FileError, FileResult, PackageError};
use typst::foundations::{Bytes, Datetime, Duration};
use typst::syntax::{FileId, RootedPath, Source, VirtualPath, VirtualRoot};
use typst::text::{Font, FontBook};
use typst::utils::LazyHash;
use typst::{Library, LibraryExt, World};

use super::date::paper_date;
use crate::{Error, Result};

/// A Typst [`World`] over one report root: the only I/O of a Typst compile.
///
/// It serves the main file and every file under the report root, the fonts of
/// `typst_assets::fonts()` and nothing else: no system fonts, no package (a
/// `#import "@preview/.."` fails with an error saying packages are not available, and
/// nothing is ever downloaded), no file outside the root. Typst's virtual paths cannot
/// climb above the project root (`"../x"` is refused by the compiler itself, `"/etc/x"`
/// means `<root>/etc/x`); on top of that every realized path is canonicalized and must
/// still lie under the canonical root, so a symbolic link out of the root is refused too.
pub struct PaperWorld {
    root: PathBuf,
    canonical_root: PathBuf,
    main_path: String,
    main: FileId,
    library: LazyHash<Library>,
    book: LazyHash<FontBook>,
    fonts: &'static [Font],
    files: Mutex<HashMap<FileId, FileResult<Bytes>>>,
    sources: Mutex<HashMap<FileId, FileResult<Source>>>,
}

/// The fonts of `typst_assets::fonts()`, parsed once per process.
fn embedded_fonts() -> &'static [Font] {
    static FONTS: OnceLock<Vec<Font>> = OnceLock::new();
    FONTS.get_or_init(|| {
        typst_assets::fonts()
            .flat_map(|data| Font::iter(Bytes::new(data)))
            .collect()
    })
}

impl PaperWorld {
    /// A world on `root` (a folder) whose main file is `main`, a path relative to the root
    /// such as `paper.typ`.
    pub fn new(root: &Path, main: &str) -> Result<Self> {
        let canonical_root = root.canonicalize().map_err(|source| Error::Io {
            path: root.to_path_buf(),
            source,
        })?;
        let vpath = VirtualPath::new(main)
            .map_err(|e| Error::Invalid(format!("paper main file {main:?}: {e}")))?;
        let fonts = embedded_fonts();
        Ok(PaperWorld {
            root: root.to_path_buf(),
            canonical_root,
            main_path: main.to_string(),
            main: RootedPath::new(VirtualRoot::Project, vpath).intern(),
            library: LazyHash::new(Library::default()),
            book: LazyHash::new(FontBook::from_fonts(fonts)),
            fonts,
            files: Mutex::new(HashMap::new()),
            sources: Mutex::new(HashMap::new()),
        })
    }

    /// The report root as given.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The main file, relative to the root, as given.
    pub fn main_path(&self) -> &str {
        &self.main_path
    }

    /// The real path of `id` under the root, or why it may not be read.
    fn locate(&self, id: FileId) -> FileResult<PathBuf> {
        if let VirtualRoot::Package(spec) = id.root() {
            return Err(FileError::Package(PackageError::Other(Some(
                format!(
                    "packages are not available to the paper ({spec}): it may read only \
                     files under its report root and never downloads anything"
                )
                .into(),
            ))));
        }
        let path = id.vpath().realize(&self.root).map_err(FileError::Realize)?;
        let canonical = path
            .canonicalize()
            .map_err(|e| FileError::from_io(e, &path))?;
        if !canonical.starts_with(&self.canonical_root) {
            return Err(FileError::Other(Some(
                format!(
                    "{} lies outside the report root {} (refused)",
                    path.display(),
                    self.root.display()
                )
                .into(),
            )));
        }
        if canonical.is_dir() {
            return Err(FileError::IsDirectory);
        }
        Ok(canonical)
    }

    fn read(&self, id: FileId) -> FileResult<Bytes> {
        let mut files = self.files.lock().expect("file cache poisoned");
        if let Some(cached) = files.get(&id) {
            return cached.clone();
        }
        let result = self.locate(id).and_then(|path| {
            std::fs::read(&path)
                .map(Bytes::new)
                .map_err(|e| FileError::from_io(e, &path))
        });
        files.insert(id, result.clone());
        result
    }
}

impl World for PaperWorld {
    fn library(&self) -> &LazyHash<Library> {
        &self.library
    }

    fn book(&self) -> &LazyHash<FontBook> {
        &self.book
    }

    fn main(&self) -> FileId {
        self.main
    }

    fn source(&self, id: FileId) -> FileResult<Source> {
        let mut sources = self.sources.lock().expect("source cache poisoned");
        if let Some(cached) = sources.get(&id) {
            return cached.clone();
        }
        let result = self.read(id).and_then(|bytes| {
            let text = std::str::from_utf8(&bytes).map_err(|_| FileError::InvalidUtf8)?;
            // A byte-order mark is not part of the text (as in typst-cli).
            let text = text.strip_prefix('\u{feff}').unwrap_or(text);
            Ok(Source::new(id, text.to_string()))
        });
        sources.insert(id, result.clone());
        result
    }

    fn file(&self, id: FileId) -> FileResult<Bytes> {
        self.read(id)
    }

    fn font(&self, index: usize) -> Option<Font> {
        self.fonts.get(index).cloned()
    }

    /// Always [`super::date::PAPER_DATE`], whatever the offset: the paper never sees the clock.
    fn today(&self, _offset: Option<Duration>) -> Option<Datetime> {
        Some(paper_date())
    }
}
