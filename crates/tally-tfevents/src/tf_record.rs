//! TFRecord framing: a generic record writer over any `Write` and a streaming, resumable record reader over any `Read`.
//!
//! Each record on disk is
//! `u64 LE length | u32 LE masked crc32c(length bytes) | data | u32 LE masked crc32c(data)`.
//!
//! # Corruption policy of [`TfRecordReader`]
//!
//! Every tally reader follows it (`docs/contract/consumers.md` "Corrupt and truncated event
//! files"): a torn tail is normal for a live or killed writer, a flipped bit is not.
//!
//! * **Truncation is not corruption.** End of input in the middle of a record yields
//!   `Ok(None)` ("no complete record yet"); the partial bytes are kept, and a later call
//!   resumes once more bytes were appended. A truncated final record is end-of-data.
//! * **Bad length crc, or a length above [`MAX_RECORD_LEN`]:** the framing is lost, since
//!   nothing says where the next record starts. The reader returns
//!   [`ReadError::Corrupt`] with the offset of the record and stops for good: every later
//!   call returns the same error (same offset, same kind) and never reads further.
//!   A huge length is never allocated.
//! * **Bad data crc** (the length crc passed, so the framing is intact): under
//!   [`OnCorruption::Error`] (the default) the call returns [`ReadError::Corrupt`] naming
//!   the record's offset, and the bad record is consumed, so a further call continues with
//!   the next record; under [`OnCorruption::Skip`] the record is skipped, counted in
//!   [`TfRecordReader::skipped_records`] (offsets kept for [`TfRecordReader::take_skipped`]),
//!   and reading continues within the same call.
//! * Layers above apply the same policy to a record whose payload fails to decode (see
//!   [`crate::EventReader`]).

use std::fmt;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::masked_crc::masked_crc32c;

/// Size of the length field plus its crc, in bytes.
pub const HEADER_LEN: usize = 12;
/// Size of the trailing data crc, in bytes.
pub const FOOTER_LEN: usize = 4;
/// Largest record payload accepted by the reader and produced by the writer: 256 MiB.
///
/// A length above this is treated as corruption even when its crc checks out, so that a
/// damaged or hostile file can never make the reader allocate an arbitrary amount of memory.
pub const MAX_RECORD_LEN: u64 = 256 * 1024 * 1024;

/// How much the reader asks the underlying reader for at a time.
const READ_CHUNK: usize = 64 * 1024;
/// Above this buffer size, the reader gives memory back once a large record was consumed.
const SHRINK_ABOVE: usize = 16 * READ_CHUNK;

/// What a reader does with a record whose framing is intact but whose content is bad
/// (data crc mismatch, or a payload that does not decode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnCorruption {
    /// Return an error naming the record's byte offset (the record is consumed; a further call continues after it).
    #[default]
    Error,
    /// Skip the record, count it, and continue.
    Skip,
}

/// What exactly is wrong with a corrupt record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CorruptionKind {
    /// The crc of the length field does not match: framing is lost.
    #[error("length crc mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    LengthCrcMismatch {
        /// Masked crc stored in the file.
        stored: u32,
        /// Masked crc computed over the length bytes.
        computed: u32,
    },
    /// The length field exceeds [`MAX_RECORD_LEN`]: framing is considered lost.
    #[error("record length {len} exceeds the {MAX_RECORD_LEN}-byte cap")]
    LengthTooLarge {
        /// The length stored in the file.
        len: u64,
    },
    /// The crc of the data does not match.
    #[error("data crc mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    DataCrcMismatch {
        /// Masked crc stored in the file.
        stored: u32,
        /// Masked crc computed over the data.
        computed: u32,
    },
    /// The record's framing and crcs are fine but its payload is not a valid `Event`.
    #[error("event protobuf does not decode: {0}")]
    UndecodableEvent(prost::DecodeError),
}

