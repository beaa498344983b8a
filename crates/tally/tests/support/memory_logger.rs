//! A logger whose only sink is a [`MemorySink`] (no backend), on a manual clock: what most
//! logger tests read their steps back from.

use std::sync::Arc;
use tally::{Logger, LoggerConfig, ManualClock, MemorySink};

/// A logger for `c` writing to a memory sink, its clock at `t0`; the sink and the clock to
/// read and move.
pub fn memory_logger(c: LoggerConfig, t0: f64) -> (Logger, MemorySink, Arc<ManualClock>) {
    let mem = MemorySink::new();
    let clock = Arc::new(ManualClock::at(t0));
    let log = Logger::with_sinks(c, vec![Box::new(mem.clone())], clock.clone()).unwrap();
    (log, mem, clock)
}
