//! A Perfetto-readable timeline (Chrome trace-event JSON) recorded where the work happens.
//!
//! docs/contract/trace.md: every span carries the OS thread that ran it (its own tid and a
//! `thread_name` metadata event), externally timed work lands on named tracks of its own, and
//! events stream through a bounded channel to a writer thread that appends them to the file,
//! so memory stays bounded over hours and a crashed run leaves a readable prefix.
//!
//! A [`Tracer`] is a cheap cloneable handle. The disabled handle holds nothing: every call is
//! one `Option` check, with no allocation and no lock.

mod read;
mod writer;

pub use read::{read_trace, TraceFile};

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use tally_clock::Clock;
use writer::{Event, Msg};

/// File name of the trace inside the run directory (or `trace_output_dir`).
pub const TRACE_FILE: &str = "perfetto_offpolicy_timeline.json";

/// Events the channel to the writer thread holds before a recording thread waits.
const CHANNEL_EVENTS: usize = 16_384;

/// Track ids start above any Linux thread id (`pid_max` is at most 2^22), so a track never
/// shares a row with a real thread.
const TRACK_TID_BASE: u64 = 1 << 32;

/// What a trace records beyond spans, counters and tracks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceOptions {
    /// Add the recording thread's CPU time to each span (`tts`/`tdur`).
    pub thread_time: bool,
    /// The runner times GPU work with CUDA events and passes it to [`Tracer::add_span`]; the
    /// tracer records the choice for runners to read ([`Tracer::cuda_events`]).
    pub cuda_events: bool,
}

/// A bad argument to a trace call; nothing was recorded for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("trace {call}: {culprit}: {reason}")]
pub struct TraceInputError {
    /// The call (`add_span`, `counter`).
    pub call: &'static str,
    /// The argument and its value.
    pub culprit: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// A recording handle; clone it into every thread that records. [`Tracer::disabled`] is free.
#[derive(Debug, Clone, Default)]
pub struct Tracer {
    inner: Option<Arc<Inner>>,
}

#[derive(Debug)]
struct Inner {
    /// Tells this tracer's thread registrations apart from other tracers' (thread-local).
    id: u64,
    tx: SyncSender<Msg>,
    clock: Arc<dyn Clock>,
    /// The clock's reading at trace time 0.
    origin: f64,
    options: TraceOptions,
    path: PathBuf,
    /// Names of the tracks `add_span` used; a track's tid is its index above the base.
    tracks: Mutex<Vec<String>>,
    writer: Mutex<Option<JoinHandle<std::io::Result<()>>>>,
}

/// A span's start, for bindings that cannot hold a [`Span`] guard (end it with [`Tracer::end`]).
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    start: f64,
    cpu: Option<f64>,
}

/// Records one span from its creation to its drop, on the thread that drops it.
#[must_use = "a span ends when this guard drops"]
pub struct Span<'a> {
    tracer: &'a Tracer,
    name: &'a str,
    cat: &'a str,
    mark: Option<Mark>,
}

impl Drop for Span<'_> {
    fn drop(&mut self) {
        if let Some(m) = self.mark.take() {
            self.tracer.end(m, self.name, self.cat);
        }
    }
}

/// This thread's registration with each tracer it recorded on: (tracer id, tid, name sent).
struct Registered {
    tracer: u64,
    tid: u64,
    name: String,
}

