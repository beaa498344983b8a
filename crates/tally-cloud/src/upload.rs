//! The uploader of a run written to object storage (docs/contract/object-storage.md "Writing"):
//! one thread per run putting the files of the run's local staging directory to the same keys
//! below the run's URL, in the order they were handed in, so the writer's thread never waits on
//! the network. A put the store refuses (or that times out) is a storage fault, as a full disk
//! is: the file stays in staging, the put is retried every [`RETRY_EVERY`] with every later one
//! behind it, and the outage is said once ([`Uploader::take_report`]) and its end too.

use crate::error::Error;
use crate::store::{connect, Remote};
use object_store::path::{Path as Key, PathPart};
use object_store::{ObjectStoreExt, PutPayload};
use std::collections::VecDeque;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a failed put waits before it is tried again.
pub const RETRY_EVERY: Duration = Duration::from_secs(2);

/// What the uploader has to say, once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Report {
    /// The store refused a put (or did not answer): an outage began.
    Began(String),
    /// The store took a put again: the outage ended.
    Ended(String),
    /// A file handed in was gone before it could be put.
    Gone(String),
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Report::Began(s) | Report::Ended(s) | Report::Gone(s) => f.write_str(s),
        }
    }
}

/// One put: the staging file `local` (its first `len` bytes, or all of it) to its key.
#[derive(Debug, Clone)]
struct Job {
    ticket: u64,
    local: PathBuf,
    len: Option<u64>,
    /// The file is final: removed from staging once it is in the store.
    remove: bool,
}

#[derive(Debug, Default)]
struct State {
    queue: VecDeque<Job>,
    next_ticket: u64,
    /// Every ticket below this one is in the store (or was dropped: its file gone).
    done_below: u64,
    /// The outage under way: the first failure's message.
    outage: Option<String>,
    /// Reports not yet said: an outage's start and end.
    reports: Vec<Report>,
    /// No more jobs will come: the thread ends once the queue is empty.
    closing: bool,
}

struct Shared {
    remote: Remote,
    staging: PathBuf,
    state: Mutex<State>,
    /// Signalled when a job is queued, done or failed, and at close.
    changed: Condvar,
    /// Set with a report pending: the writers' calls test it without taking the lock.
    has_report: AtomicBool,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A run's uploader: a staging directory mirrored to the run's URL by a thread of its own.
pub struct Uploader {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Uploader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Uploader")
            .field("url", &self.shared.remote.url)
            .field("staging", &self.shared.staging)
            .finish()
    }
}

impl Uploader {
    /// The uploader of the run at `url`, staging in `staging` (created). The client is
    /// configured from the environment as the readers' is; nothing is asked of the store yet.
    pub fn start(url: &str, staging: PathBuf) -> Result<Arc<Uploader>, Error> {
        let remote = connect(url)?;
        std::fs::create_dir_all(&staging)
            .map_err(Error::local("create the staging directory", &staging))?;
        let shared = Arc::new(Shared {
            remote,
            staging,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            has_report: AtomicBool::new(false),
        });
        let thread = shared.clone();
        std::thread::Builder::new()
            .name("tally-uploader".into())
            .spawn(move || run(&thread))
            .map_err(Error::local("start the uploader thread", &shared.staging))?;
        Ok(Arc::new(Uploader { shared }))
    }

    /// The run's URL, as given without a trailing `/`.
    pub fn url(&self) -> &str {
        &self.shared.remote.url
    }

    /// The local directory standing for the URL: a file at `staging/a/b` goes to `URL/a/b`.
    pub fn staging(&self) -> &Path {
        &self.shared.staging
    }

    /// Queue a put of the staging file `local` (its first `len` bytes, or all of it when
    /// `None`); with `remove` the file is final and leaves staging once put. Returns the job's
    /// ticket for [`Uploader::wait`]. Never waits on the store.
    pub fn put(&self, local: &Path, len: Option<u64>, remove: bool) -> u64 {
        let mut state = self.shared.state();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        state.queue.push_back(Job {
            ticket,
            local: local.to_owned(),
            len,
            remove,
        });
        drop(state);
        self.shared.changed.notify_all();
        ticket
    }

