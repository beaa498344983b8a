//! The health webhook (docs/contract/health.md "Webhook"): each new finding posted once, as
//! JSON that Slack's and Discord's incoming webhooks both take, from a thread of its own that
//! follows [`LiveHealth`] with its own cursor; retried with back-off, bounded, never on the
//! step's path.
//!
//! The URL is a secret (its path is the credential): it is held in [`WebhookUrl`], whose
//! `Debug` and [`WebhookUrl::redacted`] show the scheme and host only, and no error text
//! carries it.
//!
//! The HTTP client is our own HTTP/1.1 (one request, its status line read back) over a
//! `TcpStream`, with rustls for https (ARCHITECTURE.md "Choices measured").

use super::finding::Finding;
use super::live::{finding_text, LiveHealth};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tally_schema::artifacts::HealthWebhookProgress;

/// A webhook URL, parsed and checked when the logger is configured.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookUrl {
    full: String,
    tls: bool,
    /// The host as it is connected to (an IPv6 address without its brackets).
    host: String,
    port: u16,
    /// `Host:` header's value (the authority as written).
    authority: String,
    /// Path and query, the request target.
    target: String,
}

impl std::fmt::Debug for WebhookUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WebhookUrl({})", self.redacted())
    }
}

impl WebhookUrl {
    /// Checks `url`: `https://` or `http://`, a host, an optional port, no credentials, no
    /// spaces or control characters. The error names what is wrong without repeating the URL
    /// (it is a secret).
    pub fn parse(url: &str) -> Result<Self, String> {
        if let Some(i) = url.find(|c: char| c.is_whitespace() || c.is_control()) {
            return Err(format!(
                "the URL has a space or control character at byte {i} (a URL pasted with its \
                 line end?)"
            ));
        }
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(
                "not a URL: expected https://HOST/PATH (Slack's and Discord's webhook URLs are \
                 https)"
                    .into(),
            );
        };
        let tls = match scheme.to_ascii_lowercase().as_str() {
            "https" => true,
            "http" => false,
            other => {
                let shown: String = other.chars().take(16).collect();
                return Err(format!(
                    "scheme '{shown}' is not http or https (Slack's and Discord's webhook URLs \
                     are https)"
                ));
            }
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        if authority.contains('@') {
            return Err("credentials in the URL (user@host) are not supported".into());
        }
        let (host, port) = split_port(authority)?;
        let port = port.unwrap_or(if tls { 443 } else { 80 });
        if host.is_empty() {
            return Err("the URL has no host".into());
        }
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | ':');
        if !bare.chars().all(ok) {
            return Err(format!(
                "host '{}' has a character a host name cannot",
                host.chars().take(64).collect::<String>()
            ));
        }
        let tail = tail.split('#').next().unwrap_or_default();
        let target = match tail.starts_with('/') {
            true => tail.to_owned(),
            false => format!("/{tail}"),
        };
        Ok(WebhookUrl {
            full: url.to_owned(),
            tls,
            host: bare.to_owned(),
            port,
            authority: authority.to_owned(),
            target,
        })
    }

    /// The URL as given: the secret. Only the webhook thread and the run's own redaction use it.
    pub fn secret(&self) -> &str {
        &self.full
    }

    /// Scheme and host, the path and query (the secret) replaced:
    /// `https://hooks.slack.com/<redacted>`.
    pub fn redacted(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}/{}", self.authority, crate::redact::REDACTED)
    }
}

/// `host[:port]`, an IPv6 address in brackets.
fn split_port(authority: &str) -> Result<(&str, Option<u16>), String> {
    let colon = match authority.rfind(']') {
        Some(b) => authority[b..].find(':').map(|i| b + i),
        None => authority.rfind(':'),
    };
    let Some(c) = colon else {
        return Ok((authority, None));
    };
    let digits = &authority[c + 1..];
    match digits.parse::<u16>() {
        Ok(p) if p > 0 => Ok((&authority[..c], Some(p))),
        _ => Err(format!(
            "port '{}' is not a number from 1 to 65535",
            digits.chars().take(16).collect::<String>()
        )),
    }
}

