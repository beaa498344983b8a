//! The reader's tag ids: every scalar it yields carries its tag's id (`ScalarRef::tag_id`), the
//! same id for the same tag whichever decoder read the record, dense in first-seen order; and
//! the event-at-a-time API (`advance_event`/`event`) yields exactly the scalars `advance` does.

use prost::Message;
use tally_tfevents::proto::{event, summary, HistogramProto, Summary};
use tally_tfevents::{encode_scalar_event, scalars_in_parallel, Event, RecordWriter, ScalarReader};

/// An event holding a histogram beside its scalars: the fast path refuses it, prost reads it.
fn mixed_event(step: i64, scalars: &[(&str, f32)]) -> Vec<u8> {
    let mut value: Vec<summary::Value> = scalars
        .iter()
        .map(|&(tag, v)| summary::Value {
            tag: tag.into(),
            value: Some(summary::value::Value::SimpleValue(v)),
            ..Default::default()
        })
        .collect();
    value.insert(
        1,
        summary::Value {
            tag: "hist".into(),
            value: Some(summary::value::Value::Histo(
                HistogramProto::default().encode_to_vec(),
            )),
            ..Default::default()
        },
    );
    Event {
        wall_time: 1.5,
        step,
        what: Some(event::What::Summary(Summary { value })),
    }
    .encode_to_vec()
}

/// Steps 0..n: fast-path events of tags a, b, c, with every third event a mixed one (b, new
/// tag d, a) that prost decodes.
fn stream(n: i64) -> (Vec<u8>, Vec<(String, i64, f64)>) {
    let mut w = RecordWriter::new(Vec::new());
    let mut expected = Vec::new();
    for step in 0..n {
        if step % 3 == 2 {
            let scalars = [("b", step as f32), ("d", 2.0), ("a", -1.0)];
            w.write_record(&mixed_event(step, &scalars)).unwrap();
            for (tag, v) in scalars {
                expected.push((tag.to_owned(), step, f64::from(v)));
            }
        } else {
            let scalars = [("a", step as f64), ("b", 0.5), ("c", 0.25)];
            let mut buf = Vec::new();
            encode_scalar_event(step, 1.5, &scalars, &mut buf);
            w.write_record(&buf).unwrap();
            for (tag, v) in scalars {
                expected.push((tag.to_owned(), step, v));
            }
        }
    }
    (w.into_inner(), expected)
}

#[test]
fn every_scalar_carries_its_tags_id_whichever_decoder_read_it() {
    let (bytes, expected) = stream(12);
    let mut r = ScalarReader::new(&bytes[..]);
    let mut got = Vec::new();
    let mut ids = Vec::new();
    while r.advance().unwrap() {
        let s = r.current().unwrap();
        got.push((s.tag.to_owned(), s.step, s.value));
        ids.push((
            s.tag.to_owned(),
            s.tag_id.expect("the reader's scalars carry an id"),
        ));
    }
    assert_eq!(got, expected);
    // Dense ids in first-seen order: a b c, then d (first seen in a prost-decoded event).
    for (tag, id) in &ids {
        let want = ["a", "b", "c", "d"].iter().position(|t| t == tag).unwrap();
        assert_eq!(*id, want, "tag {tag}");
    }
    assert_eq!(r.tags().len(), 4);
    assert_eq!(r.tags().name(3), Some("d"));
}

#[test]
fn events_at_a_time_yield_the_same_scalars() {
    let (bytes, expected) = stream(10);
    let mut r = ScalarReader::new(&bytes[..]);
    let mut got = Vec::new();
    while r.advance_event().unwrap() {
        let e = r.event();
        assert!(!e.is_empty(), "only events holding scalars are yielded");
        for &(id, value) in e.scalars() {
            got.push((e.tags().name(id).unwrap().to_owned(), e.step, value));
        }
    }
    assert_eq!(got, expected);
    // Mixing: one scalar, then the rest of its event is skipped by advance_event.
    let mut r = ScalarReader::new(&bytes[..]);
    assert!(r.advance().unwrap());
    assert_eq!(r.current().unwrap().step, 0);
    assert!(r.advance_event().unwrap());
    assert_eq!(r.event().step, 1);
    // advance_event stands on the event's first scalar; advance goes on from there.
    assert_eq!(r.current().unwrap().tag, "a");
    assert!(r.advance().unwrap());
    let s = r.current().unwrap();
    assert_eq!((s.tag, s.step), ("b", 1));
    assert!(r.advance_event().unwrap());
    assert_eq!(r.current().unwrap().step, 2);
}

#[test]
fn the_parallel_reader_passes_ids_of_each_ranges_own_tags() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.out.tfevents.1.x");
    let (bytes, expected) = stream(30_000);
    std::fs::write(&path, &bytes).unwrap();
    let parts = scalars_in_parallel(
        &path,
        2,
        |_| (Vec::new(), Vec::<String>::new()),
        |(rows, names), s| {
            let id = s.tag_id.expect("an id");
            // Each range's ids are dense in its own first-seen order.
            if id == names.len() {
                names.push(s.tag.to_owned());
            }
            assert_eq!(names[id], s.tag);
            rows.push((s.tag.to_owned(), s.step, s.value));
        },
    )
    .expect("an undamaged file reads in parallel");
    assert_eq!(parts.len(), 2);
    let got: Vec<_> = parts.into_iter().flat_map(|(rows, _)| rows).collect();
    assert_eq!(got, expected);
}

#[test]
fn a_refused_record_leaves_no_unused_id() {
    // A summary holding a plain scalar "z", then a field of the invalid wire type 7: the fast
    // path reads "z" before it declines, and prost refuses the record (skipped under Skip).
    let mut summary = Vec::new();
    let value = [&[0x0a, 1, b'z', 0x15][..], &1.0f32.to_le_bytes()].concat();
    summary.extend([0x0a, value.len() as u8]);
    summary.extend(&value);
    summary.extend([0x0f, 0]);
    let mut refused = vec![0x2a, summary.len() as u8];
    refused.extend(&summary);
    assert!(Event::decode(&refused[..]).is_err());
    let mut w = RecordWriter::new(Vec::new());
    w.write_record(&refused).unwrap();
    let mut good = Vec::new();
    encode_scalar_event(1, 0.5, &[("y", 2.0)], &mut good);
    w.write_record(&good).unwrap();
    let bytes = w.into_inner();
    let mut r = tally_tfevents::EventReader::new(&bytes[..])
        .with_on_corruption(tally_tfevents::OnCorruption::Skip)
        .into_scalars();
    assert!(r.advance().unwrap());
    let s = r.current().unwrap();
    assert_eq!((s.tag, s.tag_id), ("y", Some(0)));
    assert!(!r.advance().unwrap());
    assert_eq!(r.skipped_records(), 1);
    assert_eq!(r.tags().len(), 1);
}
