//! The health webhook against a local HTTP server (docs/contract/health.md "Webhook"): each
//! finding posted once with Slack's and Discord's keys, retried after failures, counted when
//! undelivered, never slowing `step` nor holding `close` past its bound, and its URL in no
//! file of the run.

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tally::health::webhook::HealthWebhook;
use tally::{Backend, Error, Logger, LoggerConfig, RunStatus, StepInput};

/// The webhook's secret part: it must appear in no file of the run.
const TOKEN: &str = "T0K3N-s3cr3t";

/// One request as the server read it: its request line and headers, and its body.
#[derive(Debug, Clone)]
struct Request {
    head: String,
    body: String,
}

/// How the server answers.
#[derive(Clone)]
enum Answer {
    /// The status of the n-th request (the last repeats).
    Statuses(Vec<u16>),
    /// Reads the request and never answers.
    Silent,
}

struct Server {
    url: String,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Server {
    fn start(answer: Answer) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook/{TOKEN}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        let n = Arc::new(AtomicUsize::new(0));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { return };
                let (seen, n, answer) = (seen.clone(), n.clone(), answer.clone());
                // A connection each: a silent one does not hold the next.
                std::thread::spawn(move || handle(conn, &seen, &n, &answer));
            }
        });
        Server { url, requests }
    }

    fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// Waits up to 10 s for `n` requests.
    fn wait_for(&self, n: usize) -> Vec<Request> {
        let start = Instant::now();
        while self.requests().len() < n && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.requests()
    }
}

fn handle(mut conn: TcpStream, seen: &Mutex<Vec<Request>>, n: &AtomicUsize, answer: &Answer) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(k) => got.extend_from_slice(&buf[..k]),
        }
    };
    let head = String::from_utf8_lossy(&got[..head_end]).into_owned();
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while got.len() < head_end + len {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(k) => got.extend_from_slice(&buf[..k]),
        }
    }
    let body = String::from_utf8_lossy(&got[head_end..head_end + len]).into_owned();
    seen.lock().unwrap().push(Request { head, body });
    let i = n.fetch_add(1, Ordering::SeqCst);
    match answer {
        Answer::Silent => std::thread::sleep(Duration::from_secs(120)),
        Answer::Statuses(codes) => {
            let code = codes[i.min(codes.len() - 1)];
            let _ = write!(
                conn,
                "HTTP/1.1 {code} X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
            );
        }
    }
}

