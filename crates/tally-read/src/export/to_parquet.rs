//! `tally export --format parquet`: rows gathered into row groups (a sequential reader's
//! rows, or one window of a large file read on every core, [`super::windows`]) and encoded on a
//! second thread while the next group is read.
//!
//! `run` and `tag` repeat a few strings millions of times. The reader already knows each row's
//! string by a small id, so their columns are written as dictionary pages straight from those
//! ids (a dictionary page of the group's distinct strings, then the codes in Parquet's
//! RLE/bit-packed hybrid) instead of handing the Parquet writer one string per row to hash.
//! `step`, `wall_time` and `value` are their 8-byte values as they are, or a dictionary of runs
//! of equal values when runs are few; nothing is compressed (`docs/contract/consumers.md`
//! "Exporting to Parquet").

use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::statistics::Statistics;
use parquet::file::writer::{SerializedFileWriter, SerializedRowGroupWriter};
use tally_tfevents::{Interner, ScalarRef};

use super::blocks::BlockWriter;
use super::options::Compression;
use super::pages::{eight_byte_column, Buffers, Chunk, DictColumn, Rows};
use super::sink::RowSink;
use crate::error::Error;

/// Rows per row group from the sequential reader: memory stays constant (three groups at most:
/// one filling, one encoding, one emptied for reuse).
const ROW_GROUP: usize = 128 * 1024;

/// The file, written a block at a time.
type Output = BlockWriter<std::fs::File>;

/// Emptied segments kept for reuse: enough for two windows however finely the reader splits a
/// window into ranges (one segment each). Only segments that were in use come back, so what it
/// holds is about two windows' rows whatever this bound.
const POOL: usize = 64;

/// A stretch of rows in file order; `tag` ids index `tags`, which is the segment's own (each
/// reading thread numbers the tags it meets). A row group is one or more segments.
///
/// Rows that follow each other with the same step and wall time (an event's scalars) keep them
/// once, with a count: a tally event's ten scalars take 14 bytes a row instead of 28, so half
/// the memory is touched, and the writer sees those columns' runs without comparing rows.
pub(super) struct Segment {
    /// Each run's id (in the sink's numbering) and how many consecutive rows are of it.
    runs: Vec<(u32, usize)>,
    pub(super) tags: Interner,
    tag: Vec<u32>,
    value: Vec<f64>,
    /// One entry per stretch of rows sharing a step and a wall time (by bits), and its rows.
    step: Vec<i64>,
    wall: Vec<f64>,
    rows_of: Vec<u32>,
    /// The last entry's step and wall time's bits.
    last: (i64, u64),
}

impl Default for Segment {
    fn default() -> Self {
        Segment {
            runs: Vec::new(),
            tags: Interner::new(),
            tag: Vec::new(),
            value: Vec::new(),
            step: Vec::new(),
            wall: Vec::new(),
            rows_of: Vec::new(),
            last: (0, 0),
        }
    }
}

impl Segment {
    #[inline]
    pub(super) fn push(&mut self, tag: usize, step: i64, wall: f64, value: f64) {
        self.push_value(tag, value);
        self.push_rows(step, wall, 1);
    }

    /// A row's tag and value; its step and wall time come with [`push_rows`](Self::push_rows).
    #[inline]
    pub(super) fn push_value(&mut self, tag: usize, value: f64) {
        self.tag.push(tag as u32);
        self.value.push(value);
    }

    /// The step and wall time of the last `n` rows pushed (none when `n` is 0).
    #[inline]
    pub(super) fn push_rows(&mut self, step: i64, wall: f64, n: u32) {
        let key = (step, wall.to_bits());
        match self.rows_of.last_mut() {
            _ if n == 0 => {}
            Some(m) if self.last == key && m.checked_add(n).is_some() => *m += n,
            _ => {
                self.step.push(step);
                self.wall.push(wall);
                self.rows_of.push(n);
                self.last = key;
            }
        }
    }

    /// Room for `rows` more rows in every column. Reserved memory is only faulted in once
    /// written, while growing by doubling would copy (and fault in) every row again.
    pub(super) fn reserve(&mut self, rows: usize) {
        self.tag.reserve(rows);
        self.value.reserve(rows);
        self.step.reserve(rows);
        self.wall.reserve(rows);
        self.rows_of.reserve(rows);
    }

