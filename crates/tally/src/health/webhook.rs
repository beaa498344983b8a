//! The health webhook (docs/contract/health.md "Webhook"): each new finding posted once, as
//! JSON that Slack's and Discord's incoming webhooks both take, from a thread of its own that
//! follows [`LiveHealth`] with its own cursor; retried with back-off, bounded, never on the
//! step's path.
//!
//! The URL is a secret (its path is the credential): it is held in [`WebhookUrl`], whose
//! `Debug` and [`WebhookUrl::redacted`] show the scheme and host only, and no error text
//! carries it.
//!
//! The URL is checked in `webhook/url.rs`; the HTTP client, our own HTTP/1.1 with rustls for
//! https, is `webhook/post.rs`.

mod post;
mod url;

pub use url::WebhookUrl;

use super::finding::Finding;
use super::live::{finding_text, LiveHealth};
use post::{post, Failed};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tally_schema::artifacts::HealthWebhookProgress;

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

#[cfg(test)]
mod tests {
    use super::*;

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
