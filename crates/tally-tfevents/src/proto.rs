//! Hand-declared `prost` messages for TensorFlow's `Event`, `Summary` and `TensorProto` (event.proto, summary.proto, tensor.proto, tensor_shape.proto).
//!
//! Only the fields tally reads or writes are declared; prost skips every other field as an
//! unknown field, so files written by other tools still decode. Field numbers follow
//! tensorflow/core/util/event.proto and tensorflow/core/framework/{summary,tensor,tensor_shape}.proto.

/// One record of an event file (`tensorflow.Event`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Event {
    /// Seconds since the Unix epoch at which the event was recorded.
    #[prost(double, tag = "1")]
    pub wall_time: f64,
    /// Global step of the event.
    #[prost(int64, tag = "2")]
    pub step: i64,
    /// What the event carries.
    #[prost(oneof = "event::What", tags = "3, 4, 5, 7, 9")]
    pub what: Option<event::What>,
}

/// Nested types of [`Event`].
pub mod event {
    /// The payload of an [`Event`](super::Event) (`oneof what`).
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum What {
        /// File format version; the first event of a file carries `"brain.Event:2"`.
        #[prost(string, tag = "3")]
        FileVersion(String),
        /// Serialized `GraphDef`, kept opaque.
        #[prost(bytes, tag = "4")]
        GraphDef(Vec<u8>),
        /// A summary holding tagged values.
        #[prost(message, tag = "5")]
        Summary(super::Summary),
        /// Session status change (e.g. a restart), which TensorBoard uses to purge stale steps.
        #[prost(message, tag = "7")]
        SessionLog(super::SessionLog),
        /// Serialized `MetaGraphDef`, kept opaque.
        #[prost(bytes, tag = "9")]
        MetaGraphDef(Vec<u8>),
    }
}

/// Session status change (`tensorflow.SessionLog`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SessionLog {
    /// Status as a `SessionLog.SessionStatus` number (0 unspecified, 1 start, 2 stop, 3 checkpoint).
    #[prost(int32, tag = "1")]
    pub status: i32,
    /// Checkpoint path, for checkpoint events.
    #[prost(string, tag = "2")]
    pub checkpoint_path: String,
    /// Free-form message.
    #[prost(string, tag = "3")]
    pub msg: String,
}

impl SessionLog {
    /// `SessionLog.SessionStatus.START`.
    pub const START: i32 = 1;
}

/// The purge marker: a `SessionLog{status: START}` event at `step`. TensorBoard drops every
/// point it read before the marker at `step` or later, so a file that opens with it replaces
/// an earlier file's tail (torch's `purge_step`, a resume from a checkpoint:
/// docs/contract/run-artifacts.md "Resume"). The one encoding of it, for every writer.
pub fn session_start_event(step: i64, wall_time: f64) -> Event {
    Event {
        wall_time,
        step,
        what: Some(event::What::SessionLog(SessionLog {
            status: SessionLog::START,
            ..Default::default()
        })),
    }
}

/// [`session_start_event`] serialized, for writers that take events as bytes.
pub fn encode_session_start(step: i64, wall_time: f64) -> Vec<u8> {
    prost::Message::encode_to_vec(&session_start_event(step, wall_time))
}

/// A set of tagged values recorded at one step (`tensorflow.Summary`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Summary {
    /// The tagged values.
    #[prost(message, repeated, tag = "1")]
    pub value: Vec<summary::Value>,
}

