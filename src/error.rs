//! The library's error type: every variant names the file, field or line at fault.

use std::path::PathBuf;

/// Errors of the `drift` library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A preset file is malformed or inconsistent; `message` starts with the field path.
    #[error("{}: {message}", path.display())]
    Preset {
        /// The preset file.
        path: PathBuf,
        /// What is wrong, e.g. `models[2].epochs: expected a positive integer`.
        message: String,
    },
    /// An artifact file is missing, truncated, tampered with or inconsistent.
    #[error("{}: {message}", path.display())]
    Artifact {
        /// The artifact file (or run folder).
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A CSV input is malformed.
    #[error("{}: line {line}: {message}", path.display())]
    Csv {
        /// The CSV file.
        path: PathBuf,
        /// 1-based line number (the header is line 1).
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// Inputs that cannot be used together (lengths differ, wrong label type, ...).
    #[error("{0}")]
    Invalid(String),
}

/// `Result` with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Whether this is a write to a closed pipe (`drift ... | head`): the reader has all it
    /// wanted, so the binaries end quietly and successfully.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