impl CorruptionKind {
    /// True when the reader can no longer tell where records start, so it stops for good.
    pub fn loses_framing(&self) -> bool {
        matches!(
            self,
            CorruptionKind::LengthCrcMismatch { .. } | CorruptionKind::LengthTooLarge { .. }
        )
    }
}

/// Errors from opening or reading records or events.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The event file could not be opened.
    #[error("{}: cannot open event file: {source}", .path.display())]
    Open {
        /// The file that failed to open.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The underlying reader failed; nothing was consumed, so the call may be retried.
    #[error("{}i/o error reading at byte {offset}: {source}", PathPrefix(.path))]
    Io {
        /// The file, when the reader knows it.
        path: Option<PathBuf>,
        /// Offset of the first byte that could not be read.
        offset: u64,
        /// The underlying error.
        source: io::Error,
    },
    /// A record is corrupt; see the module docs for what the reader does next.
    #[error("{}corrupt record at byte {offset}: {kind}", PathPrefix(.path))]
    Corrupt {
        /// The file, when the reader knows it.
        path: Option<PathBuf>,
        /// Offset of the start (length field) of the corrupt record.
        offset: u64,
        /// What is wrong with it.
        kind: CorruptionKind,
    },
}

impl ReadError {
    /// The corruption kind, if this is a corruption error.
    pub fn corruption(&self) -> Option<&CorruptionKind> {
        match self {
            ReadError::Corrupt { kind, .. } => Some(kind),
            _ => None,
        }
    }

    /// The byte offset the error refers to, if any.
    pub fn offset(&self) -> Option<u64> {
        match self {
            ReadError::Open { .. } => None,
            ReadError::Io { offset, .. } | ReadError::Corrupt { offset, .. } => Some(*offset),
        }
    }
}

/// Renders `"<path>: "` or nothing, so messages read "<path>: corrupt record at byte N: ...".
struct PathPrefix<'a>(&'a Option<PathBuf>);

impl fmt::Display for PathPrefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(path) => write!(f, "{}: ", path.display()),
            None => Ok(()),
        }
    }
}

/// Errors from writing one record.
#[derive(Debug, thiserror::Error)]
pub enum WriteRecordError {
    /// The payload is larger than any reader will accept; nothing was written.
    #[error("record of {len} bytes at byte {offset} exceeds the {MAX_RECORD_LEN}-byte cap; nothing written")]
    TooLarge {
        /// Offset at which the record would have started.
        offset: u64,
        /// Payload length.
        len: u64,
    },
    /// The underlying writer failed; part of the record may have reached it.
    #[error("write of record at byte {offset} failed: {source}")]
    Io {
        /// Offset at which the record started.
        offset: u64,
        /// The underlying error.
        source: io::Error,
    },
    /// An earlier write failed, so the stream may end in a partial record; appending after
    /// it would make every later record unreadable, so the writer refuses.
    #[error("an earlier write failed at byte {offset}; refusing to append after a possibly partial record")]
    Poisoned {
        /// Offset at which the failed record started.
        offset: u64,
    },
}

/// Writes TFRecord-framed records to any `Write`.
///
/// Each record is framed in a reused buffer and handed to the writer with a single
/// `write_all`, so over an unbuffered `File` a record is in the OS once the call returns.
#[derive(Debug)]
pub struct RecordWriter<W> {
    inner: W,
    buf: Vec<u8>,
    offset: u64,
    failed_at: Option<u64>,
}

impl<W: Write> RecordWriter<W> {
    /// Wraps `inner`, whose current position is taken as byte 0 for error offsets.
    pub fn new(inner: W) -> Self {
        Self::with_offset(inner, 0)
    }

    /// Wraps `inner`, which already holds `offset` bytes (for offsets in error messages).
    pub fn with_offset(inner: W, offset: u64) -> Self {
        RecordWriter {
            inner,
            buf: Vec::new(),
            offset,
            failed_at: None,
        }
    }

