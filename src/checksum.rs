//! SHA-256 digests and `sha256sum`-format listings: the one place that hashes bytes and
//! files and reads, writes and verifies `SHA256SUMS` files (run folders, saliency maps,
//! the report's manifest).
//!
//! A listing has one line `<sha256>  <path>` per file (64 lower-case hex digits, two
//! spaces, the path), sorted by path with no path twice, every line ending in a newline:
//! exactly what `sha256sum` prints for sorted arguments, so `sha256sum -c` checks a
//! listing by hand. [`Sums::parse`] accepts nothing else, so a listing edited by hand into
//! another shape is an error naming the line, never half-read.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use sha2::Digest;

use crate::{Error, Result};

/// The file name of a listing.
pub const SUMS: &str = "SHA256SUMS";

/// Lower-case hex of `bytes`. By hand: sha2 0.11's digests have no `LowerHex`, and eight
/// lines are not worth a dependency.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

/// Lower-case hex of the SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&sha2::Sha256::digest(bytes))
}

/// Whether `s` is `len` lower-case hex digits.
pub fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Whether `s` is a SHA-256 in lower-case hex.
pub fn is_sha256(s: &str) -> bool {
    is_hex(s, 64)
}

/// A SHA-256 fed piece by piece.
#[derive(Clone, Default)]
pub struct Hasher(sha2::Sha256);

impl Hasher {
    /// An empty hash.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `bytes`.
    pub fn update(&mut self, bytes: impl AsRef<[u8]>) {
        self.0.update(bytes);
    }

    /// The digest in lower-case hex.
    pub fn finish(self) -> String {
        hex(&self.0.finalize())
    }
}

/// A reader that hashes every byte read through it.
pub struct HashingReader<R> {
    inner: R,
    hash: Hasher,
}

impl<R: Read> HashingReader<R> {
    /// Hashes what is read from `inner`.
    pub fn new(inner: R) -> Self {
        HashingReader {
            inner,
            hash: Hasher::new(),
        }
    }

    /// Reads the rest of the input (a decoder may leave padding unread), then returns the
    /// digest of every byte of it.
    pub fn finish(mut self) -> std::io::Result<String> {
        std::io::copy(&mut self, &mut std::io::sink())?;
        Ok(self.hash.finish())
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

/// Why a file's bytes are not the ones a listing records: `its sha256 <actual> is not the
/// <recorded> recorded in <listing>`.
pub fn mismatch(actual: &str, recorded: &str, listing: &str) -> String {
    format!("its sha256 {actual} is not the {recorded} recorded in {listing}")
}

/// The `sha256sum` text of (path, digest) pairs given in path order: `<sha256>  <path>\n`
/// each.
pub fn listing<'a>(entries: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    entries.map(|(p, h)| format!("{h}  {p}\n")).collect()
}

/// A `sha256sum` listing: path to SHA-256, in path order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sums(BTreeMap<String, String>);

impl Sums {
    /// An empty listing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `bytes` under `path`.
    pub fn add(&mut self, path: impl Into<String>, bytes: &[u8]) {
        self.0.insert(path.into(), sha256_hex(bytes));
    }

    /// Forgets `path`; returns its digest if it was listed.
    pub fn remove(&mut self, path: &str) -> Option<String> {
        self.0.remove(path)
    }

    /// The digest recorded for `path`.
    pub fn get(&self, path: &str) -> Option<&str> {
        self.0.get(path).map(String::as_str)
    }

    /// Every (path, digest), in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(p, h)| (p.as_str(), h.as_str()))
    }

    /// Every path, in order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// The listing's text.
    pub fn to_text(&self) -> String {
        listing(self.iter())
    }

    /// The listing as path to digest.
    pub fn into_map(self) -> BTreeMap<String, String> {
        self.0
    }

    /// Parses a listing; the error starts with the line (`line 3: ...`).
    pub fn parse(text: &str) -> std::result::Result<Sums, String> {
        Self::parse_checked(text, |_| Ok(()))
    }