/// A webhook and how hard it is tried (docs/contract/health.md "Webhook").
#[derive(Debug, Clone, PartialEq)]
pub struct HealthWebhook {
    /// Where each finding is posted.
    pub url: WebhookUrl,
    /// Attempts per finding before it is counted undelivered.
    pub attempts: u32,
    /// The wait after the first failed attempt, doubled after each next one.
    pub backoff_secs: f64,
    /// The longest wait between attempts.
    pub max_backoff_secs: f64,
    /// One attempt's bound: connecting, sending, and the answer's status line.
    pub attempt_timeout_secs: f64,
    /// The most `close` waits for findings still to post; the rest are counted undelivered.
    pub close_timeout_secs: f64,
}

impl HealthWebhook {
    /// `url` checked, with the default retries: 5 attempts, 0.5 s doubled up to 8 s between
    /// them, 5 s per attempt, 5 s at close.
    pub fn new(url: &str) -> Result<Self, String> {
        Ok(HealthWebhook {
            url: WebhookUrl::parse(url)?,
            attempts: 5,
            backoff_secs: 0.5,
            max_backoff_secs: 8.0,
            attempt_timeout_secs: 5.0,
            close_timeout_secs: 5.0,
        })
    }

    /// What is wrong with the retry settings, naming the field.
    pub fn problem(&self) -> Option<String> {
        if self.attempts == 0 {
            return Some("attempts must be at least 1".into());
        }
        for (name, v) in [
            ("backoff_secs", self.backoff_secs),
            ("max_backoff_secs", self.max_backoff_secs),
            ("attempt_timeout_secs", self.attempt_timeout_secs),
            ("close_timeout_secs", self.close_timeout_secs),
        ] {
            if !(v.is_finite() && (0.0..=3600.0).contains(&v)) {
                return Some(format!(
                    "{name} {v} must be a number of seconds from 0 to 3600"
                ));
            }
        }
        (self.attempt_timeout_secs == 0.0)
            .then(|| "attempt_timeout_secs must be above 0".to_owned())
    }
}

/// What the webhook thread has done, read by the logger for each summary.
#[derive(Debug, Default)]
struct Counts {
    posted: AtomicU64,
    undelivered: AtomicU64,
    last_error: Mutex<Option<String>>,
}

/// The webhook's own thread, following the run's findings.
pub struct WebhookThread {
    counts: Arc<Counts>,
    destination: String,
    health: Arc<LiveHealth>,
    close_timeout: Duration,
    /// Closing: the deadline the thread posts what is left by.
    stop: Option<Sender<Instant>>,
    done: Receiver<()>,
    finished: Option<HealthWebhookProgress>,
}

impl std::fmt::Debug for WebhookThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookThread")
            .field("destination", &self.destination)
            .finish_non_exhaustive()
    }
}

/// How often the thread looks for new findings (one atomic read each time).
const POLL: Duration = Duration::from_millis(200);

/// What the thread calls with a warning for the terminal (a finding given up on).
pub type Warn = Box<dyn Fn(String) + Send>;

