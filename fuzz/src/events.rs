//! Event decoding and the scalar view: arbitrary protobuf payloads in well-framed records, and
//! the hand-written scalar encoder against prost.

use prost::Message;
use tally_tfevents::proto::{event, summary, Summary};
use tally_tfevents::{
    encode_scalar_event, into_scalars, scalars_of, CorruptionKind, Event, EventReader,
    OnCorruption, RecordWriter, ScalarEvent,
};

/// Splits `input` into payloads, each a u16 LE length then that many bytes (the last one
/// takes what is left).
fn payloads(mut input: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while input.len() >= 2 {
        let len = usize::from(u16::from_le_bytes([input[0], input[1]]));
        let rest = &input[2..];
        let (payload, tail) = rest.split_at(len.min(rest.len()));
        out.push(payload);
        input = tail;
    }
    out
}

/// Two decoded events are the same when they re-encode to the same bytes (NaN != NaN).
fn same(a: &Event, b: &Event) -> bool {
    a.encode_to_vec() == b.encode_to_vec()
}

/// Fuzz target `event`: every payload framed as a valid record, read back through
/// `EventReader` with both corruption policies; each must come out as prost decodes it alone.
pub fn event(input: &[u8]) {
    let payloads = payloads(input);
    let mut writer = RecordWriter::new(Vec::new());
    for p in &payloads {
        writer.write_record(p).unwrap();
    }
    let file = writer.into_inner();
    let expected: Vec<Option<Event>> = payloads.iter().map(|p| Event::decode(*p).ok()).collect();

    let mut reader = EventReader::new(file.as_slice());
    for want in &expected {
        match (reader.read_event(), want) {
            (Ok(Some(got)), Some(want)) => assert!(same(&got, want), "event changed on reading"),
            (Err(e), None) => assert!(
                matches!(e.corruption(), Some(CorruptionKind::UndecodableEvent(_))),
                "an undecodable payload is reported as such, not as {e}"
            ),
            (got, want) => panic!("read {got:?}, expected {want:?}"),
        }
    }
    assert!(
        matches!(reader.read_event(), Ok(None)),
        "events past the last record"
    );

    let mut skipping = EventReader::new(file.as_slice()).with_on_corruption(OnCorruption::Skip);
    let read = skipping.read_to_end().unwrap();
    let good: Vec<&Event> = expected.iter().flatten().collect();
    assert_eq!(read.len(), good.len());
    assert!(read.iter().zip(&good).all(|(a, b)| same(a, b)));
    assert_eq!(
        skipping.skipped_records(),
        (expected.len() - good.len()) as u64
    );

    // The scalar reader is the event reader plus the scalar view.
    let mut scalars = EventReader::new(file.as_slice())
        .with_on_corruption(OnCorruption::Skip)
        .into_scalars();
    let got = scalars.read_to_end().unwrap();
    let want: Vec<ScalarEvent> = good.iter().flat_map(|e| scalars_of(e)).collect();
    assert_eq!(got.len(), want.len());
    assert!(got.iter().zip(&want).all(|(a, b)| same_scalar(a, b)));
}

fn same_scalar(a: &ScalarEvent, b: &ScalarEvent) -> bool {
    a.tag == b.tag
        && a.step == b.step
        && a.wall_time.to_bits() == b.wall_time.to_bits()
        && a.value.to_bits() == b.value.to_bits()
}

/// Fuzz target `scalar`: the input as one `Event` through both scalar views; then the input
/// as (step, wall time, tags and values) through the hand encoder, which must write prost's
/// bytes and read back as the f32 values.
pub fn scalar(input: &[u8]) {
    if let Ok(event) = Event::decode(input) {
        let borrowed: Vec<ScalarEvent> = scalars_of(&event).collect();
        let owned: Vec<ScalarEvent> = into_scalars(event.clone()).collect();
        assert_eq!(borrowed.len(), owned.len());
        assert!(borrowed.iter().zip(&owned).all(|(a, b)| same_scalar(a, b)));
        if let Some(event::What::Summary(s)) = &event.what {
            assert!(borrowed.len() <= s.value.len());
        } else {
            assert!(borrowed.is_empty());
        }
    }

    if input.len() < 16 {
        return;
    }
    let step = i64::from_le_bytes(input[..8].try_into().unwrap());
    let wall_time = f64::from_le_bytes(input[8..16].try_into().unwrap());
    // Each NUL-separated piece: up to 4 bytes of f32 value, the rest (lossy UTF-8) its tag.
    let pairs: Vec<(String, f64)> = input[16..]
        .split(|&b| b == 0)
        .map(|piece| {
            let (v, tag) = piece.split_at(piece.len().min(4));
            let mut bits = [0u8; 4];
            bits[..v.len()].copy_from_slice(v);
            (
                String::from_utf8_lossy(tag).into_owned(),
                f64::from(f32::from_le_bytes(bits)),
            )
        })
        .collect();
    let borrowed: Vec<(&str, f64)> = pairs.iter().map(|(t, v)| (t.as_str(), *v)).collect();
    let mut ours = Vec::new();
    encode_scalar_event(step, wall_time, &borrowed, &mut ours);
    let reference = Event {
        wall_time,
        step,
        what: Some(event::What::Summary(Summary {
            value: pairs
                .iter()
                .map(|(tag, v)| summary::Value {
                    tag: tag.clone(),
                    value: Some(summary::value::Value::SimpleValue(*v as f32)),
                    ..Default::default()
                })
                .collect(),
        })),
    };
    assert_eq!(
        ours,
        reference.encode_to_vec(),
        "hand encoder differs from prost"
    );
    let back: Vec<ScalarEvent> = scalars_of(&Event::decode(ours.as_slice()).unwrap()).collect();
    assert_eq!(back.len(), pairs.len());
    for (s, (tag, v)) in back.iter().zip(&pairs) {
        assert_eq!(&s.tag, tag);
        assert_eq!(s.step, step);
        // proto3 writes no default value, so a wall time of -0.0 reads back as 0.0.
        assert!(s.wall_time == wall_time || s.wall_time.is_nan() && wall_time.is_nan());
        assert!(s.value.to_bits() == v.to_bits() || s.value.is_nan() && v.is_nan());
    }
}