    /// [`Sums::parse`], with `check` saying why a path is not acceptable to the caller.
    pub fn parse_checked(
        text: &str,
        check: impl Fn(&str) -> std::result::Result<(), String>,
    ) -> std::result::Result<Sums, String> {
        if !text.is_empty() && !text.ends_with('\n') {
            let n = text.split('\n').count();
            return Err(format!("line {n}: no newline at the end"));
        }
        let mut sums = BTreeMap::new();
        let mut previous: Option<&str> = None;
        for (n, line) in text.split_terminator('\n').enumerate() {
            let n = n + 1;
            let Some((hash, path)) = line.split_once("  ").filter(|(h, _)| is_sha256(h)) else {
                return Err(format!(
                    "line {n}: expected \"<sha256>  <path>\" (64 lower-case hex digits, two spaces, a path)"
                ));
            };
            if path.is_empty() {
                return Err(format!("line {n}: empty path"));
            }
            check(path).map_err(|m| format!("line {n}: {m}"))?;
            if let Some(prev) = previous {
                if prev == path {
                    return Err(format!("line {n}: {path} is listed twice"));
                }
                if prev > path {
                    return Err(format!(
                        "line {n}: {path} is out of order (the lines must be sorted by path)"
                    ));
                }
            }
            previous = Some(path);
            sums.insert(path.to_string(), hash.to_string());
        }
        Ok(Sums(sums))
    }

    /// Reads and parses the listing at `path`; a malformed one is an error naming it. A
    /// missing file is the I/O error `NotFound` (see [`Sums::read_or_empty`]).
    pub fn read(path: &Path) -> Result<Sums> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Sums::parse(&text).map_err(|message| Error::Artifact {
            path: path.to_path_buf(),
            message,
        })
    }

    /// [`Sums::read`], with a missing file read as an empty listing.
    pub fn read_or_empty(path: &Path) -> Result<Sums> {
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Sums::new()),
            _ => Sums::read(path),
        }
    }

    /// Writes the listing to `path` atomically.
    pub fn write(&self, path: &Path) -> Result<()> {
        crate::files::write_atomic(path, self.to_text().as_bytes())
    }

    /// Checks `bytes` against the digest listed for `path`: `Err` says it is not listed
    /// (the file is unfinished or foreign), or the [`mismatch`] with `listing` as the
    /// listing's name.
    pub fn verify(
        &self,
        path: &str,
        bytes: &[u8],
        listing: &str,
    ) -> std::result::Result<(), String> {
        let recorded = self
            .get(path)
            .ok_or_else(|| format!("not listed in {listing}: unfinished or foreign"))?;
        let actual = sha256_hex(bytes);
        if actual == recorded {
            Ok(())
        } else {
            Err(mismatch(&actual, recorded, listing))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lower_case_and_matches_sha256sum() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        // `printf abc | sha256sum`
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let mut h = Hasher::new();
        h.update("a");
        h.update(b"bc");
        assert_eq!(h.finish(), sha256_hex(b"abc"));
    }

    #[test]
    fn a_listing_round_trips_and_bad_lines_are_named() {
        let mut sums = Sums::new();
        sums.add("b", b"2");
        sums.add("a", b"1");
        let text = sums.to_text();
        assert!(text.starts_with(&format!("{}  a\n", sha256_hex(b"1"))));
        assert_eq!(Sums::parse(&text).unwrap(), sums);
        assert_eq!(sums.verify("a", b"1", SUMS), Ok(()));
        assert!(
            sums.verify("a", b"x", SUMS)
                .unwrap_err()
                .ends_with("recorded in SHA256SUMS")
        );
        assert_eq!(
            sums.verify("c", b"1", SUMS),
            Err("not listed in SHA256SUMS: unfinished or foreign".into())
        );

        let h = sha256_hex(b"");
        for (text, error) in [
            ("x\n".to_string(), "line 1: expected"),
            (format!("{h}  a"), "line 1: no newline at the end"),
            (format!("{h}  b\n{h}  a\n"), "line 2: a is out of order"),
            (format!("{h}  a\n{h}  a\n"), "line 2: a is listed twice"),
            (format!("{h}  \n"), "line 1: empty path"),
            (format!("{}  a\n", h.to_uppercase()), "line 1: expected"),
        ] {
            let got = Sums::parse(&text).unwrap_err();
            assert!(got.starts_with(error), "{text:?}: {got}");
        }
    }
}