    pub(super) fn len(&self) -> usize {
        self.tag.len()
    }

    fn clear(&mut self) {
        self.runs.clear();
        self.tags = Interner::new();
        self.tag.clear();
        self.value.clear();
        self.step.clear();
        self.wall.clear();
        self.rows_of.clear();
    }
}

/// Emptied segments shared by the reading threads and the encoder, so steady state reuses the
/// same (already touched) memory instead of faulting in fresh pages for every group.
#[derive(Clone, Default)]
pub(super) struct Pool(Arc<Mutex<Vec<Segment>>>);

impl Pool {
    pub(super) fn take(&self) -> Segment {
        self.0
            .lock()
            .ok()
            .and_then(|mut p| p.pop())
            .unwrap_or_default()
    }

    fn give(&self, mut segment: Segment) {
        segment.clear();
        if let Ok(mut p) = self.0.lock() {
            if p.len() < POOL {
                p.push(segment);
            }
        }
    }
}

enum Msg {
    /// One row group, and the runs first named in it.
    Group(Vec<Segment>, Vec<String>),
    /// Write the footer: every row was sent.
    Finish,
}

/// The reading side: gathers rows and hands full groups to the encoder thread.
pub(super) struct ParquetSink {
    path: PathBuf,
    /// The sequential reader's rows not yet sent.
    batch: Segment,
    new_runs: Vec<String>,
    to_encoder: Option<SyncSender<Msg>>,
    pub(super) pool: Pool,
    encoder: Option<JoinHandle<Result<(), Error>>>,
    runs: usize,
    current_run: u32,
}

fn parquet_error(path: &Path) -> impl Fn(ParquetError) -> Error + '_ {
    move |source| Error::Parquet {
        path: path.to_owned(),
        source,
    }
}

/// Which columns a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    /// run, tag, step, wall_time, value: one file of every run.
    WithRun,
    /// tag, step, wall_time, value: one run's part of a dataset, whose directory names the run
    /// (`docs/contract/consumers.md` "A Parquet dataset").
    WithoutRun,
}

impl ParquetSink {
    pub(super) fn create(
        path: &Path,
        compression: Compression,
        layout: Layout,
    ) -> Result<Self, Error> {
        let err = parquet_error(path);
        let run = match layout {
            Layout::WithRun => "REQUIRED BYTE_ARRAY run (UTF8); ",
            Layout::WithoutRun => "",
        };
        let schema = parquet::schema::parser::parse_message_type(&format!(
            "message scalar {{ {run}REQUIRED BYTE_ARRAY tag (UTF8); \
             REQUIRED INT64 step; REQUIRED DOUBLE wall_time; REQUIRED DOUBLE value; }}",
        ))
        .map_err(&err)?;
        // Every column chunk is spliced in whole (`super::pages`): the writer only lays out
        // row groups and the footer.
        let props = WriterProperties::builder().build();
        let file = std::fs::File::create(path).map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })?;
        let file = BlockWriter::new(file);
        let writer =
            SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props)).map_err(&err)?;
        // A rendezvous: the reader hands a full group over only when the encoder is free, so
        // no group waits in between.
        let (to_encoder, groups) = sync_channel(0);
        let pool = Pool::default();
        let out = path.to_owned();
        let encoder_pool = pool.clone();
        let encoder = std::thread::Builder::new()
            .name("tally-export-parquet".into())
            .spawn(move || encode_groups(writer, &out, &groups, &encoder_pool, compression, layout))
            .map_err(|source| Error::Io {
                path: path.to_owned(),
                source,
            })?;
        Ok(ParquetSink {
            path: path.to_owned(),
            batch: Segment::default(),
            new_runs: Vec::new(),
            to_encoder: Some(to_encoder),
            pool,
            encoder: Some(encoder),
            runs: 0,
            current_run: 0,
        })
    }

    /// The encoder thread's error, once it stopped early.
    fn encoder_error(&mut self) -> Error {
        self.to_encoder = None;
        match self.encoder.take().map(JoinHandle::join) {
            Some(Ok(Err(e))) => e,
            _ => Error::Stopped(format!(
                "{}: the Parquet encoder thread stopped",
                self.path.display()
            )),
        }
    }

    fn send(&mut self, msg: Msg) -> Result<(), Error> {
        let sent = self
            .to_encoder
            .as_ref()
            .is_some_and(|tx| tx.send(msg).is_ok());
        if sent {
            Ok(())
        } else {
            Err(self.encoder_error())
        }
    }

    fn flush_batch(&mut self) -> Result<(), Error> {
        if self.batch.len() == 0 {
            return Ok(());
        }
        let full = std::mem::replace(&mut self.batch, self.pool.take());
        let runs = std::mem::take(&mut self.new_runs);
        self.send(Msg::Group(vec![full], runs))
    }

    /// One window of the current run, as segments in file order: one row group, after the
    /// rows gathered before it.
    pub(super) fn window(&mut self, mut parts: Vec<Segment>) -> Result<(), Error> {
        self.flush_batch()?;
        parts.retain(|p| p.len() > 0);
        if parts.is_empty() {
            return Ok(());
        }
        for p in &mut parts {
            p.runs = vec![(self.current_run, p.len())];
        }
        let runs = std::mem::take(&mut self.new_runs);
        self.send(Msg::Group(parts, runs))
    }
}

