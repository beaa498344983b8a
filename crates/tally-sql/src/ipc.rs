//! Answers as Arrow IPC streams: what the Python package opens with `pyarrow.ipc.open_stream`,
//! types intact.

use crate::error::{query_error, Error};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::arrow::record_batch::RecordBatch;

/// `batches` as an Arrow IPC stream.
pub fn ipc_stream(schema: &SchemaRef, batches: &[RecordBatch]) -> Result<Vec<u8>, Error> {
    let mut w = StreamWriter::try_new(Vec::new(), schema).map_err(query_error)?;
    for b in batches {
        w.write(b).map_err(query_error)?;
    }
    w.into_inner().map_err(query_error)
}
