//! `EventFileWriter`: creates a uniquely named event file, writes one scalar `Event` per step with one `write_all`, and fsyncs per policy.
//!
//! One event per step keeps an iteration's scalars together on disk, so a killed writer loses
//! whole iterations, never half of one (`docs/contract/step.md` "The backend payload").
//! A record whose write fails (disk full, file size limit) is cut back off the file before the
//! next write, so the file only ever grows by whole records and stays readable
//! (`docs/contract/run-artifacts.md` "Storage faults").

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tally_clock::{Clock, SystemClock};

use crate::proto::{event, Event, FILE_VERSION};
use crate::scalar::{encode_scalar_event, encode_scalar_event_from};
use crate::tf_record::{RecordWriter, WriteRecordError};

mod error;
pub use error::{OpenError, RelinkError, WriteError};

/// Process-wide counter for the last component of event file names, so two writers
/// opened by one process in the same second never pick the same name.
static NEXT_FILE_INDEX: AtomicU64 = AtomicU64::new(0);

/// How many names `open` tries before giving up when files with its names already exist.
const MAX_NAME_ATTEMPTS: u32 = 1000;

/// The TensorBoard event file name `events.out.tfevents.<secs>.<hostname>.<pid>.<n>`,
/// with the seconds zero-padded to 10 digits.
pub fn event_file_name(unix_secs: u64, hostname: &str, pid: u32, n: u64) -> String {
    format!("events.out.tfevents.{unix_secs:010}.{hostname}.{pid}.{n}")
}

/// The machine's host name: `/proc/sys/kernel/hostname`, else `$HOSTNAME`, else `localhost`.
pub fn default_hostname() -> String {
    let from_proc = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string());
    let from_env = || std::env::var("HOSTNAME").ok().map(|s| s.trim().to_string());
    from_proc
        .filter(|s| is_valid_hostname(s))
        .or_else(|| from_env().filter(|s| is_valid_hostname(s)))
        .unwrap_or_else(|| "localhost".to_string())
}

/// A host name is usable in a file name if it is non-empty and has no path separator or NUL.
fn is_valid_hostname(hostname: &str) -> bool {
    !hostname.is_empty() && !hostname.contains(['/', '\\', '\0'])
}

/// When the writer asks the OS to put written records on stable storage.
///
/// Every record reaches the OS before the write call returns, so a crash of the process
/// (even SIGKILL) loses nothing whatever the policy; fsync only matters for power loss or
/// a kernel crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FsyncPolicy {
    /// Never fsync (the OS writes back on its own schedule). The default.
    #[default]
    Never,
    /// fsync after a write once at least this long has passed since the last fsync.
    Interval(Duration),
    /// fsync after every write.
    EveryWrite,
}

/// Everything an [`EventFileWriter`] needs from its environment, passed in so tests can fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterOptions {
    /// Host name for the file name.
    pub hostname: String,
    /// Process id for the file name.
    pub pid: u32,
    /// Creation time: the file name's seconds and the `file_version` event's wall time.
    pub created_at: SystemTime,
    /// When to fsync.
    pub fsync: FsyncPolicy,
    /// Appended to the file name (torch's `filename_suffix`); empty by default.
    pub suffix: String,
}

impl WriterOptions {
    /// Options from the environment: [`default_hostname`], this process's id, the current
    /// system time, and [`FsyncPolicy::Never`].
    pub fn from_env() -> Self {
        WriterOptions {
            hostname: default_hostname(),
            pid: std::process::id(),
            created_at: SystemTime::now(),
            fsync: FsyncPolicy::default(),
            suffix: String::new(),
        }
    }

    /// Sets the fsync policy.
    pub fn with_fsync(mut self, fsync: FsyncPolicy) -> Self {
        self.fsync = fsync;
        self
    }
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self::from_env()
    }
}

/// Writes a TensorBoard event file.
///
/// Every record is encoded into a reused buffer and handed to an unbuffered `File` with a
/// single `write_all` before the call returns, so a process killed right after a call
/// returns leaves that record readable.
#[derive(Debug)]
pub struct EventFileWriter<C: Clock = SystemClock> {
    records: RecordWriter<File>,
    path: PathBuf,
    fsync: FsyncPolicy,
    clock: C,
    /// Monotonic seconds of the last fsync.
    last_sync: f64,
    syncs: u64,
    /// Scratch for the duplicate-tag check, reused across steps.
    order: Vec<usize>,
    closed: bool,
    /// The last record boundary, while a failed write may have left part of a record after it.
    torn_at: Option<u64>,
}

