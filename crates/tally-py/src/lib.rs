//! `tally._tally`: the private compiled module behind the `tally` Python package.
//!
//! PyO3 glue only: argument conversion (`convert`), GIL release around anything that waits
//! (`logger`), Python sinks on the writer thread (`sink`), and one error mapping (`errors`).
//! The public surface is curated in `python/tally/__init__.py` and typed in `_tally.pyi`.
//!
//! Where things are (each file's own doc says the rest):
//! - writing: `logger` (`tally.Logger`; `logger/in_bucket.rs` one whose `log_dir` is a URL),
//!   `events` and `flusher` (`EventWriter` and its batch timer), `summaries`, `trace`,
//!   `remote` (a `SummaryWriter`'s W&B follower), `rank_system` (a rank's own system sampler);
//! - object storage: `bucket` (a `SummaryWriter`'s run in a bucket), `event_output` (an event
//!   file local or as a bucket's segments), `cloud` (URLs made local for the readers);
//! - reading and the rest: `read` (columns to pyarrow), `aggregate` (`tally.metrics`), and
//!   `cli`, the only file that imports `tally_cli`, for `python -m tally`.

mod aggregate;
mod bucket;
mod cli;
mod cloud;
mod console;
mod convert;
mod errors;
mod event_output;
mod events;
mod exiting;
mod flusher;
mod logger;
mod rank_system;
mod read;
mod remote;
mod sink;
mod summaries;
mod trace;
mod writer_config;

use pyo3::prelude::*;

/// How `key` of StepInput field `field` combines across ranks: `"mean"` or `"sum"`.
#[pyfunction]
fn reduction(field: &str, key: &str) -> &'static str {
    tally::reduction(field, key, &tally::UserMetrics::default()).as_str()
}

/// How an `rft` run whose outside keys are the user's takes `key` (docs/contract/rft.md "Keys
/// outside the namespace"): `("rft", None)`, `("user", why it is outside)` or `("refused", why)`.
#[pyfunction]
fn rft_key(key: &str) -> (&'static str, Option<String>) {
    match tally::schema::rft::validate_rft_key(key) {
        Ok(_) => ("rft", None),
        Err(outside) => match tally::schema::rft::outside_key_as_user(key) {
            Ok(()) => ("user", Some(outside)),
            Err(why) => (
                "refused",
                Some(format!("{outside}; as a user metric: {why}")),
            ),
        },
    }
}

#[pymodule]
fn _tally(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "METRIC_SCHEMA_VERSION",
        tally::schema::METRIC_SCHEMA_VERSION,
    )?;
    errors::register(m)?;
    // The StepInput fields after `iteration` as (name, kind): the one list the Python API is
    // tested against.
    let fields: Vec<(&str, &str)> = tally::STEP_FIELDS
        .iter()
        .map(|(n, k)| (*n, k.as_str()))
        .collect();
    m.add("STEP_FIELDS", fields)?;
    m.add_class::<logger::PyLogger>()?;
    m.add_class::<logger::Phase>()?;
    m.add_class::<trace::Span>()?;
    m.add_class::<events::EventWriter>()?;
    m.add_class::<bucket::Bucket>()?;
    m.add_class::<remote::RemoteFollower>()?;
    m.add_function(wrap_pyfunction!(reduction, m)?)?;
    m.add_function(wrap_pyfunction!(rft_key, m)?)?;
    m.add_function(wrap_pyfunction!(writer_config::record_config, m)?)?;
    m.add_function(wrap_pyfunction!(writer_config::param_table, m)?)?;
    m.add_function(wrap_pyfunction!(writer_config::redact_json, m)?)?;
    m.add_function(wrap_pyfunction!(writer_config::redact_text, m)?)?;
    m.add_function(wrap_pyfunction!(cli::cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(cloud::_mirror, m)?)?;
    m.add_function(wrap_pyfunction!(cloud::_cloud_shown, m)?)?;
    m.add_function(wrap_pyfunction!(logger::_close_open_loggers, m)?)?;
    // Registered first, so it runs after every other tally hook (atexit runs them last
    // first): from then on no thread of tally's attaches to the exiting interpreter.
    m.add_function(wrap_pyfunction!(exiting::_interpreter_exiting, m)?)?;
    let atexit = m.py().import("atexit")?;
    atexit.call_method1("register", (m.getattr("_interpreter_exiting")?,))?;
    // Loggers a script forgot are closed before interpreter teardown (the GIL can still be
    // released then, which closing a logger with a Python sink needs).
    let close = m.getattr("_close_open_loggers")?;
    atexit.call_method1("register", (close,))?;
    // Writers never closed have their last step written at exit.
    m.add_function(wrap_pyfunction!(events::_write_event_batches, m)?)?;
    atexit.call_method1("register", (m.getattr("_write_event_batches")?,))?;
    aggregate::register(m)?;
    read::register(m)?;
    summaries::register(m)?;
    rank_system::register(m)?;
    Ok(())
}
