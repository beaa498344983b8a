//! Runs read one per core and handed on in run order, the next runs' files read ahead by the
//! kernel meanwhile (docs/contract/consumers.md "Reading scalars fast"): how `tally.read`'s
//! columns and the runs table read many runs.

use crate::files::RunDir;
use crate::readahead::will_need;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::sync::Mutex;

/// How many runs ahead of the reading threads the kernel is asked to read their files.
const READ_AHEAD: usize = 32;

/// Calls `read` on each run (its directory and files), up to one thread per core, and hands
/// each result to `take` in run order as soon as it and every run before it are read (so a
/// run's result is used and freed while later runs are still being read). `take` returning
/// `false` stops the reading. Returns `false` when a reading thread failed before every run
/// was handed on.
pub fn each_run<T: Send>(
    runs: Vec<RunDir>,
    read: impl Fn(&Path, Vec<PathBuf>) -> T + Sync,
    mut take: impl FnMut(PathBuf, T) -> bool,
) -> bool {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(runs.len());
    if threads <= 1 {
        for (dir, files) in runs {
            let result = read(&dir, files);
            if !take(dir, result) {
                return true;
            }
        }
        return true;
    }
    let count = runs.len();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    for (_, files) in runs.iter().take(READ_AHEAD) {
        will_need(files);
    }
    let jobs: Vec<Mutex<Option<RunDir>>> = runs.into_iter().map(|r| Mutex::new(Some(r))).collect();
    let (done, results) = channel::<(usize, PathBuf, T)>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let done = done.clone();
            let (next, stop, jobs, read) = (&next, &stop, &jobs, &read);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let Some((dir, files)) = job.lock().ok().and_then(|mut j| j.take()) else {
                        continue;
                    };
                    if let Some(Ok(ahead)) = jobs.get(i + READ_AHEAD).map(Mutex::lock) {
                        if let Some((_, files)) = ahead.as_ref() {
                            will_need(files);
                        }
                    }
                    let result = read(&dir, files);
                    if done.send((i, dir, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done);
        // Results arrive in any order; each is handed on once those before it were.
        let mut waiting: Vec<Option<(PathBuf, T)>> = (0..count).map(|_| None).collect();
        let mut at = 0;
        for (i, dir, result) in results.iter() {
            waiting[i] = Some((dir, result));
            while let Some((dir, result)) = waiting.get_mut(at).and_then(Option::take) {
                at += 1;
                if !take(dir, result) {
                    stop.store(true, Ordering::Relaxed);
                    return true;
                }
            }
        }
        at == count
    })
}
