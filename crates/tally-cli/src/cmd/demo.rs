//! `tally demo`: run the synthetic training job of `tally_demo` until its last iteration or
//! Ctrl-C/SIGTERM, then print `run: <dir>`.

use crate::error::{CliError, Exit};
use std::io::Write as _;
use tally::RunStatus;
use tally_demo::{DemoConfig, SinkFactory};

/// `tally demo`: run, print `run: <dir>`; [`Exit::Interrupted`] when Ctrl-C stopped it.
pub fn main(c: &DemoConfig, sinks: Option<&SinkFactory<'_>>) -> Result<Exit, CliError> {
    let stop = crate::interrupt::interrupt_flag();
    let outcome = tally_demo::run(c, sinks, stop)?;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "run: {}", outcome.run_dir.display());
    let _ = out.flush();
    if outcome.status == RunStatus::Interrupted {
        crate::stderr::line("tally: interrupted; the run was closed with status interrupted");
        Ok(Exit::Interrupted)
    } else {
        Ok(Exit::Success)
    }
}
