//! TFRecord framing: the record reader over arbitrary bytes, read whole and as a growing file.

use std::cell::RefCell;
use std::io::{self, Read};
use std::rc::Rc;

use tally_tfevents::{masked_crc32c, OnCorruption, TfRecordReader};

/// Rewrites the crcs of every record whose framing fits in `data`, so mutations reach the
/// reader's length and truncation logic instead of all dying at the first crc check.
pub(crate) fn fix_crcs(data: &mut [u8]) {
    let mut pos = 0usize;
    while pos + 12 <= data.len() {
        let len = u64::from_le_bytes(data[pos..pos + 8].try_into().unwrap());
        let crc = masked_crc32c(&data[pos..pos + 8]);
        data[pos + 8..pos + 12].copy_from_slice(&crc.to_le_bytes());
        let start = pos + 12;
        let Some(end) = usize::try_from(len).ok().and_then(|l| start.checked_add(l)) else {
            return;
        };
        if end.checked_add(4).is_none_or(|e| e > data.len()) {
            return;
        }
        let crc = masked_crc32c(&data[start..end]);
        data[end..end + 4].copy_from_slice(&crc.to_le_bytes());
        pos = end + 4;
    }
}

/// What one `read_record` call gave: a record (offset, data) or an error message.
#[derive(Debug, PartialEq)]
enum Outcome {
    Record(u64, Vec<u8>),
    Error(String, bool),
}

/// A file another process is still appending to: reads return what was written so far.
#[derive(Clone)]
struct Growing {
    written: Rc<RefCell<Vec<u8>>>,
    pos: usize,
}

impl Read for Growing {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let written = self.written.borrow();
        let n = buf.len().min(written.len() - self.pos);
        buf[..n].copy_from_slice(&written[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Reads until "no complete record yet" or lost framing, appending each outcome to `out`;
/// returns whether framing was lost.
fn drain<R: Read>(
    reader: &mut TfRecordReader<R>,
    input_len: usize,
    out: &mut Vec<Outcome>,
) -> bool {
    // Each call consumes at least one 16-byte record or ends: more calls than this is a loop.
    for _ in 0..input_len / 16 + 2 {
        match reader.read_record() {
            Ok(Some(r)) => {
                let end = r.offset + 16 + r.data.len() as u64;
                assert!(end <= input_len as u64, "record past the end of the input");
                out.push(Outcome::Record(r.offset, r.data.to_vec()));
            }
            Ok(None) => return false,
            Err(e) => {
                let lost = e.corruption().is_some_and(|k| k.loses_framing());
                let message = e.to_string();
                out.push(Outcome::Error(message.clone(), lost));
                if lost {
                    // Lost framing is final: the same error again, nothing read further.
                    let again = reader.read_record().map(|_| ()).unwrap_err().to_string();
                    assert_eq!(
                        again, message,
                        "lost framing must be reported again, unchanged"
                    );
                    return true;
                }
            }
        }
    }
    panic!(
        "the reader neither ended nor progressed in {} calls",
        input_len / 16 + 2
    )
}

/// Reads `data` whole with `policy`.
fn read_whole(data: &[u8], policy: OnCorruption) -> (Vec<Outcome>, bool, u64, usize) {
    let mut reader = TfRecordReader::new(data).with_on_corruption(policy);
    let mut out = Vec::new();
    let lost = drain(&mut reader, data.len(), &mut out);
    if !lost {
        assert_eq!(
            reader.position() + reader.pending_bytes() as u64,
            data.len() as u64,
            "every byte is either consumed or pending"
        );
    }
    (out, lost, reader.position(), reader.pending_bytes())
}

/// Fuzz target `tfrecord`: byte 0 chooses whether crcs are fixed and how the file grows.
pub fn tfrecord(input: &[u8]) {
    let Some((&mode, rest)) = input.split_first() else {
        return;
    };
    let mut data = rest.to_vec();
    if mode & 1 == 1 {
        fix_crcs(&mut data);
    }
    let whole = read_whole(&data, OnCorruption::Error);

    // Tailing: the same bytes appended in chunks, reading after each append, end the same way.
    let chunk = usize::from(mode >> 1) + 1;
    let written = Rc::new(RefCell::new(Vec::new()));
    let mut reader = TfRecordReader::new(Growing {
        written: Rc::clone(&written),
        pos: 0,
    });
    let mut tailed = Vec::new();
    let mut lost = false;
    for piece in data.chunks(chunk) {
        written.borrow_mut().extend_from_slice(piece);
        if drain(&mut reader, data.len(), &mut tailed) {
            lost = true;
            break;
        }
    }
    assert_eq!(tailed, whole.0, "a growing file reads as the whole file");
    assert_eq!(lost, whole.1);
    if !lost {
        assert_eq!(
            (reader.position(), reader.pending_bytes()),
            (whole.2, whole.3)
        );
    }

    // Skipping bad records returns every good one the error policy returns, in order.
    let (skipped, skip_lost, _, _) = read_whole(&data, OnCorruption::Skip);
    let good = |o: &Vec<Outcome>| -> Vec<u64> {
        o.iter()
            .filter_map(|x| match x {
                Outcome::Record(off, _) => Some(*off),
                Outcome::Error(..) => None,
            })
            .collect()
    };
    assert_eq!(good(&skipped), good(&whole.0));
    assert_eq!(skip_lost, whole.1);
}
