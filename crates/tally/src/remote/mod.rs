//! Remote sinks (W&B, MLflow, trackio): fed from the run's persisted event files, never from
//! the training loop (docs/contract/remote-sinks.md).
//!
//! The event file is the truth. A remote sink reads the run's event files from a [`Cursor`]
//! kept in the run directory (`.tally/<sink>.cursor.json`), one row per step, on a
//! [`Follower`] thread of its own: a slow or failing sink never makes `step` wait, and after a
//! failure it catches up from the file. The cursor is saved after each acknowledged batch, so a
//! later follower or `tally sync` starts exactly where the last one stopped.
//!
//! This file only declares and re-exports: the children import each other, never their parent.

mod cursor;
mod fleet;
mod follower;
mod order;
mod pending;
mod progress;
mod rows;
mod streams;

pub use cursor::{Cursor, FilePos, Inflight, CURSOR_DIR};
pub use fleet::RemoteSinks;
pub use follower::{send_run, Follower, Notify, SyncReport};
pub use order::{first_event_wall, order_event_files, ordered_event_files, sort_keyed};
pub use pending::{scan_pending, Pending};
pub use progress::record_in_summary;
pub use streams::subrun_dirs;
// A default of `LoggerConfig`, kept reachable at its old path.
pub use crate::input::DEFAULT_FINISH_TIMEOUT_SECS;