thread_local! {
    static THREADS: RefCell<Vec<Registered>> = const { RefCell::new(Vec::new()) };
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn os_tid() -> u64 {
    u64::from(
        rustix::thread::gettid()
            .as_raw_nonzero()
            .get()
            .unsigned_abs(),
    )
}

/// The calling thread's CPU time in seconds.
fn thread_cpu_secs() -> f64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

impl Tracer {
    /// The handle that records nothing.
    pub const fn disabled() -> Self {
        Tracer { inner: None }
    }

    /// Start a trace at `path` for a process named `process_name`, timed on `clock` (trace
    /// time 0 is now); its writer thread appends events until [`Tracer::finish`].
    pub fn start(
        path: &Path,
        process_name: &str,
        clock: Arc<dyn Clock>,
        options: TraceOptions,
    ) -> crate::Result<Self> {
        let pid = std::process::id();
        let (tx, writer) = writer::spawn(path, process_name, pid, CHANNEL_EVENTS)?;
        Ok(Tracer {
            inner: Some(Arc::new(Inner {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                tx,
                origin: clock.monotonic(),
                clock,
                options,
                path: path.to_owned(),
                tracks: Mutex::new(Vec::new()),
                writer: Mutex::new(Some(writer)),
            })),
        })
    }

    /// Whether this handle records.
    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// The trace file, when recording.
    pub fn path(&self) -> Option<&Path> {
        self.inner.as_deref().map(|i| i.path.as_path())
    }

    /// Whether the runner asked for GPU work timed by CUDA events (`trace_cuda_events`).
    pub fn cuda_events(&self) -> bool {
        self.inner.as_deref().is_some_and(|i| i.options.cuda_events)
    }

    /// Now on the trace's clock, in seconds (a start for [`Tracer::add_span`]); 0 when off.
    pub fn now(&self) -> f64 {
        self.inner.as_deref().map_or(0.0, |i| i.clock.monotonic())
    }

    /// A span `name` in category `cat` on the calling thread, ended when the guard drops.
    pub fn span<'a>(&'a self, name: &'a str, cat: &'a str) -> Span<'a> {
        Span {
            tracer: self,
            name,
            cat,
            mark: self.begin(),
        }
    }

    /// Run `f` inside a span `name` (category `cat`) and return its result.
    pub fn in_span<R>(&self, name: &str, cat: &str, f: impl FnOnce() -> R) -> R {
        let _s = self.span(name, cat);
        f()
    }

    /// Start a span on the calling thread; `None` when off.
    pub fn begin(&self) -> Option<Mark> {
        let i = self.inner.as_deref()?;
        Some(Mark {
            start: i.clock.monotonic(),
            cpu: i.options.thread_time.then(thread_cpu_secs),
        })
    }

    /// End the span `mark` began, as `name` in category `cat`, on the calling thread.
    pub fn end(&self, mark: Mark, name: &str, cat: &str) {
        let Some(i) = self.inner.as_deref() else {
            return;
        };
        let end = i.clock.monotonic();
        let cpu = mark.cpu.map(|c0| (c0, (thread_cpu_secs() - c0).max(0.0)));
        self.complete_at(i, name, cat, mark.start, end, cpu);
    }

    /// A span on the calling thread from `start` to `end` (seconds on the trace's clock),
    /// measured by the caller's own timers.
    pub fn complete(&self, name: &str, cat: &str, start: f64, end: f64) {
        if let Some(i) = self.inner.as_deref() {
            self.complete_at(i, name, cat, start, end, None);
        }
    }

    fn complete_at(
        &self,
        i: &Inner,
        name: &str,
        cat: &str,
        start: f64,
        end: f64,
        cpu: Option<(f64, f64)>,
    ) {
        let tid = self.this_thread(i, None);
        i.send(Event::Slice {
            name: name.to_owned(),
            cat: cat.to_owned(),
            ts: i.us(start),
            dur: (end - start).max(0.0) * 1e6,
            tid,
            cpu: cpu.map(|(t, d)| (t * 1e6, d * 1e6)),
        });
    }

    /// Name the calling thread `name` in the trace (bindings whose threads Rust did not name).
    pub fn name_thread(&self, name: &str) {
        if let Some(i) = self.inner.as_deref() {
            self.this_thread(i, Some(name));
        }
    }

    /// The calling thread's tid, registering its name with this tracer on first use (or
    /// when `name` differs from the one registered).
    fn this_thread(&self, i: &Inner, name: Option<&str>) -> u64 {
        THREADS.with_borrow_mut(|regs| {
            if let Some(r) = regs.iter_mut().find(|r| r.tracer == i.id) {
                if let Some(n) = name.filter(|n| *n != r.name) {
                    r.name = n.to_owned();
                    i.send(Event::ThreadName {
                        tid: r.tid,
                        name: r.name.clone(),
                    });
                }
                return r.tid;
            }
            let tid = os_tid();
            let name = match name {
                Some(n) => n.to_owned(),
                None => std::thread::current()
                    .name()
                    .map_or_else(|| format!("thread {tid}"), str::to_owned),
            };
            i.send(Event::ThreadName {
                tid,
                name: name.clone(),
            });
            regs.push(Registered {
                tracer: i.id,
                tid,
                name,
            });
            tid
        })
    }

    /// A counter sample `name` = `value` now (replay size, queue depth, ...). Arguments are
    /// checked even when off, so a bad one fails the same way with tracing on or off.
    pub fn counter(&self, name: &str, value: f64) -> Result<(), TraceInputError> {
        if !value.is_finite() {
            return Err(TraceInputError {
                call: "counter",
                culprit: format!("{name}={value}"),
                reason: "a counter value must be a finite number",
            });
        }
        let Some(i) = self.inner.as_deref() else {
            return Ok(());
        };
        i.send(Event::Counter {
            name: name.to_owned(),
            ts: i.us(i.clock.monotonic()),
            value,
        });
        Ok(())
    }

    /// A span timed elsewhere (GPU work measured by CUDA events): `start` seconds on the
    /// trace's clock ([`Tracer::now`]), `duration` seconds, on the named `track` (its own row).
    /// Arguments are checked even when off.
    pub fn add_span(
        &self,
        name: &str,
        cat: &str,
        start: f64,
        duration: f64,
        track: &str,
    ) -> Result<(), TraceInputError> {
        let bad = |culprit: String, reason| TraceInputError {
            call: "add_span",
            culprit,
            reason,
        };
        if !start.is_finite() {
            return Err(bad(
                format!("start={start}"),
                "must be a finite time on the trace's clock",
            ));
        }
        if !duration.is_finite() || duration < 0.0 {
            return Err(bad(
                format!("duration={duration}"),
                "must be a finite, non-negative number of seconds",
            ));
        }
        if track.trim().is_empty() {
            return Err(bad(
                format!("track='{track}'"),
                "a track needs a name (e.g. 'gpu')",
            ));
        }
        let Some(i) = self.inner.as_deref() else {
            return Ok(());
        };
        let tid = {
            let mut tracks = i.tracks.lock().unwrap_or_else(|e| e.into_inner());
            match tracks.iter().position(|t| t == track) {
                Some(k) => TRACK_TID_BASE + k as u64,
                None => {
                    tracks.push(track.to_owned());
                    let tid = TRACK_TID_BASE + tracks.len() as u64 - 1;
                    i.send(Event::ThreadName {
                        tid,
                        name: track.to_owned(),
                    });
                    tid
                }
            }
        };
        i.send(Event::Slice {
            name: name.to_owned(),
            cat: cat.to_owned(),
            ts: i.us(start),
            dur: duration * 1e6,
            tid,
            cpu: None,
        });
        Ok(())
    }

    /// Write the closing `]` and wait for the writer thread; later calls record nothing.
    /// Returns the first write error the trace met. Finishing twice is harmless.
    pub fn finish(&self) -> crate::Result<()> {
        let Some(i) = self.inner.as_deref() else {
            return Ok(());
        };
        let handle = i.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(handle) = handle else {
            return Ok(());
        };
        let _ = i.tx.send(Msg::Finish);
        let result = handle
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the trace writer thread panicked")));
        result.map_err(crate::Error::io("write trace", &i.path))
    }
}

impl Inner {
    fn us(&self, t: f64) -> f64 {
        (t - self.origin).max(0.0) * 1e6
    }

    /// Hand an event to the writer thread; waits while the channel is full (nothing recorded
    /// is dropped). After `finish` the writer is gone and the event is discarded.
    fn send(&self, e: Event) {
        let _ = self.tx.send(Msg::Event(e));
    }
}
