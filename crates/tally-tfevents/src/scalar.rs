//! Scalars: the fast encoder for one step's scalars as an `Event`, and the scalar view that extracts `ScalarEvent`s from decoded events.

use prost::encoding::{encode_varint, encoded_len_varint};

use crate::proto::{
    event, summary, DataClass, DataType, Event, SummaryMetadata, TensorProto, SCALARS_PLUGIN_NAME,
};

/// One point of a scalar time series, as read from an event file.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalarEvent {
    /// The series name.
    pub tag: String,
    /// The step of the event holding the value.
    pub step: i64,
    /// The wall time (seconds since the Unix epoch) of the event holding the value.
    pub wall_time: f64,
    /// The value, widened to f64 (a `simple_value` is an f32 on disk).
    pub value: f64,
}

/// The scalar carried by a summary value, or `None` if it is not a scalar.
///
/// Scalars are a `simple_value`, or a tensor of dtype `DT_FLOAT`, `DT_DOUBLE` or `DT_HALF`
/// holding exactly one element (no dims, or every dim of size 1), taken from
/// `tensor_content` (little-endian) when present, else from `float_val` / `double_val` /
/// `half_val`. A tensor owned by a plugin other than `scalars` is not a scalar unless its
/// metadata says `DATA_CLASS_SCALAR`: other plugins (pr_curves, hparams, ...) store their
/// own data in float tensors, which are not points of a time series.
pub fn scalar_value(value: &summary::Value) -> Option<f64> {
    match value.value.as_ref()? {
        summary::value::Value::SimpleValue(v) => Some(f64::from(*v)),
        summary::value::Value::Tensor(tensor) => {
            if !is_scalar_plugin(value.metadata.as_ref()) {
                return None;
            }
            tensor_scalar(tensor)
        }
        _ => None,
    }
}

/// Whether metadata allows a tensor to be read as a scalar.
fn is_scalar_plugin(metadata: Option<&SummaryMetadata>) -> bool {
    let Some(metadata) = metadata else {
        return true;
    };
    if metadata.data_class == DataClass::Scalar as i32 {
        return true;
    }
    match &metadata.plugin_data {
        None => true,
        Some(plugin) => plugin.plugin_name.is_empty() || plugin.plugin_name == SCALARS_PLUGIN_NAME,
    }
}

