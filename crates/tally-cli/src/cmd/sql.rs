//! `tally sql PATH... QUERY [--csv|--json]`: a read-only SQL query over the runs under the
//! paths ([`tally_sql`]: tables `runs` and `scalars`), its answer as an aligned table, CSV or
//! JSON. The query engine is the CLI's `sql` feature (on by default, in `cargo install` and the
//! wheel; off in the README's demo build, which then compiles no query engine): without it the
//! command is still parsed and says how to get it.

#[cfg(feature = "sql")]
mod answer;

use crate::error::CliError;
use crate::error::Exit;
use std::path::PathBuf;

/// `tally sql`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Event files, or directories searched recursively for `events.out.tfevents.*`.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The query, e.g. "SELECT tag, count(*) FROM scalars GROUP BY tag".
    pub query: String,
    /// Skip a run whose steps go back across its files (without a purge marker).
    #[arg(long)]
    pub strict: bool,
    /// The printing: `--json` or `--csv`, else aligned columns.
    #[command(flatten)]
    pub format: super::TableFlags,
}

/// What `tally sql` says in a build without the query engine.
pub const NOT_BUILT: &str = "this tally was built without its SQL engine (the `sql` feature of \
tally-cli, left out of the lean demo build); `pip install tally-rl`, `cargo install --path \
crates/tally-cli` or `cargo build --release -p tally-cli` (default features) bring it";

impl Args {
    /// Check the flags and run the command.
    pub fn execute(self) -> Result<Exit, CliError> {
        #[cfg(feature = "sql")]
        {
            let Args {
                paths,
                query,
                strict,
                format,
            } = self;
            let output = format.output();
            super::to_stdout(|out| answer::run(&paths, &query, strict, output, out))
        }
        #[cfg(not(feature = "sql"))]
        {
            let _ = self;
            Err(CliError::Usage(NOT_BUILT.to_string()))
        }
    }
}

#[cfg(all(test, not(feature = "sql")))]
mod tests {
    use super::*;

    #[test]
    fn without_the_engine_sql_is_a_usage_error_saying_how_to_get_it() {
        let args = Args {
            paths: vec![PathBuf::from(".")],
            query: "SELECT 1".into(),
            strict: false,
            format: super::super::TableFlags {
                json: false,
                csv: false,
            },
        };
        // A usage error: exit 2, the message printed as it is.
        match args.execute() {
            Err(CliError::Usage(m)) => assert_eq!(m, NOT_BUILT),
            other => panic!("expected a usage error, got {other:?}"),
        }
    }
}