impl WebhookThread {
    /// Starts the thread posting each new finding of `health` once; `label` names the run in
    /// each message.
    pub fn start(
        health: Arc<LiveHealth>,
        hook: HealthWebhook,
        label: String,
        warn: Warn,
    ) -> std::io::Result<Self> {
        let counts = Arc::new(Counts::default());
        let (stop_tx, stop_rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let destination = hook.url.redacted();
        let close_timeout = Duration::from_secs_f64(hook.close_timeout_secs);
        let mut poster = Poster {
            hook,
            label,
            counts: counts.clone(),
            stop: stop_rx,
            closing: None,
            warn,
        };
        let h = health.clone();
        std::thread::Builder::new()
            .name("tally-webhook".into())
            .spawn(move || {
                poster.run(&h);
                let _ = done_tx.send(());
            })?;
        Ok(WebhookThread {
            counts,
            destination,
            health,
            close_timeout,
            stop: Some(stop_tx),
            done: done_rx,
            finished: None,
        })
    }

    /// Deliveries so far (final once [`WebhookThread::finish`] has run).
    pub fn progress(&self) -> HealthWebhookProgress {
        if let Some(p) = &self.finished {
            return p.clone();
        }
        HealthWebhookProgress {
            destination: self.destination.clone(),
            posted: self.counts.posted.load(Ordering::Acquire),
            undelivered: self.counts.undelivered.load(Ordering::Acquire),
            last_error: self
                .counts
                .last_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }

    /// Posts what is left within the close bound and stops the thread; findings it could not
    /// post by then are counted undelivered. Waits at most `close_timeout_secs`.
    pub fn finish(&mut self) -> HealthWebhookProgress {
        if let Some(p) = &self.finished {
            return p.clone();
        }
        let deadline = Instant::now() + self.close_timeout;
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(deadline);
        }
        // A thread still in an attempt past the bound is left to end on its own (its socket
        // has a timeout); the run does not wait for it.
        let _ = self
            .done
            .recv_timeout(deadline.saturating_duration_since(Instant::now()));
        let mut p = self.progress();
        let handled = p.posted + p.undelivered;
        p.undelivered += (self.health.len() as u64).saturating_sub(handled);
        self.finished = Some(p.clone());
        p
    }
}

impl Drop for WebhookThread {
    fn drop(&mut self) {
        // Without finish (a logger dropped unclosed): the thread stops at once.
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(Instant::now());
        }
    }
}

/// The thread's state.
struct Poster {
    hook: HealthWebhook,
    label: String,
    counts: Arc<Counts>,
    stop: Receiver<Instant>,
    /// Set at close: nothing is attempted past it.
    closing: Option<Instant>,
    warn: Warn,
}

impl Poster {
    fn run(&mut self, health: &LiveHealth) {
        let mut cursor = 0;
        loop {
            if self.closing.is_none() {
                self.wait(POLL);
            }
            for f in health.since(&mut cursor) {
                self.deliver(&f);
            }
            if self.closing.is_some() {
                return;
            }
        }
    }

    /// Waits up to `d`, or until close is asked (then the close's deadline holds).
    fn wait(&mut self, d: Duration) {
        let d = match self.closing {
            Some(c) => d.min(c.saturating_duration_since(Instant::now())),
            None => d,
        };
        match self.stop.recv_timeout(d) {
            Ok(deadline) => self.closing = Some(deadline),
            Err(RecvTimeoutError::Disconnected) if self.closing.is_none() => {
                self.closing = Some(Instant::now());
            }
            Err(_) => {}
        }
    }

    fn past_deadline(&self) -> bool {
        self.closing.is_some_and(|c| Instant::now() >= c)
    }

    fn deliver(&mut self, f: &Finding) {
        let body = body(&self.label, f);
        let mut backoff = self.hook.backoff_secs;
        let mut error = String::new();
        for attempt in 0..self.hook.attempts {
            if attempt > 0 {
                self.wait(Duration::from_secs_f64(backoff));
                backoff = (backoff * 2.0).min(self.hook.max_backoff_secs);
            }
            if self.past_deadline() {
                error = format!("{error} (close's bound reached)");
                break;
            }
            let mut timeout = Duration::from_secs_f64(self.hook.attempt_timeout_secs);
            if let Some(c) = self.closing {
                timeout = timeout.min(c.saturating_duration_since(Instant::now()));
            }
            match post(&self.hook.url, body.as_bytes(), timeout) {
                Ok(()) => {
                    self.counts.posted.fetch_add(1, Ordering::AcqRel);
                    return;
                }
                Err(Failed::Retry(e)) => error = e,
                Err(Failed::Refused(e)) => {
                    error = e;
                    break;
                }
            }
        }
        let error = crate::redact::redact_text(&error.replace(self.hook.url.secret(), "<url>"))
            .into_owned();
        self.counts.undelivered.fetch_add(1, Ordering::AcqRel);
        *self
            .counts
            .last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(error.clone());
        let on = match f.tag.is_empty() {
            true => String::new(),
            false => format!(" on {}", f.tag),
        };
        (self.warn)(format!(
            "health webhook: {}{on} not delivered to {} ({error}); counted in run_summary.json \
             health_alerts",
            f.rule.as_str(),
            self.hook.url.redacted()
        ));
    }
}

