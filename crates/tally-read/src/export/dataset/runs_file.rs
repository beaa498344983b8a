//! The dataset's runs table: one Parquet file per run, `runs/run=<name>/part-0.parquet`, the
//! row `tally runs` prints without its tag figures and without `run` (the directory names it).
//! Every file has the same columns, the union of every run's configuration keys, null where a
//! run lacks one, each column one type across runs (`docs/contract/consumers.md` "A Parquet
//! dataset").

use crate::error::Error;
use crate::runs::{micros, text, Kind};
use parquet::basic::{LogicalType, Repetition, TimeUnit, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// Writes `row` to `path` as one Parquet row with `columns` (a key the row lacks is null).
pub(super) fn write(
    path: &Path,
    columns: &[(String, Kind)],
    row: &[(String, Value)],
) -> Result<(), Error> {
    let err = |source| Error::Parquet {
        path: path.to_owned(),
        source,
    };
    let fields = columns
        .iter()
        .map(|(name, kind)| {
            let (physical, logical) = match kind {
                Kind::Bool => (Physical::BOOLEAN, None),
                Kind::Int => (Physical::INT64, None),
                Kind::Float => (Physical::DOUBLE, None),
                Kind::Str => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
                Kind::Timestamp => (
                    Physical::INT64,
                    Some(LogicalType::timestamp(true, TimeUnit::MICROS)),
                ),
            };
            Type::primitive_type_builder(name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    let schema = Type::group_type_builder("runs")
        .with_fields(fields)
        .build()
        .map_err(err)?;
    let file = std::fs::File::create(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    let props = Arc::new(WriterProperties::builder().build());
    let mut writer = SerializedFileWriter::new(file, Arc::new(schema), props).map_err(err)?;
    let mut rg = writer.next_row_group().map_err(err)?;
    for (name, kind) in columns {
        let value = row
            .iter()
            .find(|(k, _)| k == name)
            .map_or(&Value::Null, |(_, v)| v);
        let Some(mut col) = rg.next_column().map_err(err)? else {
            break;
        };
        let def: &[i16] = if value.is_null() { &[0] } else { &[1] };
        let w = col.untyped();
        match kind {
            Kind::Bool => {
                let v: Vec<bool> = value.as_bool().into_iter().collect();
                w_typed::<BoolType>(w, &v, def)
            }
            Kind::Int => {
                let v: Vec<i64> = value.as_i64().into_iter().collect();
                w_typed::<Int64Type>(w, &v, def)
            }
            Kind::Float => {
                let v: Vec<f64> = value.as_f64().into_iter().collect();
                w_typed::<DoubleType>(w, &v, def)
            }
            Kind::Timestamp => {
                let v: Vec<i64> = value.as_f64().map(micros).into_iter().collect();
                w_typed::<Int64Type>(w, &v, def)
            }
            Kind::Str => {
                let v: Vec<ByteArray> = text(value)
                    .map(|t| ByteArray::from(t.as_str()))
                    .into_iter()
                    .collect();
                w_typed::<ByteArrayType>(w, &v, def)
            }
        }
        .map_err(err)?;
        col.close().map_err(err)?;
    }
    rg.close().map_err(err)?;
    writer.close().map_err(err)?;
    Ok(())
}

/// Writes `values` (none for a null) to a column of type `T`.
fn w_typed<T: parquet::data_type::DataType>(
    w: &mut parquet::column::writer::ColumnWriter<'_>,
    values: &[T::T],
    def: &[i16],
) -> Result<(), parquet::errors::ParquetError> {
    parquet::column::writer::get_typed_column_writer_mut::<T>(w)
        .write_batch(values, Some(def), None)
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use serde_json::json;

    fn row(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    #[test]
    fn columns_are_the_union_of_keys_each_with_one_type_across_runs() {
        let rows = [
            row(&[
                ("dir", json!("/a")),
                ("start", Value::Null),
                ("config.lr", json!(1)),
                ("config.algo", json!("ppo")),
                ("config.on", json!(true)),
            ]),
            row(&[
                ("dir", json!("/b")),
                ("config.lr", json!(0.5)),
                ("config.algo", json!(3)),
                ("config.none", Value::Null),
                ("config.list", json!([1, 2])),
            ]),
        ];
        let cols = crate::runs::column_types(&rows);
        let tmp = tempfile::tempdir().unwrap();
        for (i, r) in rows.iter().enumerate() {
            let path = tmp.path().join(format!("{i}.parquet"));
            write(&path, &cols, r).unwrap();
            let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
            let fields = reader
                .metadata()
                .file_metadata()
                .schema_descr()
                .num_columns();
            assert_eq!(fields, cols.len());
            let got: Vec<String> = reader
                .get_row_iter(None)
                .unwrap()
                .map(|r| r.unwrap().to_string())
                .collect();
            assert_eq!(got.len(), 1);
            if i == 1 {
                assert!(got[0].contains("config.algo: \"3\""), "{}", got[0]);
                assert!(got[0].contains("config.list: \"[1,2]\""), "{}", got[0]);
                assert!(got[0].contains("config.on: null"), "{}", got[0]);
            }
        }
    }
}
