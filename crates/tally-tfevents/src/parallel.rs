//! [`scalars_in_parallel`]: one undamaged event file's scalars read by several threads, each from
//! its own byte range, with an exact check that the ranges meet on record boundaries.
//!
//! TFRecord framing has no sync marker, so a range starting mid-file guesses the first record
//! boundary after its start (a length whose masked CRC matches, then the record's data CRC).
//! The guess is only used if the range before it, read from a known boundary, ends exactly
//! there: the framing it walked is the file's framing, so a false guess can never be used; a
//! range whose guess was false is read again from where the range before it ended. Anything
//! else unusual — a corrupt, undecodable or truncated record, an I/O error — returns `None`,
//! and the caller reads the file sequentially, which reports it exactly
//! (`docs/contract/consumers.md` "Reading scalars fast").

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::Path;

use prost::Message;

use crate::masked_crc::masked_crc32c;
use crate::proto::Event;
use crate::scalar_fast::WireScalars;
use crate::scalar_ref::ScalarRef;
use crate::tf_record::{TfRecordReader, FOOTER_LEN, HEADER_LEN};

/// How far past its range's start a thread looks for the first record boundary.
const SYNC_WINDOW: u64 = 1 << 20;
/// The smallest range a thread is given (so no range is empty).
const MIN_RANGE: u64 = 64 << 10;

/// Reads every scalar of the file at `path` on `threads` threads, each from its own byte range
/// (the calling thread reads the first): each range calls `visit` on its own `T` (from `init`,
/// given the range's length in bytes) for the range's scalars in file order, and the `T`s come
/// back in file order. Each scalar's [`ScalarRef::tag_id`] numbers tags per range (each `T`
/// sees its own dense ids). `None`: the file is damaged, a record is not readable as it stands, or the
/// ranges did not meet — read it sequentially instead.
pub fn scalars_in_parallel<T: Send>(
    path: &Path,
    threads: usize,
    init: impl Fn(u64) -> T + Sync,
    visit: impl Fn(&mut T, ScalarRef<'_>) + Sync,
) -> Option<Vec<T>> {
    events_in_parallel(path, threads, init, each_scalar(visit))
}

/// As [`scalars_in_parallel`], one call per event holding scalars: a sink storing columns
/// handles an event's scalars together (they share step and wall time).
pub fn events_in_parallel<T: Send>(
    path: &Path,
    threads: usize,
    init: impl Fn(u64) -> T + Sync,
    visit: impl Fn(&mut T, &WireScalars) + Sync,
) -> Option<Vec<T>> {
    let len = std::fs::metadata(path).ok()?.len();
    let (parts, end) = events_in_parallel_window(path, 0, len, threads, init, visit)?;
    (end == len).then_some(parts)
}

/// [`scalars_in_parallel`] over one window of the file, so a caller holds one window's scalars
/// at a time whatever the file's size: the records that start in `[start, start + span)`,
/// `start` being a record boundary (0, or an end this function returned). Returns the parts in
/// file order and where the record after the window's last one starts (the file's length once
/// every record is read). `None` as for [`scalars_in_parallel`].
pub fn scalars_in_parallel_window<T: Send>(
    path: &Path,
    start: u64,
    span: u64,
    threads: usize,
    init: impl Fn(u64) -> T + Sync,
    visit: impl Fn(&mut T, ScalarRef<'_>) + Sync,
) -> Option<(Vec<T>, u64)> {
    events_in_parallel_window(path, start, span, threads, init, each_scalar(visit))
}

/// [`scalars_in_parallel_window`], one call per event holding scalars (as
/// [`events_in_parallel`]).
pub fn events_in_parallel_window<T: Send>(
    path: &Path,
    start: u64,
    span: u64,
    threads: usize,
    init: impl Fn(u64) -> T + Sync,
    visit: impl Fn(&mut T, &WireScalars) + Sync,
) -> Option<(Vec<T>, u64)> {
    let len = std::fs::metadata(path).ok()?.len();
    let end = start.checked_add(span)?.min(len);
    let ranges = (threads as u64).min((end - start) / MIN_RANGE).max(1);
    let bounds: Vec<(u64, u64)> = (0..ranges)
        .map(|i| {
            let at = |k: u64| start + (end - start) * k / ranges;
            (at(i), at(i + 1))
        })
        .collect();
    let read = |(from, to): (u64, u64), known: bool| {
        read_range(path, known, from, to, to == len, &init, &visit)
    };
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = bounds[1..]
            .iter()
            .map(|&range| scope.spawn(move || read(range, false)))
            .collect();
        // The calling thread reads the first range rather than waiting. Only it starts on a
        // known boundary: another range failing may have started at a false one, and is
        // read again below.
        let mut all = vec![Some(read(bounds[0], true)?)];
        for h in handles {
            all.push(h.join().ok()?);
        }
        Some(all)
    })?;
    let mut out = Vec::with_capacity(results.len());
    let mut expected_start = start;
    for (result, &(_, range_end)) in results.into_iter().zip(&bounds) {
        let (_, to, part) = match result {
            Some(result) if result.0 == expected_start => result,
            // The range's guessed start was not where the range before it ended (a false
            // boundary inside a record): read it again from that end, a known boundary.
            _ => read((expected_start, range_end), true)?,
        };
        expected_start = to;
        out.push(part);
    }
    Some((out, expected_start))
}

