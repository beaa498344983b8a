//! tally: one honest source of telemetry for RL training runs.
//!
//! A runner builds one [`Logger`] per run (rank 0) and calls [`Logger::step`] once per
//! iteration with a [`StepInput`]. The logger validates it against the canonical schema v1,
//! derives everything from it once, writes the unsmoothed canonical payload to its sinks from a
//! writer thread, and keeps the terminal window the panel renders from. The contract it follows
//! is written down in `docs/contract/`.
//!
//! Where things are:
//! - a step: [`input`] (what a runner submits), [`resolve`] (checked into canonical tags),
//!   [`record`] (everything derived once), [`logger`] (start, step, flush, close);
//! - writing: [`writer`] (the writer thread and its queue), [`sink`], [`backlog`] (a local
//!   sink's retries), [`kept_events`] (the same for a writer without a `Logger`);
//! - the run directory: [`rundir`], [`run`], [`atomic`], [`room`], [`runlock`], [`resume`],
//!   [`redact`];
//! - what the panel reads: [`terminal`], [`window`], [`timeline`], [`replay`], [`board`];
//! - beside the steps: [`trace`], [`remote`] (remote sinks following the event file, and the
//!   one run-file order readers reuse), [`health`] (the rules every checker of a run shares),
//!   [`system`] (the system metrics' sampler, a thread of its own);
//! - a run written to object storage: [`upload`] (the trait `tally-cloud`'s uploader
//!   implements, so this crate never depends on an object-store client) and [`segments`] (the
//!   one rule for the event file as segments, which `tally-cloud` follows too).

pub mod atomic;
pub mod backlog;
pub mod board;
pub mod error;
pub mod health;
pub mod host;
pub mod input;
pub mod kept_events;
pub mod logger;
pub mod lost;
pub mod record;
pub mod redact;
pub mod reduce;
pub mod remote;
pub mod replay;
pub mod resolve;
pub mod resume;
pub mod room;
pub mod run;
pub mod rundir;
pub mod runlock;
pub mod segments;
pub mod sink;
pub mod summary;
pub mod summary_pace;
pub mod system;
pub mod tag;
pub mod terminal;
pub mod timeline;
pub mod trace;
pub mod upload;
pub mod user;
pub mod values;
pub mod window;
pub mod writer;

pub use error::{Error, Result};
pub use host::MpsState;
pub use input::{
    Backend, FieldKind, Key, LoggerConfig, OnStorageError, OutsideKeys, StepInput, SystemInfo,
    STEP_FIELDS,
};
pub use logger::Logger;
pub use reduce::{reduce_ranks, reduction, Rates};
pub use rundir::{create_run_dir, RunDirSpec};
pub use sink::{BackendStep, MemorySink, Sink, SinkError, StorageFault, TensorBoardSink};
pub use tag::Tag;
pub use tally_clock::{Clock, ManualClock, SystemClock};
pub use tally_schema as schema;
pub use tally_schema::artifacts::RunStatus;
pub use tally_schema::{Profile, Reduction, SummaryStat};
pub use tally_tfevents as tfevents;
pub use terminal::Level;
pub use trace::Tracer;
pub use user::{UserMetricSpec, UserMetrics};
