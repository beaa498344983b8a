//! The webhook's HTTP client: one POST over HTTP/1.1 on a `TcpStream`, its status line read
//! back, rustls for https (ARCHITECTURE.md "Choices measured").

use super::url::WebhookUrl;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Why an attempt failed: worth another (connection, timeout, 5xx, 408, 429) or not (any
/// other 4xx: a revoked or mistyped webhook stays so).
#[derive(Debug)]
pub(super) enum Failed {
    Retry(String),
    Refused(String),
}

/// One POST of `body`, Ok on a 2xx answer.
pub(super) fn post(url: &WebhookUrl, body: &[u8], timeout: Duration) -> Result<(), Failed> {
    if timeout.is_zero() {
        return Err(Failed::Retry("no time left".into()));
    }
    let where_ = format!("{}:{}", url.host, url.port);
    let addrs = (url.host.as_str(), url.port)
        .to_socket_addrs()
        .map_err(|e| Failed::Retry(format!("resolve {}: {e}", url.host)))?;
    let mut last = None;
    let mut sock = None;
    for a in addrs {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(s) => {
                sock = Some(s);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let sock = sock.ok_or_else(|| {
        let e = last.map_or_else(|| "no address".to_owned(), |e| e.to_string());
        Failed::Retry(format!("connect to {where_}: {e}"))
    })?;
    let io = |e: std::io::Error| Failed::Retry(format!("{where_}: {e}"));
    sock.set_read_timeout(Some(timeout)).map_err(io)?;
    sock.set_write_timeout(Some(timeout)).map_err(io)?;
    let _ = sock.set_nodelay(true);
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: tally/{}\r\nContent-Type: \
         application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        url.target,
        url.authority,
        env!("CARGO_PKG_VERSION"),
        body.len()
    );
    let status = if url.tls {
        let name = rustls::pki_types::ServerName::try_from(url.host.clone())
            .map_err(|e| Failed::Refused(format!("host {}: {e}", url.host)))?;
        let conn = rustls::ClientConnection::new(tls_config(), name)
            .map_err(|e| Failed::Retry(format!("{where_}: TLS: {e}")))?;
        exchange(&mut rustls::StreamOwned::new(conn, sock), &head, body)
    } else {
        exchange(&mut { sock }, &head, body)
    }
    .map_err(io)?;
    match status {
        200..=299 => Ok(()),
        408 | 429 | 500..=599 => Err(Failed::Retry(format!("HTTP {status}"))),
        _ => Err(Failed::Refused(format!("HTTP {status}"))),
    }
}

/// Where Linux distributions keep their CA bundle (Debian/Ubuntu, Fedora/RHEL, openSUSE,
/// Alpine's is Debian's path).
const CA_BUNDLES: [&str; 3] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
];

/// The client's TLS settings, made once. Its roots: the Mozilla roots built in
/// (`webpki-roots`), so a container without a CA bundle still verifies Slack and Discord, plus
/// the machine's bundle (`SSL_CERT_FILE`, else the first of [`CA_BUNDLES`] present), so a
/// network whose proxy re-signs TLS with its own CA works as it does for curl.
fn tls_config() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            use rustls::pki_types::pem::PemObject;
            use rustls::pki_types::CertificateDer;
            let mut roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            let bundle = std::env::var_os("SSL_CERT_FILE")
                .map(std::path::PathBuf::from)
                .into_iter()
                .chain(CA_BUNDLES.iter().map(std::path::PathBuf::from))
                .find(|p| p.is_file());
            if let Some(certs) = bundle.and_then(|p| CertificateDer::pem_file_iter(p).ok()) {
                // A certificate the bundle holds but rustls cannot use is skipped, as curl does.
                let certs: Vec<_> = certs.filter_map(|c| c.ok()).collect();
                roots.add_parsable_certificates(certs);
            }
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .expect("ring supports the default TLS versions")
                .with_root_certificates(roots)
                .with_no_client_auth();
            Arc::new(config)
        })
        .clone()
}

/// Writes the request, reads the status line back.
fn exchange(s: &mut (impl Read + Write), head: &str, body: &[u8]) -> std::io::Result<u16> {
    s.write_all(head.as_bytes())?;
    s.write_all(body)?;
    s.flush()?;
    let mut got = Vec::with_capacity(256);
    let mut buf = [0u8; 256];
    while !got.contains(&b'\n') {
        let n = s.read(&mut buf)?;
        if n == 0 || got.len() > 8192 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&got);
    let line = line.lines().next().unwrap_or_default();
    let bad = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "not an HTTP answer: {:?}",
                line.chars().take(40).collect::<String>()
            ),
        )
    };
    let mut words = line.split_whitespace();
    if !words.next().is_some_and(|v| v.starts_with("HTTP/1.")) {
        return Err(bad());
    }
    words
        .next()
        .and_then(|c| c.parse::<u16>().ok())
        .ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TLS end to end (handshake, the built-in roots): a public https host answers our POST
    /// with a 4xx, which is a refusal, not a TLS or connection error. Needs the network.
    #[test]
    #[ignore]
    fn https_reaches_a_public_host() {
        let url = WebhookUrl::parse("https://pypi.org/tally-webhook-check").unwrap();
        match post(&url, b"{}", Duration::from_secs(10)) {
            Err(Failed::Refused(e)) => assert!(e.starts_with("HTTP 4"), "{e}"),
            other => panic!("{other:?}"),
        }
    }
}
