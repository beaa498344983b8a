//! `tally sql`'s answer printed as an aligned table, CSV or JSON (the `sql` feature).

use crate::cmd::Output;
use crate::error::CliError;
use crate::stderr;
use std::io::Write;
use std::path::PathBuf;
use tally_sql::arrow::csv::WriterBuilder;
use tally_sql::arrow::json::ArrayWriter;
use tally_sql::arrow::util::pretty::pretty_format_batches;

/// Run `tally sql`: the answer on `out`; damage and runs left out said on stderr.
pub fn run(
    paths: &[PathBuf],
    query: &str,
    strict: bool,
    output: Output,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let answer = tally_sql::query(paths, query, strict)?;
    stderr::warn(&answer.damage);
    stderr::skipped(&answer.skipped);
    let arrow_error = |e: tally_sql::arrow::error::ArrowError| match e {
        tally_sql::arrow::error::ArrowError::IoError(_, io) => CliError::Output(io),
        e => CliError::Run(format!("could not print the answer: {e}")),
    };
    match output {
        Output::Table => {
            let text = pretty_format_batches(&answer.batches).map_err(arrow_error)?;
            if answer.schema.fields().is_empty() || answer.rows() > 0 {
                writeln!(out, "{text}")?;
            } else {
                let names: Vec<&str> = answer
                    .schema
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect();
                writeln!(out, "no rows ({})", names.join(", "))?;
            }
        }
        Output::Csv => {
            let mut w = WriterBuilder::new().with_header(true).build(&mut *out);
            if answer.batches.is_empty() {
                let empty =
                    tally_sql::arrow::record_batch::RecordBatch::new_empty(answer.schema.clone());
                w.write(&empty).map_err(arrow_error)?;
            }
            for b in &answer.batches {
                w.write(b).map_err(arrow_error)?;
            }
        }
        Output::Json => {
            let mut w = ArrayWriter::new(&mut *out);
            for b in &answer.batches {
                w.write(b).map_err(arrow_error)?;
            }
            w.finish().map_err(arrow_error)?;
            writeln!(out)?;
        }
    }
    Ok(())
}
