//! Following one run's (or sub-run's) event files as they grow: older files to their end, then
//! the newest (`Ok(None)` at a partial record means "not yet"), moving on when a newer file
//! appears, a bounded share of files per look (`docs/contract/panel.md` "tally watch"); a
//! newer file's purge marker is handed to the caller with what it drops
//! (`docs/contract/consumers.md` "Following a run: tally watch").

use crate::error::Error;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use tally_tfevents::proto::event::What;
use tally_tfevents::proto::{Event, SessionLog};
use tally_tfevents::{into_scalars, open_event_file, Damage, EventReader, OnCorruption};

/// Files moved over in one look: a directory of thousands of files that hold nothing yet is
/// walked a share at a time, so the caller can draw, and hear `q` and signals, between shares.
pub const FILES_PER_LOOK: usize = 256;

/// Events a purge marker is looked for among at the head of a file, as the other readers look
/// (docs/contract/consumers.md "A run's event files").
const MARKER_SEARCH_EVENTS: usize = 8;

/// A purge marker met at the head of a file after the first: the points shown from the earlier
/// files at `step` or later are no longer the run's (docs/contract/consumers.md "Following a
/// run: tally watch").
#[derive(Debug, Clone, PartialEq)]
pub struct Purge {
    /// The marker's step.
    pub step: i64,
    /// What it dropped, one [`Damage::Purged`] per earlier file that had such points.
    pub damage: Vec<Damage>,
}

/// The file being read and the reader at its position (nothing before the first file
/// appears), and the next event when it has been read but not taken yet.
#[derive(Debug, Default)]
pub struct Follow {
    current: Option<(PathBuf, EventReader<BufReader<File>>)>,
    next: Option<Event>,
    /// Nothing more was there at the last look: not looked for again until [`Follow::wake`]
    /// (a poll looks once, however many events the other files give it).
    dry: bool,
    /// Files moved over since the last wake, and whether the look stopped at
    /// [`FILES_PER_LOOK`] with more to walk.
    moved: usize,
    more: bool,
    /// Where the current file is in the last listing, and how many files it had.
    index: usize,
    total: usize,
    /// The files read to their end, each with the lowest purge step applied to it so far.
    done: Vec<(PathBuf, Option<i64>)>,
    /// Events of the current file read so far while none held a summary (its head).
    head: Option<usize>,
    purge: Option<Purge>,
}

impl Follow {
    /// The wall time of the next complete summary event, read if need be, or `None` when there
    /// is none yet. Other events (a file's `file_version`, session logs) hold no scalars and are
    /// passed over: their wall time is when the file was opened, which would order a run's
    /// files by when each was created rather than by their records. `files` lists the run's
    /// event files in run order (asked again when a file ends, so a new file is found); a
    /// partial record left at the end of a file that a newer one follows is said to `warn`. A
    /// purge marker read on the way is kept for [`take_purge`](Self::take_purge).
    pub fn peek(
        &mut self,
        mut files: impl FnMut() -> Result<Vec<PathBuf>, Error>,
        mut warn: impl FnMut(String),
    ) -> Result<Option<f64>, Error> {
        while self.next.is_none() {
            if self.dry {
                return Ok(None);
            }
            let Some(event) = self.read(&mut files, &mut warn)? else {
                self.dry = true;
                return Ok(None);
            };
            if matches!(event.what, Some(What::Summary(_))) {
                self.next = Some(event);
            }
        }
        Ok(self.next.as_ref().map(|e| e.wall_time))
    }

    /// Look again at the next [`peek`](Self::peek): a new poll.
    pub fn wake(&mut self) {
        self.dry = false;
        self.moved = 0;
        self.more = false;
    }

    /// The event [`peek`](Self::peek) read.
    pub fn take(&mut self) -> Option<Event> {
        self.next.take()
    }

    /// The purge marker [`peek`](Self::peek) met, once: every event before it has been taken,
    /// none after it yet.
    pub fn take_purge(&mut self) -> Option<Purge> {
        self.purge.take()
    }

    /// Whether the last look stopped with files left to walk ([`FILES_PER_LOOK`]).
    pub fn more(&self) -> bool {
        self.more
    }

