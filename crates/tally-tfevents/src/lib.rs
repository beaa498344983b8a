//! TensorBoard event files: masked CRC-32C, TFRecord framing, Event/Summary protobuf, writer and reader.
//!
//! Writing: [`EventFileWriter`] creates `events.out.tfevents.*` files and writes one
//! `Event` per step; [`RecordWriter`] is the framing layer over any `Write`.
//! Reading: [`TfRecordReader`], [`EventReader`] and [`ScalarReader`] stream over any
//! `Read`, tolerate a truncated tail (so they can tail a live file) and follow the
//! corruption policy documented in [`tf_record`].

pub mod masked_crc;
pub mod proto;
pub mod reader;
pub mod scalar;
pub mod tf_record;
pub mod writer;

pub use masked_crc::{mask_crc, masked_crc32c, unmask_crc};
pub use proto::Event;
pub use reader::{
    is_event_file_name, open_event_file, read_scalars_from_file, EventReader, ScalarReader,
};
pub use scalar::{
    encode_scalar_event, into_scalars, scalar_value, scalars_of, tensor_scalar, ScalarEvent,
};
pub use tf_record::{
    CorruptionKind, OnCorruption, ReadError, Record, RecordWriter, TfRecordReader,
    WriteRecordError, MAX_RECORD_LEN,
};
pub use writer::{
    default_hostname, event_file_name, EventFileWriter, FsyncPolicy, OpenError, WriteError,
    WriterOptions,
};