impl EventFileWriter<SystemClock> {
    /// Creates a new event file in `dir` (never overwriting one) and writes the
    /// `file_version` event.
    pub fn open(dir: impl AsRef<Path>, options: WriterOptions) -> Result<Self, OpenError> {
        Self::open_with_clock(dir, options, SystemClock::default())
    }

    /// Creates exactly `dir/name` ([`EventFileWriter::open_named_with_clock`]).
    pub fn open_named(
        dir: impl AsRef<Path>,
        name: &str,
        options: WriterOptions,
    ) -> Result<Self, OpenError> {
        Self::open_named_with_clock(dir, name, options, SystemClock::default())
    }
}

impl<C: Clock> EventFileWriter<C> {
    /// Like [`EventFileWriter::open`], with an injected clock for the fsync interval.
    pub fn open_with_clock(
        dir: impl AsRef<Path>,
        options: WriterOptions,
        clock: C,
    ) -> Result<Self, OpenError> {
        let dir = dir.as_ref();
        if !is_valid_hostname(&options.hostname) {
            return Err(OpenError::InvalidHostname {
                hostname: options.hostname,
            });
        }
        let since_epoch = options.created_at.duration_since(UNIX_EPOCH).map_err(|_| {
            OpenError::CreationTimeBeforeEpoch {
                created_at: options.created_at,
            }
        })?;
        let (file, path) = create_unique(
            dir,
            since_epoch.as_secs(),
            &options.hostname,
            options.pid,
            &options.suffix,
        )?;
        Self::start(dir, file, path, since_epoch, options.fsync, clock)
    }

