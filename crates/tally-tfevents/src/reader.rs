//! Event readers: `EventReader` decodes `Event`s from TFRecords, `ScalarReader` yields the scalars in them, `open_event_file` opens a file with its path in every error.
//!
//! Both follow the corruption policy of [`crate::tf_record`]; in addition, a record whose
//! crcs pass but whose payload does not decode as an `Event` is reported as
//! [`CorruptionKind::UndecodableEvent`] at the record's offset under
//! [`OnCorruption::Error`], or skipped and counted under [`OnCorruption::Skip`].

use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use prost::Message;

use crate::intern::Interner;
use crate::open::open_regular;
use crate::proto::Event;
use crate::scalar::ScalarEvent;
use crate::scalar_fast::WireScalars;
use crate::scalar_ref::ScalarRef;
use crate::tf_record::{CorruptionKind, OnCorruption, ReadError, TfRecordReader};

/// What a reader found wrong in a file without stopping: what readers report to the user
/// (`docs/contract/consumers.md` "What readers report").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    /// The input ends inside a record: the `bytes` bytes from `offset` on are no complete
    /// record (a writer killed mid-record, or a file cut short).
    TruncatedTail {
        /// The file, when the reader knows it.
        path: Option<PathBuf>,
        /// Offset of the incomplete record's first byte.
        offset: u64,
        /// How many bytes of it are present.
        bytes: u64,
    },
    /// A corrupt record skipped under [`OnCorruption::Skip`].
    Skipped {
        /// The file, when the reader knows it.
        path: Option<PathBuf>,
        /// Offset of the record's length field.
        offset: u64,
        /// What was wrong with it.
        kind: CorruptionKind,
    },
    /// Points of a run's file whose steps do not pass a step an earlier file of the run
    /// reached, with no purge marker to drop the earlier ones: kept, as TensorBoard draws them
    /// (a script run twice into one directory, an evaluation series on an earlier step).
    StepsBack {
        /// The file holding them.
        path: Option<PathBuf>,
        /// Offset of the first such event's record.
        offset: u64,
        /// The first such event's step.
        first_step: i64,
        /// How many points of the file do not pass `reached`.
        points: u64,
        /// The largest step of the earlier files.
        reached: i64,
        /// The earlier file that reached it.
        reached_in: PathBuf,
    },
    /// Points of an earlier file of a run dropped by a later file's purge marker (a
    /// `SessionLog.START` event at step `from_step`, what `purge_step` and a rewinding resume
    /// write), as TensorBoard drops them.
    Purged {
        /// The file holding the marker.
        path: Option<PathBuf>,
        /// Offset of the marker's record.
        offset: u64,
        /// The marker's step: earlier points at this step or later are dropped.
        from_step: i64,
        /// How many points of `earlier` were dropped.
        points: u64,
        /// The earlier file whose points were dropped.
        earlier: PathBuf,
    },
}

