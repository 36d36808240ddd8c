//! Hardening: faults a user will meet sooner or later (a closed pipe, damaged files,
//! hostile input, a full disk, a kill) end in a clear error or a clean exit, never in a
//! panic, lost work or a damaged file silently used. Each module is one kind of fault.

#[cfg(feature = "paper")]
mod damage;
mod fuzz;
mod hostile;
mod pipes;
