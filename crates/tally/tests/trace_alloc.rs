//! A disabled tracer costs nothing: no allocation (docs/contract/trace.md "Options"). Alone in
//! its test binary so no other test allocates while the count runs.

use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use std::sync::Arc;
use tally::trace::{TraceOptions, Tracer};
use tally::SystemClock;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn a_disabled_tracer_neither_allocates_nor_records() {
    let t = Tracer::disabled();
    let region = Region::new(GLOBAL);
    for _ in 0..1000 {
        let c = t.clone();
        let _s = c.span("learning", "learner");
        c.in_span("inner", "learner", || ());
        c.counter("replay_size", 1.0).unwrap();
        c.add_span("gpu", "gpu", 0.0, 1.0, "gpu").unwrap();
        c.name_thread("main");
        if let Some(m) = c.begin() {
            c.end(m, "x", "y");
        }
    }
    assert_eq!(region.change().allocations, 0);
    assert!(!t.is_enabled() && t.path().is_none() && t.finish().is_ok());
    // The count is live: an enabled tracer's span does allocate.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("t.json");
    let clock = Arc::new(SystemClock::default());
    let on = Tracer::start(&path, "p", clock, TraceOptions::default()).unwrap();
    let region = Region::new(GLOBAL);
    on.in_span("learning", "learner", || ());
    assert!(region.change().allocations > 0);
    on.finish().unwrap();
}