    /// Which file of how many (1-based, of the last listing) is being read; `None` before the
    /// first file.
    pub fn progress(&self) -> Option<(usize, usize)> {
        self.current
            .as_ref()
            .map(|_| (self.index + 1, self.total.max(self.index + 1)))
    }

    fn read(
        &mut self,
        files: &mut impl FnMut() -> Result<Vec<PathBuf>, Error>,
        warn: &mut impl FnMut(String),
    ) -> Result<Option<Event>, Error> {
        // Listed once per call: listing orders the files by their first event, so listing
        // again for every file passed over was quadratic in a directory of many files that
        // hold nothing yet (docs/contract/panel.md "tally watch").
        let mut listed: Option<Vec<PathBuf>> = None;
        loop {
            if self.current.is_none() {
                let list = listed.get_or_insert(files()?);
                self.total = list.len();
                let Some(first) = list.first().cloned() else {
                    return Ok(None);
                };
                let reader = open_event_file(&first)?;
                self.current = Some((first, reader));
                (self.index, self.head) = (0, Some(0));
            }
            let Some((path, reader)) = self.current.as_mut() else {
                return Ok(None);
            };
            let offset = reader.records().position();
            if let Some(event) = reader.read_event()? {
                self.look_at_head(&event, offset);
                return Ok(Some(event));
            }
            // The end of this file, or a partial record: a newer file means the writer moved
            // on (a resumed run); otherwise it is still writing.
            if listed.is_none() {
                listed = Some(files()?);
            }
            let list = listed.as_deref().unwrap_or_default();
            self.total = list.len();
            // Looked for from where the current file was: a listing that did not change finds
            // it next, so walking many files is not quadratic either.
            let newer = |f: &PathBuf| f.file_name() > path.file_name();
            let from = (self.index + 1).min(list.len());
            let Some(at) = list[from..]
                .iter()
                .position(newer)
                .map(|i| i + from)
                .or_else(|| list[..from].iter().position(newer))
            else {
                return Ok(None);
            };
            if self.moved >= FILES_PER_LOOK {
                self.more = true;
                return Ok(None);
            }
            let next = &list[at];
            let records = reader.records();
            if records.pending_bytes() > 0 {
                warn(format!(
                    "{}: truncated final record at byte {} ({} bytes), continuing with {}",
                    path.display(),
                    records.position(),
                    records.pending_bytes(),
                    next.display()
                ));
            }
            let reader = open_event_file(next)?;
            if let Some((path, _)) = self.current.replace((next.clone(), reader)) {
                self.done.push((path, None));
            }
            (self.index, self.head) = (at, Some(0));
            self.moved += 1;
        }
    }

    /// A purge marker among the first events of a file after the first, before its first
    /// summary (where writers put it), drops the earlier files' points from its step on.
    fn look_at_head(&mut self, event: &Event, offset: u64) {
        let Some(seen) = self.head else {
            return;
        };
        self.head = (seen + 1 < MARKER_SEARCH_EVENTS).then_some(seen + 1);
        match &event.what {
            Some(What::Summary(_)) => self.head = None,
            Some(What::SessionLog(log)) if log.status == SessionLog::START => {
                self.head = None;
                if let Some((path, _)) = &self.current {
                    let marker = path.clone();
                    let damage = self.drop_earlier(&marker, offset, event.step);
                    self.purge = Some(Purge {
                        step: event.step,
                        damage,
                    });
                }
            }
            _ => {}
        }
    }

    /// Count, and report, the points of the files read before that a marker at `step` drops:
    /// those at `step` or later that an earlier marker had not dropped already. The earlier
    /// files are complete (the writer moved on), so they are read again once, at the marker.
    fn drop_earlier(&mut self, marker: &Path, offset: u64, step: i64) -> Vec<Damage> {
        let mut damage = Vec::new();
        for (file, cut) in &mut self.done {
            let below = cut.unwrap_or(i64::MAX);
            let points = points_between(file, step, below);
            *cut = Some(below.min(step));
            if points > 0 {
                damage.push(Damage::Purged {
                    path: Some(marker.to_owned()),
                    offset,
                    from_step: step,
                    points,
                    earlier: file.clone(),
                });
            }
        }
        damage
    }

