//! Parquet column chunks written page by page, for columns whose values tally already holds in
//! a form the format takes as it is: strings by id (a dictionary page, then the codes in
//! Parquet's RLE/bit-packed hybrid), steps and doubles (their little-endian bytes, as they are
//! or as a dictionary of runs of equal values).

use std::io::Write;

use super::options::Compression as Codec;
use bytes::Bytes;
use parquet::basic::{Compression, Encoding};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::ParquetError;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::reader::Length;
use parquet::file::statistics::Statistics;
use parquet::file::writer::{SerializedPageWriter, SerializedRowGroupWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

use super::hybrid::{encode_hybrid, push_uleb128};
use super::spliced::{Pieces, Splicer};

/// A `BYTE_ARRAY` column written as dictionary pages from ids: the group's distinct strings in
/// first-seen order (PLAIN), then each row's index into them (RLE/bit-packed hybrid).
pub(super) struct DictColumn {
    descr: ColumnDescPtr,
    /// Every string by id, PLAIN-encoded (4-byte little-endian length, then the bytes).
    plain: Vec<Vec<u8>>,
    /// Each id's index in the current group's dictionary, `u32::MAX` when not in it.
    local: Vec<u32>,
}

impl DictColumn {
    pub(super) fn new(descr: ColumnDescPtr) -> Self {
        DictColumn {
            descr,
            plain: Vec::new(),
            local: Vec::new(),
        }
    }

    pub(super) fn extend<S: AsRef<str>>(&mut self, strings: &[S]) {
        for s in strings.iter().map(AsRef::as_ref) {
            let mut p = Vec::with_capacity(4 + s.len());
            p.extend_from_slice(&(s.len() as u32).to_le_bytes());
            p.extend_from_slice(s.as_bytes());
            self.plain.push(p);
        }
        self.local.resize(self.plain.len(), u32::MAX);
    }

    /// This group's dictionary index of string `id`, given one on first sight.
    fn code(&mut self, id: u32, order: &mut Vec<u32>) -> Result<u32, ParquetError> {
        let slot = self
            .local
            .get_mut(id as usize)
            .ok_or_else(|| ParquetError::General(format!("unknown dictionary id {id}")))?;
        if *slot == u32::MAX {
            *slot = order.len() as u32;
            order.push(id);
        }
        Ok(*slot)
    }

    /// The column chunk of a group of `runs` (string id, consecutive rows of it): each run one
    /// RLE run of the hybrid, written without looking at single rows.
    pub(super) fn chunk_of_runs(
        &mut self,
        runs: &[(u32, usize)],
        bufs: &mut Buffers,
    ) -> Result<Chunk, ParquetError> {
        let mut order = Vec::new();
        let mut merged: Vec<(u32, usize)> = Vec::with_capacity(runs.len());
        for &(id, n) in runs.iter().filter(|r| r.1 > 0) {
            let code = self.code(id, &mut order)?;
            match merged.last_mut() {
                Some((c, m)) if *c == code => *m += n,
                _ => merged.push((code, n)),
            }
        }
        let width = code_width(order.len());
        let data = &mut bufs.data;
        data.clear();
        data.push(width as u8);
        for (code, n) in merged {
            push_uleb128(data, (n as u64) << 1);
            data.extend_from_slice(&code.to_le_bytes()[..width.div_ceil(8) as usize]);
        }
        let rows = runs.iter().map(|r| r.1).sum();
        self.finish(&order, bufs, rows)
    }

    /// The column chunk of a group whose rows are `parts` in order, each a slice of ids in its
    /// own numbering and the map from those to this column's ids.
    ///
    /// A part numbers its strings in the order its rows first name them (an interner filled
    /// row by row), so coding each part's ids in id order codes them in row order: one table
    /// per part, then one lookup per row.
    pub(super) fn chunk_of_ids(
        &mut self,
        parts: &[(&[u32], &[u32])],
        bufs: &mut Buffers,
    ) -> Result<Chunk, ParquetError> {
        let mut order = Vec::new();
        let codes = &mut bufs.codes;
        codes.clear();
        codes.reserve(parts.iter().map(|p| p.0.len()).sum());
        let mut table = Vec::new();
        for &(ids, map) in parts {
            table.clear();
            for &id in map {
                table.push(self.code(id, &mut order)?);
            }
            if let Some(bad) = ids.iter().find(|&&id| id as usize >= table.len()) {
                return Err(ParquetError::General(format!("unknown segment id {bad}")));
            }
            codes.extend(ids.iter().map(|&id| table[id as usize]));
        }
        let width = code_width(order.len());
        let rows = codes.len();
        bufs.data.clear();
        bufs.data.push(width as u8);
        encode_hybrid(&bufs.codes, width, &mut bufs.data);
        self.finish(&order, bufs, rows)
    }

    /// The dictionary page of `order` and the data page in `bufs.data`, as one column chunk;
    /// the group's dictionary is emptied for the next.
    fn finish(
        &mut self,
        order: &[u32],
        bufs: &mut Buffers,
        rows: usize,
    ) -> Result<Chunk, ParquetError> {
        let dict = &mut bufs.dict;
        dict.clear();
        for &id in order {
            dict.extend_from_slice(&self.plain[id as usize]);
            self.local[id as usize] = u32::MAX;
        }
        let encodings = vec![Encoding::PLAIN, Encoding::RLE, Encoding::RLE_DICTIONARY];
        let page = (Some(order.len()), Encoding::RLE_DICTIONARY, rows, None);
        column_chunk(&self.descr, page, bufs, encodings)
    }
}

/// Bits per dictionary code for `n` strings; at least one: a width of 0 is valid but not every
/// reader takes it.
fn code_width(n: usize) -> u32 {
    (u32::BITS - (n.max(1) as u32 - 1).leading_zeros()).max(1)
}

/// How many rows each value of a column's part stands for.
#[derive(Clone, Copy)]
pub(super) enum Rows<'a> {
    /// One each.
    One,
    /// The count beside each value.
    Counted(&'a [u32]),
}

impl Rows<'_> {
    fn total(self, values: usize) -> usize {
        match self {
            Rows::One => values,
            Rows::Counted(counts) => counts.iter().map(|&n| n as usize).sum(),
        }
    }

    fn of(self, i: usize) -> u32 {
        match self {
            Rows::One => 1,
            Rows::Counted(counts) => counts[i],
        }
    }
}

