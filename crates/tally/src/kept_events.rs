//! An event file written without a Logger (`SummaryWriter`, `EventWriter`) under the Logger's
//! storage-fault policy (docs/contract/run-artifacts.md "Storage faults"): an event the disk
//! refuses is kept, with every later one behind it, and written again, oldest first, before
//! each new event, at `flush` and at `close`; bounded like the Logger's backlog; the outage
//! reported once, `flush` failing while anything is kept.

use crate::backlog::{BACKLOG_MAX_BYTES, BACKLOG_MAX_STEPS};
use crate::error::{Error, Result};
use crate::input::OnStorageError;
use std::collections::VecDeque;
use tally_tfevents::{EventFileWriter, WriteError, WriteRecordError};

/// An open event file and the events it refused.
#[derive(Debug)]
pub struct KeepingEventFile {
    file: EventFileWriter,
    on_error: OnStorageError,
    kept: VecDeque<Vec<u8>>,
    kept_bytes: usize,
    /// The event being written, encoded (kept by value only when refused).
    scratch: Vec<u8>,
    /// The fault of the outage under way (reported when it began).
    outage: Option<String>,
    /// Events past the cap were lost during this outage, and that was reported.
    overflowing: bool,
    /// Events that will never reach the file.
    lost: u64,
}

/// Whether a failed write left nothing of its event in the file and may succeed later
/// (no space, a file size limit, an I/O error): the event is kept.
fn refused_for_now(e: &WriteError) -> bool {
    matches!(
        e,
        WriteError::Record {
            source: WriteRecordError::Io { .. } | WriteRecordError::Poisoned { .. },
            ..
        } | WriteError::Repair { .. }
    )
}

impl KeepingEventFile {
    /// Write to `file` under `on_error`'s choice of raising or warning.
    pub fn new(file: EventFileWriter, on_error: OnStorageError) -> Self {
        KeepingEventFile {
            file,
            on_error,
            kept: VecDeque::new(),
            kept_bytes: 0,
            scratch: Vec::new(),
            outage: None,
            overflowing: false,
            lost: 0,
        }
    }

    /// The open file.
    pub fn file(&self) -> &EventFileWriter {
        &self.file
    }

    /// Events kept for a retry.
    pub fn pending(&self) -> usize {
        self.kept.len()
    }

    /// Events that will never reach the file.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// Write one event, encoded by `encode` into a reused buffer, after the kept ones. An
    /// event the disk refuses is kept; the outage's first refusal (and its first loss past the
    /// cap) is returned as an error with `raise`, printed with `warn`. Any other failure (a
    /// record over the size cap, an fsync) is returned as it is.
    pub fn write_with(&mut self, encode: impl FnOnce(&mut Vec<u8>)) -> Result<()> {
        self.scratch.clear();
        encode(&mut self.scratch);
        self.retry()?;
        if !self.kept.is_empty() {
            return self.keep_scratch();
        }
        match self.file.write_event_bytes(&self.scratch) {
            Ok(()) => Ok(()),
            Err(e) if refused_for_now(&e) => {
                let fault = format!(
                    "{e}; this event and the next ones are kept (up to {BACKLOG_MAX_STEPS} \
                     events or {} MiB) and written again once the disk takes them",
                    BACKLOG_MAX_BYTES >> 20
                );
                self.outage = Some(fault.clone());
                self.keep_scratch()?;
                self.report(fault)
            }
            Err(e) => Err(Error::EventWrite(e)),
        }
    }

    /// Write one serialized event (as [`Self::write_with`]).
    pub fn write_bytes(&mut self, event: &[u8]) -> Result<()> {
        self.write_with(|buf| buf.extend_from_slice(event))
    }

    /// The scratch event kept behind the others, or lost past the cap (said once per outage).
    fn keep_scratch(&mut self) -> Result<()> {
        if self.kept.len() >= BACKLOG_MAX_STEPS
            || self.kept_bytes + self.scratch.len() > BACKLOG_MAX_BYTES
        {
            self.lost += 1;
            if self.overflowing {
                return Ok(());
            }
            self.overflowing = true;
            return self.report(format!(
                "{} events are waiting for the disk (the cap is {BACKLOG_MAX_STEPS} events or {} \
                 MiB): this event and later ones are lost until it takes writes again",
                self.kept.len(),
                BACKLOG_MAX_BYTES >> 20
            ));
        }
        self.kept_bytes += self.scratch.len();
        self.kept.push_back(self.scratch.clone());
        Ok(())
    }

    /// Write the kept events, oldest first, until the disk refuses one. The outage ends when
    /// none is left. Failures other than a refusal are returned.
    fn retry(&mut self) -> Result<()> {
        while let Some(event) = self.kept.front() {
            match self.file.write_event_bytes(event) {
                Err(e) if refused_for_now(&e) => return Ok(()),
                done => {
                    let event = self.kept.pop_front().unwrap_or_default();
                    self.kept_bytes -= event.len();
                    done.map_err(Error::EventWrite)?;
                }
            }
        }
        self.outage = None;
        self.overflowing = false;
        Ok(())
    }

    /// `raise`: the report as an error; `warn`: printed once, nothing raised.
    fn report(&self, message: String) -> Result<()> {
        let path = self.file.path().to_owned();
        let e = Error::EventFileFault { path, message };
        match self.on_error {
            OnStorageError::Raise => Err(e),
            OnStorageError::Warn => {
                eprintln!("tally: warning: {e}");
                Ok(())
            }
        }
    }

    /// Retry the kept events: when it returns `Ok`, every event written so far is in the file
    /// (handed to the OS: a SIGKILL loses none). With `raise` it fails each time events stay
    /// kept.
    pub fn flush(&mut self) -> Result<()> {
        self.retry()?;
        if !self.kept.is_empty() {
            return match self.on_error {
                OnStorageError::Raise => Err(self.not_durable()),
                OnStorageError::Warn => Ok(()),
            };
        }
        self.file.flush().map_err(Error::EventWrite)
    }

    fn not_durable(&self) -> Error {
        Error::NotDurable {
            pending: self.kept.len() as u64,
            cause: self.outage.clone().unwrap_or_default(),
        }
    }

    /// Retry the kept events one last time and close the file; what is still kept is lost,
    /// counted and reported (raised with `raise`, printed with `warn`), as the Logger's close
    /// does.
    pub fn close(mut self) -> Result<()> {
        let retried = self.retry();
        let left = self.kept.len();
        let report = (left > 0).then(|| {
            let cause = self.outage.take().unwrap_or_default();
            self.report(format!(
                "{left} kept events could not be written and are lost: {cause}"
            ))
        });
        let closed = self.file.close().map_err(Error::EventWrite);
        retried?;
        report.unwrap_or(Ok(()))?;
        closed
    }
}
