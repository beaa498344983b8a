//! Events around already-serialized summaries and events, so protos built by other
//! libraries reach the file byte for byte (fields tally does not declare included).

use crate::proto::Summary;
use prost::encoding::{double, encode_key, encode_varint, int64, WireType};
use prost::Message;

/// `Event { wall_time, step?, summary }` with `summary` given as its serialized bytes.
pub fn encode_summary_event(step: Option<i64>, wall_time: f64, summary: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(summary.len() + 24);
    double::encode(1, &wall_time, &mut out);
    if let Some(step) = step {
        int64::encode(2, &step, &mut out);
    }
    encode_key(5, WireType::LengthDelimited, &mut out);
    encode_varint(summary.len() as u64, &mut out);
    out.extend_from_slice(summary);
    out
}

/// A serialized event with its `wall_time` and `step` replaced when given: protobuf keeps
/// the last occurrence of a scalar field, so appending them overrides the originals.
pub fn override_event(event: &[u8], step: Option<i64>, wall_time: Option<f64>) -> Vec<u8> {
    let mut out = Vec::with_capacity(event.len() + 20);
    out.extend_from_slice(event);
    if let Some(w) = wall_time {
        double::encode(1, &w, &mut out);
    }
    if let Some(s) = step {
        int64::encode(2, &s, &mut out);
    }
    out
}

/// The serialized `Summary` holding `values`.
pub fn encode_summary(values: Vec<crate::proto::summary::Value>) -> Vec<u8> {
    Summary { value: values }.encode_to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{event, Event};

    #[test]
    fn overrides_take_the_last_value() {
        let e = Event {
            wall_time: 1.0,
            step: 3,
            what: Some(event::What::FileVersion("x".into())),
        };
        let bytes = override_event(&e.encode_to_vec(), Some(7), Some(2.5));
        let back = Event::decode(bytes.as_slice()).unwrap();
        assert_eq!((back.step, back.wall_time), (7, 2.5));
        assert_eq!(back.what, e.what);
    }

    #[test]
    fn summary_event_decodes() {
        let s = encode_summary(vec![]);
        let back = Event::decode(encode_summary_event(Some(4), 9.0, &s).as_slice()).unwrap();
        assert_eq!((back.step, back.wall_time), (4, 9.0));
        assert!(matches!(back.what, Some(event::What::Summary(_))));
    }
}