/// Nested types of [`Summary`].
pub mod summary {
    /// One tagged value of a summary (`tensorflow.Summary.Value`).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Value {
        /// Deprecated graph node name; kept so it round-trips.
        #[prost(string, tag = "7")]
        pub node_name: String,
        /// The series name, e.g. `Loss/critic`.
        #[prost(string, tag = "1")]
        pub tag: String,
        /// Which plugin owns the value and how to interpret it.
        #[prost(message, optional, tag = "9")]
        pub metadata: Option<super::SummaryMetadata>,
        /// The value itself.
        #[prost(oneof = "value::Value", tags = "2, 3, 4, 5, 6, 8")]
        pub value: Option<value::Value>,
    }

    /// Nested types of [`Value`].
    pub mod value {
        /// The payload of a [`Value`](super::Value) (`oneof value`).
        ///
        /// Images, histograms and audio are kept as their raw serialized messages: tally
        /// never interprets them, but keeping the bytes lets them round-trip.
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Value {
            /// A 32-bit float scalar, the classic scalar summary.
            #[prost(float, tag = "2")]
            SimpleValue(f32),
            /// Obsolete serialized histogram.
            #[prost(bytes, tag = "3")]
            ObsoleteOldStyleHistogram(Vec<u8>),
            /// Serialized `Summary.Image`.
            #[prost(bytes, tag = "4")]
            Image(Vec<u8>),
            /// Serialized `HistogramProto`.
            #[prost(bytes, tag = "5")]
            Histo(Vec<u8>),
            /// Serialized `Summary.Audio`.
            #[prost(bytes, tag = "6")]
            Audio(Vec<u8>),
            /// A tensor, the modern summary payload for every plugin.
            ///
            /// Boxed because `TensorProto` is ~250 bytes: inline, it would make every
            /// `Value` (mostly simple scalars) that large, slowing decoding noticeably.
            #[prost(message, boxed, tag = "8")]
            Tensor(Box<super::super::TensorProto>),
        }
    }
}

/// Describes which plugin owns a summary value (`tensorflow.SummaryMetadata`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SummaryMetadata {
    /// The owning plugin and its private data.
    #[prost(message, optional, tag = "1")]
    pub plugin_data: Option<summary_metadata::PluginData>,
    /// Display name for the series.
    #[prost(string, tag = "2")]
    pub display_name: String,
    /// Longer description of the series.
    #[prost(string, tag = "3")]
    pub summary_description: String,
    /// How the value's tensor should be interpreted, as a [`DataClass`] number.
    #[prost(enumeration = "DataClass", tag = "4")]
    pub data_class: i32,
}

/// Nested types of [`SummaryMetadata`].
pub mod summary_metadata {
    /// The plugin that owns a value (`SummaryMetadata.PluginData`).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct PluginData {
        /// Plugin name, e.g. `scalars`, `histograms`, `text`.
        #[prost(string, tag = "1")]
        pub plugin_name: String,
        /// Plugin-specific serialized content.
        #[prost(bytes = "vec", tag = "2")]
        pub content: Vec<u8>,
    }
}

/// Plugin name TensorBoard's scalar dashboard uses for tensor scalar summaries.
pub const SCALARS_PLUGIN_NAME: &str = "scalars";

/// How a summary value's tensor is to be interpreted (`tensorflow.DataClass`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum DataClass {
    /// Unknown or legacy value.
    Unknown = 0,
    /// A rank-0 numeric tensor: one point of a time series.
    Scalar = 1,
    /// A tensor of any shape.
    Tensor = 2,
    /// A rank-1 string tensor of blobs.
    BlobSequence = 3,
}

/// A serialized tensor (`tensorflow.TensorProto`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorProto {
    /// Element type, as a [`DataType`] number.
    #[prost(enumeration = "DataType", tag = "1")]
    pub dtype: i32,
    /// Shape; absent means a scalar.
    #[prost(message, optional, tag = "2")]
    pub tensor_shape: Option<TensorShapeProto>,
    /// Version number of the serialization.
    #[prost(int32, tag = "3")]
    pub version_number: i32,
    /// Packed little-endian element bytes; when non-empty it takes precedence over the `*_val` fields.
    #[prost(bytes = "vec", tag = "4")]
    pub tensor_content: Vec<u8>,
    /// `DT_HALF` / `DT_BFLOAT16` elements, one 16-bit pattern per int32.
    #[prost(int32, repeated, tag = "13")]
    pub half_val: Vec<i32>,
    /// `DT_FLOAT` elements.
    #[prost(float, repeated, tag = "5")]
    pub float_val: Vec<f32>,
    /// `DT_DOUBLE` elements.
    #[prost(double, repeated, tag = "6")]
    pub double_val: Vec<f64>,
    /// `DT_INT32`, `DT_INT16`, `DT_INT8`, `DT_UINT8` elements.
    #[prost(int32, repeated, tag = "7")]
    pub int_val: Vec<i32>,
    /// `DT_STRING` elements.
    #[prost(bytes = "vec", repeated, tag = "8")]
    pub string_val: Vec<Vec<u8>>,
    /// `DT_INT64` elements.
    #[prost(int64, repeated, tag = "10")]
    pub int64_val: Vec<i64>,
    /// `DT_BOOL` elements.
    #[prost(bool, repeated, tag = "11")]
    pub bool_val: Vec<bool>,
}