    /// The file being read and where its unread partial record starts with how many bytes it
    /// holds so far, when it ends in one.
    pub fn partial_tail(&self) -> Option<(&PathBuf, u64, usize)> {
        let (path, reader) = self.current.as_ref()?;
        let records = reader.records();
        (records.pending_bytes() > 0).then(|| (path, records.position(), records.pending_bytes()))
    }
}

/// The scalars of `file` at steps in `from..below` (a file that cannot be read has none here:
/// following it said why).
fn points_between(file: &Path, from: i64, below: i64) -> u64 {
    let Ok(reader) = open_event_file(file) else {
        return 0;
    };
    let mut reader = reader.with_on_corruption(OnCorruption::Skip);
    let mut points = 0;
    while let Ok(Some(event)) = reader.read_event() {
        if (from..below).contains(&event.step) {
            points += into_scalars(event).count() as u64;
        }
    }
    points
}

/// The tag a sub-run's scalar is shown under: `<tag>/<key>` for the sub-runs `add_scalars`
/// makes, holding `tag` (tensorboardX names them `<tag>/<key>`, torch `<tag with / as _>_<key>`),
/// so a series sits in its chart's group as TensorBoard overlays it; `<sub-run>/<tag>` for any
/// other sub-run.
pub fn subrun_tag(subrun: &str, tag: &str) -> String {
    let torch = format!("{}_", tag.replace('/', "_"));
    let key = subrun
        .strip_prefix(tag)
        .and_then(|rest| rest.strip_prefix('/'))
        .or_else(|| {
            subrun
                .strip_prefix(&torch)
                .filter(|_| !subrun.contains('/'))
        });
    match key {
        Some(key) if !key.is_empty() && !key.contains('/') => format!("{tag}/{key}"),
        _ => format!("{subrun}/{tag}"),
    }
}

#[cfg(test)]
mod tests {
    use super::{subrun_tag, Follow, FILES_PER_LOOK};
    use std::cell::Cell;

    #[test]
    fn a_directory_of_many_empty_files_is_listed_once_per_wake() {
        // 3 000 empty event files (writers that never wrote): each file passed over used to
        // list the directory again, every list opening every file, and `tally watch` spun.
        let dir = tempfile::tempdir().unwrap();
        for i in 0..3000 {
            std::fs::write(
                dir.path().join(format!("events.out.tfevents.{i:05}.h")),
                b"",
            )
            .unwrap();
        }
        let listed = Cell::new(0);
        // Listed once here; each call of `files` stands for one listing.
        let list = crate::files::dir_event_files(dir.path()).unwrap();
        let files = || {
            listed.set(listed.get() + 1);
            Ok(list.clone())
        };
        let mut follow = Follow::default();
        assert_eq!(follow.peek(files, |_| {}).unwrap(), None);
        assert!(
            listed.get() <= 2,
            "listed {} times for one wake",
            listed.get()
        );
        // A bounded share of the files per look, and how far it got.
        assert!(follow.more());
        assert_eq!(follow.progress(), Some((FILES_PER_LOOK + 1, 3000)));
        while follow.more() {
            follow.wake();
            assert_eq!(follow.peek(files, |_| {}).unwrap(), None);
        }
        assert_eq!(follow.progress(), Some((3000, 3000)));
        listed.set(0);
        follow.wake();
        assert_eq!(follow.peek(files, |_| {}).unwrap(), None);
        assert!(
            listed.get() <= 2,
            "listed {} times for a wake at the end",
            listed.get()
        );
        assert!(!follow.more());
    }

    #[test]
    fn add_scalars_sub_runs_show_under_their_chart() {
        assert_eq!(subrun_tag("loss_train", "loss"), "loss/train");
        assert_eq!(
            subrun_tag("Loss_policy_val", "Loss/policy"),
            "Loss/policy/val"
        );
        // tensorboardX's layout.
        assert_eq!(subrun_tag("loss/train", "loss"), "loss/train");
        assert_eq!(
            subrun_tag("Loss/policy/val", "Loss/policy"),
            "Loss/policy/val"
        );
        // Any other sub-run keeps its own name in front.
        assert_eq!(subrun_tag("eval", "return"), "eval/return");
        assert_eq!(subrun_tag("loss_", "loss"), "loss_/loss");
        assert_eq!(subrun_tag("a/loss_train", "loss"), "a/loss_train/loss");
    }
}