/// A column chunk of 8-byte values (`DOUBLE`, `INT64`; `le` their little-endian bytes) from
/// `parts` in order, each value standing for its [`Rows`]. When runs of equal values are at
/// most half the rows (a tally event's scalars share its step and wall time; a metric may stay
/// constant), a dictionary of each run's value and one RLE run per run; otherwise PLAIN, the
/// values' bytes as they are. Page statistics are left out: computing them per value would cost
/// more than the copy.
pub(super) fn eight_byte_column<'a, T: Copy + 'a>(
    descr: &ColumnDescPtr,
    parts: impl Iterator<Item = (&'a [T], Rows<'a>)> + Clone,
    le: impl Fn(T) -> [u8; 8] + Copy,
    statistics: Option<Statistics>,
    bufs: &mut Buffers,
) -> Result<Chunk, ParquetError> {
    let rows: usize = parts.clone().map(|(v, r)| r.total(v.len())).sum();
    let bits = |v: T| u64::from_le_bytes(le(v));
    bufs.data.clear();
    // Equal neighbours make one run whatever rows they stand for: the runs are the values'.
    let Some(runs) = count_runs(parts.clone().map(|p| p.0), bits, rows / 2) else {
        // Room for all parts at once: growing part by part would move (and fault in) it.
        bufs.data.reserve(rows * 8);
        for (part, counts) in parts {
            let Rows::Counted(counts) = counts else {
                let at = bufs.data.len();
                bufs.data.resize(at + part.len() * 8, 0);
                for (out, &v) in bufs.data[at..].chunks_exact_mut(8).zip(part) {
                    out.copy_from_slice(&le(v));
                }
                continue;
            };
            for (&v, &n) in part.iter().zip(counts) {
                for _ in 0..n {
                    bufs.data.extend_from_slice(&le(v));
                }
            }
        }
        let encodings = vec![Encoding::PLAIN, Encoding::RLE];
        let page = (None, Encoding::PLAIN, rows, statistics);
        return column_chunk(descr, page, bufs, encodings);
    };
    let width = code_width(runs);
    bufs.dict.clear();
    bufs.data.push(width as u8);
    let mut run = |bits: u64, n: u64, code: u32| {
        bufs.dict.extend_from_slice(&bits.to_le_bytes());
        push_uleb128(&mut bufs.data, n << 1);
        let code_bytes = width.div_ceil(8) as usize;
        bufs.data
            .extend_from_slice(&code.to_le_bytes()[..code_bytes]);
    };
    let (mut current, mut n, mut code) = (None, 0u64, 0u32);
    for (part, counts) in parts {
        for (i, &v) in part.iter().enumerate() {
            let (bits, k) = (bits(v), u64::from(counts.of(i)));
            if current == Some(bits) {
                n += k;
                continue;
            }
            if let Some(c) = current {
                run(c, n, code);
                code += 1;
            }
            (current, n) = (Some(bits), k);
        }
    }
    if let Some(c) = current {
        run(c, n, code);
    }
    let encodings = vec![Encoding::PLAIN, Encoding::RLE, Encoding::RLE_DICTIONARY];
    let page = (Some(runs), Encoding::RLE_DICTIONARY, rows, statistics);
    column_chunk(descr, page, bufs, encodings)
}