/// An event visitor calling `visit` on each of the event's scalars in order.
fn each_scalar<T>(
    visit: impl Fn(&mut T, ScalarRef<'_>) + Sync,
) -> impl Fn(&mut T, &WireScalars) + Sync {
    move |part, event| {
        for i in 0..event.len() {
            if let Some(s) = event.scalar(i) {
                visit(part, s);
            }
        }
    }
}

/// One range: the records that start in `[from, to)`, `from` itself when `first` (a
/// known record boundary). Returns where its first record starts, where the record after its
/// last one starts, and its part.
fn read_range<T>(
    path: &Path,
    first: bool,
    from: u64,
    to: u64,
    last: bool,
    init: &impl Fn(u64) -> T,
    visit: &impl Fn(&mut T, &WireScalars),
) -> Option<(u64, u64, T)> {
    let mut file = crate::open::open_regular(path).ok()?;
    let start = if first { from } else { sync(&file, from)? };
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut records = TfRecordReader::new(file);
    let mut wire = WireScalars::default();
    let mut part = init(to.saturating_sub(from));
    loop {
        if !last && start + records.position() >= to {
            break;
        }
        let record = records.read_record().ok()?;
        let Some(record) = record else {
            // End of file: fine only on a record boundary (a truncated tail is damage to report).
            if records.pending_bytes() > 0 {
                return None;
            }
            break;
        };
        if !wire.decode(record.data) {
            wire.set_event(Event::decode(record.data).ok()?);
        }
        if !wire.is_empty() {
            visit(&mut part, &wire);
        }
    }
    Some((start, start + records.position(), part))
}

/// The first offset at or after `from` where a whole record with both CRCs right starts, looking
/// only at the `SYNC_WINDOW` bytes from there (bounded work and memory, whatever the file holds;
/// a record larger than that makes the caller read sequentially).
fn sync(file: &File, from: u64) -> Option<u64> {
    // Records are usually small: a first look at `FIRST_LOOK` bytes reads far less (a windowed
    // reader syncs once per window). It answers as the whole window would unless a record in
    // it is cut off at its end, or it holds no boundary and the file goes on.
    match sync_within(file, from, FIRST_LOOK)? {
        Ok(at) => Some(at),
        Err(LookFurther) => sync_within(file, from, SYNC_WINDOW)?.ok(),
    }
}

/// How far the first look for a record boundary reads.
const FIRST_LOOK: u64 = 64 << 10;

/// The first `size` bytes from `from` cannot tell where the first record starts.
struct LookFurther;

/// [`sync`] within `size` bytes from `from`.
fn sync_within(file: &File, from: u64, size: u64) -> Option<Result<u64, LookFurther>> {
    let mut window = vec![0u8; size as usize];
    let n = read_full_at(file, &mut window, from)?;
    let window = &window[..n];
    let cut_short = || (n as u64 == size && size < SYNC_WINDOW).then_some(Err(LookFurther));
    for p in 0..n.saturating_sub(HEADER_LEN + FOOTER_LEN - 1) {
        let len_bytes: [u8; 8] = window[p..p + 8].try_into().ok()?;
        let stored = u32::from_le_bytes(window[p + 8..p + HEADER_LEN].try_into().ok()?);
        if masked_crc32c(&len_bytes) != stored {
            continue;
        }
        let len = u64::from_le_bytes(len_bytes);
        let data = p + HEADER_LEN;
        let Some(end) = usize::try_from(len)
            .ok()
            .and_then(|l| data.checked_add(l))
            .filter(|&e| e + FOOTER_LEN <= n)
        else {
            // A record that may be whole in a larger window: only that one can answer.
            if let Some(further) = cut_short() {
                return Some(further);
            }
            continue;
        };
        let crc = u32::from_le_bytes(window[end..end + FOOTER_LEN].try_into().ok()?);
        if masked_crc32c(&window[data..end]) == crc {
            return Some(Ok(from + p as u64));
        }
    }
    cut_short()
}

/// Reads as much of `buf` as the file holds from `offset`.
fn read_full_at(file: &File, buf: &mut [u8], offset: u64) -> Option<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], offset + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(n)
}
