//! A run's row streams: its own event files and each sub-run's (a directory below the run
//! holding event files, as `add_scalars` writes one per series), each read from its own place
//! in the sink's cursor, a sub-run's tags named `<sub-run>/<tag>` (docs/contract/remote-sinks.md
//! "Sub-runs").
//!
//! A batch holds the rows of one stream; the streams take turns. Which stream has rows depends
//! on how far each file has grown, so when a run has sub-runs the batch in flight is recorded in
//! the cursor before it is sent ([`Inflight`]) and a later reader sends exactly it first: each
//! row keeps its index (W&B's `_step`, trackio's log id) whatever was written since.

use super::cursor::{Cursor, Inflight};
use super::order::ordered_event_files;
use super::rows::{Pos, RowReader};
use crate::error::{Error, Result};
use crate::sink::BackendStep;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tally_tfevents::reader::is_event_file_name;
use tally_tfevents::Damage;

/// How often a follower looks for sub-runs that appeared (`add_scalars` of a new series).
const SCAN_EVERY: Duration = Duration::from_secs(1);

/// A row read and where it ends: its stream's index and the position in that stream's files.
pub(crate) type Queued = (BackendStep, usize, Pos);

/// One stream: the run's own files (`name` empty) or a sub-run's.
pub(crate) struct Stream {
    /// `""`, or the sub-run's path relative to the run directory, `/`-separated.
    pub(crate) name: String,
    /// Its files' names, in run order.
    pub(crate) files: Vec<String>,
    rows: RowReader,
}

/// The run's streams, read in turns.
pub(crate) struct Streams {
    run_dir: PathBuf,
    pub(crate) list: Vec<Stream>,
    /// The stream whose turn is next.
    next: usize,
    scanned: Instant,
    /// Looked for sub-runs once the files were complete.
    scanned_finished: bool,
    /// A batch recorded in flight by an earlier reader, to be read first.
    replay: Option<Inflight>,
}

impl Streams {
    /// The run's own `files` (in run order) and its sub-runs now on disk, each from its place
    /// in `cursor` (a cursor naming a file a stream does not have is refused).
    pub(crate) fn new(run_dir: &Path, files: Vec<PathBuf>, cursor: &Cursor) -> Result<Self> {
        let own = Stream::open(String::new(), files, cursor)?;
        let mut s = Streams {
            run_dir: run_dir.to_owned(),
            list: vec![own],
            next: 0,
            scanned: Instant::now(),
            scanned_finished: false,
            replay: cursor.inflight.clone(),
        };
        s.scan(cursor)?;
        Ok(s)
    }

    /// Whether the batch in flight must be recorded before it is sent.
    pub(crate) fn several(&self) -> bool {
        self.list.len() > 1
    }

    /// Follow the sub-runs that appeared since the last look.
    fn scan(&mut self, cursor: &Cursor) -> Result<()> {
        self.scanned = Instant::now();
        let found =
            subrun_dirs(&self.run_dir).map_err(Error::io("list sub-runs in", &self.run_dir))?;
        for (name, dir) in found {
            if self.list.iter().any(|s| s.name == name) {
                continue;
            }
            let files =
                ordered_event_files(&dir).map_err(Error::io("list event files in", &dir))?;
            if !files.is_empty() {
                self.list.push(Stream::open(name, files, cursor)?);
            }
        }
        Ok(())
    }

    /// Queue rows up to `max`: more of the stream at the queue's head when it holds some (a
    /// batch sent again), else of the first stream in turn that has a complete row. `finished`:
    /// the files will not grow (sub-runs are looked for once more first).
    pub(crate) fn fill(
        &mut self,
        queue: &mut VecDeque<Queued>,
        max: usize,
        finished: bool,
        cursor: &Cursor,
    ) -> Result<()> {
        if (finished && !self.scanned_finished) || self.scanned.elapsed() >= SCAN_EVERY {
            self.scanned_finished |= finished;
            self.scan(cursor)?;
        }
        if let Some(inflight) = self.replay.take() {
            if let Some(k) = self.list.iter().position(|s| s.name == inflight.subrun) {
                // Those rows were complete when they were sent: read them as a finished file.
                let n = (inflight.rows as usize).min(max);
                return self.take(k, queue, n, true);
            }
        }
        if let Some(&(_, k, _)) = queue.front() {
            return self.take(k, queue, max, finished);
        }
        let n = self.list.len();
        for i in 0..n {
            let k = (self.next + i) % n;
            self.take(k, queue, max, finished)?;
            if !queue.is_empty() {
                self.next = (k + 1) % n;
                break;
            }
        }
        Ok(())
    }

