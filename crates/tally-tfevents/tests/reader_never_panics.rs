//! Property tests: no input bytes, random or a damaged valid file, make the readers panic, loop forever, misreport an intact prefix or its truncated tail.

use proptest::prelude::*;
use tally_tfevents::{Damage, EventReader, OnCorruption, RecordWriter, ScalarReader};

/// Drains a reader; returns how many events it yielded and whether it ended in an error.
/// Bounded so a reader that kept returning events without consuming input would fail.
fn drain(bytes: &[u8], policy: OnCorruption) -> (usize, bool) {
    let mut r = EventReader::new(bytes).with_on_corruption(policy);
    let mut events = 0;
    for _ in 0..=bytes.len() + 1 {
        match r.read_event() {
            Ok(Some(_)) => events += 1,
            Ok(None) => return (events, false),
            // Under Error a data error is resumable; keep going to exercise the paths after it.
            Err(e) if e.corruption().is_some_and(|k| k.loses_framing()) => return (events, true),
            Err(_) => {}
        }
    }
    panic!("reader did not finish within {} calls", bytes.len() + 2);
}

/// A valid event stream of `steps` scalar steps, as the writer frames it, and the end
/// offset of each record.
fn valid_file(steps: i64) -> (Vec<u8>, Vec<usize>) {
    let mut w = RecordWriter::new(Vec::new());
    let mut buf = Vec::new();
    let mut ends = Vec::new();
    for step in 0..steps {
        buf.clear();
        tally_tfevents::encode_scalar_event(
            step,
            step as f64,
            &[("a", step as f64), ("bb/c", -1.5)],
            &mut buf,
        );
        w.write_record(&buf).unwrap();
        ends.push(w.offset() as usize);
    }
    (w.into_inner(), ends)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        drain(&bytes, OnCorruption::Error);
        drain(&bytes, OnCorruption::Skip);
        let _ = ScalarReader::new(bytes.as_slice()).read_to_end();
    }

    #[test]
    fn arbitrary_payloads_in_valid_framing_never_panic(
        payloads in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..256), 0..8)
    ) {
        let mut w = RecordWriter::new(Vec::new());
        for p in &payloads {
            w.write_record(p).unwrap();
        }
        let bytes = w.into_inner();
        let (_, framing_lost) = drain(&bytes, OnCorruption::Skip);
        prop_assert!(!framing_lost);
        let _ = ScalarReader::new(bytes.as_slice()).read_to_end();
    }

    #[test]
    fn damaged_valid_file_never_panics_and_truncation_keeps_the_complete_prefix(
        steps in 1i64..12,
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 0..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let (valid, ends) = valid_file(steps);

        // Truncation alone: every complete record is read, then end of data, no error.
        let cut_at = cut.index(valid.len() + 1);
        let (events, framing_lost) = drain(&valid[..cut_at], OnCorruption::Error);
        prop_assert!(!framing_lost);
        prop_assert_eq!(events, ends.iter().filter(|&&end| end <= cut_at).count());
        // ...and the reader reports the incomplete record exactly: none at a record boundary.
        let mut r = EventReader::new(&valid[..cut_at]);
        while r.read_event().unwrap().is_some() {}
        let boundary = ends.iter().rev().find(|&&end| end <= cut_at).copied().unwrap_or(0);
        let expected = (boundary < cut_at).then(|| Damage::TruncatedTail {
            path: None,
            offset: boundary as u64,
            bytes: (cut_at - boundary) as u64,
        });
        prop_assert_eq!(r.truncated_tail(), expected);

        // Flipped bits plus truncation: anything may be reported, nothing may panic.
        let mut damaged = valid.clone();
        for (at, mask) in &flips {
            let i = at.index(damaged.len());
            damaged[i] ^= mask;
        }
        damaged.truncate(cut_at);
        let (error_events, _) = drain(&damaged, OnCorruption::Error);
        let (skip_events, _) = drain(&damaged, OnCorruption::Skip);
        prop_assert!(error_events <= steps as usize && skip_events <= steps as usize);
    }
}
