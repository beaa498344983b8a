//! The one error of object storage: every message names the URL it is about and, where the
//! store's answer allows, what to check.

use std::path::PathBuf;

/// A failure reading a URL or keeping its mirror.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The URL cannot be used: not a URL, a scheme no store serves, a bucket missing from it.
    #[error("{url}: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// The store refused or failed a request.
    #[error("{url}: {what}: {reason}")]
    Store {
        /// The URL (or the object's URL) asked about.
        url: String,
        /// The request (`listing`, `reading <key>`, `connecting`).
        what: String,
        /// The store's answer, with a hint where it has a usual cause.
        reason: String,
    },
    /// The local mirror could not be written.
    #[error("{}: {what}: {source}", path.display())]
    Local {
        /// The local file or directory.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The OS's error.
        #[source]
        source: std::io::Error,
    },
}

/// This crate's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The store's failure `e` while doing `what` on `url`, with the usual cause said.
    pub fn store(url: &str, what: impl Into<String>, e: &object_store::Error) -> Error {
        use object_store::Error as E;
        let reason = match e {
            E::NotFound { .. } => format!(
                "not found (does the bucket exist, and is the endpoint the right one?): {e}"
            ),
            E::PermissionDenied { .. } | E::Unauthenticated { .. } => format!(
                "access denied: credentials come from the environment (AWS_ACCESS_KEY_ID and \
                 AWS_SECRET_ACCESS_KEY or a role; GOOGLE_APPLICATION_CREDENTIALS; \
                 AZURE_STORAGE_ACCOUNT_NAME and a key or token): {e}"
            ),
            _ => e.to_string(),
        };
        Error::Store {
            url: url.to_owned(),
            what: what.into(),
            reason,
        }
    }

    /// A local I/O failure on `path` while doing `what`.
    pub fn local(
        what: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Local { path, what, source }
    }
}
