//! The batch timer: one thread per process that writes each event writer's pending scalar batch
//! once it is `flush_secs` old, so a writer left idle has its last step on disk without waiting
//! for a next call (docs/contract/integrations.md "The scalar batch"). [`write_all`] writes
//! every pending batch at once, for interpreter exit.
//!
//! The thread sleeps until the earliest batch is due; a writer starting a batch due earlier than
//! that (or while nothing is pending) wakes it ([`batch_started`]: two atomic operations on a
//! step's first value, a wake-up only when the new batch is due first).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Once, OnceLock, Weak};
use std::time::Instant;

/// A writer holding a batch the timer may have to write.
pub trait Batched: Send {
    /// When the pending batch is due to be written; `None` with nothing pending.
    fn due(&self) -> Option<Instant>;
    /// Write the pending batch. A failed write keeps it, for the writer's next call to retry
    /// and report, and makes it due again only a whole `flush_secs` later.
    fn write_pending(&mut self);
}

/// A writer as the timer holds it: without keeping it alive.
type Entry = Weak<Mutex<dyn Batched>>;

struct Timer {
    writers: Mutex<Vec<Entry>>,
    /// Held by the thread while it decides to sleep, and by a writer waking it.
    sleep: Mutex<()>,
    wake: Condvar,
    /// What deadlines are counted from.
    base: Instant,
    /// When the sleeping thread wakes, in nanoseconds from `base`: `u64::MAX` with nothing
    /// pending, 0 while it is awake.
    sleeping_until: AtomicU64,
    /// A batch was started since the thread last looked.
    started: AtomicBool,
}

fn timer() -> &'static Timer {
    static TIMER: OnceLock<Timer> = OnceLock::new();
    static THREAD: Once = Once::new();
    let t = TIMER.get_or_init(|| Timer {
        writers: Mutex::new(Vec::new()),
        sleep: Mutex::new(()),
        wake: Condvar::new(),
        base: Instant::now(),
        sleeping_until: AtomicU64::new(0),
        started: AtomicBool::new(false),
    });
    THREAD.call_once(|| {
        // Named as tally's threads are; it never calls Python.
        let spawned = std::thread::Builder::new()
            .name("tally-batch-timer".into())
            .spawn(run);
        if let Err(e) = spawned {
            // Out of threads: nothing is lost, a batch just waits for the writer's next call,
            // flush(), close() or the exit hook.
            eprintln!(
                "tally: warning: no batch timer thread ({e}): an idle writer's last step is \
                 written at its next call, flush(), close() or exit"
            );
        }
    });
    t
}

/// Let the timer write `writer`'s batches when due, for as long as the writer lives.
pub fn register(writer: &Arc<Mutex<dyn Batched>>) {
    let t = timer();
    let mut writers = t.writers.lock().unwrap_or_else(|e| e.into_inner());
    writers.retain(|w| w.strong_count() > 0);
    writers.push(Arc::downgrade(writer));
}

fn nanos(t: &Timer, at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(t.base).as_nanos()).unwrap_or(u64::MAX - 1)
}

/// A writer started a batch due at `due`: wake the timer if it sleeps past that.
#[inline]
pub fn batch_started(due: Instant) {
    let t = timer();
    // Either the thread sees `started` before it sleeps, or this call sees when it sleeps
    // until and wakes it (both sequentially consistent, so one of the two always happens).
    t.started.store(true, Ordering::SeqCst);
    if nanos(t, due) < t.sleeping_until.load(Ordering::SeqCst) {
        let _sleeping = t.sleep.lock().unwrap_or_else(|e| e.into_inner());
        t.wake.notify_one();
    }
}

/// Every live writer, strongly held for one pass.
fn live() -> Vec<Arc<Mutex<dyn Batched>>> {
    let t = timer();
    let writers = t.writers.lock().unwrap_or_else(|e| e.into_inner());
    writers.iter().filter_map(Weak::upgrade).collect()
}

/// Write every pending batch now, due or not.
pub fn write_all() {
    for w in live() {
        w.lock().unwrap_or_else(|e| e.into_inner()).write_pending();
    }
}

/// Write the due batches; the earliest time a pending batch falls due.
fn pass(now: Instant) -> Option<Instant> {
    let mut next: Option<Instant> = None;
    for w in live() {
        let mut w = w.lock().unwrap_or_else(|e| e.into_inner());
        let Some(mut due) = w.due() else { continue };
        if due <= now {
            w.write_pending();
            match w.due() {
                Some(again) => due = again,
                None => continue,
            }
        }
        next = Some(next.map_or(due, |n| n.min(due)));
    }
    next
}

fn run() {
    let t = timer();
    loop {
        t.started.store(false, Ordering::SeqCst);
        let next = pass(Instant::now());
        let guard = t.sleep.lock().unwrap_or_else(|e| e.into_inner());
        let until = next.map_or(u64::MAX, |due| nanos(t, due).max(1));
        t.sleeping_until.store(until, Ordering::SeqCst);
        if !t.started.load(Ordering::SeqCst) {
            match next {
                Some(due) => {
                    let wait = due.saturating_duration_since(Instant::now());
                    drop(t.wake.wait_timeout(guard, wait));
                }
                None => drop(t.wake.wait(guard)),
            }
        }
        t.sleeping_until.store(0, Ordering::SeqCst);
    }
}
