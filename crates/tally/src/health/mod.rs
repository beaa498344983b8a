//! Health rules: NaN, divergence, collapse, flat rewards, thresholds, stalls, slow
//! throughput and tally's own overhead, found in a run's values one value at a time
//! (`docs/contract/health.md`).
//!
//! One implementation for every place that checks a run: `tally_read::health` feeds it a
//! run's scalars after the fact; the logger feeds it each step through [`live::LiveHealth`].

pub mod eval;
pub mod file;
pub mod finding;
pub mod live;
pub mod pace;
pub mod rules;
pub mod sink_lag;
pub mod stall_exit;
pub mod webhook;
pub mod window;

pub use eval::{Evaluator, TagSlot};
pub use file::{apply_rules_file, RulesFileError};
pub use finding::{Finding, RuleKind};
pub use live::LiveHealth;
pub use rules::{
    Collapse, Disk, Divergence, FlatFor, Overhead, Ranks, Rule, RuleSet, SinkLag, Stall, TagRule,
    Tags, Throughput,
};
pub use sink_lag::SinkAcks;
