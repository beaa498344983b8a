//! A column chunk held as pieces (page headers, and the pages' own buffers by reference) rather
//! than copied into one buffer: the row group writer copies each chunk into the file anyway,
//! so one copy of every output byte is saved, and the memory it took.

use std::io::{self, Read, Write};

use bytes::{Buf, Bytes};
use parquet::errors::ParquetError;
use parquet::file::reader::{ChunkReader, Length};

/// What a page writer writes, as [`Pieces`]: a write of one of the `shared` buffers (a page's
/// data, which a page writer passes on whole) is kept by reference, anything else is copied.
pub(super) struct Splicer {
    shared: Vec<Bytes>,
    pieces: Vec<Bytes>,
    copied: Vec<u8>,
}

impl Splicer {
    pub(super) fn new(shared: Vec<Bytes>) -> Self {
        Splicer {
            shared,
            pieces: Vec::new(),
            copied: Vec::new(),
        }
    }

    /// Ends the copied piece being gathered.
    fn cut(&mut self) {
        if !self.copied.is_empty() {
            self.pieces.push(Bytes::copy_from_slice(&self.copied));
            self.copied.clear();
        }
    }

    pub(super) fn finish(mut self) -> Pieces {
        self.cut();
        Pieces::new(self.pieces)
    }
}

impl Write for Splicer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let same = |b: &&Bytes| b.as_ptr() == buf.as_ptr() && b.len() == buf.len();
        match self.shared.iter().find(same) {
            Some(b) if !buf.is_empty() => {
                let b = b.clone();
                self.cut();
                self.pieces.push(b);
            }
            _ => self.copied.extend_from_slice(buf),
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A column chunk's bytes, in order, read as one stream from any offset.
pub(super) struct Pieces {
    pieces: Vec<Bytes>,
    len: u64,
}

impl Pieces {
    fn new(pieces: Vec<Bytes>) -> Self {
        let len = pieces.iter().map(|p| p.len() as u64).sum();
        Pieces { pieces, len }
    }

    /// The pieces from byte `start` on.
    fn from(&self, start: u64) -> Result<Vec<Bytes>, ParquetError> {
        if start > self.len {
            return Err(ParquetError::EOF(format!(
                "offset {start} is past the chunk's {} bytes",
                self.len
            )));
        }
        let mut skip = start as usize;
        let mut out = Vec::with_capacity(self.pieces.len());
        for p in &self.pieces {
            if skip >= p.len() {
                skip -= p.len();
                continue;
            }
            out.push(p.slice(skip..));
            skip = 0;
        }
        Ok(out)
    }
}

impl Length for Pieces {
    fn len(&self) -> u64 {
        self.len
    }
}

impl ChunkReader for Pieces {
    type T = PiecesRead;

    fn get_read(&self, start: u64) -> Result<PiecesRead, ParquetError> {
        let mut rest = self.from(start)?;
        rest.reverse();
        Ok(PiecesRead { rest })
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes, ParquetError> {
        let mut read = self.get_read(start)?;
        let mut out = vec![0; length];
        read.read_exact(&mut out).map_err(|_| {
            ParquetError::EOF(format!(
                "{length} bytes at offset {start} are past the chunk's {} bytes",
                self.len
            ))
        })?;
        Ok(Bytes::from(out))
    }
}

/// [`Pieces`] read in order.
pub(super) struct PiecesRead {
    /// The pieces still to read, the next one last.
    rest: Vec<Bytes>,
}

impl Read for PiecesRead {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.rest.last().is_some_and(Bytes::is_empty) {
            self.rest.pop();
        }
        let Some(piece) = self.rest.last_mut() else {
            return Ok(0);
        };
        let n = out.len().min(piece.len());
        out[..n].copy_from_slice(&piece[..n]);
        piece.advance(n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_buffers_are_kept_by_reference_and_the_rest_copied() {
        let data = Bytes::from((0..=255u8).cycle().take(20_000).collect::<Vec<u8>>());
        let mut s = Splicer::new(vec![data.clone()]);
        s.write_all(b"head").unwrap();
        s.write_all(b"er").unwrap();
        s.write_all(&data).unwrap();
        // Equal bytes elsewhere are not the shared buffer: copied.
        s.write_all(&data.to_vec()[..10]).unwrap();
        let pieces = s.finish();
        assert_eq!(pieces.pieces.len(), 3);
        assert_eq!(pieces.pieces[0], &b"header"[..]);
        assert_eq!(pieces.pieces[1].as_ptr(), data.as_ptr());
        assert_eq!(pieces.pieces[2], data.slice(..10));
    }

    #[test]
    fn pieces_read_as_one_stream_from_any_offset() {
        let whole: Vec<u8> = (0..100u8).collect();
        let pieces = Pieces::new(vec![
            Bytes::copy_from_slice(&whole[..7]),
            Bytes::new(),
            Bytes::copy_from_slice(&whole[7..60]),
            Bytes::copy_from_slice(&whole[60..]),
        ]);
        assert_eq!(pieces.len(), 100);
        for start in [0, 1, 6, 7, 8, 59, 60, 99, 100] {
            let mut got = Vec::new();
            // A small buffer, so reads stop inside and at the ends of pieces.
            let mut read = pieces.get_read(start).unwrap();
            let mut buf = [0u8; 5];
            loop {
                let n = read.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
            assert_eq!(got, &whole[start as usize..], "from {start}");
        }
        assert_eq!(pieces.get_bytes(5, 60).unwrap(), &whole[5..65]);
        assert!(pieces.get_read(101).is_err());
        assert!(pieces.get_bytes(50, 51).is_err());
    }
}