    /// Writes one record holding `data`; returns the offset at which it starts.
    pub fn write_record(&mut self, data: &[u8]) -> Result<u64, WriteRecordError> {
        self.write_record_with(|buf| buf.extend_from_slice(data))
    }

    /// Writes one record holding the protobuf encoding of `message`.
    pub fn write_message<M: prost::Message>(
        &mut self,
        message: &M,
    ) -> Result<u64, WriteRecordError> {
        // Encoding into a Vec cannot fail: Vec grows as needed.
        self.write_record_with(|buf| message.encode_raw(buf))
    }

    /// Writes one record whose payload `encode` appends to the given buffer.
    ///
    /// The payload is encoded straight into the framing buffer, so a record costs no copy
    /// and, once the buffer has grown, no allocation. `encode` must only append.
    pub fn write_record_with(
        &mut self,
        encode: impl FnOnce(&mut Vec<u8>),
    ) -> Result<u64, WriteRecordError> {
        if let Some(offset) = self.failed_at {
            return Err(WriteRecordError::Poisoned { offset });
        }
        let offset = self.offset;
        self.buf.clear();
        self.buf.extend_from_slice(&[0u8; HEADER_LEN]);
        encode(&mut self.buf);
        let len = (self.buf.len() - HEADER_LEN) as u64;
        if len > MAX_RECORD_LEN {
            return Err(WriteRecordError::TooLarge { offset, len });
        }
        let len_bytes = len.to_le_bytes();
        self.buf[..8].copy_from_slice(&len_bytes);
        self.buf[8..HEADER_LEN].copy_from_slice(&masked_crc32c(&len_bytes).to_le_bytes());
        let data_crc = masked_crc32c(&self.buf[HEADER_LEN..]);
        self.buf.extend_from_slice(&data_crc.to_le_bytes());
        if let Err(source) = self.inner.write_all(&self.buf) {
            self.failed_at = Some(offset);
            return Err(WriteRecordError::Io { offset, source });
        }
        self.offset += self.buf.len() as u64;
        Ok(offset)
    }

    /// Flushes the underlying writer (a no-op for an unbuffered `File`).
    pub fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    /// Bytes written so far, including the starting offset.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The underlying writer, mutably; writing to it directly breaks the framing.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Unwraps the underlying writer.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

/// A record skipped under [`OnCorruption::Skip`]: where it starts and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRecord {
    /// Offset of the record's length field.
    pub offset: u64,
    /// Why it was skipped.
    pub kind: CorruptionKind,
}

/// One record returned by [`TfRecordReader::read_record`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// Offset of the record's length field in the stream.
    pub offset: u64,
    /// The record's payload (crc verified).
    pub data: &'a [u8],
}

/// Streaming TFRecord reader over any `Read`; see the module docs for the corruption policy.
///
/// Partial records are kept internally, so the reader can tail a file that is still being
/// written: `Ok(None)` means "no complete record yet", and a later call picks up bytes
/// appended since.
#[derive(Debug)]
pub struct TfRecordReader<R> {
    inner: R,
    /// Bytes read but not yet consumed live in `buf[start..end]`; `buf[end..]` is spare room.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Stream offset of `buf[start]`.
    offset: u64,
    on_corruption: OnCorruption,
    skipped: u64,
    /// Records skipped since the last [`TfRecordReader::take_skipped`].
    recent_skips: Vec<SkippedRecord>,
    /// Set once framing is lost; every later call reports it again.
    framing_lost: Option<(u64, CorruptionKind)>,
    path: Option<PathBuf>,
    /// `buf` range of the payload last returned: the bytes stay put until the next read.
    last: (usize, usize),
    /// The last length field read and its masked CRC.
    last_len: ([u8; 8], u32),
}

/// Outcome of looking at the buffered bytes.
enum Step {
    /// A verified record whose data is `buf[data_start..data_end]`, starting at stream `offset`.
    Record {
        offset: u64,
        data_start: usize,
        data_end: usize,
    },
    /// At least this many more buffered bytes are needed.
    NeedMore(usize),
}