    /// Like [`EventFileWriter::open_with_clock`], creating exactly `dir/name` (never
    /// overwriting it): for a writer whose files must be named in a sequence of its own (the
    /// segments of a run written to object storage, which must sort in writing order).
    pub fn open_named_with_clock(
        dir: impl AsRef<Path>,
        name: &str,
        options: WriterOptions,
        clock: C,
    ) -> Result<Self, OpenError> {
        let dir = dir.as_ref();
        let since_epoch = options.created_at.duration_since(UNIX_EPOCH).map_err(|_| {
            OpenError::CreationTimeBeforeEpoch {
                created_at: options.created_at,
            }
        })?;
        let path = dir.join(name);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|source| OpenError::Create {
                path: path.clone(),
                source,
            })?;
        Self::start(dir, file, path, since_epoch, options.fsync, clock)
    }

    /// The new `file` at `path` with its `file_version` event written (and synced per `fsync`).
    fn start(
        dir: &Path,
        file: File,
        path: PathBuf,
        since_epoch: Duration,
        fsync: FsyncPolicy,
        clock: C,
    ) -> Result<Self, OpenError> {
        let mut records = RecordWriter::new(file);
        let header = Event {
            wall_time: since_epoch.as_secs_f64(),
            step: 0,
            what: Some(event::What::FileVersion(FILE_VERSION.to_string())),
        };
        if let Err(source) = records.write_message(&header) {
            return Err(OpenError::WriteHeader { path, source });
        }
        let mut syncs = 0;
        if fsync != FsyncPolicy::Never {
            records
                .get_ref()
                .sync_all()
                .map_err(|source| OpenError::Sync {
                    path: path.clone(),
                    source,
                })?;
            syncs += 1;
            // Persist the directory entry too, or a power loss could lose the whole file.
            // Best effort: some filesystems refuse fsync on directories, and the file's
            // contents are already safe.
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        let last_sync = clock.monotonic();
        Ok(EventFileWriter {
            records,
            path,
            fsync,
            clock,
            last_sync,
            syncs,
            order: Vec::new(),
            closed: false,
            torn_at: None,
        })
    }

    /// Writes one event holding every `(tag, value)` of the step as an f32 `simple_value`.
    ///
    /// An empty or repeated tag is an error and nothing is written.
    pub fn write_scalars(
        &mut self,
        step: i64,
        wall_time: f64,
        scalars: &[(&str, f64)],
    ) -> Result<(), WriteError> {
        self.check_tags(step, scalars)?;
        self.write_scalar_event(step, wall_time, scalars)
    }

    /// As [`EventFileWriter::write_scalars`], for a caller whose tags are non-empty and unique
    /// by construction (the logger resolved each against its schema): the check is skipped in
    /// release builds, so a step is not validated twice.
    pub fn write_resolved_scalars(
        &mut self,
        step: i64,
        wall_time: f64,
        scalars: &[(&str, f64)],
    ) -> Result<(), WriteError> {
        self.write_resolved_scalar_iter(step, wall_time, scalars.iter().copied())
    }

    /// As [`EventFileWriter::write_resolved_scalars`], from any cloneable sequence of
    /// `(tag, value)`: the writer thread builds no list of its step's tags, so a written step
    /// allocates nothing.
    pub fn write_resolved_scalar_iter<'a, I>(
        &mut self,
        step: i64,
        wall_time: f64,
        scalars: I,
    ) -> Result<(), WriteError>
    where
        I: Iterator<Item = (&'a str, f64)> + Clone,
    {
        #[cfg(debug_assertions)]
        self.check_resolved_tags(step, scalars.clone())?;
        self.repair()?;
        let result = self
            .records
            .write_record_with(|buf| encode_scalar_event_from(step, wall_time, scalars, buf));
        self.after_write(result)
    }

    fn write_scalar_event(
        &mut self,
        step: i64,
        wall_time: f64,
        scalars: &[(&str, f64)],
    ) -> Result<(), WriteError> {
        self.repair()?;
        let result = self
            .records
            .write_record_with(|buf| encode_scalar_event(step, wall_time, scalars, buf));
        self.after_write(result)
    }

    /// [`EventFileWriter::check_tags`] without a list of the tags (debug builds only: a
    /// quadratic scan, which allocates nothing).
    #[cfg(debug_assertions)]
    fn check_resolved_tags<'a>(
        &self,
        step: i64,
        scalars: impl Iterator<Item = (&'a str, f64)> + Clone,
    ) -> Result<(), WriteError> {
        for (index, (tag, _)) in scalars.clone().enumerate() {
            if tag.is_empty() {
                return Err(WriteError::EmptyTag {
                    path: self.path.clone(),
                    step,
                    index,
                });
            }
            if scalars.clone().skip(index + 1).any(|(t, _)| t == tag) {
                return Err(WriteError::DuplicateTag {
                    path: self.path.clone(),
                    step,
                    tag: tag.to_string(),
                });
            }
        }
        Ok(())
    }

    /// Writes an arbitrary event (e.g. a tensor or histogram summary built with prost).
    pub fn write_event(&mut self, event: &Event) -> Result<(), WriteError> {
        self.repair()?;
        let result = self.records.write_message(event);
        self.after_write(result)
    }

    /// Writes the purge marker at `step` ([`crate::proto::session_start_event`]): TensorBoard
    /// then drops the points of earlier files at `step` and later.
    pub fn write_session_start(&mut self, step: i64, wall_time: f64) -> Result<(), WriteError> {
        self.write_event(&crate::proto::session_start_event(step, wall_time))
    }

    /// Writes an already-serialized `Event` as one record.
    pub fn write_event_bytes(&mut self, event: &[u8]) -> Result<(), WriteError> {
        self.repair()?;
        let result = self.records.write_record(event);
        self.after_write(result)
    }

    /// Rejects empty and duplicate tags, without allocating once the scratch has grown.
    fn check_tags(&mut self, step: i64, scalars: &[(&str, f64)]) -> Result<(), WriteError> {
        if let Some(index) = scalars.iter().position(|(tag, _)| tag.is_empty()) {
            return Err(WriteError::EmptyTag {
                path: self.path.clone(),
                step,
                index,
            });
        }
        self.order.clear();
        self.order.extend(0..scalars.len());
        self.order.sort_unstable_by_key(|&i| scalars[i].0);
        if let Some(pair) = self
            .order
            .windows(2)
            .find(|w| scalars[w[0]].0 == scalars[w[1]].0)
        {
            return Err(WriteError::DuplicateTag {
                path: self.path.clone(),
                step,
                tag: scalars[pair[0]].0.to_string(),
            });
        }
        Ok(())
    }

    /// Maps a record write result and applies the fsync policy.
    fn after_write(&mut self, result: Result<u64, WriteRecordError>) -> Result<(), WriteError> {
        if let Err(source) = result {
            if let WriteRecordError::Io { offset, .. } = source {
                // Part of the record may be in the file: cut it off now (or before the next
                // write, if cutting fails too), so readers never meet a torn record mid-file.
                self.torn_at = Some(offset);
                let _ = self.repair();
            }
            return Err(WriteError::Record {
                path: self.path.clone(),
                source,
            });
        }
        match self.fsync {
            FsyncPolicy::Never => Ok(()),
            FsyncPolicy::EveryWrite => self.sync(),
            FsyncPolicy::Interval(interval) => {
                if self.clock.monotonic() - self.last_sync >= interval.as_secs_f64() {
                    self.sync()?;
                }
                Ok(())
            }
        }
    }

    /// Cuts the file back to the last record boundary after a failed write, and writes on from
    /// there (the failed write poisoned the old record writer).
    fn repair(&mut self) -> Result<(), WriteError> {
        let Some(offset) = self.torn_at else {
            return Ok(());
        };
        let cut = || -> io::Result<File> {
            // A second handle on the same open file: the record writer is replaced below.
            let mut file = self.records.get_ref().try_clone()?;
            file.set_len(offset)?;
            file.seek(SeekFrom::Start(offset))?;
            Ok(file)
        };
        match cut() {
            Ok(file) => {
                self.records = RecordWriter::with_offset(file, offset);
                self.torn_at = None;
                Ok(())
            }
            Err(source) => Err(WriteError::Repair {
                path: self.path.clone(),
                offset,
                source,
            }),
        }
    }

    /// Whether the open file is no longer at its path: unlinked (a removed run directory leaves
    /// it no link, and everything written to it after that goes with it), or its path now
    /// missing or another file (its directory moved away; NFS renames a removed open file).
    pub fn is_unlinked(&self) -> io::Result<bool> {
        use std::os::unix::fs::MetadataExt;
        let open = self.records.get_ref().metadata()?;
        if open.nlink() == 0 {
            return Ok(true);
        }
        match std::fs::metadata(&self.path) {
            Ok(at_path) => Ok((at_path.dev(), at_path.ino()) != (open.dev(), open.ino())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(true),
            Err(e) => Err(e),
        }
    }

    /// Puts an unlinked file back at its path: recreates its directory, copies its whole
    /// records from the open descriptor into a new file there, and writes on in the new one.
    /// Returns the bytes restored. On failure the old descriptor stays in use, so nothing is
    /// lost and the restore can be tried again; a partial copy is removed.
    pub fn relink(&mut self) -> Result<u64, RelinkError> {
        let err = |source| RelinkError {
            path: self.path.clone(),
            source,
        };
        // Whole records only: a torn tail is not copied.
        let len = self.torn_at.unwrap_or(self.records.offset());
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&self.path)
            .map_err(err)?;
        let copied = copy_prefix(self.records.get_ref(), &mut file, len).and_then(|()| {
            if self.fsync != FsyncPolicy::Never {
                file.sync_all()?;
                if let Some(d) = self.path.parent().and_then(|d| File::open(d).ok()) {
                    let _ = d.sync_all();
                }
            }
            Ok(())
        });
        if let Err(source) = copied {
            let _ = std::fs::remove_file(&self.path);
            return Err(err(source));
        }
        self.records = RecordWriter::with_offset(file, len);
        self.torn_at = None;
        Ok(len)
    }

    /// Whether the file may end in part of a record that is not cut off yet.
    pub fn is_torn(&self) -> bool {
        self.torn_at.is_some()
    }

    /// Records are never buffered in-process, so this only flushes the `File` (a no-op);
    /// it exists so callers can treat the writer like any other sink.
    pub fn flush(&mut self) -> Result<(), WriteError> {
        self.records.flush().map_err(|source| WriteError::Sync {
            path: self.path.clone(),
            offset: self.records.offset(),
            source,
        })
    }

    /// fsyncs the file's data now, whatever the policy.
    pub fn sync(&mut self) -> Result<(), WriteError> {
        self.records
            .get_ref()
            .sync_data()
            .map_err(|source| WriteError::Sync {
                path: self.path.clone(),
                offset: self.records.offset(),
                source,
            })?;
        self.syncs += 1;
        self.last_sync = self.clock.monotonic();
        Ok(())
    }

    /// Closes the file, fsyncing first unless the policy is [`FsyncPolicy::Never`].
    pub fn close(mut self) -> Result<(), WriteError> {
        self.closed = true;
        self.repair()?;
        if self.fsync != FsyncPolicy::Never {
            self.sync()?;
        }
        Ok(())
    }

    /// Path of the event file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes written to the file so far.
    pub fn bytes_written(&self) -> u64 {
        self.records.offset()
    }

    /// Number of fsyncs issued so far (including the one at open, if any).
    pub fn syncs(&self) -> u64 {
        self.syncs
    }
}

