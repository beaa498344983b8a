//! The writer thread's queue: bounded, lossless, and lazy about waking the writer.
//!
//! Waking a sleeping thread is a system call that cost the caller about half of a step. While
//! steps keep coming, the writer instead wakes on its own every [`LAZY`] and drains what
//! arrived; a step wakes it only when it has gone to sleep for good (an idle run), when the
//! queue is half full, or for a message someone waits on (a flush, a summary, a close)
//! (docs/contract/step.md "Writing: the queue and the sinks").

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;
use tally_clock::Clock;

/// How long a step may wait in the queue for a writer that is already coming.
pub const LAZY: Duration = Duration::from_millis(5);

/// Where the writer thread is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Writer {
    /// Working through the queue: it will see what is pushed.
    Busy,
    /// Sleeping until `LAZY` has passed: it will come without a wake-up.
    Napping,
    /// Sleeping until woken.
    Asleep,
}

struct State<T> {
    items: VecDeque<T>,
    writer: Writer,
    /// The sender is done: the writer drains what is left and stops.
    closed: bool,
    /// The writer thread ended (or panicked): nothing pushed would be written.
    gone: bool,
    /// The sender waits for room.
    waiting: bool,
}

/// A bounded multi-message queue from the logger to its writer thread.
pub struct Queue<T> {
    state: Mutex<State<T>>,
    /// The writer waits here for messages.
    ready: Condvar,
    /// The sender waits here for room.
    room: Condvar,
    capacity: usize,
}

/// What a push did.
pub enum Pushed<T> {
    /// Queued at once.
    Queued,
    /// Queued after waiting this many seconds for room (back-pressure).
    Waited(f64),
    /// The writer thread is gone: the message comes back.
    Gone(T),
}

/// What [`Queue::pop_or_tick`] found.
pub enum Popped<T> {
    /// A message.
    Item(T),
    /// No message within the tick.
    Tick,
    /// The queue is closed and drained.
    Closed,
}

