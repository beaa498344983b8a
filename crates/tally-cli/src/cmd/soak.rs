//! `tally soak [options] -- COMMAND...`: the soak itself is [`tally_soak`]'s; here its outcome
//! becomes the command's exit.

use crate::error::{CliError, Exit};
use tally_soak::Outcome;

pub use tally_soak::SoakConfig;

/// `tally soak`: exit 0 only when the soak passed; a failed soak is an error
/// `soak failed: {reason}; soak artifact: {path}` (exit 1).
pub fn main(c: &SoakConfig) -> Result<Exit, CliError> {
    match tally_soak::run(c)? {
        Outcome::Passed => Ok(Exit::Success),
        Outcome::Failed { reason, artifact } => Err(CliError::Refused(format!(
            "soak failed: {reason}; soak artifact: {}",
            artifact.display()
        ))),
    }
}