/// The shape of a tensor (`tensorflow.TensorShapeProto`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorShapeProto {
    /// Dimensions, outermost first; empty for a scalar.
    #[prost(message, repeated, tag = "2")]
    pub dim: Vec<tensor_shape_proto::Dim>,
    /// True when even the number of dimensions is unknown.
    #[prost(bool, tag = "3")]
    pub unknown_rank: bool,
}

/// Nested types of [`TensorShapeProto`].
pub mod tensor_shape_proto {
    /// One dimension of a tensor shape (`TensorShapeProto.Dim`).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Dim {
        /// Size of the dimension; -1 means unknown.
        #[prost(int64, tag = "1")]
        pub size: i64,
        /// Optional dimension name.
        #[prost(string, tag = "2")]
        pub name: String,
    }
}

/// Tensor element types (`tensorflow.DataType`); only the numbers tally handles or names are listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum DataType {
    /// Not a valid type.
    DtInvalid = 0,
    /// 32-bit IEEE float.
    DtFloat = 1,
    /// 64-bit IEEE float.
    DtDouble = 2,
    /// 32-bit signed integer.
    DtInt32 = 3,
    /// 8-bit unsigned integer.
    DtUint8 = 4,
    /// 16-bit signed integer.
    DtInt16 = 5,
    /// 8-bit signed integer.
    DtInt8 = 6,
    /// Byte string.
    DtString = 7,
    /// 64-bit signed integer.
    DtInt64 = 9,
    /// Boolean.
    DtBool = 10,
    /// bfloat16.
    DtBfloat16 = 14,
    /// 16-bit IEEE float.
    DtHalf = 19,
}

/// The `file_version` the first event of every file carries.
pub const FILE_VERSION: &str = "brain.Event:2";

/// A histogram summary (`tensorflow.HistogramProto`): bucket `i` counts values up to
/// `bucket_limit[i]` (and above the previous limit).
#[derive(Clone, PartialEq, prost::Message)]
pub struct HistogramProto {
    /// Smallest value.
    #[prost(double, tag = "1")]
    pub min: f64,
    /// Largest value.
    #[prost(double, tag = "2")]
    pub max: f64,
    /// Number of values.
    #[prost(double, tag = "3")]
    pub num: f64,
    /// Sum of the values.
    #[prost(double, tag = "4")]
    pub sum: f64,
    /// Sum of the squared values.
    #[prost(double, tag = "5")]
    pub sum_squares: f64,
    /// Right edge of each bucket.
    #[prost(double, repeated, tag = "6")]
    pub bucket_limit: Vec<f64>,
    /// Count (or weight) of each bucket.
    #[prost(double, repeated, tag = "7")]
    pub bucket: Vec<f64>,
}

/// An encoded image (`tensorflow.Summary.Image`): PNG, or an animated GIF for videos.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SummaryImage {
    /// Height in pixels.
    #[prost(int32, tag = "1")]
    pub height: i32,
    /// Width in pixels.
    #[prost(int32, tag = "2")]
    pub width: i32,
    /// Channels: 1 grayscale, 2 grayscale + alpha, 3 RGB, 4 RGBA.
    #[prost(int32, tag = "3")]
    pub colorspace: i32,
    /// The encoded file.
    #[prost(bytes = "vec", tag = "4")]
    pub encoded_image_string: Vec<u8>,
}

/// An encoded audio clip (`tensorflow.Summary.Audio`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SummaryAudio {
    /// Samples per second.
    #[prost(float, tag = "1")]
    pub sample_rate: f32,
    /// Number of channels.
    #[prost(int64, tag = "2")]
    pub num_channels: i64,
    /// Frames (samples per channel).
    #[prost(int64, tag = "3")]
    pub length_frames: i64,
    /// The encoded file.
    #[prost(bytes = "vec", tag = "4")]
    pub encoded_audio_string: Vec<u8>,
    /// MIME type of the encoded file, e.g. `audio/wav`.
    #[prost(string, tag = "5")]
    pub content_type: String,
}
