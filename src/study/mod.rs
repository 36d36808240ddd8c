//! `drift study`: a studies file (`report/studies.toml`) as a graph of work items, each in
//! a state read from the disk, run in dependency order by an executor.
//!
//! The items, in stage order ([`Stage`]): the encoder cache of every preset that reads
//! one; per preset its counting baseline and one run per (model, seed), and the model
//! listing the paper's roster reads; the saliency maps the studies ask for; the paper.
//! Every item is one `drift` command line ([`Item::command`]), so the local executor
//! ([`local`]) and a Slurm job array ([`slurm`]) run exactly the same thing, and an
//! item's work is resumable as `drift run` is.
//!
//! An item is done when its artifact loads (every check and checksum of
//! [`crate::artifacts`]) and was made for the preset's current content hash and data
//! identity; otherwise it is missing, stale (with the reason) or failed (its last
//! attempt's record). Stale work is never reused or overwritten silently: the caller
//! chooses with [`Rerun`].
//!
//! The files, types below behaviour: `item` (stages, work, states, an item's command
//! line), `state_dir` (`<out>/.study` and its lock), `failures` (the failure records),
//! `presets` (each preset loaded once, with the data identity its runs must record),
//! `disk_state` (each item's state from the disk), `timings` (estimates), `plan` (the
//! graph of items), `selection` (what to run under [`Rerun`], the `--plan` listing), and
//! the two executors.

mod disk_state;
mod failures;
mod item;
pub mod local;
mod plan;
mod presets;
mod selection;
pub mod slurm;
mod state_dir;
mod timings;

pub use disk_state::cutoffs_done;
pub use failures::{failures, write_failures};
pub use item::{Item, Stage, State, Work};
pub use plan::{Setup, StudyPlan, is_the_papers};
pub use selection::Rerun;
pub use state_dir::{STATE_DIR, lock};
pub use timings::seconds;
