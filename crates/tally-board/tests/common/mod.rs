//! Event files the board's tests write: scalar events at wall time `1000 + step`.

use std::io::Write;
use std::path::Path;
use tally_tfevents::{encode_scalar_event, RecordWriter};

/// The records of one scalar event per `(step, scalars)`.
pub fn records(steps: impl IntoIterator<Item = (i64, Vec<(&'static str, f64)>)>) -> Vec<u8> {
    let mut w = RecordWriter::new(Vec::new());
    for (step, scalars) in steps {
        let mut buf = Vec::new();
        encode_scalar_event(step, 1000.0 + step as f64, &scalars, &mut buf);
        w.write_record(&buf).unwrap();
    }
    w.into_inner()
}

/// `bytes` appended to `path` (made, with its directory, when missing).
pub fn append(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(bytes).unwrap();
}

/// [`records`] appended to `path`.
#[allow(dead_code)] // not every test file writes whole runs this way
pub fn events(path: &Path, steps: impl IntoIterator<Item = (i64, Vec<(&'static str, f64)>)>) {
    append(path, &records(steps));
}
