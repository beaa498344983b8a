//! Reading training runs back, for every front end (the `tally` command, the Python package,
//! the board, SQL): which files make up a run and in which order ([`files`]), a run's scalars
//! streamed as one series ([`scalars`]) or read into columns ([`columns`], runs read one per
//! core by [`parallel`]), growing files followed as they are written ([`follow`], [`listing`]),
//! a run's metadata and configuration ([`meta`], [`config`]), its text, images and histograms
//! ([`summaries`]) and the damage a reader found ([`damage`]); the runs table every front end
//! shows ([`runs`]); a chart's series held and reduced to its width ([`live`], [`downsample`],
//! [`shares`]) and smoothed as TensorBoard smooths it ([`smooth`]); the analyses (trailing values [`tails`], [`extract`], [`diagnose`],
//! [`health`], [`compare`], [`scaling`], [`trace_stats`]), the one gate for pre-schema runs
//! ([`legacy`]) and the export writers ([`export`]).
//!
//! Nothing here prints: what a long read finds on the way goes to an [`Observer`]; every
//! failure is an [`Error`] naming the culprit. The rules are `docs/contract/consumers.md`'s.

pub mod columns;
pub mod compare;
pub mod config;
pub mod damage;
pub mod diagnose;
pub mod downsample;
pub mod error;
pub mod export;
pub mod extract;
pub mod files;
pub mod follow;
pub mod health;
pub mod json;
pub mod legacy;
pub mod listing;
pub mod live;
pub mod meta;
pub mod observer;
pub mod parallel;
pub mod param_table;
pub mod readahead;
pub mod recorded;
pub mod runs;
pub mod scalars;
pub mod scaling;
pub mod shares;
pub mod smooth;
pub mod summaries;
pub mod tails;
pub mod trace_stats;

pub use error::{Error, Result};
pub use files::{run_event_files, runs_of, runs_under, RunDir};
pub use observer::{Observer, Quiet};
pub use scalars::RunScalars;