impl Damage {
    /// The damaged file, when known.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Damage::TruncatedTail { path, .. }
            | Damage::Skipped { path, .. }
            | Damage::StepsBack { path, .. }
            | Damage::Purged { path, .. } => path.as_deref(),
        }
    }

    /// The byte offset of the damaged record.
    pub fn offset(&self) -> u64 {
        match self {
            Damage::TruncatedTail { offset, .. }
            | Damage::Skipped { offset, .. }
            | Damage::StepsBack { offset, .. }
            | Damage::Purged { offset, .. } => *offset,
        }
    }

    /// A stable name of the kind of damage: `truncated_tail`, `corrupt_record`, `steps_back`
    /// or `purged`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Damage::TruncatedTail { .. } => "truncated_tail",
            Damage::Skipped { .. } => "corrupt_record",
            Damage::StepsBack { .. } => "steps_back",
            Damage::Purged { .. } => "purged",
        }
    }

    /// What is wrong, without the path and offset.
    pub fn detail(&self) -> String {
        match self {
            Damage::TruncatedTail { bytes, .. } => {
                format!("the file ends inside a record ({bytes} bytes of an incomplete record)")
            }
            // No record after it can be found: the file is read up to it only.
            Damage::Skipped { kind, .. } if kind.loses_framing() => {
                format!("the rest of the file is not read: {kind}")
            }
            Damage::Skipped { kind, .. } => format!("skipped: {kind}"),
            Damage::StepsBack {
                first_step,
                points,
                reached,
                reached_in,
                ..
            } => format!(
                "{points} points from step {first_step} on do not pass step {reached}, which {} \
                 already reached (no purge marker); kept, as TensorBoard draws them",
                reached_in.display()
            ),
            Damage::Purged {
                from_step,
                points,
                earlier,
                ..
            } => format!(
                "purge marker at step {from_step}: {points} points of {} at steps >= {from_step} \
                 dropped, as TensorBoard drops them",
                earlier.display()
            ),
        }
    }
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = self.path() {
            write!(f, "{}: ", path.display())?;
        }
        let what = match self {
            Damage::TruncatedTail { .. } => "truncated tail",
            Damage::Skipped { .. } => "corrupt record",
            Damage::StepsBack { .. } => "steps going back",
            Damage::Purged { .. } => "purge",
        };
        write!(f, "{what} at byte {}: {}", self.offset(), self.detail())
    }
}

/// Streaming reader of decoded [`Event`]s over any `Read`.
///
/// `Ok(None)` means "no complete event yet": at the end of a finished file, or while
/// tailing a file that is still being written (call again after it grew).
#[derive(Debug)]
pub struct EventReader<R> {
    records: TfRecordReader<R>,
}

impl<R: Read> EventReader<R> {
    /// Reads events from `inner` with [`OnCorruption::Error`].
    pub fn new(inner: R) -> Self {
        Self::from_records(TfRecordReader::new(inner))
    }

    /// Reads events from an already configured record reader.
    pub fn from_records(records: TfRecordReader<R>) -> Self {
        EventReader { records }
    }

    /// Sets the policy for records with a bad data crc or an undecodable payload.
    pub fn with_on_corruption(mut self, policy: OnCorruption) -> Self {
        self.records = self.records.with_on_corruption(policy);
        self
    }

    /// Returns the next event, `Ok(None)` if no complete event is available yet, or an
    /// error per the corruption policy.
    pub fn read_event(&mut self) -> Result<Option<Event>, ReadError> {
        match self.next_payload(None)? {
            Some(Payload::Event(event)) => Ok(Some(event)),
            // Without a fast decoder every record is decoded by prost.
            Some(Payload::Wire) | None => Ok(None),
        }
    }

    /// The next record, decoded by `fast` when it is a plain scalar event (its scalars are then
    /// in `fast`, their tags in [`TfRecordReader::last_record`]), else by prost under the
    /// corruption policy.
    fn next_payload(
        &mut self,
        mut fast: Option<&mut WireScalars>,
    ) -> Result<Option<Payload>, ReadError> {
        loop {
            let Some(record) = self.records.read_record()? else {
                return Ok(None);
            };
            if let Some(fast) = fast.as_deref_mut() {
                if fast.decode(record.data) {
                    return Ok(Some(Payload::Wire));
                }
            }
            let offset = record.offset;
            match Event::decode(record.data) {
                Ok(event) => return Ok(Some(Payload::Event(event))),
                Err(e) => match self.records.on_corruption() {
                    OnCorruption::Error => {
                        return Err(self
                            .records
                            .corrupt(offset, CorruptionKind::UndecodableEvent(e)))
                    }
                    OnCorruption::Skip => self
                        .records
                        .count_skipped(offset, CorruptionKind::UndecodableEvent(e)),
                },
            }
        }
    }

    /// Reads every event available now, stopping at the first error.
    pub fn read_to_end(&mut self) -> Result<Vec<Event>, ReadError> {
        let mut events = Vec::new();
        while let Some(event) = self.read_event()? {
            events.push(event);
        }
        Ok(events)
    }

