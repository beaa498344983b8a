//! `tally export --format parquet`: rows gathered into row groups (a sequential reader's
//! rows, or one window of a large file read on every core, [`super::windows`]) and encoded on a
//! second thread while the next group is read.
//!
//! `run` and `tag` repeat a few strings millions of times. The reader already knows each row's
//! string by a small id, so their columns are written as dictionary pages straight from those
//! ids (a dictionary page of the group's distinct strings, then the codes in Parquet's
//! RLE/bit-packed hybrid) instead of handing the Parquet writer one string per row to hash.
//! The numeric columns go through the `parquet` crate's writer, uncompressed, `step` delta
//! encoded (`docs/contract/consumers.md` "Exporting to Parquet").

use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use bytes::Bytes;
use parquet::basic::{Compression, Encoding};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::data_type::{DataType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{
    SerializedFileWriter, SerializedPageWriter, SerializedRowGroupWriter, TrackedWrite,
};
use parquet::schema::types::{ColumnDescPtr, ColumnPath};
use tally_tfevents::{Interner, ScalarRef};

use super::RowSink;
use crate::error::CliError;

/// Rows per row group from the sequential reader: memory stays constant (three groups at most:
/// one filling, one encoding, one emptied for reuse).
const ROW_GROUP: usize = 128 * 1024;

/// Emptied segments kept for reuse: enough for one window on every core and one group.
const POOL: usize = 8;

/// A stretch of rows in file order; `tag` ids index `tags`, which is the segment's own (each
/// reading thread numbers the tags it meets). A row group is one or more segments.
#[derive(Default)]
pub(super) struct Segment {
    /// Each run's id (in the sink's numbering) and how many consecutive rows are of it.
    runs: Vec<(u32, usize)>,
    pub(super) tags: Interner,
    tag: Vec<u32>,
    step: Vec<i64>,
    wall: Vec<f64>,
    value: Vec<f64>,
}

impl Segment {
    pub(super) fn push(&mut self, tag: usize, step: i64, wall: f64, value: f64) {
        self.tag.push(tag as u32);
        self.step.push(step);
        self.wall.push(wall);
        self.value.push(value);
    }

    pub(super) fn len(&self) -> usize {
        self.step.len()
    }

    fn clear(&mut self) {
        self.runs.clear();
        self.tags = Interner::new();
        self.tag.clear();
        self.step.clear();
        self.wall.clear();
        self.value.clear();
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
    encoder: Option<JoinHandle<Result<(), CliError>>>,
    runs: usize,
    current_run: u32,
}

fn parquet_error(path: &Path) -> impl Fn(ParquetError) -> CliError + '_ {
    move |source| CliError::Parquet {
        path: path.to_owned(),
        source,
    }
}

impl ParquetSink {
    pub(super) fn create(path: &Path) -> Result<Self, CliError> {
        let err = parquet_error(path);
        let schema = parquet::schema::parser::parse_message_type(
            "message scalar { REQUIRED BYTE_ARRAY run (UTF8); REQUIRED BYTE_ARRAY tag (UTF8); \
             REQUIRED INT64 step; REQUIRED DOUBLE wall_time; REQUIRED DOUBLE value; }",
        )
        .map_err(&err)?;
        // Dictionaries off: `run` and `tag` get theirs from `DictColumn`; steps, times and
        // values are mostly distinct, and hashing each only to give up would cost more than
        // the plain encoding it falls back to. No compression: values and times are mostly
        // distinct doubles that snappy barely shrinks, at a cost comparable to reading them;
        // steps repeat or count up, which delta encoding stores in a few bits without it.
        let props = WriterProperties::builder()
            .set_compression(Compression::UNCOMPRESSED)
            .set_dictionary_enabled(false)
            .set_column_encoding(ColumnPath::from("step"), Encoding::DELTA_BINARY_PACKED)
            .build();
        let file = std::fs::File::create(path).map_err(|source| CliError::Io {
            path: path.to_owned(),
            source,
        })?;
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
            .spawn(move || encode_groups(writer, &out, &groups, &encoder_pool))
            .map_err(|source| CliError::Io {
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
    fn encoder_error(&mut self) -> CliError {
        self.to_encoder = None;
        match self.encoder.take().map(JoinHandle::join) {
            Some(Ok(Err(e))) => e,
            _ => CliError::Run(format!(
                "{}: the Parquet encoder thread stopped",
                self.path.display()
            )),
        }
    }

    fn send(&mut self, msg: Msg) -> Result<(), CliError> {
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

    fn flush_batch(&mut self) -> Result<(), CliError> {
        if self.batch.len() == 0 {
            return Ok(());
        }
        let full = std::mem::replace(&mut self.batch, self.pool.take());
        let runs = std::mem::take(&mut self.new_runs);
        self.send(Msg::Group(vec![full], runs))
    }

    /// One window of the current run, as segments in file order: one row group, after the
    /// rows gathered before it.
    pub(super) fn window(&mut self, mut parts: Vec<Segment>) -> Result<(), CliError> {
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

    fn row(&mut self, s: ScalarRef<'_>) -> Result<(), CliError> {
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

    fn windows(&mut self) -> Option<&mut ParquetSink> {
        Some(self)
    }

    fn finish(&mut self) -> Result<(), CliError> {
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
    mut writer: SerializedFileWriter<std::fs::File>,
    path: &Path,
    groups: &Receiver<Msg>,
    pool: &Pool,
) -> Result<(), CliError> {
    let err = parquet_error(path);
    let columns = writer.schema_descr().columns().to_vec();
    let mut runs = DictColumn::new(columns[0].clone());
    let mut tags = DictColumn::new(columns[1].clone());
    // Every tag string by its id in the file, and each segment's ids mapped to those.
    let mut tag_ids = Interner::new();
    let mut to_file: Vec<u32> = Vec::new();
    let (mut run_codes, mut tag_codes) = (Vec::new(), Vec::new());
    while let Ok(msg) = groups.recv() {
        let (segments, new_runs) = match msg {
            Msg::Group(segments, new_runs) => (segments, new_runs),
            Msg::Finish => {
                writer.close().map_err(&err)?;
                return Ok(());
            }
        };
        runs.extend(&new_runs);
        run_codes.clear();
        tag_codes.clear();
        for seg in &segments {
            for &(run, n) in &seg.runs {
                run_codes.extend(std::iter::repeat_n(run, n));
            }
            to_file.clear();
            for id in 0..seg.tags.len() {
                let name = seg.tags.name(id).unwrap_or_default();
                let known = tag_ids.len();
                let file_id = tag_ids.id(name);
                if file_id == known {
                    tags.extend(&[name]);
                }
                to_file.push(file_id as u32);
            }
            tag_codes.extend(seg.tag.iter().map(|&t| to_file[t as usize]));
        }
        let mut rg = writer.next_row_group().map_err(&err)?;
        for (column, ids) in [(&mut runs, &run_codes), (&mut tags, &tag_codes)] {
            let (chunk, close) = column.chunk(ids).map_err(&err)?;
            rg.append_column(&chunk, close).map_err(&err)?;
        }
        write_column::<Int64Type>(&mut rg, segments.iter().map(|s| &s.step[..]), path)?;
        write_column::<DoubleType>(&mut rg, segments.iter().map(|s| &s.wall[..]), path)?;
        write_column::<DoubleType>(&mut rg, segments.iter().map(|s| &s.value[..]), path)?;
        rg.close().map_err(&err)?;
        for seg in segments {
            pool.give(seg);
        }
    }
    // The sink went away without `Finish`: leave the file without a footer, as it stands.
    Ok(())
}

/// The row group's next column, written by the `parquet` crate's writer from `parts` in order.
fn write_column<'a, T: DataType>(
    rg: &mut SerializedRowGroupWriter<'_, std::fs::File>,
    parts: impl Iterator<Item = &'a [T::T]>,
    path: &Path,
) -> Result<(), CliError>
where
    T::T: 'a,
{
    let err = parquet_error(path);
    let mut col = rg
        .next_column()
        .map_err(&err)?
        .ok_or_else(|| CliError::Run("the Parquet schema has too few columns".into()))?;
    let typed = col.typed::<T>();
    for values in parts {
        typed.write_batch(values, None, None).map_err(&err)?;
    }
    col.close().map_err(&err)
}

/// A `BYTE_ARRAY` column written as dictionary pages from ids: the group's distinct strings in
/// first-seen order (PLAIN), then each row's index into them (RLE/bit-packed hybrid).
struct DictColumn {
    descr: ColumnDescPtr,
    /// Every string by id, PLAIN-encoded (4-byte little-endian length, then the bytes).
    plain: Vec<Vec<u8>>,
    /// Each id's index in the current group's dictionary, `u32::MAX` when not in it.
    local: Vec<u32>,
}

impl DictColumn {
    fn new(descr: ColumnDescPtr) -> Self {
        DictColumn {
            descr,
            plain: Vec::new(),
            local: Vec::new(),
        }
    }

    fn extend<S: AsRef<str>>(&mut self, strings: &[S]) {
        for s in strings.iter().map(AsRef::as_ref) {
            let mut p = Vec::with_capacity(4 + s.len());
            p.extend_from_slice(&(s.len() as u32).to_le_bytes());
            p.extend_from_slice(s.as_bytes());
            self.plain.push(p);
        }
        self.local.resize(self.plain.len(), u32::MAX);
    }

    /// The column chunk of one group (`ids` non-empty), with the metadata the row group writer
    /// needs to splice it in.
    fn chunk(&mut self, ids: &[u32]) -> Result<(Bytes, ColumnCloseResult), ParquetError> {
        let mut order: Vec<u32> = Vec::new();
        let mut codes = Vec::with_capacity(ids.len());
        for &id in ids {
            let slot = self
                .local
                .get_mut(id as usize)
                .ok_or_else(|| ParquetError::General(format!("unknown dictionary id {id}")))?;
            if *slot == u32::MAX {
                *slot = order.len() as u32;
                order.push(id);
            }
            codes.push(*slot);
        }
        let mut dict = Vec::new();
        for &id in &order {
            dict.extend_from_slice(&self.plain[id as usize]);
            self.local[id as usize] = u32::MAX;
        }
        // At least one bit: a width of 0 is valid but not every reader takes it.
        let width = (u32::BITS - (order.len() as u32 - 1).leading_zeros()).max(1);
        let mut data = vec![width as u8];
        encode_hybrid(&codes, width, &mut data);

        let mut sink = TrackedWrite::new(Vec::new());
        let mut pages = SerializedPageWriter::new(&mut sink);
        let dict_len = dict.len();
        let dict_spec = pages.write_page(CompressedPage::new(
            Page::DictionaryPage {
                buf: Bytes::from(dict),
                num_values: order.len() as u32,
                encoding: Encoding::PLAIN,
                is_sorted: false,
            },
            dict_len,
        ))?;
        let data_len = data.len();
        let data_spec = pages.write_page(CompressedPage::new(
            Page::DataPage {
                buf: Bytes::from(data),
                num_values: ids.len() as u32,
                encoding: Encoding::RLE_DICTIONARY,
                def_level_encoding: Encoding::RLE,
                rep_level_encoding: Encoding::RLE,
                statistics: None,
            },
            data_len,
        ))?;
        pages.close()?;
        let bytes = sink.into_inner()?;
        let total = bytes.len() as i64;
        let metadata = ColumnChunkMetaData::builder(self.descr.clone())
            .set_encodings(vec![
                Encoding::PLAIN,
                Encoding::RLE,
                Encoding::RLE_DICTIONARY,
            ])
            .set_compression(Compression::UNCOMPRESSED)
            .set_num_values(ids.len() as i64)
            .set_total_compressed_size(total)
            .set_total_uncompressed_size(total)
            .set_dictionary_page_offset(Some(dict_spec.offset as i64))
            .set_data_page_offset(data_spec.offset as i64)
            .build()?;
        let close = ColumnCloseResult {
            bytes_written: total as u64,
            rows_written: ids.len() as u64,
            metadata,
            bloom_filter: None,
            column_index: None,
            offset_index: None,
        };
        Ok((Bytes::from(bytes), close))
    }
}

fn push_uleb128(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Parquet's RLE/bit-packed hybrid of `codes` at `width` bits: a run of 8 or more equal codes
/// as one RLE run, the rest bit-packed in groups of 8 (the last group padded with zeros; a
/// reader stops at the page's value count).
fn encode_hybrid(codes: &[u32], width: u32, out: &mut Vec<u8>) {
    let value_bytes = width.div_ceil(8) as usize;
    let mut packed_from = 0;
    let mut i = 0;
    while i < codes.len() {
        let v = codes[i];
        let mut j = i + 1;
        while j < codes.len() && codes[j] == v {
            j += 1;
        }
        // A bit-packed run holds a multiple of 8 codes: the run's first codes may complete it.
        let fill = (8 - (i - packed_from) % 8) % 8;
        if j - i >= fill + 8 {
            bit_pack(&codes[packed_from..i + fill], width, out);
            push_uleb128(out, ((j - i - fill) as u64) << 1);
            out.extend_from_slice(&v.to_le_bytes()[..value_bytes]);
            packed_from = j;
        }
        i = j;
    }
    bit_pack(&codes[packed_from..], width, out);
}

fn bit_pack(codes: &[u32], width: u32, out: &mut Vec<u8>) {
    if codes.is_empty() {
        return;
    }
    let groups = codes.len().div_ceil(8);
    push_uleb128(out, ((groups as u64) << 1) | 1);
    let mut acc: u64 = 0;
    let mut bits = 0;
    for k in 0..groups * 8 {
        acc |= u64::from(codes.get(k).copied().unwrap_or(0)) << bits;
        bits += width;
        while bits >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            bits -= 8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes the hybrid as the format defines it, independently of the encoder's choices.
    fn decode(mut data: &[u8], width: u32, n: usize) -> Vec<u32> {
        let uleb = |d: &mut &[u8]| {
            let (mut v, mut shift) = (0u64, 0);
            loop {
                let b = d[0];
                *d = &d[1..];
                v |= u64::from(b & 0x7f) << shift;
                shift += 7;
                if b < 0x80 {
                    return v;
                }
            }
        };
        let mut out = Vec::new();
        while out.len() < n {
            let header = uleb(&mut data);
            if header & 1 == 0 {
                let bytes = width.div_ceil(8) as usize;
                let mut le = [0u8; 4];
                le[..bytes].copy_from_slice(&data[..bytes]);
                data = &data[bytes..];
                out.extend(std::iter::repeat_n(
                    u32::from_le_bytes(le),
                    (header >> 1) as usize,
                ));
            } else {
                let count = (header >> 1) as usize * 8;
                let mut bit = 0usize;
                for _ in 0..count {
                    let mut v = 0u32;
                    for b in 0..width as usize {
                        let at = bit + b;
                        v |= u32::from((data[at / 8] >> (at % 8)) & 1) << b;
                    }
                    bit += width as usize;
                    out.push(v);
                }
                data = &data[count * width as usize / 8..];
            }
        }
        assert!(data.is_empty(), "{} bytes left over", data.len());
        out.truncate(n);
        out
    }

    #[test]
    fn hybrid_round_trips_runs_cycles_and_wide_codes() {
        let mut cases: Vec<(Vec<u32>, u32)> = vec![
            (vec![0; 1], 1),
            (vec![0; 1000], 1),
            ((0..1000).map(|i| i % 10).collect(), 4),
            ((0..1003).map(|i| (i / 13) % 7).collect(), 3),
            ((0..777).map(|i| (i * 7919) % 300).collect(), 9),
            (
                (0..100)
                    .map(|i| if (5..=90).contains(&i) { 2 } else { 1 })
                    .collect(),
                2,
            ),
            (vec![70_000; 20], 17),
        ];
        cases.push((
            (0..64)
                .map(|i| if i % 17 < 9 { 3 } else { i % 4 })
                .collect(),
            2,
        ));
        for (codes, width) in cases {
            let mut out = Vec::new();
            encode_hybrid(&codes, width, &mut out);
            assert_eq!(decode(&out, width, codes.len()), codes, "width {width}");
        }
    }

    #[test]
    fn long_runs_are_rle_runs() {
        let codes = vec![5u32; 100_000];
        let mut out = Vec::new();
        encode_hybrid(&codes, 3, &mut out);
        assert!(out.len() < 8, "{} bytes for one repeated code", out.len());
    }
}