fn config(dir: &std::path::Path, hook: HealthWebhook) -> LoggerConfig {
    let mut c = LoggerConfig::new("sac", "webhook", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.backend = Backend::TensorBoard;
    c.health_webhook = Some(hook);
    c
}

fn quick(url: &str) -> HealthWebhook {
    let mut h = HealthWebhook::new(url).unwrap();
    h.backoff_secs = 0.05;
    h.max_backoff_secs = 0.2;
    h.attempt_timeout_secs = 2.0;
    h.close_timeout_secs = 2.0;
    h
}

fn step(log: &mut Logger, it: u64, critic: f64, actor: f64) {
    log.step(
        &StepInput::new(it)
            .metric("Loss/critic", critic)
            .metric("Loss/actor", actor),
    )
    .unwrap();
}

fn summary(log: &Logger) -> Value {
    let text = std::fs::read_to_string(log.run_dir().join("run_summary.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn each_finding_is_posted_once_with_both_keys() {
    let server = Server::start(Answer::Statuses(vec![200]));
    let dir = tempfile::tempdir().unwrap();
    let mut log = Logger::new(config(dir.path(), quick(&server.url))).unwrap();
    for it in 1..=4 {
        step(&mut log, it, 1.0, 1.0);
    }
    step(&mut log, 5, f64::NAN, 1.0);
    step(&mut log, 6, f64::NAN, 1.0);
    log.flush().unwrap();
    // Posted during the run, not only at close.
    let got = server.wait_for(1);
    assert_eq!(got.len(), 1, "{got:?}");
    step(&mut log, 7, 1.0, f64::INFINITY);
    log.close(RunStatus::Completed).unwrap();
    let got = server.requests();
    assert_eq!(got.len(), 2, "one post per finding: {got:?}");
    let first = got[0].head.lines().next().unwrap();
    assert_eq!(first, format!("POST /hook/{TOKEN} HTTP/1.1"));
    assert!(got[0]
        .head
        .to_ascii_lowercase()
        .contains("content-type: application/json"));
    let bodies: Vec<Value> = got
        .iter()
        .map(|r| serde_json::from_str(&r.body).unwrap())
        .collect();
    for b in &bodies {
        assert_eq!(b["text"], b["content"], "{b}");
        assert_eq!(b.as_object().unwrap().len(), 2, "{b}");
    }
    let text = bodies[0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("tally sac webhook: health: nonfinite on Loss/critic: NaN at step 5"),
        "{text}"
    );
    assert!(bodies[1]["text"]
        .as_str()
        .unwrap()
        .contains("nonfinite on Loss/actor"));
    let w = &summary(&log)["health_alerts"];
    assert_eq!(w["posted"], 2, "{w}");
    assert_eq!(w["undelivered"], 0, "{w}");
    assert_eq!(w["last_error"], Value::Null, "{w}");
    let host = server.url.split('/').nth(2).unwrap();
    assert_eq!(w["destination"], format!("http://{host}/<redacted>"));
}

#[test]
fn a_server_failing_at_first_gets_the_finding_after_retries() {
    let server = Server::start(Answer::Statuses(vec![500, 503, 429, 204]));
    let dir = tempfile::tempdir().unwrap();
    let mut log = Logger::new(config(dir.path(), quick(&server.url))).unwrap();
    step(&mut log, 1, f64::NAN, 1.0);
    log.flush().unwrap();
    assert_eq!(server.wait_for(4).len(), 4);
    log.close(RunStatus::Completed).unwrap();
    let got = server.requests();
    assert_eq!(got.len(), 4, "three failures, then delivered: {got:?}");
    assert!(
        got.iter().all(|r| r.body == got[0].body),
        "the same finding each time"
    );
    let w = &summary(&log)["health_alerts"];
    assert_eq!(
        (w["posted"].as_u64(), w["undelivered"].as_u64()),
        (Some(1), Some(0)),
        "{w}"
    );
}

#[test]
fn a_finding_never_accepted_is_counted_undelivered() {
    // Retries run out on a failing server; a 4xx other than 408/429 is not retried.
    for (codes, attempts, error) in [(vec![500], 3, "HTTP 500"), (vec![404], 1, "HTTP 404")] {
        let server = Server::start(Answer::Statuses(codes));
        let dir = tempfile::tempdir().unwrap();
        let mut hook = quick(&server.url);
        hook.attempts = 3;
        let mut log = Logger::new(config(dir.path(), hook)).unwrap();
        step(&mut log, 1, f64::NAN, 1.0);
        log.close(RunStatus::Completed).unwrap();
        assert_eq!(server.requests().len(), attempts, "{error}");
        let w = &summary(&log)["health_alerts"];
        assert_eq!(
            (w["posted"].as_u64(), w["undelivered"].as_u64()),
            (Some(0), Some(1)),
            "{w}"
        );
        assert_eq!(w["last_error"], error, "{w}");
    }
}

#[test]
fn a_server_that_never_answers_slows_neither_step_nor_close() {
    let server = Server::start(Answer::Silent);
    let dir = tempfile::tempdir().unwrap();
    let mut hook = quick(&server.url);
    hook.attempt_timeout_secs = 30.0;
    hook.close_timeout_secs = 1.0;
    let mut log = Logger::new(config(dir.path(), hook)).unwrap();
    step(&mut log, 1, f64::NAN, 1.0);
    log.flush().unwrap();
    assert_eq!(server.wait_for(1).len(), 1, "the attempt is under way");
    // The webhook's thread is stuck in its attempt; the steps do not wait for it.
    let start = Instant::now();
    for it in 2..=500 {
        step(&mut log, it, 1.0, 1.0);
    }
    log.flush().unwrap();
    let steps = start.elapsed();
    assert!(steps < Duration::from_secs(2), "500 steps took {steps:?}");
    let start = Instant::now();
    log.close(RunStatus::Completed).unwrap();
    let closing = start.elapsed();
    assert!(
        closing < Duration::from_millis(2500),
        "close took {closing:?}"
    );
    let w = &summary(&log)["health_alerts"];
    assert_eq!(
        (w["posted"].as_u64(), w["undelivered"].as_u64()),
        (Some(0), Some(1)),
        "{w}"
    );
}

#[test]
fn the_url_is_in_no_file_of_the_run() {
    let server = Server::start(Answer::Statuses(vec![200]));
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), quick(&server.url));
    // The user's own config holds the URL under harmless names, and in a command line.
    c.run_config = serde_json::json!({
        "alerts": {"to": server.url},
        "argv": ["train.py", "--notify", server.url],
        "cmd": format!("train.py --notify {} --seed 1", server.url),
    });
    c.trace = true;
    c.name = Some("url test".into());
    let mut log = Logger::new(c).unwrap();
    for it in 1..=3 {
        step(&mut log, it, 1.0, 1.0);
    }
    step(&mut log, 4, f64::NAN, 1.0);
    log.status(tally::Level::Info, "warming up".to_owned());
    log.close(RunStatus::Completed).unwrap();
    assert_eq!(server.requests().len(), 1);
    let mut files = 0;
    for entry in walk(log.run_dir()) {
        let bytes = std::fs::read(&entry).unwrap();
        files += 1;
        assert!(
            !String::from_utf8_lossy(&bytes).contains(TOKEN),
            "{} holds the webhook URL",
            entry.display()
        );
    }
    assert!(files >= 4, "run_config, run_summary, event file, trace");
    let config: Value = serde_json::from_str(
        &std::fs::read_to_string(log.run_dir().join("run_config.json")).unwrap(),
    )
    .unwrap();
    let host = server.url.split('/').nth(2).unwrap();
    assert_eq!(
        config["config"]["alerts"]["to"],
        format!("http://{host}/<redacted>")
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn bad_settings_are_refused_naming_the_field_and_leave_no_run() {
    let dir = tempfile::tempdir().unwrap();
    let e = HealthWebhook::new("hooks.slack.com/services/x").unwrap_err();
    assert!(e.contains("not a URL"), "{e}");
    let mut hook = HealthWebhook::new("https://hooks.slack.com/services/x").unwrap();
    hook.backoff_secs = -1.0;
    match Logger::new(config(dir.path(), hook)) {
        Err(Error::Config(m)) => assert!(m.contains("health_webhook: backoff_secs -1"), "{m}"),
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("accepted"),
    }
    let mut c = config(dir.path(), HealthWebhook::new("https://h/x").unwrap());
    c.health = tally::health::RuleSet::empty();
    match Logger::new(c) {
        Err(Error::Config(m)) => assert!(m.contains("every health rule is off"), "{m}"),
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("accepted"),
    }
    assert!(!dir.path().join("run").exists());
}