impl<C: Clock> Drop for EventFileWriter<C> {
    fn drop(&mut self) {
        // Without close(), still honour an fsync policy; errors cannot be reported from
        // drop, and the data already reached the OS, so they are ignored.
        if !self.closed && self.fsync != FsyncPolicy::Never {
            let _ = self.records.get_ref().sync_data();
        }
    }
}

/// The first `len` bytes of `from` appended to `to`, read by offset (the descriptor's own
/// position is left alone).
fn copy_prefix(from: &File, to: &mut File, len: u64) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; 1 << 20];
    let mut at = 0;
    while at < len {
        let want = (len - at).min(buf.len() as u64) as usize;
        let n = from.read_at(&mut buf[..want], at)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the open event file ends at byte {at}, before {len}"),
            ));
        }
        to.write_all(&buf[..n])?;
        at += n as u64;
    }
    Ok(())
}

/// Creates a new file with the next free event file name in `dir`.
fn create_unique(
    dir: &Path,
    secs: u64,
    hostname: &str,
    pid: u32,
    suffix: &str,
) -> Result<(File, PathBuf), OpenError> {
    let mut attempts = 0;
    loop {
        let n = NEXT_FILE_INDEX.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(event_file_name(secs, hostname, pid, n) + suffix);
        // create_new: never clobber a file, even one another process just created. Readable
        // too, so an unlinked file can be copied back from its descriptor (`relink`).
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => return Ok((file, path)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < MAX_NAME_ATTEMPTS => {
                attempts += 1;
            }
            Err(source) => return Err(OpenError::Create { path, source }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::{open_event_file, read_scalars_from_file};
    use crate::ScalarEvent;

    fn options(fsync: FsyncPolicy) -> WriterOptions {
        WriterOptions {
            hostname: "testhost".into(),
            pid: 4242,
            created_at: UNIX_EPOCH + Duration::from_millis(1_700_000_000_250),
            fsync,
            suffix: String::new(),
        }
    }

    #[test]
    fn event_file_name_has_tensorboard_shape_with_ten_digit_seconds() {
        assert_eq!(
            event_file_name(1_700_000_000, "gpu-box", 1234, 7),
            "events.out.tfevents.1700000000.gpu-box.1234.7"
        );
        assert_eq!(
            event_file_name(42, "h", 1, 0),
            "events.out.tfevents.0000000042.h.1.0"
        );
    }

    #[test]
    fn open_writes_file_version_event_with_creation_time_at_step_zero() {
        let dir = tempfile::tempdir().unwrap();
        let w = EventFileWriter::open(dir.path(), options(FsyncPolicy::Never)).unwrap();
        let name = w.path().file_name().unwrap().to_str().unwrap().to_string();
        assert!(
            name.starts_with("events.out.tfevents.1700000000.testhost.4242."),
            "{name}"
        );
        let events = open_event_file(w.path()).unwrap().read_to_end().unwrap();
        assert_eq!(
            events,
            vec![Event {
                wall_time: 1_700_000_000.25,
                step: 0,
                what: Some(event::What::FileVersion("brain.Event:2".into())),
            }]
        );
    }

    #[test]
    fn an_unlinked_file_is_put_back_with_every_record_and_written_on() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        let mut w = EventFileWriter::open(&run, options(FsyncPolicy::EveryWrite)).unwrap();
        for step in 1..=3 {
            w.write_scalars(step, 1.0, &[("a", step as f64)]).unwrap();
        }
        assert!(!w.is_unlinked().unwrap());
        std::fs::remove_dir_all(&run).unwrap();
        assert!(w.is_unlinked().unwrap());
        let bytes = w.relink().unwrap();
        assert_eq!(bytes, w.bytes_written());
        assert!(!w.is_unlinked().unwrap());
        w.write_scalars(4, 1.0, &[("a", 4.0)]).unwrap();
        let path = w.path().to_owned();
        w.close().unwrap();
        let steps: Vec<i64> = read_scalars_from_file(&path)
            .unwrap()
            .iter()
            .map(|e| e.step)
            .collect();
        assert_eq!(steps, [1, 2, 3, 4]);
    }

    #[test]
    fn a_relink_blocked_by_a_file_at_the_path_fails_naming_it_and_keeps_writing() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = EventFileWriter::open(dir.path(), options(FsyncPolicy::Never)).unwrap();
        w.write_scalars(1, 1.0, &[("a", 1.0)]).unwrap();
        std::fs::remove_file(w.path()).unwrap();
        std::fs::write(w.path(), "someone else's").unwrap();
        let err = w.relink().unwrap_err();
        assert!(
            err.to_string().contains(&w.path().display().to_string()),
            "{err}"
        );
        // The other file is left alone; the old descriptor still takes records.
        assert_eq!(std::fs::read_to_string(w.path()).unwrap(), "someone else's");
        w.write_scalars(2, 1.0, &[("a", 2.0)]).unwrap();
    }

    #[test]
    fn two_writers_in_one_process_and_second_get_distinct_files() {
        let dir = tempfile::tempdir().unwrap();
        let a = EventFileWriter::open(dir.path(), options(FsyncPolicy::Never)).unwrap();
        let b = EventFileWriter::open(dir.path(), options(FsyncPolicy::Never)).unwrap();
        assert_ne!(a.path(), b.path());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn open_never_clobbers_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let next = NEXT_FILE_INDEX.load(Ordering::Relaxed);
        // Occupy the names the next few opens would pick (other tests may take some too).
        let taken: Vec<PathBuf> = (next..next + 5)
            .map(|n| {
                dir.path()
                    .join(event_file_name(1_700_000_000, "testhost", 4242, n))
            })
            .collect();
        for p in &taken {
            std::fs::write(p, b"precious").unwrap();
        }
        let w = EventFileWriter::open(dir.path(), options(FsyncPolicy::Never)).unwrap();
        assert!(!taken.contains(&w.path().to_path_buf()));
        for p in &taken {
            assert_eq!(std::fs::read(p).unwrap(), b"precious");
        }
    }

    #[test]
    fn unusable_hostname_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        for hostname in ["", "a/b"] {
            let mut o = options(FsyncPolicy::Never);
            o.hostname = hostname.into();
            let err = EventFileWriter::open(dir.path(), o).unwrap_err();
            assert!(matches!(err, OpenError::InvalidHostname { .. }), "{err}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn write_scalars_writes_one_event_per_step_with_f32_rounded_values() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = EventFileWriter::open(dir.path(), options(FsyncPolicy::Never)).unwrap();
        w.write_scalars(1, 10.5, &[("a", 0.1), ("b", -3.0)])
            .unwrap();
        w.write_scalars(2, 11.5, &[("a", 0.2)]).unwrap();
        let events = open_event_file(w.path()).unwrap().read_to_end().unwrap();
        assert_eq!(events.len(), 3, "file_version + one event per step");
        let scalars = read_scalars_from_file(w.path()).unwrap();
        let s = |tag: &str, step, wall_time, value: f64| ScalarEvent {
            tag: tag.into(),
            step,
            wall_time,
            value: f64::from(value as f32),
        };
        assert_eq!(
            scalars,
            vec![
                s("a", 1, 10.5, 0.1),
                s("b", 1, 10.5, -3.0),
                s("a", 2, 11.5, 0.2)
            ]
        );
    }

    #[test]
    fn record_is_in_the_file_as_soon_as_write_returns() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = EventFileWriter::open(dir.path(), options(FsyncPolicy::Never)).unwrap();
        w.write_scalars(7, 1.0, &[("x", 1.0)]).unwrap();
        // Read through a separate handle while the writer is still open and unflushed.
        let scalars = read_scalars_from_file(w.path()).unwrap();
        assert_eq!(scalars.len(), 1);
        assert_eq!(
            std::fs::metadata(w.path()).unwrap().len(),
            w.bytes_written()
        );
    }

    #[test]
    fn duplicate_tag_is_rejected_and_the_file_is_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = EventFileWriter::open(dir.path(), options(FsyncPolicy::Never)).unwrap();
        w.write_scalars(1, 1.0, &[("a", 1.0)]).unwrap();
        let before = std::fs::read(w.path()).unwrap();
        let err = w
            .write_scalars(
                2,
                2.0,
                &[
                    ("b", 1.0),
                    ("Loss/critic", 2.0),
                    ("c", 3.0),
                    ("Loss/critic", 4.0),
                ],
            )
            .unwrap_err();
        assert!(
            matches!(&err, WriteError::DuplicateTag { tag, step: 2, .. } if tag == "Loss/critic"),
            "{err}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains(w.path().to_str().unwrap()) && msg.contains("\"Loss/critic\""),
            "{msg}"
        );
        assert_eq!(std::fs::read(w.path()).unwrap(), before);
        // The writer is still usable afterwards.
        w.write_scalars(2, 2.0, &[("b", 1.0)]).unwrap();
        assert_eq!(read_scalars_from_file(w.path()).unwrap().len(), 2);
    }

    #[test]
    fn empty_tag_is_rejected_and_the_file_is_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = EventFileWriter::open(dir.path(), options(FsyncPolicy::Never)).unwrap();
        let before = std::fs::read(w.path()).unwrap();
        let err = w
            .write_scalars(3, 1.0, &[("a", 1.0), ("", 2.0)])
            .unwrap_err();
        assert!(
            matches!(
                err,
                WriteError::EmptyTag {
                    index: 1,
                    step: 3,
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(std::fs::read(w.path()).unwrap(), before);
    }

    #[test]
    fn fsync_interval_syncs_only_once_the_interval_has_elapsed() {
        let dir = tempfile::tempdir().unwrap();
        let clock = tally_clock::ManualClock::at(0.0);
        let policy = FsyncPolicy::Interval(Duration::from_secs(10));
        let mut w = EventFileWriter::open_with_clock(dir.path(), options(policy), &clock).unwrap();
        assert_eq!(w.syncs(), 1, "the new file is synced at open");
        w.write_scalars(1, 1.0, &[("a", 1.0)]).unwrap();
        clock.advance(9.0);
        w.write_scalars(2, 1.0, &[("a", 1.0)]).unwrap();
        assert_eq!(w.syncs(), 1);
        clock.advance(1.0);
        w.write_scalars(3, 1.0, &[("a", 1.0)]).unwrap();
        assert_eq!(w.syncs(), 2);
        clock.advance(5.0);
        w.write_scalars(4, 1.0, &[("a", 1.0)]).unwrap();
        assert_eq!(w.syncs(), 2, "interval restarts at the last sync");
        clock.advance(5.0);
        w.write_scalars(5, 1.0, &[("a", 1.0)]).unwrap();
        assert_eq!(w.syncs(), 3);
        w.close().unwrap();
    }

    #[test]
    fn fsync_every_write_and_never_policies_sync_as_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut every =
            EventFileWriter::open(dir.path(), options(FsyncPolicy::EveryWrite)).unwrap();
        let mut never = EventFileWriter::open(dir.path(), options(FsyncPolicy::Never)).unwrap();
        for step in 1..=3 {
            every.write_scalars(step, 1.0, &[("a", 1.0)]).unwrap();
            never.write_scalars(step, 1.0, &[("a", 1.0)]).unwrap();
        }
        assert_eq!(every.syncs(), 1 + 3);
        assert_eq!(never.syncs(), 0);
        never.sync().unwrap();
        assert_eq!(never.syncs(), 1);
    }

    #[test]
    fn dropping_a_writer_without_close_keeps_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = {
            let mut w = EventFileWriter::open(
                dir.path(),
                options(FsyncPolicy::Interval(Duration::from_secs(60))),
            )
            .unwrap();
            w.write_scalars(1, 1.0, &[("a", 1.0)]).unwrap();
            w.path().to_path_buf()
        };
        assert_eq!(read_scalars_from_file(path).unwrap().len(), 1);
    }
}
