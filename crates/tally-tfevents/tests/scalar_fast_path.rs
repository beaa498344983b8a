//! The scalar fast path against prost: whenever `WireScalars::decode` accepts a record, prost
//! decodes the same record to the same scalars; the readers give the same results either way.

use proptest::prelude::*;
use prost::Message;
use tally_tfevents::proto::{
    event, summary, summary_metadata::PluginData, tensor_shape_proto::Dim, DataClass, DataType,
    HistogramProto, Summary, SummaryMetadata, TensorProto, TensorShapeProto,
};
use tally_tfevents::{
    encode_scalar_event, into_scalars, Event, EventReader, OnCorruption, RecordWriter, ScalarEvent,
    WireScalars,
};

/// The fast path's scalars of `data`, or `None` when it hands the record to prost.
fn fast(data: &[u8]) -> Option<Vec<ScalarEvent>> {
    let mut w = WireScalars::default();
    if !w.decode(data) {
        return None;
    }
    Some(
        (0..w.len())
            .map(|i| {
                let (tag, value) = w.get(i).unwrap();
                ScalarEvent {
                    tag: tag.to_owned(),
                    step: w.step,
                    wall_time: w.wall_time,
                    value,
                }
            })
            .collect(),
    )
}

fn general(data: &[u8]) -> Result<Vec<ScalarEvent>, prost::DecodeError> {
    Ok(into_scalars(Event::decode(data)?).collect())
}

/// Equal as bits, so NaN payloads and signed zeros count.
fn same(a: &[ScalarEvent], b: &[ScalarEvent]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.tag == y.tag
                && x.step == y.step
                && x.wall_time.to_bits() == y.wall_time.to_bits()
                && x.value.to_bits() == y.value.to_bits()
        })
}

fn simple(tag: &str, v: f32) -> summary::Value {
    summary::Value {
        tag: tag.into(),
        value: Some(summary::value::Value::SimpleValue(v)),
        ..Default::default()
    }
}

/// A tensor-encoded scalar as torch's and tensorboardX's `new_style` writers make it.
fn tensor_scalar(tag: &str, v: f32, plugin: &str, dims: &[i64], content: bool) -> summary::Value {
    summary::Value {
        tag: tag.into(),
        metadata: Some(SummaryMetadata {
            plugin_data: Some(PluginData {
                plugin_name: plugin.into(),
                content: vec![],
            }),
            ..Default::default()
        }),
        value: Some(summary::value::Value::Tensor(Box::new(TensorProto {
            dtype: DataType::DtFloat as i32,
            tensor_shape: Some(TensorShapeProto {
                dim: dims
                    .iter()
                    .map(|&size| Dim {
                        size,
                        name: String::new(),
                    })
                    .collect(),
                unknown_rank: false,
            }),
            float_val: if content { vec![] } else { vec![v] },
            tensor_content: if content {
                v.to_le_bytes().to_vec()
            } else {
                vec![]
            },
            ..Default::default()
        }))),
        ..Default::default()
    }
}

fn event_of(step: i64, wall_time: f64, value: Vec<summary::Value>) -> Event {
    Event {
        wall_time,
        step,
        what: Some(event::What::Summary(Summary { value })),
    }
}

#[test]
fn the_fast_path_takes_what_tally_tensorboardx_and_torch_write_for_scalars() {
    // tally's own encoder (several tags per event).
    let mut tally = Vec::new();
    encode_scalar_event(7, 1.7e9, &[("Loss/critic", 0.5), ("", -1.0)], &mut tally);
    // tensorboardX / torch `add_scalar`: one simple_value per event.
    let tbx = event_of(3, 2.5, vec![simple("loss", 1.25)]).encode_to_vec();
    // `new_style=True`: a rank-0 float tensor of the scalars plugin, float_val or content.
    let tensor = event_of(4, 3.5, vec![tensor_scalar("t", 2.0, "scalars", &[], false)]);
    let content = event_of(5, 4.5, vec![tensor_scalar("t", -3.0, "", &[], true)]);
    for (name, data) in [
        ("tally", tally),
        ("simple_value", tbx),
        ("tensor float_val", tensor.encode_to_vec()),
        ("tensor content", content.encode_to_vec()),
    ] {
        let got = fast(&data).unwrap_or_else(|| panic!("{name}: fast path declined"));
        assert!(same(&got, &general(&data).unwrap()), "{name}");
        assert!(!got.is_empty(), "{name}");
    }
}