    /// Wait until every put up to `ticket` is in the store: `Ok`; or the outage's fault as
    /// soon as a put fails while they are not (they stay queued and are retried); or, after
    /// `timeout` with no answer from the store, that.
    pub fn wait(&self, ticket: u64, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.state();
        loop {
            if state.done_below > ticket {
                return Ok(());
            }
            if let Some(fault) = &state.outage {
                return Err(fault.clone());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!(
                    "{}: the store did not answer within {} s",
                    self.url(),
                    timeout.as_secs()
                ));
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Wait until every put queued so far is in the store, for at most `timeout` after an
    /// outage began (the store answering slowly is waited for); the puts left, if any.
    pub fn drain(&self, timeout: Duration) -> usize {
        let mut since_fault: Option<Instant> = None;
        let mut state = self.shared.state();
        loop {
            if state.queue.is_empty() {
                return 0;
            }
            if state.outage.is_some() {
                let t = *since_fault.get_or_insert_with(Instant::now);
                if t.elapsed() >= timeout {
                    return state.queue.len();
                }
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, Duration::from_millis(200))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Puts queued and not yet in the store.
    pub fn pending(&self) -> usize {
        self.shared.state().queue.len()
    }

    /// The reports not yet said (an outage began, an outage ended), each once; cheap when
    /// there are none.
    pub fn take_report(&self) -> Vec<Report> {
        if !self.shared.has_report.load(Ordering::Acquire) {
            return Vec::new();
        }
        let mut state = self.shared.state();
        self.shared.has_report.store(false, Ordering::Release);
        std::mem::take(&mut state.reports)
    }
}

impl Drop for Uploader {
    /// No more puts: the thread ends once the queue is empty (while the store refuses, it keeps
    /// retrying as long as the process lives), removing the staging directory if all was put.
    fn drop(&mut self) {
        self.shared.state().closing = true;
        self.shared.changed.notify_all();
    }
}

/// `local`'s key: its path below the staging directory, below the URL's prefix.
fn key_of(shared: &Shared, local: &Path) -> Option<Key> {
    let rel = local.strip_prefix(&shared.staging).ok()?;
    let mut parts: Vec<PathPart<'_>> = shared.remote.prefix.parts().collect();
    for p in rel.components() {
        parts.push(PathPart::from(p.as_os_str().to_str()?.to_owned()));
    }
    Some(Key::from_iter(parts))
}

/// The bytes to put: the file's first `len` bytes, or all of it.
fn read(local: &Path, len: Option<u64>) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(local)?;
    let mut bytes = Vec::new();
    match len {
        Some(n) => {
            file.take(n).read_to_end(&mut bytes)?;
        }
        None => {
            file.read_to_end(&mut bytes)?;
        }
    }
    Ok(bytes)
}

/// The thread: put the queue's head until it is in the store, then the next.
fn run(shared: &Shared) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let mut state = shared.state();
            state.outage = Some(format!(
                "{}: no runtime for the uploads: {e}",
                shared.remote.url
            ));
            return;
        }
    };
    loop {
        let job = {
            let mut state = shared.state();
            loop {
                // A partial put followed by a later put of the same file is superseded.
                while let Some(front) = state.queue.front() {
                    let later = state.queue.iter().skip(1).any(|j| j.local == front.local);
                    if !later {
                        break;
                    }
                    // Its waiters are answered when the later put is done.
                    state.queue.pop_front();
                }
                if let Some(job) = state.queue.front() {
                    break job.clone();
                }
                if state.closing {
                    drop(state);
                    // Everything was put: the staging directory has served.
                    let _ = std::fs::remove_dir_all(&shared.staging);
                    return;
                }
                state = shared
                    .changed
                    .wait(state)
                    .unwrap_or_else(|e| e.into_inner());
            }
        };
        let outcome = put(shared, &rt, &job);
        let mut state = shared.state();
        match outcome {
            Ok(()) => {
                if job.remove {
                    let _ = std::fs::remove_file(&job.local);
                }
                state.queue.pop_front();
                state.done_below = state.done_below.max(job.ticket + 1);
                if state.outage.take().is_some() {
                    let left = state.queue.len();
                    state.reports.push(Report::Ended(format!(
                        "{}: the store takes writes again; what was kept is being put ({left} \
                         more queued)",
                        shared.remote.url
                    )));
                    shared.has_report.store(true, Ordering::Release);
                }
                shared.changed.notify_all();
            }
            Err(Gone(why)) => {
                // The staging file is gone (removed by hand): nothing to put, said.
                state.queue.pop_front();
                state.done_below = state.done_below.max(job.ticket + 1);
                state.reports.push(Report::Gone(why));
                shared.has_report.store(true, Ordering::Release);
                shared.changed.notify_all();
            }
            Err(Refused(fault)) => {
                if state.outage.is_none() {
                    state.reports.push(Report::Began(format!(
                        "{fault}; the run's files are kept in {} and put again every {} s, in \
                         order, until the store takes them",
                        shared.staging.display(),
                        RETRY_EVERY.as_secs()
                    )));
                    shared.has_report.store(true, Ordering::Release);
                    state.outage = Some(fault);
                }
                shared.changed.notify_all();
                drop(
                    shared
                        .changed
                        .wait_timeout_while(state, RETRY_EVERY, |_| true)
                        .unwrap_or_else(|e| e.into_inner()),
                );
            }
        }
    }
}

/// Why a put did not happen.
enum Failed {
    /// The store refused it or did not answer: retried.
    Refused(String),
    /// There is nothing to put.
    Gone(String),
}
use Failed::{Gone, Refused};

fn put(shared: &Shared, rt: &tokio::runtime::Runtime, job: &Job) -> Result<(), Failed> {
    let url = &shared.remote.url;
    let Some(key) = key_of(shared, &job.local) else {
        return Err(Gone(format!(
            "{}: not below the staging directory {}: not put",
            job.local.display(),
            shared.staging.display()
        )));
    };
    let bytes = match read(&job.local, job.len) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Gone(format!(
                "{}: removed from staging before it was put to {url}: {e}",
                job.local.display()
            )))
        }
        Err(e) => {
            return Err(Refused(format!(
                "{}: cannot read the staged file: {e}",
                job.local.display()
            )))
        }
    };
    let rel = job
        .local
        .strip_prefix(&shared.staging)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    rt.block_on(shared.remote.store.put(&key, PutPayload::from(bytes)))
        .map(|_| ())
        .map_err(|e| Refused(Error::store(&format!("{url}/{rel}"), "putting", &e).to_string()))
}

/// The logger's event-file sink hands its closed segments here (docs/contract/object-storage.md
/// "Writing"): `tally` defines the trait, so it never depends on the store's client.
impl tally::upload::Upload for Uploader {
    fn put(&self, local: &Path, len: Option<u64>, remove: bool) -> u64 {
        Uploader::put(self, local, len, remove)
    }

    fn take_reports(&self) -> Vec<String> {
        self.take_report().iter().map(Report::to_string).collect()
    }
}
