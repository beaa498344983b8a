//! TensorBoard event files: masked CRC-32C, TFRecord framing, Event/Summary protobuf, writer and reader.
//!
//! Summaries beyond scalars (histograms, PNG images, GIF videos, WAV audio, text, PR curves,
//! custom-scalar layouts, hparams, boxes drawn on images) are built by
//! [`histogram`](mod@histogram), [`media`], [`plugin_summaries`], [`hparams`] and [`boxes`].
//! Writing: [`EventFileWriter`] creates `events.out.tfevents.*` files and writes one
//! `Event` per step; [`RecordWriter`] is the framing layer over any `Write`.
//! Reading: [`TfRecordReader`], [`EventReader`] and [`ScalarReader`] stream over any
//! `Read`, tolerate a truncated tail (so they can tail a live file) and follow the
//! corruption policy documented in [`tf_record`]. [`open`] is the one way a reader opens a
//! file; the fast path reads a record's scalars from its wire bytes ([`scalar_fast`]), lent as
//! [`ScalarRef`]s, and [`parallel`] reads one file on several threads.

pub mod boxes;
pub mod histogram;
pub mod hparams;
pub mod intern;
pub mod masked_crc;
pub mod media;
pub mod open;
pub mod parallel;
pub mod plugin_summaries;
pub mod proto;
pub mod reader;
pub mod scalar;
pub mod scalar_fast;
pub mod scalar_ref;
pub mod summary_event;
pub mod tf_record;
pub mod writer;

pub use boxes::{draw_boxes, image_with_boxes_value, Box4};
pub use histogram::{default_edges, histogram, histogram_value, Bins, HistogramError};
pub use hparams::{hparams_values, HParam};
pub use intern::Interner;
pub use masked_crc::{mask_crc, masked_crc32c, unmask_crc};
pub use media::{
    audio_value, encode_gif, encode_png, encode_wav, image_value, video_value, MediaError,
};
pub use parallel::{events_in_parallel, scalars_in_parallel, scalars_in_parallel_window};
pub use plugin_summaries::{
    compute_pr_curve, custom_scalars_value, pr_curve_value, scalar_tensor_value, tensor_value,
    text_value, PrCurveError, MAX_PR_THRESHOLDS, TENSOR_DTYPES,
};
pub use proto::Event;
pub use reader::{
    is_event_file_name, open_event_file, open_event_file_at, read_scalars_from_file, Damage,
    EventReader, ScalarReader,
};
pub use scalar::{
    encode_scalar_event, encode_scalar_event_from, into_scalars, scalar_value, scalars_of,
    tensor_scalar, ScalarEvent,
};
pub use scalar_fast::WireScalars;
pub use scalar_ref::ScalarRef;
pub use summary_event::{encode_summary, encode_summary_event, override_event};
pub use tf_record::{
    CorruptionKind, OnCorruption, ReadError, Record, RecordWriter, SkippedRecord, TfRecordReader,
    WriteRecordError, MAX_RECORD_LEN,
};
pub use writer::{
    default_hostname, event_file_name, EventFileWriter, FsyncPolicy, OpenError, RelinkError,
    WriteError, WriterOptions,
};