impl<R: Read> TfRecordReader<R> {
    /// Wraps `inner`, whose current position is taken as byte 0, with [`OnCorruption::Error`].
    pub fn new(inner: R) -> Self {
        TfRecordReader {
            inner,
            buf: Vec::new(),
            start: 0,
            end: 0,
            offset: 0,
            on_corruption: OnCorruption::default(),
            skipped: 0,
            recent_skips: Vec::new(),
            framing_lost: None,
            path: None,
            last: (0, 0),
            last_len: ([0; 8], masked_crc32c(&[0; 8])),
        }
    }

    /// Takes the inner reader's current position as byte `offset` of the stream (a file opened
    /// and sought there), so positions and error offsets stay the file's.
    pub fn starting_at(mut self, offset: u64) -> Self {
        self.offset = offset;
        self
    }

    /// Sets the policy for records with a bad data crc.
    pub fn with_on_corruption(mut self, policy: OnCorruption) -> Self {
        self.on_corruption = policy;
        self
    }

    /// Names the file being read, so every error message starts with it.
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// The corruption policy in force.
    pub fn on_corruption(&self) -> OnCorruption {
        self.on_corruption
    }

    /// The file name attached with [`with_path`](Self::with_path), if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Records skipped under [`OnCorruption::Skip`] so far.
    pub fn skipped_records(&self) -> u64 {
        self.skipped
    }

    /// The records skipped under [`OnCorruption::Skip`] since the last call, in file order;
    /// callers that report damage drain this after each read, so it stays small.
    pub fn take_skipped(&mut self) -> Vec<SkippedRecord> {
        std::mem::take(&mut self.recent_skips)
    }

    /// Stream offset of the next record to be returned.
    pub fn position(&self) -> u64 {
        self.offset
    }

    /// Bytes read from the underlying reader that do not yet form a complete record
    /// (non-zero at end of input means the input ends in a truncated record).
    pub fn pending_bytes(&self) -> usize {
        self.end - self.start
    }

    /// The underlying reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// Unwraps the underlying reader; buffered bytes are lost.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// The payload of the record last returned by [`read_record`](Self::read_record) (empty
    /// before the first); valid until the next call reads again.
    pub fn last_record(&self) -> &[u8] {
        &self.buf[self.last.0..self.last.1]
    }

    /// Builds a corruption error for `offset`.
    pub(crate) fn corrupt(&self, offset: u64, kind: CorruptionKind) -> ReadError {
        ReadError::Corrupt {
            path: self.path.clone(),
            offset,
            kind,
        }
    }