    /// Records skipped under [`OnCorruption::Skip`] (bad data crc or undecodable payload).
    pub fn skipped_records(&self) -> u64 {
        self.records.skipped_records()
    }

    /// The records skipped under [`OnCorruption::Skip`] since the last call, as [`Damage`].
    pub fn take_skipped(&mut self) -> Vec<Damage> {
        let skipped = self.records.take_skipped();
        // Called after every scalar by run readers: nothing to report must cost nothing.
        if skipped.is_empty() {
            return Vec::new();
        }
        let path = self.records.path().map(Path::to_owned);
        skipped
            .into_iter()
            .map(|s| Damage::Skipped {
                path: path.clone(),
                offset: s.offset,
                kind: s.kind,
            })
            .collect()
    }

    /// After `Ok(None)` at the end of a finished input: the incomplete record it ends in, if
    /// any (`None` when the input ends on a record boundary).
    pub fn truncated_tail(&self) -> Option<Damage> {
        let bytes = self.records.pending_bytes() as u64;
        (bytes > 0).then(|| Damage::TruncatedTail {
            path: self.records.path().map(Path::to_owned),
            offset: self.records.position(),
            bytes,
        })
    }

    /// The underlying record reader (position, pending bytes, path).
    pub fn records(&self) -> &TfRecordReader<R> {
        &self.records
    }

    /// Turns this into a reader of the scalars in the events.
    pub fn into_scalars(self) -> ScalarReader<R> {
        self.into_scalars_with_tags(Interner::new())
    }

    /// As [`into_scalars`](Self::into_scalars), numbering tags on from `tags` (a run's earlier
    /// files), so a tag keeps its id across files.
    pub fn into_scalars_with_tags(self, tags: Interner) -> ScalarReader<R> {
        ScalarReader {
            events: self,
            event: WireScalars::with_tags(tags),
            at: 0,
        }
    }
}

/// How [`EventReader::next_payload`] decoded a record.
enum Payload {
    /// By the scalar fast path, into the caller's [`WireScalars`].
    Wire,
    /// By prost.
    Event(Event),
}

/// Streaming reader of every [`ScalarEvent`] in an event stream (non-scalar values are
/// skipped silently); same `Ok(None)` and error semantics as [`EventReader`].
///
/// Every event's scalars land in one reused [`WireScalars`], whichever decoder read the record,
/// so a tag has one id for the reader's life ([`ScalarRef::tag_id`]) and moving to the next
/// scalar of an event is an index increment.
#[derive(Debug)]
pub struct ScalarReader<R> {
    events: EventReader<R>,
    /// The scalars of the event being read.
    event: WireScalars,
    /// One past the index of the current scalar in `event` (0: none yet).
    at: usize,
}

impl<R: Read> ScalarReader<R> {
    /// Reads scalars from `inner` with [`OnCorruption::Error`].
    pub fn new(inner: R) -> Self {
        EventReader::new(inner).into_scalars()
    }

    /// Returns the next scalar, or `Ok(None)` if none is available yet.
    pub fn read_scalar(&mut self) -> Result<Option<ScalarEvent>, ReadError> {
        if !self.advance()? {
            return Ok(None);
        }
        Ok(self.current().map(|s| s.to_scalar_event()))
    }

    /// Moves to the next scalar: `Ok(true)` when [`current`](Self::current) now holds it,
    /// `Ok(false)` when none is available yet (same semantics as [`read_scalar`](Self::read_scalar)).
    #[inline]
    pub fn advance(&mut self) -> Result<bool, ReadError> {
        if self.advance_in_event() {
            return Ok(true);
        }
        self.advance_event()
    }

    /// Moves to the next scalar of the current event, if it has one (no reading): the caller
    /// knows the step and wall time did not change.
    #[inline]
    pub fn advance_in_event(&mut self) -> bool {
        if self.at > 0 && self.at < self.event.len() {
            self.at += 1;
            return true;
        }
        false
    }

