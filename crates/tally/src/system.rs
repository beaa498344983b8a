//! System metrics beside every run: a thread of its own samples the process, the machine and
//! each GPU every interval and hands the values to whoever writes the run's event file
//! (docs/contract/system-metrics.md). `procfs.rs` reads `/proc`, `gpu.rs` NVML.
//!
//! The training loop's thread never samples: a sample costs the step nothing but the queue
//! slot its values take on the writer thread.

pub mod gpu;
pub mod procfs;
pub mod ranks;
pub mod tag;

pub use tag::*;

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The default seconds between samples (docs/contract/system-metrics.md "Interval").
pub const DEFAULT_INTERVAL_SECS: f64 = 5.0;
/// The shortest interval accepted.
pub const MIN_INTERVAL_SECS: f64 = 0.1;

/// The prefix of every system tag.
pub const PREFIX: &str = "system/";

/// Whether `tag` is a system metric's.
pub fn is_system_tag(tag: &str) -> bool {
    tag.starts_with(PREFIX)
}

/// Refuse an interval the sampler cannot keep, naming the setting `name`.
pub fn check_interval(name: &str, secs: f64) -> Result<(), String> {
    if secs.is_finite() && secs >= MIN_INTERVAL_SECS {
        Ok(())
    } else {
        Err(format!(
            "{name} {secs} must be a number of seconds >= {MIN_INTERVAL_SECS}"
        ))
    }
}

/// One sample: its wall time (seconds since the Unix epoch) and its tags' values.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// When it was taken.
    pub wall_time: f64,
    /// `system/...` tag → value, in the unit its name says.
    pub values: Vec<(Arc<str>, f64)>,
}

/// Where samples go: the writer of the run's event file.
pub trait Deliver: Send {
    /// Write one sample (best effort: a sample that cannot be written now is dropped).
    fn sample(&mut self, sample: Sample);
    /// Say `text` once (no GPU, no `/proc`).
    fn note(&mut self, text: &str);
}

/// Turns two readings into a sample: rates and percentages over the time between them.
pub struct Probe {
    disks: Vec<String>,
    run_dir: PathBuf,
    page_bytes: f64,
    gpus: gpu::Gpus,
    last: (Instant, procfs::Reading),
    tags: Vec<Arc<str>>,
}

impl Probe {
    /// Take the first reading (the baseline of the first rates) and load NVML for the GPUs
    /// `devices` names; the note says why there are no GPU tags, when there are none.
    pub fn new(run_dir: PathBuf, devices: &gpu::Devices) -> (Probe, Option<String>) {
        let disks = procfs::physical_disks();
        let page_bytes = rustix::param::page_size() as f64;
        let first = procfs::read(&disks, &run_dir, page_bytes);
        let (gpus, note) = gpu::Gpus::open(devices);
        let tags = PROCESS
            .iter()
            .chain(&MACHINE)
            .map(|t| Arc::from(*t))
            .collect();
        let probe = Probe {
            disks,
            run_dir,
            page_bytes,
            gpus,
            last: (Instant::now(), first),
            tags,
        };
        (probe, note)
    }

    /// A tag named once (the static ones are shared, not allocated each sample).
    fn tag(&self, name: &str) -> Arc<str> {
        self.tags
            .iter()
            .find(|t| &***t == name)
            .cloned()
            .unwrap_or_else(|| Arc::from(name))
    }

    /// Read now and derive every value against the previous reading.
    pub fn sample(&mut self, wall_time: f64) -> Sample {
        let now = Instant::now();
        let r = procfs::read(&self.disks, &self.run_dir, self.page_bytes);
        let (then, prev) = &self.last;
        let dt = now.duration_since(*then).as_secs_f64();
        let mut values: Vec<(Arc<str>, f64)> = Vec::with_capacity(13 + 7);
        let mut put = |tag: &str, v: Option<f64>| {
            if let Some(v) = v.filter(|v| v.is_finite()) {
                values.push((self.tag(tag), v));
            }
        };
        let rate = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if dt > 0.0 => Some(((b - a) / dt).max(0.0)),
            _ => None,
        };
        put(
            PROCESS_CPU,
            rate(prev.process_cpu_secs, r.process_cpu_secs).map(|c| c * 100.0),
        );
        put(PROCESS_RSS, r.rss_bytes);
        put(PROCESS_THREADS, r.threads);
        put(PROCESS_FILES, r.open_files);
        if let (Some((b0, t0)), Some((b1, t1))) = (prev.cpu_ticks, r.cpu_ticks) {
            let total = t1.saturating_sub(t0);
            if total > 0 {
                put(
                    CPU,
                    Some(b1.saturating_sub(b0) as f64 * 100.0 / total as f64),
                );
            }
        }
        if let Some((total, available)) = r.memory {
            put(MEM_USED, Some((total - available).max(0.0)));
            put(MEM_AVAILABLE, Some(available));
        }
        put(LOAD, r.load_1m);
        put(DISK_READ, rate(prev.disk.map(|d| d.0), r.disk.map(|d| d.0)));
        put(
            DISK_WRITE,
            rate(prev.disk.map(|d| d.1), r.disk.map(|d| d.1)),
        );
        put(DISK_FREE, r.disk_free_bytes);
        put(
            NET_RECV,
            rate(prev.network.map(|n| n.0), r.network.map(|n| n.0)),
        );
        put(
            NET_SENT,
            rate(prev.network.map(|n| n.1), r.network.map(|n| n.1)),
        );
        self.gpus.sample(&mut values);
        self.last = (now, r);
        Sample { wall_time, values }
    }
}

/// Tells the sampling thread to stop.
#[derive(Default)]
struct Stop {
    stopped: Mutex<bool>,
    cv: Condvar,
}

/// The sampling thread; stopped (and joined) by [`Sampler::stop`] or when dropped.
pub struct Sampler {
    stop: Arc<Stop>,
    handle: Option<JoinHandle<()>>,
}

impl Sampler {
    /// Start sampling every `interval` for the run in `run_dir` and the GPUs `devices` names,
    /// wall times from `wall`; the first sample comes one interval after the start (its rates
    /// need two readings).
    pub fn spawn(
        interval: Duration,
        run_dir: PathBuf,
        devices: gpu::Devices,
        wall: Box<dyn Fn() -> f64 + Send>,
        mut deliver: Box<dyn Deliver>,
    ) -> std::io::Result<Sampler> {
        let stop = Arc::new(Stop::default());
        let seen = stop.clone();
        let handle = std::thread::Builder::new()
            .name("tally-system".into())
            .spawn(move || {
                let (mut probe, note) = Probe::new(run_dir, &devices);
                if let Some(n) = note {
                    deliver.note(&n);
                }
                let mut due = Instant::now() + interval;
                loop {
                    let mut stopped = seen.stopped.lock().unwrap_or_else(|e| e.into_inner());
                    while !*stopped {
                        let left = due.saturating_duration_since(Instant::now());
                        if left.is_zero() {
                            break;
                        }
                        stopped = seen
                            .cv
                            .wait_timeout(stopped, left)
                            .unwrap_or_else(|e| e.into_inner())
                            .0;
                    }
                    if *stopped {
                        return;
                    }
                    drop(stopped);
                    deliver.sample(probe.sample(wall()));
                    // A late sample (a suspended process) does not bunch the next ones up.
                    due = (due + interval).max(Instant::now());
                }
            })?;
        Ok(Sampler {
            stop,
            handle: Some(handle),
        })
    }

    /// Stop sampling and wait for the thread (at most the sample it is taking).
    pub fn stop(&mut self) {
        *self.stop.stopped.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.stop.cv.notify_all();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop();
    }
}