#[test]
fn the_fast_path_hands_everything_else_to_prost() {
    let histo = summary::Value {
        tag: "h".into(),
        value: Some(summary::value::Value::Histo(
            HistogramProto::default().encode_to_vec(),
        )),
        ..Default::default()
    };
    let cases = [
        (
            "file_version",
            Event {
                what: Some(event::What::FileVersion("brain.Event:2".into())),
                ..Default::default()
            },
        ),
        (
            "histogram beside a scalar",
            event_of(1, 1.0, vec![simple("a", 1.0), histo]),
        ),
        (
            "pr_curves tensor",
            event_of(
                1,
                1.0,
                vec![tensor_scalar("p", 1.0, "pr_curves", &[], false)],
            ),
        ),
        (
            "tensor with dims",
            event_of(
                1,
                1.0,
                vec![tensor_scalar("d", 1.0, "scalars", &[1], false)],
            ),
        ),
    ];
    for (name, e) in cases {
        let data = e.encode_to_vec();
        assert!(
            fast(&data).is_none(),
            "{name}: the fast path should decline"
        );
    }
    // A tag that is not UTF-8: prost refuses the event, so the fast path must too.
    let mut bad = Vec::new();
    encode_scalar_event(1, 1.0, &[("ab", 1.0)], &mut bad);
    let at = bad.windows(2).position(|w| w == b"ab").unwrap();
    bad[at] = 0xff;
    assert!(Event::decode(bad.as_slice()).is_err());
    assert!(fast(&bad).is_none());
}

fn arb_value() -> impl Strategy<Value = summary::Value> {
    let tag = "[a-z/_]{0,12}";
    prop_oneof![
        (tag, any::<f32>()).prop_map(|(t, v)| simple(&t, v)),
        (
            tag,
            any::<f32>(),
            prop::sample::select(vec!["scalars", "", "pr_curves", "hparams"]),
            prop::collection::vec(-1i64..3, 0..2),
            any::<bool>(),
        )
            .prop_map(|(t, v, p, dims, c)| tensor_scalar(&t, v, p, &dims, c)),
        (tag, any::<f32>(), any::<i32>()).prop_map(|(t, v, class)| {
            let mut value = tensor_scalar(&t, v, "other", &[], false);
            value.metadata.as_mut().unwrap().data_class = if class % 2 == 0 {
                DataClass::Scalar as i32
            } else {
                class
            };
            value
        }),
        (tag, any::<f64>()).prop_map(|(t, v)| summary::Value {
            tag: t,
            value: Some(summary::value::Value::Tensor(Box::new(TensorProto {
                dtype: DataType::DtDouble as i32,
                double_val: vec![v],
                ..Default::default()
            }))),
            ..Default::default()
        }),
        tag.prop_map(|t| summary::Value {
            tag: t,
            value: Some(summary::value::Value::Image(vec![1, 2])),
            ..Default::default()
        }),
    ]
}

fn arb_event_bytes() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<i64>(),
        any::<f64>(),
        prop::collection::vec(arb_value(), 0..5),
        // Raw edits: a byte flip, a cut, a duplicated prefix (repeated fields).
        prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
        prop::option::of(any::<prop::sample::Index>()),
        any::<bool>(),
    )
        .prop_map(|(step, wall, values, flips, cut, dup)| {
            let mut data = event_of(step, wall, values).encode_to_vec();
            if dup {
                let again = data.clone();
                data.extend_from_slice(&again);
            }
            if !data.is_empty() {
                for (at, byte) in flips {
                    let i = at.index(data.len());
                    data[i] = byte;
                }
                if let Some(at) = cut {
                    data.truncate(at.index(data.len() + 1));
                }
            }
            data
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn whatever_the_fast_path_accepts_prost_decodes_to_the_same_scalars(data in arb_event_bytes()) {
        if let Some(got) = fast(&data) {
            let want = general(&data);
            prop_assert!(want.is_ok(), "fast path accepted what prost refuses: {want:?}");
            prop_assert!(same(&got, &want.unwrap()), "fast {got:?} vs prost {:?}", general(&data));
        }
    }

    #[test]
    fn scalar_reader_matches_event_reader_plus_scalar_view(
        events in prop::collection::vec(arb_event_bytes(), 0..12),
        skip in any::<bool>(),
    ) {
        let mut records = RecordWriter::new(Vec::new());
        for e in &events {
            records.write_record(e).unwrap();
        }
        let bytes = records.into_inner();
        let policy = if skip { OnCorruption::Skip } else { OnCorruption::Error };
        // General path: every record through prost.
        let mut events_reader = EventReader::new(bytes.as_slice()).with_on_corruption(policy);
        let mut want = Vec::new();
        let want_end = loop {
            match events_reader.read_event() {
                Ok(Some(e)) => want.extend(into_scalars(e)),
                Ok(None) => break None,
                Err(e) => break Some(e.to_string()),
            }
        };
        // Fast path, owned and borrowed.
        let mut scalars = EventReader::new(bytes.as_slice()).with_on_corruption(policy).into_scalars();
        let mut got = Vec::new();
        let got_end = loop {
            match scalars.read_scalar() {
                Ok(Some(s)) => got.push(s),
                Ok(None) => break None,
                Err(e) => break Some(e.to_string()),
            }
        };
        prop_assert_eq!(&got_end, &want_end);
        prop_assert!(same(&got, &want));
        prop_assert_eq!(scalars.skipped_records(), events_reader.skipped_records());
        let mut borrowed = EventReader::new(bytes.as_slice()).with_on_corruption(policy).into_scalars();
        let mut got_ref = Vec::new();
        while let Ok(true) = borrowed.advance() {
            got_ref.push(borrowed.current().unwrap().to_scalar_event());
        }
        prop_assert!(same(&got_ref, &want));
    }
}