impl<T> Queue<T> {
    /// A queue holding at most `capacity` messages (at least one).
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Queue {
            state: Mutex::new(State {
                items: VecDeque::with_capacity(capacity),
                writer: Writer::Busy,
                closed: false,
                gone: false,
                waiting: false,
            }),
            ready: Condvar::new(),
            room: Condvar::new(),
            capacity,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queue `item`, waiting for room when full (timed on `clock`); `urgent` wakes a napping
    /// writer too.
    pub fn push(&self, item: T, urgent: bool, clock: &dyn Clock) -> Pushed<T> {
        let mut s = self.lock();
        let mut waited = None;
        while s.items.len() >= self.capacity && !s.gone {
            waited.get_or_insert_with(|| clock.monotonic());
            s.waiting = true;
            self.wake(&mut s);
            s = self.room.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        if s.gone {
            return Pushed::Gone(item);
        }
        s.items.push_back(item);
        let filling = s.items.len() * 2 >= self.capacity;
        if s.writer == Writer::Asleep || (s.writer == Writer::Napping && (urgent || filling)) {
            self.wake(&mut s);
        }
        match waited {
            Some(t0) => Pushed::Waited(clock.monotonic() - t0),
            None => Pushed::Queued,
        }
    }

    /// Queue `item` only if there is room now, never waiting: `false` when full or gone (a
    /// system sample is dropped rather than delay a step; docs/contract/system-metrics.md).
    pub fn try_push(&self, item: T) -> bool {
        let mut s = self.lock();
        if s.gone || s.closed || s.items.len() >= self.capacity {
            return false;
        }
        s.items.push_back(item);
        if s.writer == Writer::Asleep {
            self.wake(&mut s);
        }
        true
    }

    fn wake(&self, s: &mut State<T>) {
        if s.writer != Writer::Busy {
            s.writer = Writer::Busy;
            self.ready.notify_one();
        }
    }

    /// No more messages: the writer drains the queue and stops.
    pub fn close(&self) {
        let mut s = self.lock();
        s.closed = true;
        self.wake(&mut s);
    }

    /// The next message for the writer, waiting for one; `None` once closed and drained.
    #[cfg(test)]
    pub fn pop(&self) -> Option<T> {
        match self.pop_or_tick(None) {
            Popped::Item(item) => Some(item),
            Popped::Tick | Popped::Closed => None,
        }
    }

    /// As [`Queue::pop`], but waits at most `tick` for a message when given (the writer's
    /// timer: docs/contract/health.md "In the logger").
    pub fn pop_or_tick(&self, tick: Option<Duration>) -> Popped<T> {
        let started = std::time::Instant::now();
        let mut s = self.lock();
        loop {
            if let Some(item) = s.items.pop_front() {
                if s.waiting {
                    s.waiting = false;
                    self.room.notify_one();
                }
                return Popped::Item(item);
            }
            if s.closed {
                return Popped::Closed;
            }
            let left = tick.map(|t| t.saturating_sub(started.elapsed()));
            if left == Some(Duration::ZERO) {
                return Popped::Tick;
            }
            // Nap first: a busy loop's next steps arrive meanwhile, without waking anyone.
            s.writer = Writer::Napping;
            let (napped, _) = self
                .ready
                .wait_timeout(s, LAZY)
                .unwrap_or_else(|e| e.into_inner());
            s = napped;
            if s.items.is_empty() && !s.closed && s.writer == Writer::Napping {
                // Nothing came: sleep until a message wakes this thread.
                s.writer = Writer::Asleep;
                while s.writer == Writer::Asleep {
                    match tick.map(|t| t.saturating_sub(started.elapsed())) {
                        None => s = self.ready.wait(s).unwrap_or_else(|e| e.into_inner()),
                        Some(Duration::ZERO) => {
                            s.writer = Writer::Busy;
                            return Popped::Tick;
                        }
                        Some(left) => {
                            s = self
                                .ready
                                .wait_timeout(s, left)
                                .unwrap_or_else(|e| e.into_inner())
                                .0;
                        }
                    }
                }
            }
            s.writer = Writer::Busy;
        }
    }

    /// The writer thread ended: a sender waiting for room, or pushing later, gets its message
    /// back instead of waiting forever.
    pub fn gone(&self) {
        let mut s = self.lock();
        s.gone = true;
        self.room.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tally_clock::SystemClock;

    #[test]
    fn an_idle_queue_ticks_and_a_message_still_comes_out() {
        let q: Queue<u32> = Queue::new(4);
        let t0 = std::time::Instant::now();
        assert!(matches!(
            q.pop_or_tick(Some(Duration::from_millis(30))),
            Popped::Tick
        ));
        assert!(t0.elapsed() >= Duration::from_millis(30));
        let _ = q.push(7, true, &SystemClock::default());
        assert!(matches!(
            q.pop_or_tick(Some(Duration::from_secs(5))),
            Popped::Item(7)
        ));
        q.close();
        assert!(matches!(
            q.pop_or_tick(Some(Duration::from_secs(5))),
            Popped::Closed
        ));
    }

    #[test]
    fn messages_come_out_in_order_and_close_drains_them() {
        let q = Arc::new(Queue::new(8));
        let clock = SystemClock::default();
        for i in 0..5 {
            assert!(matches!(q.push(i, i == 4, &clock), Pushed::Queued));
        }
        q.close();
        let reader = {
            let q = q.clone();
            std::thread::spawn(move || std::iter::from_fn(|| q.pop()).collect::<Vec<_>>())
        };
        assert_eq!(reader.join().unwrap(), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_full_queue_waits_for_room_and_loses_nothing() {
        let q = Arc::new(Queue::new(2));
        let clock = SystemClock::default();
        let reader = {
            let q = q.clone();
            std::thread::spawn(move || std::iter::from_fn(|| q.pop()).collect::<Vec<_>>())
        };
        let waited = (0..200)
            .filter(|&i| matches!(q.push(i, false, &clock), Pushed::Waited(_)))
            .count();
        q.close();
        assert_eq!(reader.join().unwrap(), (0..200).collect::<Vec<_>>());
        // 200 messages through room for 2: the sender waited at least once.
        assert!(waited > 0);
    }

    #[test]
    fn a_sender_waiting_for_room_gets_its_message_back_when_the_writer_is_gone() {
        let q = Arc::new(Queue::new(1));
        let clock = SystemClock::default();
        assert!(matches!(q.push(1, false, &clock), Pushed::Queued));
        let sender = {
            let q = q.clone();
            std::thread::spawn(move || match q.push(2, false, &SystemClock::default()) {
                Pushed::Gone(m) => Some(m),
                _ => None,
            })
        };
        // The writer ends without reading (its thread panicked): the waiting sender returns.
        q.gone();
        assert_eq!(sender.join().unwrap(), Some(2));
        assert!(matches!(q.push(3, true, &clock), Pushed::Gone(3)));
    }
}
