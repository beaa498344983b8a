//! tally: one honest source of telemetry for RL training runs.
//!
//! This crate is the facade: the run directory and its JSON artefacts today; the `Logger`,
//! its derivations and sinks build on them (see ARCHITECTURE.md).

pub mod atomic;
pub mod error;
pub mod host;
pub mod run;
pub mod rundir;

pub use error::{Error, Result};
pub use rundir::{create_run_dir, RunDirSpec};
pub use tally_schema as schema;
pub use tally_tfevents as tfevents;
