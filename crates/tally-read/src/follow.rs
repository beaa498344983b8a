//! Following one run's (or sub-run's) event files as they grow: older files to their end, then
//! the newest (`Ok(None)` at a partial record means "not yet"), moving on when a newer file
//! appears (`docs/contract/panel.md` "tally watch").

use crate::error::Error;
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use tally_tfevents::proto::event::What;
use tally_tfevents::proto::Event;
use tally_tfevents::{open_event_file, EventReader};

/// The file being read and the reader at its position (nothing before the first file
/// appears), and the next event when it has been read but not taken yet.
#[derive(Debug, Default)]
pub struct Follow {
    current: Option<(PathBuf, EventReader<BufReader<File>>)>,
    next: Option<Event>,
    /// Nothing more was there at the last look: not looked for again until [`Follow::wake`]
    /// (a poll looks once, however many events the other files give it).
    dry: bool,
}

impl Follow {
    /// The wall time of the next complete summary event, read if need be, or `None` when there
    /// is none yet. Other events (a file's `file_version`, session logs) hold no scalars and are
    /// passed over: their wall time is when the file was opened, which would order a run's
    /// files by when each was created rather than by their records. `files` lists the run's
    /// event files in run order (asked again when a file ends, so a new file is found); a
    /// partial record left at the end of a file that a newer one follows is said to `warn`.
    pub fn peek(
        &mut self,
        files: impl Fn() -> Result<Vec<PathBuf>, Error>,
        mut warn: impl FnMut(String),
    ) -> Result<Option<f64>, Error> {
        while self.next.is_none() {
            if self.dry {
                return Ok(None);
            }
            let Some(event) = self.read(&files, &mut warn)? else {
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
    }

    /// The event [`peek`](Self::peek) read.
    pub fn take(&mut self) -> Option<Event> {
        self.next.take()
    }

    fn read(
        &mut self,
        files: &impl Fn() -> Result<Vec<PathBuf>, Error>,
        warn: &mut impl FnMut(String),
    ) -> Result<Option<Event>, Error> {
        // Listed once per call: listing orders the files by their first event, opening each,
        // so listing again for every file passed over was quadratic in a directory of many
        // files that hold nothing yet (docs/contract/panel.md "tally watch").
        let mut listed: Option<Vec<PathBuf>> = None;
        loop {
            if self.current.is_none() {
                let list = listed.get_or_insert(files()?);
                let Some(first) = list.first().cloned() else {
                    return Ok(None);
                };
                let reader = open_event_file(&first)?;
                self.current = Some((first, reader));
            }
            let Some((path, reader)) = self.current.as_mut() else {
                return Ok(None);
            };
            if let Some(event) = reader.read_event()? {
                return Ok(Some(event));
            }
            // The end of this file, or a partial record: a newer file means the writer moved
            // on (a resumed run); otherwise it is still writing.
            if listed.is_none() {
                listed = Some(files()?);
            }
            let list = listed.as_deref().unwrap_or_default();
            let Some(next) = list.iter().find(|f| f.file_name() > path.file_name()) else {
                return Ok(None);
            };
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
            self.current = Some((next.clone(), reader));
        }
    }

    /// The file being read and where its unread partial record starts with how many bytes it
    /// holds so far, when it ends in one.
    pub fn partial_tail(&self) -> Option<(&PathBuf, u64, usize)> {
        let (path, reader) = self.current.as_ref()?;
        let records = reader.records();
        (records.pending_bytes() > 0).then(|| (path, records.position(), records.pending_bytes()))
    }
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
    use super::{subrun_tag, Follow};
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
        let files = || {
            listed.set(listed.get() + 1);
            crate::files::dir_event_files(dir.path())
        };
        let mut follow = Follow::default();
        assert_eq!(follow.peek(files, |_| {}).unwrap(), None);
        assert!(
            listed.get() <= 2,
            "listed {} times for one wake",
            listed.get()
        );
        follow.wake();
        assert_eq!(follow.peek(files, |_| {}).unwrap(), None);
        assert!(
            listed.get() <= 4,
            "listed {} times for two wakes",
            listed.get()
        );
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