/// How many runs of equal values (by `bits`) `parts` hold; `None` once they are more than
/// `most` (mostly distinct values are known as such half-way through). Counted a block at a
/// time, without a branch per value, so the count vectorises.
fn count_runs<'a, T: Copy + 'a>(
    parts: impl Iterator<Item = &'a [T]>,
    bits: impl Fn(T) -> u64 + Copy,
    most: usize,
) -> Option<usize> {
    const BLOCK: usize = 4096;
    let (mut runs, mut last) = (0, None);
    for part in parts {
        let Some(&first) = part.first() else {
            continue;
        };
        runs += usize::from(last != Some(bits(first)));
        // Blocks overlap by one value, so every neighbouring pair is compared once.
        for at in (0..part.len() - 1).step_by(BLOCK) {
            let block = &part[at..part.len().min(at + BLOCK + 1)];
            let pairs = block.windows(2);
            runs += pairs
                .map(|w| usize::from(bits(w[0]) != bits(w[1])))
                .sum::<usize>();
            if runs > most {
                return None;
            }
        }
        last = part.last().map(|&v| bits(v));
    }
    (runs <= most).then_some(runs)
}

/// A column chunk: its bytes (`pieces`), the metadata the row group writer needs to splice it
/// in (`SerializedRowGroupWriter::append_column`), and handles on the encoder's buffers that
/// the pieces share, to take them back after.
pub(super) struct Chunk {
    pieces: Pieces,
    close: ColumnCloseResult,
    /// The encoder's data and dictionary buffers, written as they are (uncompressed pages).
    scratch: Option<(Bytes, Option<Bytes>)>,
}

impl Chunk {
    /// Splices the chunk into the row group, then takes back its memory into `bufs`.
    pub(super) fn append_to<W: Write + Send>(
        self,
        rg: &mut SerializedRowGroupWriter<'_, W>,
        bufs: &mut Buffers,
    ) -> Result<(), ParquetError> {
        let Chunk {
            pieces,
            close,
            scratch,
        } = self;
        rg.append_column(&pieces, close)?;
        // The last handles on the buffers: they come back without a copy.
        drop(pieces);
        if let Some((data, dict)) = scratch {
            bufs.data = Vec::from(data);
            if let Some(dict) = dict {
                bufs.dict = Vec::from(dict);
            }
        }
        Ok(())
    }
}

