//! A mirror polled on a thread of its own while a front end follows live runs (`tally watch`,
//! `tally board`): every few seconds one [`Mirror::sync`]; a failing store is said once per
//! outage and retried at the next poll, never stopping the reader (docs/contract/object-storage.md
//! "Following live runs").

use crate::mirror::Mirror;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Seconds between polls of a followed mirror.
pub const EVERY: Duration = Duration::from_secs(5);

/// The polling thread; dropping it stops the thread (within a tenth of a second, or when the
/// poll under way ends) and waits for it.
#[derive(Debug)]
pub struct Poller {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Poller {
    /// Poll `mirror` every `every` on a new thread; `tell` hears each outage once (and its end).
    pub fn start(mut mirror: Mirror, every: Duration, tell: Box<dyn Fn(String) + Send>) -> Poller {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("tally-mirror".into())
            .spawn(move || {
                let mut failing = false;
                loop {
                    let due = Instant::now() + every;
                    while Instant::now() < due {
                        if flag.load(Ordering::Relaxed) {
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    match mirror.sync() {
                        Ok(_) if failing => {
                            failing = false;
                            tell(format!("{}: reachable again, polling on", mirror.url()));
                        }
                        Ok(_) => {}
                        Err(e) if !failing => {
                            failing = true;
                            tell(format!(
                                "{e} (retried every {} s; said once)",
                                every.as_secs_f64()
                            ));
                        }
                        Err(_) => {}
                    }
                }
            })
            .expect("a thread starts");
        Poller {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