impl RowSink for ParquetSink {
    fn start_run(&mut self, run: &str) {
        self.current_run = self.runs as u32;
        self.runs += 1;
        self.new_runs.push(run.to_owned());
    }

    fn row(&mut self, s: ScalarRef<'_>) -> Result<(), Error> {
        let b = &mut self.batch;
        match b.runs.last_mut() {
            Some((run, n)) if *run == self.current_run => *n += 1,
            _ => b.runs.push((self.current_run, 1)),
        }
        let tag = b.tags.id(s.tag);
        b.push(tag, s.step, s.wall_time, s.value);
        if b.len() >= ROW_GROUP {
            self.flush_batch()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), Error> {
        self.flush_batch()?;
        self.send(Msg::Finish)?;
        self.to_encoder = None;
        match self.encoder.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            _ => Err(self.encoder_error()),
        }
    }
}

impl Drop for ParquetSink {
    fn drop(&mut self) {
        // Abandoned (an error stopped the export): the thread ends without writing a footer.
        self.to_encoder = None;
        if let Some(handle) = self.encoder.take() {
            let _ = handle.join();
        }
    }
}

/// The encoder thread: each group as a row group; the footer on `Finish`.
fn encode_groups(
    mut writer: SerializedFileWriter<Output>,
    path: &Path,
    groups: &Receiver<Msg>,
    pool: &Pool,
    compression: Compression,
    layout: Layout,
) -> Result<(), Error> {
    let err = parquet_error(path);
    let mut columns = writer.schema_descr().columns().to_vec();
    let mut runs = match layout {
        Layout::WithRun => Some(DictColumn::new(columns.remove(0))),
        Layout::WithoutRun => None,
    };
    // tag, step, wall_time, value.
    let mut tags = DictColumn::new(columns[0].clone());
    // Every tag string by its id in the file; each segment's ids mapped to those.
    let mut tag_ids = Interner::new();
    let mut maps: Vec<Vec<u32>> = Vec::new();
    let mut run_lengths = Vec::new();
    let mut bufs = Buffers::new(compression);
    while let Ok(msg) = groups.recv() {
        let (segments, new_runs) = match msg {
            Msg::Group(segments, new_runs) => (segments, new_runs),
            Msg::Finish => {
                writer.close().map_err(&err)?;
                return Ok(());
            }
        };
        if let Some(runs) = &mut runs {
            runs.extend(&new_runs);
        }
        run_lengths.clear();
        maps.resize_with(segments.len(), Vec::new);
        for (seg, map) in segments.iter().zip(&mut maps) {
            run_lengths.extend_from_slice(&seg.runs);
            map.clear();
            for id in 0..seg.tags.len() {
                let name = seg.tags.name(id).unwrap_or_default();
                let known = tag_ids.len();
                let file_id = tag_ids.id(name);
                if file_id == known {
                    tags.extend(&[name]);
                }
                map.push(file_id as u32);
            }
        }
        let parts: Vec<(&[u32], &[u32])> = segments
            .iter()
            .zip(&maps)
            .map(|(seg, map)| (&seg.tag[..], &map[..]))
            .collect();
        let mut rg = writer.next_row_group().map_err(&err)?;
        if let Some(runs) = &mut runs {
            let chunk = runs.chunk_of_runs(&run_lengths, &mut bufs);
            append(&mut rg, chunk, &mut bufs).map_err(&err)?;
        }
        let chunk = tags.chunk_of_ids(&parts, &mut bufs);
        append(&mut rg, chunk, &mut bufs).map_err(&err)?;
        let steps = segments
            .iter()
            .map(|s| (&s.step[..], Rows::Counted(&s.rows_of)));
        let chunk = eight_byte_column(
            &columns[1],
            steps,
            i64::to_le_bytes,
            step_range(&segments),
            &mut bufs,
        );
        append(&mut rg, chunk, &mut bufs).map_err(&err)?;
        let walls = segments
            .iter()
            .map(|s| (&s.wall[..], Rows::Counted(&s.rows_of)));
        let chunk = eight_byte_column(&columns[2], walls, f64::to_le_bytes, None, &mut bufs);
        append(&mut rg, chunk, &mut bufs).map_err(&err)?;
        let values = segments.iter().map(|s| (&s.value[..], Rows::One));
        let chunk = eight_byte_column(&columns[3], values, f64::to_le_bytes, None, &mut bufs);
        append(&mut rg, chunk, &mut bufs).map_err(&err)?;
        rg.close().map_err(&err)?;
        for seg in segments {
            pool.give(seg);
        }
    }
    // The sink went away without `Finish`: leave the file without a footer, as it stands.
    Ok(())
}