/// The encoder's scratch memory, reused from one column chunk to the next: a fresh megabyte
/// per chunk would be faulted in page by page every time.
#[derive(Default)]
pub(super) struct Buffers {
    codes: Vec<u32>,
    /// The dictionary page's values, PLAIN.
    dict: Vec<u8>,
    /// The data page's values.
    data: Vec<u8>,
    /// The pages' compressor, when they are compressed.
    snappy: Option<snap::raw::Encoder>,
}

impl Buffers {
    /// Empty buffers for pages compressed as `compression` says.
    pub(super) fn new(compression: Codec) -> Self {
        Buffers {
            snappy: (compression == Codec::Snappy).then(snap::raw::Encoder::new),
            ..Buffers::default()
        }
    }
}

/// What a column chunk holds: the number of values of its dictionary page (in `Buffers::dict`)
/// if it has one, the data page's encoding, its row count, and the chunk's statistics.
type Pages = (Option<usize>, Encoding, usize, Option<Statistics>);

/// One column chunk: an optional dictionary page (in `bufs.dict`), then one data page (in
/// `bufs.data`) of `rows` values of a required column (so no levels), each page compressed
/// when `bufs` says so.
fn column_chunk(
    descr: &ColumnDescPtr,
    (dict_values, encoding, rows, statistics): Pages,
    bufs: &mut Buffers,
    encodings: Vec<Encoding>,
) -> Result<Chunk, ParquetError> {
    // Each page's bytes as written and its size uncompressed. Uncompressed, the pages are the
    // encoder's own buffers (taken back once the chunk is spliced in); compressed, the buffers
    // stay with the encoder.
    let (dict_len, data_len) = (bufs.dict.len(), bufs.data.len());
    let (dict, data, codec) = match &mut bufs.snappy {
        None => (
            dict_values.map(|_| Bytes::from(std::mem::take(&mut bufs.dict))),
            Bytes::from(std::mem::take(&mut bufs.data)),
            Compression::UNCOMPRESSED,
        ),
        Some(snappy) => {
            let mut squeeze = |raw: &[u8]| {
                snappy
                    .compress_vec(raw)
                    .map(Bytes::from)
                    .map_err(|e| ParquetError::External(Box::new(e)))
            };
            let dict = dict_values.map(|_| squeeze(&bufs.dict)).transpose()?;
            (dict, squeeze(&bufs.data)?, Compression::SNAPPY)
        }
    };
    let shared = dict.iter().chain([&data]).cloned().collect();
    let mut sink = TrackedWrite::new(Splicer::new(shared));
    let mut pages = SerializedPageWriter::new(&mut sink);
    let dict_offset = match (&dict, dict_values) {
        (Some(buf), Some(n)) => {
            let page = Page::DictionaryPage {
                buf: buf.clone(),
                num_values: n as u32,
                encoding: Encoding::PLAIN,
                is_sorted: false,
            };
            Some(
                pages
                    .write_page(CompressedPage::new(page, dict_len))?
                    .offset as i64,
            )
        }
        _ => None,
    };
    let data_spec = pages.write_page(CompressedPage::new(
        Page::DataPage {
            buf: data.clone(),
            num_values: rows as u32,
            encoding,
            def_level_encoding: Encoding::RLE,
            rep_level_encoding: Encoding::RLE,
            statistics: None,
        },
        data_len,
    ))?;
    pages.close()?;
    let pieces = sink.into_inner()?.finish();
    let total = pieces.len() as i64;
    let compressed = dict.as_ref().map_or(0, Bytes::len) + data.len();
    let raw = dict.as_ref().map_or(0, |_| dict_len) + data_len;
    let total_uncompressed = total - compressed as i64 + raw as i64;
    let mut metadata = ColumnChunkMetaData::builder(descr.clone());
    if let Some(statistics) = statistics {
        metadata = metadata.set_statistics(statistics);
    }
    let metadata = metadata
        .set_encodings(encodings)
        .set_compression(codec)
        .set_num_values(rows as i64)
        .set_total_compressed_size(total)
        .set_total_uncompressed_size(total_uncompressed)
        .set_dictionary_page_offset(dict_offset)
        .set_data_page_offset(data_spec.offset as i64)
        .build()?;
    let close = ColumnCloseResult {
        bytes_written: total as u64,
        rows_written: rows as u64,
        metadata,
        bloom_filter: None,
        column_index: None,
        offset_index: None,
    };
    let scratch = (codec == Compression::UNCOMPRESSED).then_some((data, dict));
    Ok(Chunk {
        pieces,
        close,
        scratch,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn runs_are_counted_across_blocks_and_parts_as_one_by_one() {
        let bits = |v: u64| v;
        for len in [0, 1, 2, 4096, 4097, 4098, 8193, 10_000] {
            // Runs of varying length, some ending exactly on a block's edge.
            let values: Vec<u64> = (0..len as u64).map(|i| (i / (1 + i % 5)) % 3).collect();
            let naive = values.windows(2).filter(|w| w[0] != w[1]).count() + usize::from(len > 0);
            for cuts in [
                vec![],
                vec![len / 2],
                vec![1.min(len), len / 3, len - len / 4],
            ] {
                let mut parts = Vec::new();
                let mut from = 0;
                for &c in cuts.iter().chain([&len]) {
                    parts.push(&values[from..c.max(from)]);
                    from = c.max(from);
                }
                let got = count_runs(parts.iter().copied(), bits, usize::MAX);
                assert_eq!(got, Some(naive), "len {len}, cuts {cuts:?}");
                assert_eq!(count_runs(parts.iter().copied(), bits, naive), Some(naive));
                if naive > 0 {
                    assert_eq!(count_runs(parts.into_iter(), bits, naive - 1), None);
                }
            }
        }
    }

    /// A chunk's bytes, its page kinds aside.
    fn chunk_bytes(chunk: Chunk) -> Vec<u8> {
        use parquet::file::reader::ChunkReader;
        chunk
            .pieces
            .get_bytes(0, chunk.pieces.len() as usize)
            .unwrap()
            .to_vec()
    }

    #[test]
    fn values_with_row_counts_make_the_chunk_their_rows_make() {
        use parquet::schema::types::SchemaDescriptor;
        let schema =
            parquet::schema::parser::parse_message_type("message m { REQUIRED DOUBLE v; }");
        let descr = SchemaDescriptor::new(std::sync::Arc::new(schema.unwrap())).column(0);
        let odd = [0.0, -0.0, f64::NAN, -f64::NAN, 1.5, f64::INFINITY];
        // Entries (value, rows), equal neighbours included: a dictionary (few runs), then PLAIN.
        let few: Vec<(f64, u32)> = (0..300)
            .map(|i| (odd[i / 7 % 6], 1 + (i % 4) as u32))
            .collect();
        let many: Vec<(f64, u32)> = (0..300)
            .map(|i| (odd[i % 6] + (i / 50) as f64, 1))
            .collect();
        let mixed: Vec<(f64, u32)> = (0..300)
            .map(|i| (odd[i % 6], 1 + (i % 3 / 2) as u32))
            .collect();
        for entries in [few, many, mixed] {
            let (values, counts): (Vec<f64>, Vec<u32>) = entries.iter().copied().unzip();
            let rows: Vec<f64> = entries
                .iter()
                .flat_map(|&(v, n)| std::iter::repeat_n(v, n as usize))
                .collect();
            let cut = values.len() / 3;
            let cut_rows: usize = counts[..cut].iter().map(|&n| n as usize).sum();
            let counted = [
                (&values[..cut], Rows::Counted(&counts[..cut])),
                (&values[cut..], Rows::Counted(&counts[cut..])),
            ];
            let one_each = [
                (&rows[..cut_rows], Rows::One),
                (&rows[cut_rows..], Rows::One),
            ];
            let mut bufs = Buffers::default();
            let le = f64::to_le_bytes;
            let a = eight_byte_column(&descr, counted.into_iter(), le, None, &mut bufs).unwrap();
            let b = eight_byte_column(&descr, one_each.into_iter(), le, None, &mut bufs).unwrap();
            assert_eq!(a.close.rows_written, rows.len() as u64);
            assert_eq!(chunk_bytes(a), chunk_bytes(b));
        }
    }
}
