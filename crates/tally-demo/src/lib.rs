//! The synthetic training job behind `tally demo`: a real learner thread and a real collector
//! (or explorer) thread whose phases take measurable time, logging through the `Logger` like
//! a real runner, with the live panel (or plain summary lines) of `tally-tui`.
//!
//! It owns the demo's settings ([`DemoConfig`]: the flags and `training.KEY=VALUE`
//! overrides, checked; [`Slowdown`]: the `--slow` factors), the run ([`run`]: the logger, the
//! profile's training loop, the runtime manifest and the close) and its synthetic workload
//! (one loop per timing profile: SAC family, APPO, on-policy, RFT). Nothing here prints or
//! installs signal handlers: the caller passes the stop flag and reports the [`Outcome`];
//! every failure is an [`Error`].

mod appo;
mod config;
mod error;
mod onpolicy;
mod rft;
mod run;
mod sac_family;
mod slow;
mod training;
mod workload;

pub use config::{profile_of, DemoConfig, KNOWN_OVERRIDES};
pub use error::Error;
pub use run::{run, Outcome, SinkFactory};
pub use slow::Slowdown;
