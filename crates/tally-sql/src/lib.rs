//! SQL over runs (`tally sql`, `tally.sql`): the runs under some paths as two tables, `runs` and
//! `scalars`, queried with Apache DataFusion (docs/contract/consumers.md "SQL over runs").
//!
//! The scalars are read with [`tally_read::columns::read_all`] (every tag) and the runs table
//! with [`tally_read::runs::runs_table`] (the one every front end shows, health findings
//! included; a second, streamed read of files the first left in the page cache), and both
//! become Arrow tables ([`tables`]) without copying the scalar columns. Queries are read-only: a statement that
//! would create, change or drop anything is refused.

pub mod error;
pub mod ipc;
pub mod tables;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::execution::context::{SQLOptions, SessionConfig, SessionContext};
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::execution::SessionStateDefaults;
use datafusion::sql::parser::{DFParser, Statement};
use std::path::PathBuf;
use std::sync::Arc;
use tally_read::columns::{read_all, ReadOptions};
use tally_read::runs::runs_table;

pub use datafusion::arrow;
pub use error::Error;

use error::query_error;
use ipc::ipc_stream;

/// A query's answer, with what reading the runs met.
pub struct Answer {
    /// The result's columns (known even when no row comes back).
    pub schema: SchemaRef,
    /// The result's rows.
    pub batches: Vec<RecordBatch>,
    /// What the readers read past (truncated tails, purges, steps going back).
    pub damage: Vec<tally_tfevents::Damage>,
    /// Runs not read, each with why (a run that cannot be read is left out, not fatal).
    pub skipped: Vec<(PathBuf, String)>,
}

impl Answer {
    /// How many rows came back.
    pub fn rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// The answer as an Arrow IPC stream (schema, then every batch): what the Python package
    /// opens with `pyarrow.ipc.open_stream`, types intact.
    pub fn to_ipc_stream(&self) -> Result<Vec<u8>, Error> {
        ipc_stream(&self.schema, &self.batches)
    }
}

/// Answers `sql` over the runs under `inputs` (files or directories, as `tally.read` takes
/// them). Runs that cannot be read are left out and listed in [`Answer::skipped`].
pub fn query(inputs: &[PathBuf], sql: &str, strict: bool) -> Result<Answer, Error> {
    if writes_files(sql) {
        return Err(Error::Query(
            "COPY writes files, and queries over runs are read-only".into(),
        ));
    }
    let opts = ReadOptions {
        strict,
        skip_unreadable: true,
        readable_part: false,
    };
    let mut columns = read_all(inputs, None, opts).map_err(tally_read::Error::Refused)?;
    // Its damage and skipped runs are the scalars read's, reported once from there.
    let runs = tables::runs_batch(&runs_table(inputs, &[], opts)?.rows).map_err(query_error)?;
    let damage = std::mem::take(&mut columns.damage);
    let skipped = std::mem::take(&mut columns.skipped);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let scalars = tables::scalars_partitions(columns, threads).map_err(query_error)?;
    let (schema, batches) = run_query(runs, scalars, sql, threads)?;
    Ok(Answer {
        schema,
        batches,
        damage,
        skipped,
    })
}

/// A session with every SQL function of DataFusion's default one but no file format or table
/// factory (docs/contract/consumers.md "SQL over runs", read-only): no query can reach a file
/// reader or writer, so the linker leaves them, and their codecs, out of the wheel.
fn session(threads: usize) -> SessionContext {
    let config = SessionConfig::new().with_target_partitions(threads);
    let table_functions = SessionStateDefaults::default_table_functions()
        .into_iter()
        .map(|f| (f.name().to_string(), f))
        .collect();
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_runtime_env(Arc::new(RuntimeEnv::default()))
        .with_expr_planners(SessionStateDefaults::default_expr_planners())
        .with_scalar_functions(SessionStateDefaults::default_scalar_functions())
        .with_higher_order_functions(SessionStateDefaults::default_higher_order_functions())
        .with_aggregate_functions(SessionStateDefaults::default_aggregate_functions())
        .with_window_functions(SessionStateDefaults::default_window_functions())
        .with_table_functions(table_functions)
        .build();
    SessionContext::new_with_state(state)
}

/// Whether `sql` holds a `COPY ... TO` (alone or explained). The read-only options refuse it
/// only after planning, which fails first in a session with no file format, and would name the
/// format rather than the statement. A query that does not parse is left to the engine's error.
fn writes_files(sql: &str) -> bool {
    fn copy(s: &Statement) -> bool {
        match s {
            Statement::CopyTo(_) => true,
            Statement::Explain(e) => copy(&e.statement),
            _ => false,
        }
    }
    DFParser::parse_sql(sql).is_ok_and(|all| all.iter().any(copy))
}

/// Registers the two tables and runs the query on a runtime of `threads` workers.
fn run_query(
    runs: RecordBatch,
    scalars: tables::Partitions,
    sql: &str,
    threads: usize,
) -> Result<(SchemaRef, Vec<RecordBatch>), Error> {
    let ctx = session(threads);
    ctx.register_batch("runs", runs).map_err(query_error)?;
    ctx.register_table("scalars", Arc::new(scalars.into_table()?))
        .map_err(query_error)?;
    let read_only = SQLOptions::new()
        .with_allow_ddl(false)
        .with_allow_dml(false)
        .with_allow_statements(false);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .build()
        .map_err(|e| Error::Query(format!("could not start the query's threads: {e}")))?;
    runtime.block_on(async {
        let frame = ctx
            .sql_with_options(sql, read_only)
            .await
            .map_err(query_error)?;
        let schema: SchemaRef = Arc::new(frame.schema().as_arrow().clone());
        let batches = frame.collect().await.map_err(query_error)?;
        Ok((schema, batches))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::execution::session_state::SessionState;
    use std::collections::{BTreeSet, HashMap};

    /// The names of a session's scalar, aggregate, window and table functions.
    fn functions(s: &SessionState) -> [BTreeSet<String>; 4] {
        fn names<V>(m: &HashMap<String, V>) -> BTreeSet<String> {
            m.keys().cloned().collect()
        }
        [
            names(s.scalar_functions()),
            names(s.aggregate_functions()),
            names(s.window_functions()),
            names(s.table_functions()),
        ]
    }

    /// The session leaves out file formats, never a function: every function of DataFusion's
    /// default session is there.
    #[test]
    fn the_session_has_every_default_function() {
        let ours = functions(&session(1).state());
        assert_eq!(ours, functions(&SessionContext::new().state()));
        assert!(ours[0].contains("regexp_like"));
        assert!(ours[3].contains("generate_series"));
    }
}
