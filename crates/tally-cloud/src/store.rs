//! The client for a URL, configured as the user's cloud tools are (docs/contract/object-storage.md
//! "Configuration"): S3 from `AWS_*` (`AWS_ENDPOINT_URL` for MinIO and other S3-compatible
//! stores, an `http://` endpoint allowed because the user wrote it), GCS from `GOOGLE_*` and
//! the application default credentials, Azure from `AZURE_*`, plain HTTP(S) (WebDAV listing)
//! as it is. Timeouts and retries are bounded so a store that does not answer is an error in
//! seconds, never a hang.

use crate::error::{Error, Result};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::http::HttpBuilder;
use object_store::path::Path;
use object_store::{
    BackoffConfig, ClientConfigKey, ClientOptions, ObjectStore, ObjectStoreScheme, RetryConfig,
};
use std::sync::Arc;
use std::time::Duration;

/// A URL's store and the prefix below which its runs are.
#[derive(Debug, Clone)]
pub struct Remote {
    /// The URL as given, without a trailing `/`.
    pub url: String,
    /// The store serving it.
    pub store: Arc<dyn ObjectStore>,
    /// The key prefix the URL names (empty for a whole bucket).
    pub prefix: Path,
}

/// Schemes a URL may have, for the messages that list them.
pub const SCHEMES: &str = "s3://, s3a://, gs://, az://, abfs(s)://, azure://, http(s)://";

/// Seconds a request may take before it is an error (overridable as `AWS_TIMEOUT`, ...).
const TIMEOUT: &str = "30s";
/// Seconds to connect (overridable as `AWS_CONNECT_TIMEOUT`, ...).
const CONNECT_TIMEOUT: &str = "5s";

/// Retries of a failed request (5xx, a dropped connection), within 15 s.
fn retry() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig::default(),
        max_retries: 3,
        retry_timeout: Duration::from_secs(15),
    }
}

/// Whether the environment sets `key` (`AWS_TIMEOUT` ...): then the user's value stands.
fn env_sets(key: &str) -> bool {
    std::env::var_os(key).is_some()
}

/// The client for `url` from the environment.
pub fn connect(url: &str) -> Result<Remote> {
    let trimmed = url.trim_end_matches('/');
    let parsed = url::Url::parse(trimmed).map_err(|e| Error::Url {
        url: url.to_owned(),
        reason: format!("not a URL: {e}"),
    })?;
    let (scheme, prefix) = ObjectStoreScheme::parse(&parsed).map_err(|e| Error::Url {
        url: url.to_owned(),
        reason: format!("not an object-store URL ({SCHEMES}): {e}"),
    })?;
    let built: Result<Arc<dyn ObjectStore>, object_store::Error> = match scheme {
        ObjectStoreScheme::AmazonS3 => {
            let mut b = AmazonS3Builder::from_env()
                .with_url(trimmed)
                .with_retry(retry());
            for (key, value, env) in [
                (ClientConfigKey::Timeout, TIMEOUT, "AWS_TIMEOUT"),
                (
                    ClientConfigKey::ConnectTimeout,
                    CONNECT_TIMEOUT,
                    "AWS_CONNECT_TIMEOUT",
                ),
            ] {
                if !env_sets(env) {
                    b = b.with_config(AmazonS3ConfigKey::Client(key), value);
                }
            }
            // An endpoint the user wrote as http:// (moto, MinIO on a laptop) is meant.
            let endpoint = ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"]
                .iter()
                .find_map(|k| std::env::var(k).ok());
            if endpoint.is_some_and(|e| e.starts_with("http://")) {
                b = b.with_allow_http(true);
            }
            b.build().map(|s| Arc::new(s) as Arc<dyn ObjectStore>)
        }
        ObjectStoreScheme::GoogleCloudStorage => {
            let mut b = GoogleCloudStorageBuilder::from_env()
                .with_url(trimmed)
                .with_retry(retry());
            for (key, value, env) in [
                (ClientConfigKey::Timeout, TIMEOUT, "GOOGLE_TIMEOUT"),
                (
                    ClientConfigKey::ConnectTimeout,
                    CONNECT_TIMEOUT,
                    "GOOGLE_CONNECT_TIMEOUT",
                ),
            ] {
                if !env_sets(env) {
                    b = b.with_config(GoogleConfigKey::Client(key), value);
                }
            }
            b.build().map(|s| Arc::new(s) as Arc<dyn ObjectStore>)
        }
        ObjectStoreScheme::MicrosoftAzure => {
            let mut b = MicrosoftAzureBuilder::from_env()
                .with_url(trimmed)
                .with_retry(retry());
            for (key, value, env) in [
                (ClientConfigKey::Timeout, TIMEOUT, "AZURE_TIMEOUT"),
                (
                    ClientConfigKey::ConnectTimeout,
                    CONNECT_TIMEOUT,
                    "AZURE_CONNECT_TIMEOUT",
                ),
            ] {
                if !env_sets(env) {
                    b = b.with_config(AzureConfigKey::Client(key), value);
                }
            }
            b.build().map(|s| Arc::new(s) as Arc<dyn ObjectStore>)
        }
        ObjectStoreScheme::Http => {
            let origin = &parsed[..url::Position::BeforePath];
            HttpBuilder::new()
                .with_url(origin)
                .with_retry(retry())
                .with_client_options(
                    ClientOptions::new()
                        .with_timeout(Duration::from_secs(30))
                        .with_connect_timeout(Duration::from_secs(5))
                        .with_allow_http(true),
                )
                .build()
                .map(|s| Arc::new(s) as Arc<dyn ObjectStore>)
        }
        ObjectStoreScheme::Local | ObjectStoreScheme::Memory => {
            return Err(Error::Url {
                url: url.to_owned(),
                reason: format!("not an object-store URL ({SCHEMES}); give a local path as a path"),
            })
        }
        _ => {
            return Err(Error::Url {
                url: url.to_owned(),
                reason: format!("a scheme this build does not serve ({SCHEMES})"),
            })
        }
    };
    let store = built.map_err(|e| Error::store(url, "configuring the client", &e))?;
    Ok(Remote {
        url: trimmed.to_owned(),
        store,
        prefix,
    })
}
