//! `scalars_in_parallel` against the sequential `ScalarReader`: the same scalars in the same
//! order whenever it answers, and no answer (so the caller reads sequentially and reports) for a
//! damaged file or when a thread's guessed record boundary is not the file's.

use std::path::Path;

use prost::Message;
use tally_tfevents::proto::{event, summary, Event, Summary};
use tally_tfevents::{
    encode_scalar_event, open_event_file, scalars_in_parallel, scalars_in_parallel_window,
    RecordWriter, ScalarEvent,
};

fn sequential(path: &Path) -> Vec<ScalarEvent> {
    open_event_file(path)
        .unwrap()
        .into_scalars()
        .read_to_end()
        .unwrap()
}

fn parallel(path: &Path, threads: usize) -> Option<Vec<ScalarEvent>> {
    let parts = scalars_in_parallel(
        path,
        threads,
        |_| Vec::new(),
        |v: &mut Vec<ScalarEvent>, s| v.push(s.to_scalar_event()),
    )?;
    Some(parts.into_iter().flatten().collect())
}

/// A framed record of `data`, as it would sit in a file.
fn framed(data: &[u8]) -> Vec<u8> {
    let mut w = RecordWriter::new(Vec::new());
    w.write_record(data).unwrap();
    w.into_inner()
}

/// Events of every kind the readers meet: a file version, one scalar per event, ten per event,
/// histograms; every 50th event carries bytes that are themselves a whole valid record (an
/// image whose bytes look like framing), to lure a thread's boundary guess.
fn write_file(path: &Path, events: i64) {
    write_file_with_lures(path, events, 8);
}

fn write_file_with_lures(path: &Path, events: i64, lure_copies: usize) {
    let mut w = RecordWriter::new(Vec::new());
    w.write_message(&Event {
        wall_time: 1.0,
        what: Some(event::What::FileVersion("brain.Event:2".into())),
        ..Default::default()
    })
    .unwrap();
    let tags: Vec<String> = (0..10).map(|i| format!("g{}/tag{i}", i % 3)).collect();
    let mut buf = Vec::new();
    for step in 0..events {
        buf.clear();
        let wall = 1.7e9 + step as f64;
        if step % 3 == 0 {
            let scalars: Vec<(&str, f64)> = tags
                .iter()
                .enumerate()
                .map(|(i, t)| (t.as_str(), (step * 10 + i as i64) as f64))
                .collect();
            encode_scalar_event(step, wall, &scalars, &mut buf);
        } else {
            encode_scalar_event(step, wall, &[("loss", step as f64 * 0.5)], &mut buf);
        }
        w.write_record(&buf).unwrap();
        if step % 50 == 0 {
            let mut lure = Vec::new();
            encode_scalar_event(-1, -1.0, &[("lure", -1.0)], &mut lure);
            let image = framed(&framed(&lure)).repeat(lure_copies);
            let e = Event {
                step,
                wall_time: wall,
                what: Some(event::What::Summary(Summary {
                    value: vec![summary::Value {
                        tag: "img".into(),
                        value: Some(summary::value::Value::Image(image)),
                        ..Default::default()
                    }],
                })),
            };
            w.write_record(&e.encode_to_vec()).unwrap();
        }
    }
    std::fs::write(path, w.into_inner()).unwrap();
}

#[test]
fn any_thread_count_gives_the_sequential_scalars() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.out.tfevents.1");
    write_file(&path, 20_000);
    let want = sequential(&path);
    assert!(want.len() > 70_000);
    assert!(want.iter().all(|s| s.tag != "lure"));
    // A range misled by a lure is read again from the end of the range before it: every
    // split answers.
    for threads in [1, 2, 3, 4, 7, 16, 61] {
        assert_eq!(
            parallel(&path, threads),
            Some(want.clone()),
            "{threads} threads"
        );
    }
}

#[test]
fn threads_starting_inside_records_that_look_like_framing_never_change_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.out.tfevents.1");
    // Most of this file is images made of valid-looking records.
    write_file_with_lures(&path, 1500, 1500);
    let want = sequential(&path);
    for threads in 2..24 {
        assert_eq!(
            parallel(&path, threads),
            Some(want.clone()),
            "{threads} threads"
        );
    }
}

#[test]
fn a_tiny_file_with_more_threads_than_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.out.tfevents.1");
    write_file(&path, 2);
    let want = sequential(&path);
    for threads in [2, 5, 400] {
        if let Some(got) = parallel(&path, threads) {
            assert_eq!(got, want, "{threads} threads");
        }
    }
    let empty = dir.path().join("events.out.tfevents.2");
    std::fs::write(&empty, b"").unwrap();
    assert_eq!(parallel(&empty, 2), Some(vec![]));
}

#[test]
fn damage_anywhere_is_left_to_the_sequential_reader() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.out.tfevents.1");
    write_file(&path, 1000);
    let good = std::fs::read(&path).unwrap();
    // A truncated tail.
    std::fs::write(&path, &good[..good.len() - 3]).unwrap();
    for threads in [1, 2, 4] {
        assert_eq!(
            parallel(&path, threads),
            None,
            "truncated, {threads} threads"
        );
    }
    // A flipped byte in the first, middle and last records' data.
    for at in [20, good.len() / 2, good.len() - 6] {
        let mut bad = good.clone();
        bad[at] ^= 0x40;
        std::fs::write(&path, &bad).unwrap();
        for threads in [1, 2, 4] {
            assert_eq!(
                parallel(&path, threads),
                None,
                "flip at {at}, {threads} threads"
            );
        }
    }
}

/// Windows chained from the start (each starting where the last one ended) read the whole
/// file: the same scalars as one sequential read, whatever the window and thread count, lures
/// included (a range misled by one is read again from the range before it).
#[test]
fn chained_windows_give_the_sequential_scalars() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.out.tfevents.1");
    write_file_with_lures(&path, 20_000, 3);
    let want = sequential(&path);
    let len = std::fs::metadata(&path).unwrap().len();
    for (span, threads) in [(1, 1), (100_000, 2), (300_000, 3), (1 << 20, 2), (len, 4)] {
        let (mut got, mut at, mut windows) = (Vec::new(), 0, 0);
        while at < len {
            let (parts, end) = scalars_in_parallel_window(
                &path,
                at,
                span,
                threads,
                |_| Vec::new(),
                |v: &mut Vec<ScalarEvent>, s| v.push(s.to_scalar_event()),
            )
            .unwrap_or_else(|| panic!("window at {at}, span {span}, {threads} threads"));
            assert!(end > at, "window at {at} read nothing");
            got.extend(parts.into_iter().flatten());
            at = end;
            windows += 1;
        }
        assert_eq!(at, len);
        assert!(
            span >= len || windows > 1,
            "one window of {span} bytes read it all"
        );
        assert_eq!(got, want, "span {span}, {threads} threads");
    }
}