/// Splices a column chunk into the row group and takes its memory back.
fn append(
    rg: &mut SerializedRowGroupWriter<'_, Output>,
    chunk: Result<Chunk, ParquetError>,
    bufs: &mut Buffers,
) -> Result<(), ParquetError> {
    chunk?.append_to(rg, bufs)
}

/// The group's smallest and largest step, so readers can skip row groups by step.
fn step_range(segments: &[Segment]) -> Option<Statistics> {
    let steps = segments.iter().flat_map(|s| s.step.iter().copied());
    let (min, max) = steps.fold((i64::MAX, i64::MIN), |(lo, hi), s| (lo.min(s), hi.max(s)));
    (min <= max).then(|| Statistics::int64(Some(min), Some(max), None, Some(0), false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_sharing_a_step_and_wall_time_keep_them_once_and_expand_back_exactly() {
        let nan = f64::from_bits(0x7ff8_0000_0000_0001);
        // (step, wall): an event of three, one of a new wall time, one of the same wall time's
        // other zero, NaN walls alike by their bits, then a step going back.
        let rows = [
            (1, 0.5),
            (1, 0.5),
            (1, 0.5),
            (1, 0.75),
            (2, 0.0),
            (2, -0.0),
            (3, nan),
            (3, nan),
            (3, f64::NAN),
            (1, 0.5),
        ];
        let mut seg = Segment::default();
        for (i, &(step, wall)) in rows.iter().enumerate() {
            seg.push(i % 2, step, wall, i as f64);
        }
        assert_eq!(seg.len(), rows.len());
        assert_eq!(seg.rows_of, [3, 1, 1, 1, 2, 1, 1]);
        let expanded: Vec<(i64, u64)> = (seg.step.iter().zip(&seg.wall).zip(&seg.rows_of))
            .flat_map(|((&s, &w), &n)| std::iter::repeat_n((s, w.to_bits()), n as usize))
            .collect();
        let want: Vec<(i64, u64)> = rows.iter().map(|&(s, w)| (s, w.to_bits())).collect();
        assert_eq!(expanded, want);
        seg.clear();
        seg.push(0, 1, 0.5, 0.0);
        assert_eq!((seg.len(), &seg.rows_of[..]), (1, &[1][..]));
        // An event whose scalars were all dropped adds nothing; one of two rows adds one entry.
        seg.push_rows(2, 0.5, 0);
        seg.push_value(1, 1.0);
        seg.push_value(0, 2.0);
        seg.push_rows(2, 0.5, 2);
        assert_eq!(
            (seg.len(), &seg.rows_of[..], &seg.step[..]),
            (3, &[1, 2][..], &[1, 2][..])
        );
    }
}
