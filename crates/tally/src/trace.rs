//! A Perfetto-readable trace (Chrome trace-event JSON) of a run's phases.
//!
//! docs/contract/trace.md: `{"traceEvents": [...]}`, `X` slices with µs `ts`/`dur`, `C`
//! counters, and `M` metadata naming the process and each thread. Times are seconds on the
//! run's clock. Cheap when off: a disabled run holds no `Tracer` at all, so every hook is one
//! `Option` check. The free-form names in event args (process, threads) are redacted
//! (docs/contract/run-artifacts.md "Secrets").

use crate::redact::redact_text;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::{Arc, Mutex};
use tally_clock::Clock;

/// File name of the trace inside the run directory (or `trace_output_dir`).
pub const TRACE_FILE: &str = "perfetto_offpolicy_timeline.json";

#[derive(Debug, Default)]
struct Buf {
    events: Vec<Value>,
    threads: Vec<String>,
}

/// A shared trace recorder; clone it into every thread that records.
#[derive(Debug, Clone)]
pub struct Tracer {
    buf: Arc<Mutex<Buf>>,
    clock: Arc<dyn Clock>,
    /// The clock's reading at trace time 0.
    origin: f64,
    pid: u32,
}

impl Tracer {
    /// A recorder for a process named `process_name` on `clock`; trace time 0 is now.
    pub fn new(process_name: &str, clock: Arc<dyn Clock>) -> Self {
        let pid = std::process::id();
        let buf = Buf {
            events: vec![
                json!({"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": redact_text(process_name)}}),
            ],
            threads: Vec::new(),
        };
        Tracer {
            buf: Arc::new(Mutex::new(buf)),
            origin: clock.monotonic(),
            clock,
            pid,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Buf> {
        self.buf.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The thread id for `name`, registering it (one `thread_name` metadata event) on first use.
    pub fn thread(&self, name: &str) -> u64 {
        let mut b = self.lock();
        if let Some(i) = b.threads.iter().position(|t| t == name) {
            return i as u64 + 1;
        }
        b.threads.push(name.to_owned());
        let tid = b.threads.len() as u64;
        let pid = self.pid;
        b.events.push(json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": redact_text(name)}}));
        tid
    }

    /// Now, on the trace's clock (pass it back as a span's start or end).
    pub fn now(&self) -> f64 {
        self.clock.monotonic()
    }

    fn us(&self, t: f64) -> f64 {
        (t - self.origin).max(0.0) * 1e6
    }

    /// A complete slice `name` on thread `tid` from `start` to `end` (clock seconds).
    pub fn span(&self, tid: u64, name: &str, cat: &str, start: f64, end: f64) {
        let (ts, dur) = (self.us(start), (end - start).max(0.0) * 1e6);
        let pid = self.pid;
        self.lock().events.push(json!({"name": name, "cat": cat, "ph": "X", "ts": ts, "dur": dur, "pid": pid, "tid": tid}));
    }

    /// Consecutive slices on `tid` starting at `start`, one per (name, seconds) phase: how
    /// a runner that measured exclusive phases with its own timers lays them on the timeline.
    pub fn phases(&self, tid: u64, cat: &str, start: f64, phases: &[(&str, f64)]) {
        let mut t = start;
        for (name, secs) in phases {
            let end = t + secs.max(0.0);
            self.span(tid, name, cat, t, end);
            t = end;
        }
    }

    /// A counter sample at clock time `at`.
    pub fn counter(&self, tid: u64, name: &str, value: f64, at: f64) {
        let ts = self.us(at);
        let pid = self.pid;
        self.lock().events.push(json!({"name": name, "ph": "C", "ts": ts, "pid": pid, "tid": tid, "args": {"value": value}}));
    }

    /// Number of recorded events (metadata included).
    pub fn len(&self) -> usize {
        self.lock().events.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Write `{"traceEvents": [...]}` atomically to `path`.
    pub fn write(&self, path: &Path) -> crate::Result<()> {
        let doc = json!({"traceEvents": self.lock().events});
        crate::atomic::write_json_atomic(path, &doc)
    }
}
