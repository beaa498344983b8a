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
    /// The store's failure `e` while doing `what` on `url`, said briefly with its usual cause.
    pub fn store(url: &str, what: impl Into<String>, e: &object_store::Error) -> Error {
        use object_store::Error as E;
        let text = e.to_string();
        let credentials = "credentials come from the environment (AWS_ACCESS_KEY_ID and \
                           AWS_SECRET_ACCESS_KEY, AWS_WEB_IDENTITY_TOKEN_FILE, or a role; \
                           GOOGLE_APPLICATION_CREDENTIALS; AZURE_STORAGE_ACCOUNT_NAME and a key \
                           or token)";
        let reason = if let Some(code) = xml_field(&text, "Code") {
            // S3's and Azure's error documents: their code and message, not the XML.
            let message = xml_field(&text, "Message").unwrap_or_default();
            let hint = match code {
                "NoSuchBucket" | "ContainerNotFound" => {
                    " (is the bucket's name right, and AWS_ENDPOINT_URL the store's?)"
                }
                "AccessDenied"
                | "InvalidAccessKeyId"
                | "SignatureDoesNotMatch"
                | "AuthenticationFailed" => " (check the credentials in the environment)",
                _ => "",
            };
            format!("the store answered {code}: {message}{hint}")
        } else if [
            "169.254.169.254",
            "169.254.170.2",
            "/latest/api/token",
            "/latest/meta-data",
        ]
        .iter()
        .any(|m| text.contains(m))
        {
            // No key in the environment, so the client asked the instance's metadata service.
            format!("no credentials: {credentials}, and no instance metadata service gave any")
        } else {
            match e {
                E::NotFound { .. } => format!("not found: {text}"),
                E::PermissionDenied { .. } | E::Unauthenticated { .. } => {
                    format!("access denied: {credentials}: {text}")
                }
                _ => text,
            }
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

/// The text of the first `<field>...</field>` in `text`.
fn xml_field<'a>(text: &'a str, field: &str) -> Option<&'a str> {
    let open = format!("<{field}>");
    let start = text.find(&open)? + open.len();
    let len = text[start..].find(&format!("</{field}>"))?;
    Some(&text[start..start + len])
}
