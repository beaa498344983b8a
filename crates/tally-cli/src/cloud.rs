//! Path arguments that are object-store URLs (docs/contract/object-storage.md "Every front
//! end"): each read command's paths go through [`localize`] before the command runs, a URL
//! replaced by its mirror's local path (polled once; for `watch` and `board` polled on a thread
//! while the command runs); a path a command writes refuses a URL ([`refuse`]). Without the
//! `cloud` feature a URL is refused saying how to get it, never read as a local path.

use crate::error::CliError;
use std::path::{Path, PathBuf};
use tally::rundir::url_scheme;

/// What a build without object storage says of a URL.
pub const NOT_BUILT: &str = "this tally was built without object storage (the `cloud` feature \
of tally-cli, left out of the lean demo build); `pip install tally-rl`, `cargo install --path \
crates/tally-cli` or `cargo build --release -p tally-cli` (default features) bring it";

/// The mirrors' polling threads, kept for the command's life.
#[derive(Debug, Default)]
pub struct Mirrors {
    #[cfg(feature = "cloud")]
    _pollers: Vec<tally_cloud::Poller>,
}

/// Each URL among `paths` replaced by its mirror's local path; with `follow`, the mirrors stay
/// polled while the returned value lives.
pub fn localize(paths: Vec<&mut PathBuf>, follow: bool) -> Result<Mirrors, CliError> {
    #[cfg(feature = "cloud")]
    {
        let mut mirrors = Mirrors::default();
        for path in paths {
            match tally_cloud::resolve(path).map_err(|e| CliError::Run(e.to_string()))? {
                tally_cloud::Resolved::Local(local) => *path = local,
                tally_cloud::Resolved::Remote(mirror) => {
                    *path = mirror.local_path();
                    if follow {
                        mirrors._pollers.push(tally_cloud::Poller::start(
                            *mirror,
                            tally_cloud::poller::EVERY,
                            Box::new(|m| crate::stderr::line(format_args!("tally: warning: {m}"))),
                        ));
                    }
                }
            }
        }
        Ok(mirrors)
    }
    #[cfg(not(feature = "cloud"))]
    {
        let _ = follow;
        match paths.iter().find(|p| url_scheme(p).is_some()) {
            Some(p) => Err(CliError::Usage(format!("{}: {NOT_BUILT}", p.display()))),
            None => Ok(Mirrors::default()),
        }
    }
}

/// A URL among `paths` refused: `what` (the flag) takes a local path only.
pub fn refuse<'a>(paths: impl IntoIterator<Item = &'a Path>, what: &str) -> Result<(), CliError> {
    for p in paths {
        if let Some(scheme) = url_scheme(p) {
            return Err(CliError::Usage(format!(
                "{}: {what} takes a local path, not a {scheme}:// URL (docs/contract/object-storage.md)",
                p.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_a_command_writes_refuses_a_url_naming_the_flag() {
        let err = refuse([Path::new("s3://b/out.jsonl")], "--output").unwrap_err();
        assert!(
            matches!(&err, CliError::Usage(m) if m.contains("--output takes a local path, not a s3:// URL")),
            "{err:?}"
        );
        assert!(refuse([Path::new("out/s3:x")], "--output").is_ok());
    }

    #[cfg(not(feature = "cloud"))]
    #[test]
    fn without_the_feature_a_url_is_a_usage_error_saying_how_to_get_it() {
        let mut url = PathBuf::from("s3://bkt/runs");
        match localize(vec![&mut url], false) {
            Err(CliError::Usage(m)) => {
                assert!(m.starts_with("s3://bkt/runs: ") && m.ends_with(NOT_BUILT))
            }
            other => panic!("expected a usage error, got {other:?}"),
        }
        let mut local = PathBuf::from("runs");
        assert!(localize(vec![&mut local], false).is_ok());
    }
}