    /// Returns the next verified record, `Ok(None)` if no complete record is available yet,
    /// or an error according to the corruption policy (see the module docs).
    pub fn read_record(&mut self) -> Result<Option<Record<'_>>, ReadError> {
        self.last = (0, 0);
        if let Some((offset, kind)) = &self.framing_lost {
            return Err(self.corrupt(*offset, kind.clone()));
        }
        loop {
            match self.step()? {
                Step::Record {
                    offset,
                    data_start,
                    data_end,
                } => {
                    self.last = (data_start, data_end);
                    return Ok(Some(Record {
                        offset,
                        data: &self.buf[data_start..data_end],
                    }));
                }
                Step::NeedMore(needed) => {
                    if !self.fill(needed)? {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// Examines the buffered bytes: consumes and returns one good record, consumes bad
    /// records per policy, or says how many more bytes are needed.
    fn step(&mut self) -> Result<Step, ReadError> {
        loop {
            let avail = self.end - self.start;
            if avail < HEADER_LEN {
                return Ok(Step::NeedMore(HEADER_LEN - avail));
            }
            let header = &self.buf[self.start..self.start + HEADER_LEN];
            let len_bytes: [u8; 8] = header[..8].try_into().expect("8-byte slice");
            let stored = u32::from_le_bytes(header[8..].try_into().expect("4-byte slice"));
            // Writers' records repeat their length (the same tags every event): its CRC is
            // computed once per distinct length.
            let computed = match self.last_len {
                (bytes, crc) if bytes == len_bytes => crc,
                _ => {
                    let crc = masked_crc32c(&len_bytes);
                    self.last_len = (len_bytes, crc);
                    crc
                }
            };
            if stored != computed {
                return Err(
                    self.lose_framing(CorruptionKind::LengthCrcMismatch { stored, computed })
                );
            }
            let len = u64::from_le_bytes(len_bytes);
            if len > MAX_RECORD_LEN {
                return Err(self.lose_framing(CorruptionKind::LengthTooLarge { len }));
            }
            // Cannot overflow: len is capped at 256 MiB.
            let total = HEADER_LEN + len as usize + FOOTER_LEN;
            if avail < total {
                return Ok(Step::NeedMore(total - avail));
            }
            let offset = self.offset;
            let data_start = self.start + HEADER_LEN;
            let data_end = data_start + len as usize;
            let stored = u32::from_le_bytes(
                self.buf[data_end..data_end + FOOTER_LEN]
                    .try_into()
                    .expect("4-byte slice"),
            );
            let computed = masked_crc32c(&self.buf[data_start..data_end]);
            // Consume before judging: the length was verified, so the next record's start is known.
            self.start += total;
            self.offset += total as u64;
            if stored == computed {
                return Ok(Step::Record {
                    offset,
                    data_start,
                    data_end,
                });
            }
            match self.on_corruption {
                OnCorruption::Error => {
                    return Err(
                        self.corrupt(offset, CorruptionKind::DataCrcMismatch { stored, computed })
                    )
                }
                OnCorruption::Skip => {
                    self.count_skipped(offset, CorruptionKind::DataCrcMismatch { stored, computed })
                }
            }
        }
    }

    /// Records that framing is lost at the current record and returns the error.
    fn lose_framing(&mut self, kind: CorruptionKind) -> ReadError {
        self.framing_lost = Some((self.offset, kind.clone()));
        self.corrupt(self.offset, kind)
    }

    /// Counts and remembers a skipped record (here, or in a layer above for an undecodable
    /// payload under Skip).
    pub(crate) fn count_skipped(&mut self, offset: u64, kind: CorruptionKind) {
        self.skipped += 1;
        self.recent_skips.push(SkippedRecord { offset, kind });
    }

    /// Reads once from the underlying reader, making room for at least `needed` more bytes.
    /// Returns false at end of input (or when a non-blocking reader has nothing yet).
    fn fill(&mut self, needed: usize) -> Result<bool, ReadError> {
        // Move the partial record to the front; it is at most one record, so this is cheap
        // relative to the chunk read that follows.
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        // Grow geometrically towards `needed` rather than allocating it at once: a length
        // can claim up to 256 MiB, and memory should follow the bytes that actually arrive.
        let want = self.end + needed.clamp(READ_CHUNK, READ_CHUNK.max(self.end));
        if self.buf.len() > SHRINK_ABOVE && want <= SHRINK_ABOVE {
            // Give back the memory of an earlier large record.
            self.buf.truncate(SHRINK_ABOVE);
            self.buf.shrink_to_fit();
        }
        if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.end += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // A non-blocking source with nothing yet is the same as "no complete record yet".
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(source) => {
                    return Err(ReadError::Io {
                        path: self.path.clone(),
                        offset: self.offset + (self.end - self.start) as u64,
                        source,
                    })
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Frames `payloads` into one in-memory stream; returns it with each record's offset.
    fn stream(payloads: &[&[u8]]) -> (Vec<u8>, Vec<u64>) {
        let mut w = RecordWriter::new(Vec::new());
        let offsets = payloads
            .iter()
            .map(|p| w.write_record(p).unwrap())
            .collect();
        (w.into_inner(), offsets)
    }

    fn read_all<R: Read>(r: &mut TfRecordReader<R>) -> Result<Vec<(u64, Vec<u8>)>, ReadError> {
        let mut out = Vec::new();
        while let Some(rec) = r.read_record()? {
            out.push((rec.offset, rec.data.to_vec()));
        }
        Ok(out)
    }

    const PAYLOADS: [&[u8]; 4] = [b"first", b"", b"third record", b"4"];

    #[test]
    fn records_round_trip_with_their_offsets() {
        let (bytes, offsets) = stream(&PAYLOADS);
        assert_eq!(offsets, vec![0, 21, 37, 65]);
        let mut r = TfRecordReader::new(bytes.as_slice());
        let got = read_all(&mut r).unwrap();
        let want: Vec<(u64, Vec<u8>)> = offsets
            .iter()
            .zip(PAYLOADS)
            .map(|(o, p)| (*o, p.to_vec()))
            .collect();
        assert_eq!(got, want);
        assert_eq!(r.position(), bytes.len() as u64);
        assert_eq!(r.pending_bytes(), 0);
    }

    #[test]
    fn record_layout_is_length_crc_data_crc_little_endian() {
        let (bytes, _) = stream(&[b"abc"]);
        assert_eq!(bytes.len(), 12 + 3 + 4);
        assert_eq!(&bytes[..8], &3u64.to_le_bytes());
        assert_eq!(
            &bytes[8..12],
            &masked_crc32c(&3u64.to_le_bytes()).to_le_bytes()
        );
        assert_eq!(&bytes[12..15], b"abc");
        assert_eq!(&bytes[15..], &masked_crc32c(b"abc").to_le_bytes());
    }

    #[test]
    fn truncated_record_is_end_of_data_not_error_at_every_cut_point() {
        let (bytes, offsets) = stream(&PAYLOADS);
        let ends: Vec<usize> = offsets
            .iter()
            .zip(PAYLOADS)
            .map(|(o, p)| *o as usize + HEADER_LEN + p.len() + FOOTER_LEN)
            .collect();
        for cut in 0..=bytes.len() {
            let mut r = TfRecordReader::new(&bytes[..cut]);
            let got = read_all(&mut r).unwrap_or_else(|e| panic!("cut {cut}: {e}"));
            let complete = ends.iter().filter(|&&end| end <= cut).count();
            assert_eq!(got.len(), complete, "cut {cut}");
            for (i, (_, data)) in got.iter().enumerate() {
                assert_eq!(data.as_slice(), PAYLOADS[i], "cut {cut}");
            }
            let consumed = if complete == 0 { 0 } else { ends[complete - 1] };
            assert_eq!(r.pending_bytes(), cut - consumed, "cut {cut}");
            // Asking again at end of data is still "nothing yet", not an error.
            assert!(r.read_record().unwrap().is_none());
        }
    }

    /// A source that grows when the test appends to it, like a file a writer is still writing.
    struct Growing {
        data: Rc<RefCell<Vec<u8>>>,
        pos: usize,
    }

    impl Read for Growing {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let data = self.data.borrow();
            let n = buf.len().min(data.len() - self.pos);
            buf[..n].copy_from_slice(&data[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    #[test]
    fn reading_resumes_after_bytes_are_appended() {
        let (bytes, _) = stream(&PAYLOADS);
        let shared = Rc::new(RefCell::new(Vec::new()));
        let mut r = TfRecordReader::new(Growing {
            data: Rc::clone(&shared),
            pos: 0,
        });
        let mut got = Vec::new();
        // Append one byte at a time; every record must come out exactly once, whole.
        for &b in &bytes {
            shared.borrow_mut().push(b);
            while let Some(rec) = r.read_record().unwrap() {
                got.push(rec.data.to_vec());
            }
        }
        let want: Vec<Vec<u8>> = PAYLOADS.iter().map(|p| p.to_vec()).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn flipped_data_byte_is_error_at_record_offset_then_reading_continues() {
        let (mut bytes, offsets) = stream(&PAYLOADS);
        bytes[offsets[2] as usize + HEADER_LEN + 3] ^= 0x01;
        let mut r = TfRecordReader::new(bytes.as_slice());
        assert_eq!(r.read_record().unwrap().unwrap().data, PAYLOADS[0]);
        assert_eq!(r.read_record().unwrap().unwrap().data, PAYLOADS[1]);
        let err = r.read_record().unwrap_err();
        assert_eq!(err.offset(), Some(offsets[2]));
        assert!(
            matches!(
                err.corruption(),
                Some(CorruptionKind::DataCrcMismatch { .. })
            ),
            "{err}"
        );
        assert!(
            err.to_string().starts_with(&format!(
                "corrupt record at byte {}: data crc mismatch",
                offsets[2]
            )),
            "{err}"
        );
        // The length was trustworthy, so the next record is still reachable.
        assert_eq!(r.read_record().unwrap().unwrap().data, PAYLOADS[3]);
        assert!(r.read_record().unwrap().is_none());
        assert_eq!(r.skipped_records(), 0);
    }

    #[test]
    fn flipped_data_crc_byte_is_skipped_and_counted_under_skip() {
        let (mut bytes, offsets) = stream(&PAYLOADS);
        // Corrupt the stored data crc of record 0 and a data byte of record 2.
        bytes[offsets[0] as usize + HEADER_LEN + PAYLOADS[0].len()] ^= 0x80;
        bytes[offsets[2] as usize + HEADER_LEN] ^= 0x80;
        let mut r = TfRecordReader::new(bytes.as_slice()).with_on_corruption(OnCorruption::Skip);
        let got = read_all(&mut r).unwrap();
        assert_eq!(
            got,
            vec![
                (offsets[1], PAYLOADS[1].to_vec()),
                (offsets[3], PAYLOADS[3].to_vec())
            ]
        );
        assert_eq!(r.skipped_records(), 2);
    }

    #[test]
    fn flipped_length_byte_loses_framing_and_the_reader_stays_stopped() {
        for policy in [OnCorruption::Error, OnCorruption::Skip] {
            let (mut bytes, offsets) = stream(&PAYLOADS);
            bytes[offsets[2] as usize] ^= 0x04;
            let mut r = TfRecordReader::new(bytes.as_slice()).with_on_corruption(policy);
            assert_eq!(r.read_record().unwrap().unwrap().data, PAYLOADS[0]);
            assert_eq!(r.read_record().unwrap().unwrap().data, PAYLOADS[1]);
            for _ in 0..3 {
                let err = r.read_record().unwrap_err();
                assert_eq!(err.offset(), Some(offsets[2]), "{policy:?}");
                let kind = err.corruption().unwrap();
                assert!(
                    matches!(kind, CorruptionKind::LengthCrcMismatch { .. }),
                    "{kind}"
                );
                assert!(kind.loses_framing());
            }
            assert_eq!(r.skipped_records(), 0);
        }
    }

    #[test]
    fn flipped_length_crc_byte_is_a_length_crc_error() {
        let (mut bytes, _) = stream(&PAYLOADS);
        bytes[9] ^= 0xff;
        let err = TfRecordReader::new(bytes.as_slice())
            .read_record()
            .unwrap_err();
        assert_eq!(err.offset(), Some(0));
        assert!(matches!(
            err.corruption(),
            Some(CorruptionKind::LengthCrcMismatch { .. })
        ));
    }

    #[test]
    fn oversized_length_with_valid_crc_is_corruption_not_an_allocation() {
        for len in [MAX_RECORD_LEN + 1, u64::MAX] {
            let mut bytes = len.to_le_bytes().to_vec();
            bytes.extend_from_slice(&masked_crc32c(&len.to_le_bytes()).to_le_bytes());
            bytes.extend_from_slice(b"some data that is far shorter than the length");
            let mut r = TfRecordReader::new(bytes.as_slice());
            let err = r.read_record().unwrap_err();
            assert_eq!(
                err.corruption(),
                Some(&CorruptionKind::LengthTooLarge { len })
            );
            assert!(
                err.to_string().contains("exceeds the 268435456-byte cap"),
                "{err}"
            );
            // The reader never grew its buffer towards the claimed length.
            assert!(r.buf.len() < 1024 * 1024);
        }
    }

    #[test]
    fn length_at_the_cap_is_accepted_and_waits_for_data() {
        let len = MAX_RECORD_LEN;
        let mut bytes = len.to_le_bytes().to_vec();
        bytes.extend_from_slice(&masked_crc32c(&len.to_le_bytes()).to_le_bytes());
        let mut r = TfRecordReader::new(bytes.as_slice());
        assert!(r.read_record().unwrap().is_none());
        assert_eq!(r.pending_bytes(), HEADER_LEN);
        // Memory follows the bytes that arrived, not the length the header claims.
        assert!(r.buf.len() <= 2 * READ_CHUNK, "{}", r.buf.len());
    }

    /// Accepts `budget` bytes, then fails every write.
    struct FailAfter {
        written: Vec<u8>,
        budget: usize,
    }

    impl Write for FailAfter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.budget == 0 {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            let n = buf.len().min(self.budget);
            self.budget -= n;
            self.written.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn failed_write_poisons_the_writer_so_no_record_follows_a_partial_one() {
        let mut w = RecordWriter::new(FailAfter {
            written: Vec::new(),
            budget: 25,
        });
        assert_eq!(w.write_record(b"ok").unwrap(), 0); // 18 bytes
        let err = w.write_record(b"too long for the budget").unwrap_err();
        assert!(
            matches!(err, WriteRecordError::Io { offset: 18, .. }),
            "{err}"
        );
        let err = w.write_record(b"x").unwrap_err();
        assert!(
            matches!(err, WriteRecordError::Poisoned { offset: 18 }),
            "{err}"
        );
        assert_eq!(w.get_ref().written.len(), 25);
        // What did reach the sink reads as one record plus a truncated tail.
        let written = w.into_inner().written;
        let mut r = TfRecordReader::new(written.as_slice());
        assert_eq!(r.read_record().unwrap().unwrap().data, b"ok");
        assert!(r.read_record().unwrap().is_none());
        assert_eq!(r.pending_bytes(), 7);
    }

    /// Fails the first read, then serves `data`.
    struct FailOnce<'a> {
        failed: bool,
        data: &'a [u8],
    }

    impl Read for FailOnce<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if !self.failed {
                self.failed = true;
                return Err(io::Error::other("transient"));
            }
            self.data.read(buf)
        }
    }

    #[test]
    fn io_error_names_the_offset_and_the_read_can_be_retried() {
        let (bytes, _) = stream(&PAYLOADS);
        let mut r = TfRecordReader::new(FailOnce {
            failed: false,
            data: &bytes,
        })
        .with_path("/logs/x");
        let err = r.read_record().unwrap_err();
        assert_eq!(err.offset(), Some(0));
        assert_eq!(
            err.to_string(),
            "/logs/x: i/o error reading at byte 0: transient"
        );
        assert_eq!(read_all(&mut r).unwrap().len(), PAYLOADS.len());
    }

    #[test]
    fn records_larger_than_the_read_chunk_are_reassembled() {
        let big: Vec<u8> = (0..3 * READ_CHUNK + 17).map(|i| (i % 251) as u8).collect();
        let (bytes, _) = stream(&[&big, b"after"]);
        let mut r = TfRecordReader::new(bytes.as_slice());
        assert_eq!(r.read_record().unwrap().unwrap().data, big.as_slice());
        assert_eq!(r.read_record().unwrap().unwrap().data, b"after");
    }
}
