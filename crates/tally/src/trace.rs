//! A Perfetto-readable trace (Chrome trace-event JSON) of a run's phases.
//!
//! Reference §6: `{"traceEvents": [...]}`, `X` slices with µs `ts`/`dur`, `C` counters, and
//! `M` metadata naming the process and each thread. Cheap when off: a disabled run holds no
//! `Tracer` at all, so every hook is one `Option` check.

use serde_json::{json, Value};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

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
    origin: Instant,
    pid: u32,
}

impl Tracer {
    /// A recorder for a process named `process_name`; time 0 is now.
    pub fn new(process_name: &str) -> Self {
        let pid = std::process::id();
        let buf = Buf {
            events: vec![
                json!({"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": process_name}}),
            ],
            threads: Vec::new(),
        };
        Tracer {
            buf: Arc::new(Mutex::new(buf)),
            origin: Instant::now(),
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
        b.events.push(json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}));
        tid
    }

    fn us(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.origin).as_secs_f64() * 1e6
    }

    /// A complete slice `name` on thread `tid` from `start` to `end`.
    pub fn span(&self, tid: u64, name: &str, cat: &str, start: Instant, end: Instant) {
        let (ts, dur) = (
            self.us(start),
            end.saturating_duration_since(start).as_secs_f64() * 1e6,
        );
        let pid = self.pid;
        self.lock().events.push(json!({"name": name, "cat": cat, "ph": "X", "ts": ts, "dur": dur, "pid": pid, "tid": tid}));
    }

    /// Consecutive slices on `tid` starting at `start`, one per (name, seconds) phase: how
    /// a runner that measured exclusive phases with its own timers lays them on the timeline.
    pub fn phases(&self, tid: u64, cat: &str, start: Instant, phases: &[(&str, f64)]) {
        let mut t = start;
        for (name, secs) in phases {
            let end = t + std::time::Duration::from_secs_f64(secs.max(0.0));
            self.span(tid, name, cat, t, end);
            t = end;
        }
    }

    /// A counter sample.
    pub fn counter(&self, tid: u64, name: &str, value: f64, at: Instant) {
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
