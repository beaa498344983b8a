//! [`RowSink`]: where an export's rows go (the text formats' writer or the Parquet file).

use crate::error::Error;
use tally_tfevents::ScalarRef;

/// Where rows go.
pub(super) trait RowSink {
    fn header(&mut self) -> Result<(), Error> {
        Ok(())
    }
    /// The rows that follow are of `run`.
    fn start_run(&mut self, run: &str);
    fn row(&mut self, s: ScalarRef<'_>) -> Result<(), Error>;
    fn finish(&mut self) -> Result<(), Error>;
}
