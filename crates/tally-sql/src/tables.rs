//! The two tables a query sees (docs/contract/consumers.md "SQL over runs"): `scalars`, every
//! point read, its columns moved into Arrow buffers without a copy; and `runs`, the runs
//! table's flat columns, each typed from its values.

use crate::error::{query_error, Error};
use crate::ipc::ipc_stream;
use datafusion::arrow::array::{
    ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int32Array, Int64Array, StringArray,
    TimestampMicrosecondArray,
};
use datafusion::arrow::buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{DataType, Field, Int32Type, Schema, SchemaRef};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::datasource::MemTable;
use serde_json::Value;
use std::sync::Arc;
use tally_read::columns::{Columns, Dictionary};
use tally_read::runs::{column_types, micros, text, Kind, RunRow};

/// Rows per batch handed to the engine: large enough that per-batch work is small, small
/// enough that every core gets a share of one large run.
const BATCH_ROWS: usize = 64 << 10;

/// The `scalars` table: batches spread over one partition per core.
pub struct Partitions {
    schema: SchemaRef,
    parts: Vec<Vec<RecordBatch>>,
}

impl Partitions {
    /// The table the engine scans.
    pub fn into_table(self) -> Result<MemTable, Error> {
        MemTable::try_new(self.schema, self.parts).map_err(query_error)
    }
}

/// The `scalars` columns: run, tag, step, wall_time, value.
pub fn scalars_schema() -> SchemaRef {
    let name = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
    Arc::new(Schema::new(vec![
        Field::new("run", name.clone(), false),
        Field::new("tag", name, false),
        Field::new("step", DataType::Int64, false),
        Field::new("wall_time", DataType::Float64, false),
        Field::new("value", DataType::Float64, false),
    ]))
}

/// Strings of a dictionary as an Arrow string array (its layout already is Arrow's).
fn strings(d: Dictionary) -> Result<ArrayRef, ArrowError> {
    let offsets = OffsetBuffer::new(ScalarBuffer::from(d.offsets));
    Ok(Arc::new(StringArray::try_new(
        offsets,
        Buffer::from_vec(d.bytes),
        None,
    )?))
}

fn dictionary(codes: Vec<i32>, names: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    let keys = Int32Array::new(ScalarBuffer::from(codes), None);
    Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(
        keys,
        names.clone(),
    )?))
}

/// Every row of `columns` as `scalars` batches of at most `BATCH_ROWS` rows, dealt round
/// robin to `partitions` partitions.
pub fn scalars_partitions(columns: Columns, partitions: usize) -> Result<Partitions, ArrowError> {
    let schema = scalars_schema();
    let runs = strings(columns.runs)?;
    let tags = strings(columns.tags)?;
    let mut parts = vec![Vec::new(); partitions.max(1)];
    let mut dealt = 0usize;
    for chunk in columns.chunks {
        let rows = chunk.rows();
        if rows == 0 {
            continue;
        }
        let whole = RecordBatch::try_new(
            schema.clone(),
            vec![
                dictionary(chunk.run_codes, &runs)?,
                dictionary(chunk.tag_codes, &tags)?,
                Arc::new(Int64Array::new(ScalarBuffer::from(chunk.step), None)),
                Arc::new(Float64Array::new(ScalarBuffer::from(chunk.wall_time), None)),
                Arc::new(Float64Array::new(ScalarBuffer::from(chunk.value), None)),
            ],
        )?;
        for start in (0..rows).step_by(BATCH_ROWS) {
            let len = BATCH_ROWS.min(rows - start);
            let n = parts.len();
            parts[dealt % n].push(whole.slice(start, len));
            dealt += 1;
        }
    }
    Ok(Partitions { schema, parts })
}

/// The `runs` table: one row per run, the columns of [`RunRow::flat`] in first-seen order,
/// typed by the runs table's one rule ([`tally_read::runs::column_types`]).
pub fn runs_batch(rows: &[RunRow]) -> Result<RecordBatch, ArrowError> {
    let flat: Vec<Vec<(String, Value)>> = rows.iter().map(RunRow::flat).collect();
    let mut fields = Vec::new();
    let mut arrays = Vec::new();
    for (name, kind) in column_types(&flat) {
        let values: Vec<&Value> = flat
            .iter()
            .map(|r| {
                r.iter()
                    .find(|(k, _)| *k == name)
                    .map_or(&Value::Null, |(_, v)| v)
            })
            .collect();
        let array = column(kind, &values);
        fields.push(Field::new(name, array.data_type().clone(), true));
        arrays.push(array);
    }
    // The row count stated: with no run read there is no column to take it from.
    let rows = RecordBatchOptions::new().with_row_count(Some(rows.len()));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), arrays, &rows)
}

/// One column of `kind` holding `values`.
fn column(kind: Kind, values: &[&Value]) -> ArrayRef {
    let each = values.iter();
    match kind {
        Kind::Bool => Arc::new(BooleanArray::from_iter(each.map(|v| v.as_bool()))),
        Kind::Int => Arc::new(Int64Array::from_iter(each.map(|v| v.as_i64()))),
        Kind::Float => Arc::new(Float64Array::from_iter(each.map(|v| v.as_f64()))),
        Kind::Str => Arc::new(StringArray::from_iter(each.map(|v| text(v)))),
        Kind::Timestamp => Arc::new(
            TimestampMicrosecondArray::from_iter(each.map(|v| v.as_f64().map(micros)))
                .with_timezone("UTC"),
        ),
    }
}

/// [`runs_batch`] as an Arrow IPC stream: the runs table as `tally.runs` returns it.
pub fn runs_ipc_stream(rows: &[RunRow]) -> Result<Vec<u8>, Error> {
    let batch = runs_batch(rows).map_err(query_error)?;
    ipc_stream(&batch.schema(), std::slice::from_ref(&batch))
}