    /// Moves to the first scalar of the next event holding scalars (the rest of the current
    /// event is passed over): `Ok(true)` when [`event`](Self::event) now holds all of that
    /// event's scalars, `Ok(false)` when none is available yet.
    pub fn advance_event(&mut self) -> Result<bool, ReadError> {
        loop {
            self.at = 0;
            match self.events.next_payload(Some(&mut self.event))? {
                None => {
                    self.event.clear();
                    return Ok(false);
                }
                Some(Payload::Wire) => {}
                Some(Payload::Event(event)) => self.event.set_event(event),
            }
            if !self.event.is_empty() {
                self.at = 1;
                return Ok(true);
            }
        }
    }

    /// The scalars of the event [`advance`](Self::advance) or
    /// [`advance_event`](Self::advance_event) moved to (empty before the first and at the end).
    pub fn event(&self) -> &WireScalars {
        &self.event
    }

    /// Every tag seen so far, by id.
    pub fn tags(&self) -> &Interner {
        self.event.tags()
    }

    /// Gives the tag numbering back (to carry it to the next file of a run, with
    /// [`EventReader::into_scalars_with_tags`]).
    pub fn take_tags(&mut self) -> Interner {
        self.event.take_tags()
    }

    /// The scalar [`advance`](Self::advance) moved to, borrowed from the reader.
    #[inline]
    pub fn current(&self) -> Option<ScalarRef<'_>> {
        self.event.scalar(self.at.checked_sub(1)?)
    }

    /// Reads every scalar available now, stopping at the first error.
    pub fn read_to_end(&mut self) -> Result<Vec<ScalarEvent>, ReadError> {
        let mut scalars = Vec::new();
        while let Some(scalar) = self.read_scalar()? {
            scalars.push(scalar);
        }
        Ok(scalars)
    }

    /// The underlying event reader.
    pub fn events(&self) -> &EventReader<R> {
        &self.events
    }

    /// Records skipped under [`OnCorruption::Skip`].
    pub fn skipped_records(&self) -> u64 {
        self.events.skipped_records()
    }

    /// See [`EventReader::take_skipped`].
    pub fn take_skipped(&mut self) -> Vec<Damage> {
        self.events.take_skipped()
    }

    /// See [`EventReader::truncated_tail`].
    pub fn truncated_tail(&self) -> Option<Damage> {
        self.events.truncated_tail()
    }
}

/// Opens an event file for reading, with [`OnCorruption::Error`]; a special file is refused
/// without waiting ([`open_regular`]); every error message starts with the file's path (`<path>: corrupt record at byte 1234: data crc mismatch ...`).
pub fn open_event_file(path: impl AsRef<Path>) -> Result<EventReader<BufReader<File>>, ReadError> {
    let path = path.as_ref();
    let file = open_regular(path).map_err(|source| ReadError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(EventReader::from_records(
        TfRecordReader::new(BufReader::new(file)).with_path(path),
    ))
}

/// Opens an event file to read from byte `offset` on (a record boundary, where an earlier read
/// stopped), as [`open_event_file`] does; positions and error offsets are the file's.
pub fn open_event_file_at(
    path: impl AsRef<Path>,
    offset: u64,
) -> Result<EventReader<BufReader<File>>, ReadError> {
    use std::io::{Seek, SeekFrom};
    let path = path.as_ref();
    let open_error = |source| ReadError::Open {
        path: path.to_path_buf(),
        source,
    };
    let mut file = open_regular(path).map_err(open_error)?;
    file.seek(SeekFrom::Start(offset)).map_err(open_error)?;
    Ok(EventReader::from_records(
        TfRecordReader::new(BufReader::new(file))
            .with_path(path)
            .starting_at(offset),
    ))
}

/// Reads every scalar of a finished event file (a truncated final record is end of data).
pub fn read_scalars_from_file(path: impl AsRef<Path>) -> Result<Vec<ScalarEvent>, ReadError> {
    open_event_file(path)?.into_scalars().read_to_end()
}

/// True for file names TensorBoard treats as event files (they contain `tfevents`).
pub fn is_event_file_name(name: &str) -> bool {
    name.contains("tfevents")
}
