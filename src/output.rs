//! What the binaries print. `println!` panics when standard output is a closed pipe
//! (`drift models --params | head -2`); these macros instead return the write's error
//! ([`crate::Error::Io`] naming `<stdout>`), which the binaries end on quietly and
//! successfully ([`crate::Error::is_broken_pipe`]), as ripgrep does. Messages to standard
//! error are best effort: when it is closed there is no one left to tell.

use std::io::Write;

use crate::{Error, Result};

/// Writes `args` to standard output.
pub fn write_out(args: std::fmt::Arguments) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.flush())
        .map_err(|e| Error::io("<stdout>", e))
}

/// Writes `args` and a newline to standard output.
pub fn write_line(args: std::fmt::Arguments) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
        .map_err(|e| Error::io("<stdout>", e))
}

/// Writes `args` and a newline to standard error, ignoring a failed write.
pub fn write_err(args: std::fmt::Arguments) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}

/// `print!` that returns `Result<()>` instead of panicking on a closed pipe.
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::write_out(format_args!($($arg)*)) };
}

/// `println!` that returns `Result<()>` instead of panicking on a closed pipe.
macro_rules! outln {
    ($($arg:tt)*) => { $crate::output::write_line(format_args!($($arg)*)) };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    ($($arg:tt)*) => { $crate::output::write_err(format_args!($($arg)*)) };
}

pub(crate) use {errln, out, outln};
