//! One module per `tally` subcommand; `lib.rs` parses the flags and calls into these.

pub mod board;
pub mod compare;
pub mod curves;
pub mod demo;
pub mod diagnose;
pub mod export;
pub mod extract;
pub mod health;
pub mod runs;
pub mod scaling;
pub mod schema;
pub mod soak;
pub mod sql;
pub mod sync;
pub mod trace_stats;
pub mod validate;
pub mod watch;
