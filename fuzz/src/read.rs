//! The reader behind `tally.read`: event files in a run tree read into columns.

use std::path::PathBuf;

use tally_read::columns::{read_all, Dictionary, ReadOptions};
use tally_schema::legacy::glob_match;
use tally_tfevents::{Damage, ScalarReader};

use crate::framing::fix_crcs;

/// Files in the input are separated by this; each starts with a flags byte.
const FILE_SEPARATOR: &[u8] = b"\n--\n";

/// The dictionary's strings, checking its Arrow layout on the way.
fn strings(d: &Dictionary) -> Vec<String> {
    assert_eq!(d.offsets.first(), Some(&0));
    assert_eq!(*d.offsets.last().unwrap() as usize, d.bytes.len());
    d.offsets
        .windows(2)
        .map(|w| {
            assert!(w[0] <= w[1], "offsets go backwards");
            String::from_utf8(d.bytes[w[0] as usize..w[1] as usize].to_vec())
                .expect("a dictionary entry is UTF-8")
        })
        .collect()
}

/// Fuzz target `read`: the first line is a comma-separated tag glob list (none when the input
/// has no newline); then event files, each a flags byte (bit 0: fix its crcs, bit 1: in a
/// second run directory) and its bytes.
pub fn read(input: &[u8]) {
    let (globs, files) = match input.iter().position(|&b| b == b'\n') {
        Some(i) => {
            let line = String::from_utf8_lossy(&input[..i]);
            let globs: Vec<String> = line.split(',').map(str::to_owned).collect();
            (Some(globs), &input[i + 1..])
        }
        None => (None, input),
    };
    let dir = tempfile::tempdir().unwrap();
    let mut expected_rows = Some(0usize);
    let mut written = 0;
    for (i, file) in split(files, FILE_SEPARATOR).into_iter().enumerate() {
        let Some((&flags, bytes)) = file.split_first() else {
            continue;
        };
        let mut bytes = bytes.to_vec();
        if flags & 1 == 1 {
            fix_crcs(&mut bytes);
        }
        let run = if flags & 2 == 2 {
            dir.path().join("b")
        } else {
            dir.path().to_owned()
        };
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join(format!("events.out.tfevents.{i}.host")), &bytes).unwrap();
        written += 1;
        // What the reader under `tally.read` gives for this file alone.
        expected_rows = match (
            expected_rows,
            ScalarReader::new(bytes.as_slice()).read_to_end(),
        ) {
            (Some(n), Ok(scalars)) => Some(
                n + scalars
                    .iter()
                    .filter(|s| {
                        globs
                            .as_ref()
                            .is_none_or(|g| g.iter().any(|g| glob_match(g, &s.tag)))
                    })
                    .count(),
            ),
            _ => None,
        };
    }

    let inputs = [dir.path().to_owned()];
    let result = read_all(&inputs, globs.as_deref(), ReadOptions::default());
    if written == 0 {
        let message = result
            .err()
            .expect("a directory without event files is an error");
        assert!(
            message.contains("no events.out.tfevents.* file"),
            "{message}"
        );
        return;
    }
    match result {
        Ok(c) => {
            // A purge marker drops an earlier file's points (all of a dropped event's, whatever
            // the globs), and says how many.
            let purged: usize = c
                .damage
                .iter()
                .map(|d| match d {
                    Damage::Purged { points, .. } => *points as usize,
                    _ => 0,
                })
                .sum();
            if globs.is_none() || purged == 0 {
                assert_eq!(
                    Some(c.rows() + purged),
                    expected_rows,
                    "rows differ from the scalar reader's"
                );
            } else {
                assert!(Some(c.rows()) <= expected_rows, "more rows than written");
            }
            let runs = strings(&c.runs);
            let tags = strings(&c.tags);
            assert_eq!(runs.len(), c.run_dirs.len());
            for chunk in &c.chunks {
                let rows = chunk.rows();
                for len in [
                    chunk.run_codes.len(),
                    chunk.tag_codes.len(),
                    chunk.wall_time.len(),
                    chunk.value.len(),
                ] {
                    assert_eq!(len, rows, "columns of different lengths");
                }
                assert!(chunk
                    .run_codes
                    .iter()
                    .all(|&r| r >= 0 && (r as usize) < runs.len()));
                assert!(chunk
                    .tag_codes
                    .iter()
                    .all(|&t| t >= 0 && (t as usize) < tags.len()));
            }
            if let Some(globs) = &globs {
                assert!(tags.iter().all(|t| globs.iter().any(|g| glob_match(g, t))));
            }
            let dirs: Vec<PathBuf> = c
                .run_dirs
                .iter()
                .map(|d| d.canonicalize().unwrap())
                .collect();
            assert!(dirs
                .iter()
                .all(|d| d.starts_with(dir.path().canonicalize().unwrap())));
        }
        Err(message) => {
            assert_eq!(
                expected_rows.map(|_| ()),
                None,
                "read failed on readable files: {message}"
            );
            assert!(
                message.contains("events.out.tfevents."),
                "error names no file: {message}"
            );
        }
    }
}

/// `data` cut at every occurrence of `sep`.
fn split<'a>(mut data: &'a [u8], sep: &[u8]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    while let Some(i) = data.windows(sep.len()).position(|w| w == sep) {
        out.push(&data[..i]);
        data = &data[i + sep.len()..];
    }
    out.push(data);
    out
}