/// The single element of a one-element float tensor, or `None`.
pub fn tensor_scalar(tensor: &TensorProto) -> Option<f64> {
    if let Some(shape) = &tensor.tensor_shape {
        if shape.unknown_rank || shape.dim.iter().any(|d| d.size != 1) {
            return None;
        }
    }
    let content = tensor.tensor_content.as_slice();
    match DataType::try_from(tensor.dtype).ok()? {
        DataType::DtFloat => {
            if !content.is_empty() {
                return Some(f64::from(f32::from_le_bytes(content.try_into().ok()?)));
            }
            match tensor.float_val.as_slice() {
                [v] => Some(f64::from(*v)),
                _ => None,
            }
        }
        DataType::DtDouble => {
            if !content.is_empty() {
                return Some(f64::from_le_bytes(content.try_into().ok()?));
            }
            match tensor.double_val.as_slice() {
                [v] => Some(*v),
                _ => None,
            }
        }
        DataType::DtHalf => {
            if !content.is_empty() {
                return Some(f16_to_f64(u16::from_le_bytes(content.try_into().ok()?)));
            }
            match tensor.half_val.as_slice() {
                // half_val stores the 16-bit pattern in the low bits of an int32.
                [v] => Some(f16_to_f64(*v as u16)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Converts IEEE 754 binary16 bits to f64 (exact: every half is representable).
pub fn f16_to_f64(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((bits >> 10) & 0x1f);
    let fraction = f64::from(bits & 0x3ff);
    match exponent {
        0 => sign * fraction * 2f64.powi(-24),
        0x1f if fraction == 0.0 => sign * f64::INFINITY,
        0x1f => f64::NAN,
        _ => sign * (1.0 + fraction / 1024.0) * 2f64.powi(exponent - 15),
    }
}

/// Every scalar in `event`, in the order the summary lists them (none for non-summary events).
pub fn scalars_of(event: &Event) -> impl Iterator<Item = ScalarEvent> + '_ {
    let values: &[summary::Value] = match &event.what {
        Some(event::What::Summary(summary)) => &summary.value,
        _ => &[],
    };
    values.iter().filter_map(move |v| {
        scalar_value(v).map(|value| ScalarEvent {
            tag: v.tag.clone(),
            step: event.step,
            wall_time: event.wall_time,
            value,
        })
    })
}

/// Like [`scalars_of`], but consumes the event so tags are moved rather than copied.
pub fn into_scalars(event: Event) -> impl Iterator<Item = ScalarEvent> {
    let (step, wall_time) = (event.step, event.wall_time);
    let values = match event.what {
        Some(event::What::Summary(summary)) => summary.value,
        _ => Vec::new(),
    };
    values.into_iter().filter_map(move |v| {
        scalar_value(&v).map(|value| ScalarEvent {
            tag: v.tag,
            step,
            wall_time,
            value,
        })
    })
}

// Protobuf keys (field number << 3 | wire type) used by the hand encoder below.
const KEY_EVENT_WALL_TIME: u8 = (1 << 3) | 1; // double
const KEY_EVENT_STEP: u8 = 2 << 3; // varint
const KEY_EVENT_SUMMARY: u8 = (5 << 3) | 2; // length-delimited
const KEY_SUMMARY_VALUE: u8 = (1 << 3) | 2; // length-delimited
const KEY_VALUE_TAG: u8 = (1 << 3) | 2; // length-delimited
const KEY_VALUE_SIMPLE_VALUE: u8 = (2 << 3) | 5; // fixed32

/// Encoded length of a `Summary.Value { tag, simple_value }`.
fn value_len(tag: &str) -> usize {
    tag_len(tag) + 1 + 4
}

/// Encoded length of the tag field: none for an empty tag, which proto3 (and prost) leaves out.
fn tag_len(tag: &str) -> usize {
    if tag.is_empty() {
        0
    } else {
        1 + encoded_len_varint(tag.len() as u64) + tag.len()
    }
}

/// Appends the protobuf encoding of
/// `Event { wall_time, step, summary: Summary { value: [{ tag, simple_value: v as f32 }, ...] } }`.
///
/// Written by hand, rather than by building a prost `Event`, because the logger calls this
/// every iteration with dozens of tags and a prost message would allocate a `String` per
/// tag. The bytes are identical to prost's encoding of the same message (a test pins this).
pub fn encode_scalar_event(step: i64, wall_time: f64, scalars: &[(&str, f64)], out: &mut Vec<u8>) {
    encode_scalar_event_from(step, wall_time, scalars.iter().copied(), out)
}

/// As [`encode_scalar_event`], from any cloneable sequence of `(tag, value)` (walked twice:
/// lengths, then bytes), so a caller holding its tags in another shape needs no list of them.
pub fn encode_scalar_event_from<'a, I>(step: i64, wall_time: f64, scalars: I, out: &mut Vec<u8>)
where
    I: Iterator<Item = (&'a str, f64)> + Clone,
{
    let summary_len: usize = scalars
        .clone()
        .map(|(tag, _)| {
            let len = value_len(tag);
            1 + encoded_len_varint(len as u64) + len
        })
        .sum();
    out.reserve(1 + 8 + 1 + 10 + 1 + 10 + summary_len);
    // proto3 omits default-valued scalars; prost does the same, which keeps the bytes equal.
    if wall_time != 0.0 {
        out.push(KEY_EVENT_WALL_TIME);
        out.extend_from_slice(&wall_time.to_le_bytes());
    }
    if step != 0 {
        out.push(KEY_EVENT_STEP);
        encode_varint(step as u64, out);
    }
    out.push(KEY_EVENT_SUMMARY);
    encode_varint(summary_len as u64, out);
    for (tag, value) in scalars {
        out.push(KEY_SUMMARY_VALUE);
        encode_varint(value_len(tag) as u64, out);
        if !tag.is_empty() {
            out.push(KEY_VALUE_TAG);
            encode_varint(tag.len() as u64, out);
            out.extend_from_slice(tag.as_bytes());
        }
        // A oneof member is always written, even when zero: its presence is the information.
        out.push(KEY_VALUE_SIMPLE_VALUE);
        out.extend_from_slice(&(value as f32).to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{
        summary_metadata::PluginData, tensor_shape_proto::Dim, Summary, TensorShapeProto,
    };
    use prost::Message;

    fn prost_scalar_event(step: i64, wall_time: f64, scalars: &[(&str, f64)]) -> Event {
        Event {
            wall_time,
            step,
            what: Some(event::What::Summary(Summary {
                value: scalars
                    .iter()
                    .map(|(tag, v)| summary::Value {
                        tag: (*tag).to_string(),
                        value: Some(summary::value::Value::SimpleValue(*v as f32)),
                        ..Default::default()
                    })
                    .collect(),
            })),
        }
    }

    #[test]
    fn hand_encoding_is_byte_identical_to_prost() {
        let long_tag = "x".repeat(300); // two-byte length varints
        type Case<'a> = (i64, f64, Vec<(&'a str, f64)>);
        let cases: Vec<Case> = vec![
            (0, 0.0, vec![]),
            (0, 0.0, vec![("zero", 0.0)]),
            (1, 1.5, vec![("a", 1.0), ("Loss/critic", -2.5)]),
            (-7, 1.7e9, vec![("neg", -0.0), ("big", 1e20)]),
            (i64::MAX, f64::MIN_POSITIVE, vec![(long_tag.as_str(), 3.25)]),
            (
                i64::MIN,
                -1.0,
                vec![("nan", f64::NAN), ("inf", f64::INFINITY)],
            ),
        ];
        for (step, wall_time, scalars) in cases {
            let mut ours = Vec::new();
            encode_scalar_event(step, wall_time, &scalars, &mut ours);
            let theirs = prost_scalar_event(step, wall_time, &scalars).encode_to_vec();
            assert_eq!(ours, theirs, "step {step} wall_time {wall_time}");
        }
    }

    #[test]
    fn hand_encoding_appends_without_touching_existing_bytes() {
        let mut out = vec![0xAA, 0xBB];
        encode_scalar_event(3, 2.0, &[("t", 1.0)], &mut out);
        assert_eq!(&out[..2], &[0xAA, 0xBB]);
        let decoded = Event::decode(&out[2..]).unwrap();
        assert_eq!(decoded, prost_scalar_event(3, 2.0, &[("t", 1.0)]));
    }

    fn tensor_value(tensor: TensorProto, plugin: Option<&str>) -> summary::Value {
        summary::Value {
            tag: "t".into(),
            metadata: plugin.map(|name| SummaryMetadata {
                plugin_data: Some(PluginData {
                    plugin_name: name.into(),
                    content: vec![],
                }),
                ..Default::default()
            }),
            value: Some(summary::value::Value::Tensor(Box::new(tensor))),
            ..Default::default()
        }
    }

    fn shape(dims: &[i64]) -> Option<TensorShapeProto> {
        Some(TensorShapeProto {
            dim: dims
                .iter()
                .map(|&size| Dim {
                    size,
                    name: String::new(),
                })
                .collect(),
            unknown_rank: false,
        })
    }

    #[test]
    fn one_element_float_double_half_tensors_are_scalars() {
        let float = TensorProto {
            dtype: DataType::DtFloat as i32,
            tensor_shape: shape(&[]),
            float_val: vec![0.25],
            ..Default::default()
        };
        assert_eq!(
            scalar_value(&tensor_value(float, Some("scalars"))),
            Some(0.25)
        );
        let double = TensorProto {
            dtype: DataType::DtDouble as i32,
            tensor_shape: shape(&[1, 1]),
            double_val: vec![0.1],
            ..Default::default()
        };
        assert_eq!(scalar_value(&tensor_value(double, None)), Some(0.1));
        let half = TensorProto {
            dtype: DataType::DtHalf as i32,
            tensor_shape: None,
            half_val: vec![0x3e00], // 1.5
            ..Default::default()
        };
        assert_eq!(
            scalar_value(&tensor_value(half, Some("scalars"))),
            Some(1.5)
        );
        let half_content = TensorProto {
            dtype: DataType::DtHalf as i32,
            tensor_content: 0xc000u16.to_le_bytes().to_vec(), // -2.0
            ..Default::default()
        };
        assert_eq!(tensor_scalar(&half_content), Some(-2.0));
    }

    #[test]
    fn tensor_content_takes_precedence_over_val_fields() {
        let t = TensorProto {
            dtype: DataType::DtDouble as i32,
            tensor_content: 7.5f64.to_le_bytes().to_vec(),
            double_val: vec![1.0],
            ..Default::default()
        };
        assert_eq!(tensor_scalar(&t), Some(7.5));
    }

    #[test]
    fn non_scalar_tensors_are_not_scalars() {
        let two = TensorProto {
            dtype: DataType::DtFloat as i32,
            tensor_shape: shape(&[2]),
            float_val: vec![1.0, 2.0],
            ..Default::default()
        };
        assert_eq!(tensor_scalar(&two), None);
        let unknown_dim = TensorProto {
            dtype: DataType::DtFloat as i32,
            tensor_shape: shape(&[-1]),
            float_val: vec![1.0],
            ..Default::default()
        };
        assert_eq!(tensor_scalar(&unknown_dim), None);
        let empty = TensorProto {
            dtype: DataType::DtFloat as i32,
            ..Default::default()
        };
        assert_eq!(tensor_scalar(&empty), None);
        let wrong_content_len = TensorProto {
            dtype: DataType::DtFloat as i32,
            tensor_content: vec![0; 8],
            ..Default::default()
        };
        assert_eq!(tensor_scalar(&wrong_content_len), None);
        let string = TensorProto {
            dtype: DataType::DtString as i32,
            string_val: vec![b"hello".to_vec()],
            ..Default::default()
        };
        assert_eq!(tensor_scalar(&string), None);
        let int = TensorProto {
            dtype: DataType::DtInt32 as i32,
            int_val: vec![3],
            ..Default::default()
        };
        assert_eq!(tensor_scalar(&int), None);
    }

    #[test]
    fn float_tensor_of_another_plugin_is_not_a_scalar_unless_data_class_says_so() {
        let t = TensorProto {
            dtype: DataType::DtFloat as i32,
            float_val: vec![1.0],
            ..Default::default()
        };
        let mut v = tensor_value(t, Some("pr_curves"));
        assert_eq!(scalar_value(&v), None);
        v.metadata.as_mut().unwrap().data_class = DataClass::Scalar as i32;
        assert_eq!(scalar_value(&v), Some(1.0));
    }

    #[test]
    fn histograms_and_images_are_not_scalars() {
        for payload in [
            summary::value::Value::Histo(vec![1, 2, 3]),
            summary::value::Value::Image(vec![]),
            summary::value::Value::Audio(vec![]),
        ] {
            let v = summary::Value {
                tag: "h".into(),
                value: Some(payload),
                ..Default::default()
            };
            assert_eq!(scalar_value(&v), None);
        }
    }

    #[test]
    fn f16_conversion_covers_normal_subnormal_and_special_values() {
        assert_eq!(f16_to_f64(0x3c00), 1.0);
        assert_eq!(f16_to_f64(0x7bff), 65504.0);
        assert_eq!(f16_to_f64(0x0001), 2f64.powi(-24));
        assert_eq!(f16_to_f64(0x8000), 0.0);
        assert!(f16_to_f64(0x8000).is_sign_negative());
        assert_eq!(f16_to_f64(0xfc00), f64::NEG_INFINITY);
        assert!(f16_to_f64(0x7e00).is_nan());
    }

    #[test]
    fn scalars_of_takes_step_and_wall_time_from_the_event_and_skips_non_scalars() {
        let mut event = prost_scalar_event(9, 12.5, &[("a", 1.0), ("b", 2.0)]);
        if let Some(event::What::Summary(s)) = &mut event.what {
            s.value.insert(
                1,
                summary::Value {
                    tag: "hist".into(),
                    value: Some(summary::value::Value::Histo(vec![])),
                    ..Default::default()
                },
            );
        }
        let got: Vec<ScalarEvent> = scalars_of(&event).collect();
        assert_eq!(into_scalars(event.clone()).collect::<Vec<_>>(), got);
        assert_eq!(
            got,
            vec![
                ScalarEvent {
                    tag: "a".into(),
                    step: 9,
                    wall_time: 12.5,
                    value: 1.0
                },
                ScalarEvent {
                    tag: "b".into(),
                    step: 9,
                    wall_time: 12.5,
                    value: 2.0
                },
            ]
        );
        let version = Event {
            what: Some(event::What::FileVersion("brain.Event:2".into())),
            ..Default::default()
        };
        assert_eq!(scalars_of(&version).count(), 0);
    }
}
