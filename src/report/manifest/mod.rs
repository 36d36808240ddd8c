//! The checksum manifest of the paper build: which outputs the build produced, their
//! bytes' SHA-256, and the SHA-256 of the inputs each one was made from.
//!
//! Two files under `checksums/` in the report root (the repository root), both written
//! atomically ([`crate::files::write_atomic`]) with deterministic bytes:
//!
//! - `checksums/SHA256SUMS`, in `sha256sum` format: one line `<sha256>  <path>` per output
//!   (64 lower-case hex digits, two spaces, the path relative to the root with `/`
//!   separators), sorted by path (byte order), `\n` after every line. Every figure, table,
//!   Typst source and the PDF is listed, so `sha256sum -c checksums/SHA256SUMS` run from
//!   the root checks them by hand.
//! - `checksums/inputs.json`: every distinct set of inputs once, under its combined key,
//!   and per output the key of the set it was made from; keys sorted, two-space indent,
//!   final newline (schema 2; the outputs of one study share one set):
//!
//!   ```json
//!   {
//!     "schema": 2,
//!     "sets": {
//!       "<key>": {
//!         "results/smoke/cnn_s/seed-0/matrix.json": "<sha256>"
//!       }
//!     },
//!     "outputs": {
//!       "figures/smoke/cnn_s-raw.svg": "<key>"
//!     }
//!   }
//!   ```
//!
//!   An input is named by a path relative to the root (`results/..`, `presets/..`, or a
//!   name the build chooses for something that is not a file, such as its own code) and
//!   identified by its SHA-256. The key is the SHA-256 of the inputs written in
//!   `sha256sum` format (`<sha256>  <path>\n` per input, sorted), so it can be recomputed
//!   by hand. Both files list exactly the same outputs.
//!
//! An output path is relative, uses `/`, has no empty, `.` or `..` component, no `\` or
//! control character, and is not under `checksums/`.
//!
//! The build compares what it built with the committed manifest ([`verify`]) and, for the
//! fast reviewer check, the files on disk with it ([`check`], [`strays`]); every
//! [`Difference`] displays as one line naming the path and the reason. An output whose
//! inputs and file on disk both still match the manifest need not be re-rendered
//! ([`Manifest::is_fresh`]). Same inputs but different bytes means the build is not
//! deterministic — so the build must list among an output's inputs everything that
//! decides its bytes, its own code included.

mod compare;
mod format;
mod trace;

pub use compare::{
    Change, Difference, InputChange, Kind, Reason, check, check_input_files, files_under, strays,
    verify,
};
pub use format::{DIR, Entry, INPUTS, InputHashes, Manifest, SCHEMA, SUMS, hash_files, input_key};
