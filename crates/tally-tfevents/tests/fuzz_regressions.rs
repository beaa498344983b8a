//! Inputs the fuzz targets (`fuzz/`) found wrong, each pinned as the smallest case.

use prost::Message;
use tally_tfevents::proto::{event, summary, Summary};
use tally_tfevents::{encode_scalar_event, Event};

fn prost_bytes(step: i64, wall_time: f64, scalars: &[(&str, f64)]) -> Vec<u8> {
    Event {
        wall_time,
        step,
        what: Some(event::What::Summary(Summary {
            value: scalars
                .iter()
                .map(|(tag, v)| summary::Value {
                    tag: (*tag).to_owned(),
                    value: Some(summary::value::Value::SimpleValue(*v as f32)),
                    ..Default::default()
                })
                .collect(),
        })),
    }
    .encode_to_vec()
}

/// Fuzz target `scalar`: an empty tag is proto3's default string, which prost leaves out; the
/// hand encoder wrote it as a zero-length field, so its bytes were not prost's.
#[test]
fn scalar_encoder_writes_an_empty_tag_as_prost_does() {
    let scalars = [("", 1.0), ("Loss/critic", 2.0), ("", 0.0)];
    let mut ours = Vec::new();
    encode_scalar_event(3, 1.5, &scalars, &mut ours);
    assert_eq!(ours, prost_bytes(3, 1.5, &scalars));
}