    fn take(
        &mut self,
        k: usize,
        queue: &mut VecDeque<Queued>,
        max: usize,
        finished: bool,
    ) -> Result<()> {
        while queue.len() < max {
            match self.list[k].rows.next(finished) {
                Ok(Some((row, pos))) => queue.push_back((row, k, pos)),
                Ok(None) => break,
                Err(e) => return Err(Error::ReadBack(e)),
            }
        }
        Ok(())
    }

    /// The batch `queue` holds, as the cursor records it in flight (none when the run has
    /// one stream: its rows come in one order only).
    pub(crate) fn inflight(&self, queue: &VecDeque<Queued>) -> Option<Inflight> {
        let &(_, k, _) = queue.front()?;
        self.several().then(|| Inflight {
            subrun: self.list[k].name.clone(),
            rows: queue.len() as u64,
        })
    }

    /// Every complete row of every stream, in turns (`finished`: the last step of each file
    /// too), handed to `each`, for counting: the order does not matter, so a batch in flight is
    /// not read first (it would be read as a finished file's, its last row perhaps half).
    pub(crate) fn each_row(
        &mut self,
        finished: bool,
        cursor: &Cursor,
        mut each: impl FnMut(&BackendStep),
    ) -> Result<()> {
        self.replay = None;
        let mut queue = VecDeque::new();
        loop {
            self.fill(&mut queue, usize::MAX, finished, cursor)?;
            if queue.is_empty() {
                return Ok(());
            }
            for (row, _, _) in queue.drain(..) {
                each(&row);
            }
        }
    }

    /// Truncated tails read past, in every stream.
    pub(crate) fn take_damage(&mut self) -> Vec<Damage> {
        self.list
            .iter_mut()
            .flat_map(|s| std::mem::take(&mut s.rows.damage))
            .collect()
    }
}

impl Stream {
    fn open(name: String, files: Vec<PathBuf>, cursor: &Cursor) -> Result<Self> {
        let at = cursor.position_in(&name, &files)?;
        let names = files
            .iter()
            .map(|f| {
                f.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        Ok(Stream {
            rows: RowReader::new(files, at).with_prefix(&name),
            name,
            files: names,
        })
    }
}

/// The sub-runs of the run in `run_dir`: the directories below it (at any depth, hidden ones
/// such as `.tally` left out, symbolic links not followed) that hold event files, each named by
/// its path relative to `run_dir`, `/`-separated, in path order.
pub fn subrun_dirs(run_dir: &Path) -> std::io::Result<Vec<(String, PathBuf)>> {
    let mut found = Vec::new();
    let mut todo = vec![(String::new(), run_dir.to_owned())];
    while let Some((name, dir)) = todo.pop() {
        let mut has_events = false;
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            // A sub-run removed while it was listed is no longer one.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !name.is_empty() => continue,
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            let kind = entry.file_type()?;
            let file = entry.file_name();
            let Some(file) = file.to_str() else { continue };
            if kind.is_dir() && !file.starts_with('.') {
                let sub = if name.is_empty() {
                    file.to_owned()
                } else {
                    format!("{name}/{file}")
                };
                todo.push((sub, entry.path()));
            } else if kind.is_file() && is_event_file_name(file) {
                has_events = true;
            }
        }
        if has_events && !name.is_empty() {
            found.push((name, dir));
        }
    }
    found.sort();
    Ok(found)
}