/// Discord takes at most 2 000 characters of `content`.
const MAX_TEXT_CHARS: usize = 2000;

/// The JSON posted for a finding: `text` for Slack, `content` for Discord, the same line in
/// both (each ignores the other's key).
pub fn body(label: &str, f: &Finding) -> String {
    let mut text = format!("tally {label}: {}", finding_text(f));
    if f.first_step != f.last_step || f.count > 1 {
        text += &format!(
            " (steps {}–{}, {} values)",
            f.first_step, f.last_step, f.count
        );
    }
    if let Some((i, _)) = text.char_indices().nth(MAX_TEXT_CHARS) {
        text.truncate(i);
    }
    serde_json::json!({ "text": text, "content": text }).to_string()
}

/// Why an attempt failed: worth another (connection, timeout, 5xx, 408, 429) or not (any
/// other 4xx: a revoked or mistyped webhook stays so).
#[derive(Debug)]
enum Failed {
    Retry(String),
    Refused(String),
}

/// One POST of `body`, Ok on a 2xx answer.
fn post(url: &WebhookUrl, body: &[u8], timeout: Duration) -> Result<(), Failed> {
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

    #[test]
    fn a_url_is_checked_and_never_repeated_in_an_error() {
        let u = WebhookUrl::parse("https://hooks.slack.com/services/T0/B0/SECRET").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.tls),
            ("hooks.slack.com", 443, true)
        );
        assert_eq!(u.target, "/services/T0/B0/SECRET");
        assert_eq!(u.redacted(), "https://hooks.slack.com/<redacted>");
        assert!(!format!("{u:?}").contains("SECRET"));
        let u = WebhookUrl::parse("http://127.0.0.1:8080?x=1").unwrap();
        assert_eq!((u.port, u.target.as_str()), (8080, "/?x=1"));
        let u = WebhookUrl::parse("http://[::1]:9/hook").unwrap();
        assert_eq!((u.host.as_str(), u.authority.as_str()), ("::1", "[::1]:9"));
        for (bad, says) in [
            ("hooks.slack.com/services/SECRET", "not a URL"),
            ("ftp://h/SECRET", "scheme 'ftp'"),
            ("https://h:0/SECRET", "port '0'"),
            ("https://h:99999/SECRET", "port '99999'"),
            ("https://u:SECRET@h/x", "credentials"),
            ("https:///SECRET", "no host"),
            ("https://h/SECRET\n", "control character at byte 16"),
            ("https://h%2F/SECRET", "host 'h%2F'"),
        ] {
            let e = WebhookUrl::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
            assert!(!e.contains("SECRET"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn the_body_is_one_line_under_both_keys_and_fits_discord() {
        let f = Finding {
            rule: super::super::RuleKind::Nonfinite,
            tag: "Loss/critic".into(),
            first_step: 150,
            last_step: 150,
            count: 1,
            last_value: f64::NAN,
            message: "NaN at step 150".into(),
        };
        let b: serde_json::Value = serde_json::from_str(&body("sac Pendulum", &f)).unwrap();
        let want = "tally sac Pendulum: health: nonfinite on Loss/critic: NaN at step 150";
        assert_eq!(b["text"], want);
        assert_eq!(b["content"], want);
        let long = Finding {
            message: "é".repeat(5000),
            ..f
        };
        let b: serde_json::Value = serde_json::from_str(&body("x", &long)).unwrap();
        assert_eq!(
            b["content"].as_str().unwrap().chars().count(),
            MAX_TEXT_CHARS
        );
    }

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

    #[test]
    fn retry_settings_out_of_range_are_named() {
        let mut h = HealthWebhook::new("http://h/x").unwrap();
        assert_eq!(h.problem(), None);
        h.close_timeout_secs = -1.0;
        assert!(h.problem().unwrap().contains("close_timeout_secs -1"));
        h.close_timeout_secs = 1.0;
        h.attempts = 0;
        assert!(h.problem().unwrap().contains("attempts"));
    }
}
