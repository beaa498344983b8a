//! Remote sinks follow the event file (docs/contract/remote-sinks.md): the cursor, the
//! follower thread, the close deadline and the one-shot send of `tally sync`.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use tally::remote::{ordered_event_files, scan_pending, send_run, Cursor};
use tally::sink::BackendStep;
use tally::{Backend, Logger, LoggerConfig, Sink, SinkError, StepInput, SystemClock};
use tally_tfevents::{read_scalars_from_file, EventFileWriter, WriterOptions};

#[path = "support/gate.rs"]
mod gate;
use gate::Gate;

/// One row a service received: its index, step and scalars.
type Received = (u64, i64, Vec<(String, f64)>);

/// What a remote service holds: rows by index, as W&B keeps them by `_step`.
#[derive(Default)]
struct Service {
    rows: Mutex<Vec<Received>>,
}

struct Remote {
    service: Arc<Service>,
    next: u64,
    gate: Arc<Gate>,
    fail: Arc<AtomicU32>,
    started: Option<PathBuf>,
    destination: Option<String>,
}

impl Remote {
    fn new(service: &Arc<Service>) -> Self {
        Remote {
            service: service.clone(),
            next: 0,
            gate: Arc::new(Gate::default()),
            fail: Arc::new(AtomicU32::new(0)),
            started: None,
            destination: None,
        }
    }
}

impl Sink for Remote {
    fn name(&self) -> &str {
        "wandb"
    }
    fn is_remote(&self) -> bool {
        true
    }
    fn start(&mut self, run_dir: &Path) -> Result<(), SinkError> {
        self.started = Some(run_dir.to_owned());
        Ok(())
    }
    fn remote_run(&self) -> Option<String> {
        self.destination.clone()
    }
    fn resume_at(&mut self, rows: u64) -> Result<(), SinkError> {
        self.next = rows;
        Ok(())
    }
    fn write(&mut self, step: &BackendStep) -> Result<(), SinkError> {
        self.gate.pass();
        if self
            .fail
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err("503 service unavailable".into());
        }
        let scalars = step
            .scalars
            .iter()
            .map(|(t, v)| (t.as_str().to_owned(), *v))
            .collect();
        self.service
            .rows
            .lock()
            .unwrap()
            .push((self.next, step.step, scalars));
        self.next += 1;
        Ok(())
    }
}

fn config(dir: &Path, max: u64) -> LoggerConfig {
    let mut c = LoggerConfig::new("sac", "task", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.max_iterations = Some(max);
    c.backend = Backend::TensorBoard;
    c
}

fn step(i: u64) -> StepInput {
    StepInput::new(i)
        .env_steps(64 * i)
        .metric("Loss/critic", 1.0 / i as f64)
        .reward("alive", 0.5 * i as f64)
}

fn run(c: LoggerConfig, sink: Remote, n: u64) -> Logger {
    let mut log =
        Logger::with_sinks(c, vec![Box::new(sink)], Arc::new(SystemClock::default())).unwrap();
    for i in 1..=n {
        log.step(&step(i)).unwrap();
    }
    log
}

/// The event files' scalars by step, in file order.
fn file_rows(run_dir: &Path) -> BTreeMap<i64, BTreeMap<String, f64>> {
    let mut out: BTreeMap<i64, BTreeMap<String, f64>> = BTreeMap::new();
    for f in ordered_event_files(run_dir).unwrap() {
        for s in read_scalars_from_file(&f).unwrap() {
            out.entry(s.step).or_default().insert(s.tag, s.value);
        }
    }
    out
}

/// The service's rows: each index exactly once, in order, and their values by step.
fn service_rows(service: &Service) -> BTreeMap<i64, BTreeMap<String, f64>> {
    let rows = service.rows.lock().unwrap();
    let idx: Vec<u64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(
        idx,
        (0..rows.len() as u64).collect::<Vec<_>>(),
        "row indices"
    );
    let steps: Vec<i64> = rows.iter().map(|r| r.1).collect();
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "steps in order");
    rows.iter()
        .map(|(_, s, kv)| (*s, kv.iter().cloned().collect()))
        .collect()
}

fn summary(run_dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(run_dir.join("run_summary.json")).unwrap())
        .unwrap()
}

#[test]
fn a_remote_sink_gets_exactly_the_event_file_rows_and_its_cursor_is_saved() {
    let tmp = tempfile::tempdir().unwrap();
    let service = Arc::new(Service::default());
    let mut log = run(config(tmp.path(), 50), Remote::new(&service), 50);
    let dir = log.run_dir().to_owned();
    log.close(tally::RunStatus::Completed).unwrap();
    let rows = service_rows(&service);
    assert_eq!(rows.len(), 50);
    assert_eq!(rows, file_rows(&dir));
    let cursor = Cursor::load(&dir, "wandb").unwrap().unwrap();
    assert_eq!((cursor.rows, cursor.step), (50, Some(64 * 50)));
    let s = summary(&dir);
    assert_eq!(s["remote_sinks"][0]["name"], "wandb");
    assert_eq!(s["remote_sinks"][0]["pending"], 0);
    assert_eq!(s["remote_sinks"][0]["sent_through_step"], 64 * 50);
}

#[test]
fn a_hung_sink_never_makes_step_wait_and_close_leaves_the_rest_to_sync() {
    let tmp = tempfile::tempdir().unwrap();
    let service = Arc::new(Service::default());
    let sink = Remote::new(&service);
    let gate = sink.gate.clone();
    gate.set(true);
    let mut c = config(tmp.path(), 3000);
    // Were the hung sink on the writer thread's path, the 17th step would wait forever.
    c.queue_capacity = 16;
    c.remote_finish_timeout_secs = 0.2;
    let mut log = run(c, sink, 3000);
    let dir = log.run_dir().to_owned();
    let started = std::time::Instant::now();
    log.close(tally::RunStatus::Completed).unwrap();
    // The deadline holds although the sink never returns; a generous bound for a busy machine.
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let s = summary(&dir);
    assert_eq!(s["status"], "completed");
    assert_eq!(s["remote_sinks"][0]["pending"], 3000);
    assert!(s["remote_sinks"][0]["sent_through_step"].is_null());
    assert_eq!(file_rows(&dir).len(), 3000);
    // Release the hung call: the stopped follower sends nothing more after its row boundary.
    gate.set(false);
    std::thread::sleep(std::time::Duration::from_millis(200));
    let before = service.rows.lock().unwrap().len();
    assert!(before <= 1, "{before} rows sent after the deadline");
    // `tally sync`'s path sends the rest, exactly once.
    let files = ordered_event_files(&dir).unwrap();
    let report = send_run(Box::new(Remote::new(&service)), &dir, files, |_, _, _| {}).unwrap();
    assert_eq!(report.sent + report.sent_before, 3000);
    assert_eq!(service_rows(&service), file_rows(&dir));
    // The summary no longer says rows are pending; the rest of it is kept.
    let s = summary(&dir);
    assert_eq!(s["remote_sinks"][0]["pending"], 0);
    assert_eq!(s["remote_sinks"][0]["sent_through_step"], 64 * 3000);
    assert_eq!(s["status"], "completed");
    let again = send_run(
        Box::new(Remote::new(&service)),
        &dir,
        ordered_event_files(&dir).unwrap(),
        |_, _, _| {},
    )
    .unwrap();
    assert_eq!(again.sent, 0);
}

#[test]
fn a_failing_sink_is_retried_from_the_cursor_and_nothing_is_skipped_or_repeated() {
    let tmp = tempfile::tempdir().unwrap();
    let service = Arc::new(Service::default());
    let sink = Remote::new(&service);
    sink.fail.store(3, Ordering::SeqCst);
    let mut c = config(tmp.path(), 40);
    c.remote_finish_timeout_secs = 30.0;
    let mut log = run(c, sink, 40);
    let dir = log.run_dir().to_owned();
    log.close(tally::RunStatus::Completed).unwrap();
    assert_eq!(service_rows(&service), file_rows(&dir));
    let s = summary(&dir);
    assert_eq!(s["remote_sinks"][0]["pending"], 0);
    assert!(s["remote_sinks"][0].get("last_error").is_none());
}

#[test]
fn a_resumed_run_continues_its_remote_rows_from_the_cursor() {
    let tmp = tempfile::tempdir().unwrap();
    let service = Arc::new(Service::default());
    let mut log = run(config(tmp.path(), 10), Remote::new(&service), 4);
    let dir = log.run_dir().to_owned();
    log.close(tally::RunStatus::Interrupted).unwrap();
    let mut c = config(tmp.path(), 10);
    c.resume = true;
    let mut log = Logger::with_sinks(
        c,
        vec![Box::new(Remote::new(&service))],
        Arc::new(SystemClock::default()),
    )
    .unwrap();
    for i in 5..=10 {
        log.step(&step(i)).unwrap();
    }
    log.close(tally::RunStatus::Completed).unwrap();
    assert_eq!(ordered_event_files(&dir).unwrap().len(), 2);
    let rows = service_rows(&service);
    assert_eq!(
        rows.keys().copied().collect::<Vec<_>>(),
        (1..=10).map(|i| 64 * i).collect::<Vec<_>>()
    );
    assert_eq!(rows, file_rows(&dir));
}

#[test]
fn events_of_one_step_written_one_tag_at_a_time_are_one_row() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut w = EventFileWriter::open(dir, WriterOptions::default()).unwrap();
    for s in 0..5i64 {
        w.write_resolved_scalars(s * 10, 1.0e9 + s as f64, &[("loss", s as f64)])
            .unwrap();
        w.write_resolved_scalars(s * 10, 1.0e9 + s as f64, &[("reward", -s as f64)])
            .unwrap();
    }
    // An eval point whose step goes back is its own row, not dropped.
    w.write_resolved_scalars(5, 1.0e9 + 9.0, &[("eval/return", 7.0)])
        .unwrap();
    w.close().unwrap();
    let files = ordered_event_files(dir).unwrap();
    let pending = scan_pending(&files, &Cursor::default()).unwrap();
    assert_eq!(pending.rows, 6);
    assert_eq!(pending.steps, Some((0, 5)));
    let service = Arc::new(Service::default());
    let mut sink = Remote::new(&service);
    sink.next = 0;
    let report = send_run(Box::new(sink), dir, files, |_, _, _| {}).unwrap();
    assert_eq!(report.sent, 6);
    let rows = service.rows.lock().unwrap();
    assert_eq!(
        rows[2].2,
        vec![("loss".into(), 2.0), ("reward".into(), -2.0)]
    );
    assert_eq!(
        (rows[5].1, rows[5].2.clone()),
        (5, vec![("eval/return".into(), 7.0)])
    );
}

#[test]
fn a_cursor_naming_a_file_the_run_does_not_have_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut w = EventFileWriter::open(dir, WriterOptions::default()).unwrap();
    w.write_resolved_scalars(1, 1.0e9, &[("loss", 1.0)])
        .unwrap();
    w.close().unwrap();
    Cursor {
        file: Some("events.out.tfevents.gone".into()),
        offset: 10,
        rows: 3,
        step: Some(3),
        remote_run: None,
        ..Cursor::default()
    }
    .save(dir, "wandb")
    .unwrap();
    let service = Arc::new(Service::default());
    let err = send_run(
        Box::new(Remote::new(&service)),
        dir,
        ordered_event_files(dir).unwrap(),
        |_, _, _| {},
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("events.out.tfevents.gone"), "{err}");
    assert!(service.rows.lock().unwrap().is_empty());
}

#[test]
fn logger_none_refuses_a_remote_sink_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = config(tmp.path(), 3);
    c.backend = Backend::None;
    let service = Arc::new(Service::default());
    let err = Logger::with_sinks(
        c,
        vec![Box::new(Remote::new(&service))],
        Arc::new(SystemClock::default()),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        err.contains("wandb sink") && err.contains("logger=none"),
        "{err}"
    );
}

#[test]
fn a_cursor_applies_only_to_the_destination_it_names() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut w = EventFileWriter::open(dir, WriterOptions::default()).unwrap();
    for s in 1..=5 {
        w.write_resolved_scalars(s, 1.0e9, &[("loss", s as f64)])
            .unwrap();
    }
    w.close().unwrap();
    let send = |dest: &str| {
        let service = Arc::new(Service::default());
        let mut sink = Remote::new(&service);
        sink.destination = Some(dest.into());
        let files = ordered_event_files(dir).unwrap();
        let report = send_run(Box::new(sink), dir, files, |_, _, _| {}).unwrap();
        let held = service.rows.lock().unwrap().len();
        (report.sent, held)
    };
    assert_eq!(send("team/a/run1"), (5, 5));
    assert_eq!(send("team/a/run1"), (0, 0));
    // Another W&B run has none of the rows: it gets the run from its start.
    assert_eq!(send("team/b/run1"), (5, 5));
    let cursor = Cursor::load(dir, "wandb").unwrap().unwrap();
    assert_eq!(cursor.remote_run.as_deref(), Some("team/b/run1"));
}

#[test]
fn a_corrupt_record_after_the_cursor_is_reported_at_its_byte_in_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut w = EventFileWriter::open(dir, WriterOptions::default()).unwrap();
    for s in 1..=3 {
        w.write_resolved_scalars(s, 1.0e9, &[("loss", s as f64)])
            .unwrap();
    }
    w.close().unwrap();
    let service = Arc::new(Service::default());
    let files = ordered_event_files(dir).unwrap();
    send_run(
        Box::new(Remote::new(&service)),
        dir,
        files.clone(),
        |_, _, _| {},
    )
    .unwrap();
    // Append a copy of the last record with one payload byte flipped: its data crc fails.
    let bytes = std::fs::read(&files[0]).unwrap();
    let mut at = 0;
    let mut last = 0;
    while at < bytes.len() {
        last = at;
        let len = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
        at += 8 + 4 + len + 4;
    }
    let mut record = bytes[last..].to_vec();
    record[12] ^= 0xff;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&files[0])
        .unwrap();
    std::io::Write::write_all(&mut f, &record).unwrap();
    drop(f);
    let err = send_run(Box::new(Remote::new(&service)), dir, files, |_, _, _| {})
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!("corrupt record at byte {}", bytes.len())),
        "{err}"
    );
    assert_eq!(service.rows.lock().unwrap().len(), 3);
}

#[test]
fn the_summaries_written_during_the_run_say_how_far_the_remote_sink_got() {
    let tmp = tempfile::tempdir().unwrap();
    let service = Arc::new(Service::default());
    let sink = Remote::new(&service);
    let gate = sink.gate.clone();
    gate.set(true);
    let mut c = config(tmp.path(), 200);
    c.summary_interval_secs = 0.0;
    let mut log = run(c, sink, 100);
    let dir = log.run_dir().to_owned();
    // Steps 1..=100 are on disk before step 101's summary is made, and 101 may be: the last
    // step of a live file is a row once the next begins, so 99 or 100 rows are complete and
    // none acknowledged.
    log.flush().unwrap();
    // Rewrites are paced by their own cost; a pause makes the next step's one due.
    std::thread::sleep(std::time::Duration::from_millis(300));
    log.step(&step(101)).unwrap();
    log.flush().unwrap();
    let s = summary(&dir);
    assert_eq!(s["status"], "running");
    assert_eq!(s["remote_sinks"][0]["name"], "wandb");
    assert!(s["remote_sinks"][0]["sent_through_step"].is_null());
    let pending = s["remote_sinks"][0]["pending"].as_u64().unwrap();
    assert!([99, 100].contains(&pending), "{pending}");
    // Released, the sink catches up; the next summary says so.
    gate.set(false);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while service.rows.lock().unwrap().len() < 100 {
        assert!(
            std::time::Instant::now() < deadline,
            "the sink did not catch up"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    log.step(&step(102)).unwrap();
    log.flush().unwrap();
    // The writer may or may not have written step 102 when its summary is made.
    let s = summary(&dir);
    let sent = s["remote_sinks"][0]["sent_through_step"].as_i64().unwrap();
    assert!([64 * 100, 64 * 101].contains(&sent), "{sent}");
    assert!(s["remote_sinks"][0]["pending"].as_u64().unwrap() <= 1);
    log.close(tally::RunStatus::Completed).unwrap();
    let s = summary(&dir);
    assert_eq!(s["remote_sinks"][0]["pending"], 0);
    assert_eq!(s["remote_sinks"][0]["sent_through_step"], 64 * 102);
}

/// A sink that holds rows until `flush` (as the MLflow sink batches them into one request),
/// whose first `fail` flushes fail.
struct Batching {
    service: Arc<Service>,
    next: u64,
    held: Vec<Received>,
    fail: u32,
}

impl Sink for Batching {
    fn name(&self) -> &str {
        "mlflow"
    }
    fn is_remote(&self) -> bool {
        true
    }
    fn resume_at(&mut self, rows: u64) -> Result<(), SinkError> {
        self.next = rows;
        self.held.clear();
        Ok(())
    }
    fn write(&mut self, step: &BackendStep) -> Result<(), SinkError> {
        let scalars = step
            .scalars
            .iter()
            .map(|(t, v)| (t.as_str().to_owned(), *v))
            .collect();
        self.held.push((self.next, step.step, scalars));
        self.next += 1;
        Ok(())
    }
    fn flush(&mut self) -> Result<(), SinkError> {
        if self.fail > 0 {
            self.fail -= 1;
            self.held.clear();
            return Err("connection refused".into());
        }
        self.service.rows.lock().unwrap().append(&mut self.held);
        Ok(())
    }
}

#[test]
fn rows_a_batching_sink_failed_to_flush_are_sent_again_never_skipped() {
    // docs/contract/remote-sinks.md "The cursor": rows count as taken once flush returns.
    let tmp = tempfile::tempdir().unwrap();
    let service = Arc::new(Service::default());
    let sink = Batching {
        service: service.clone(),
        next: 0,
        held: Vec::new(),
        fail: 3,
    };
    let mut c = config(tmp.path(), 600);
    c.remote_finish_timeout_secs = 30.0;
    let mut log =
        Logger::with_sinks(c, vec![Box::new(sink)], Arc::new(SystemClock::default())).unwrap();
    for i in 1..=600 {
        log.step(&step(i)).unwrap();
    }
    let dir = log.run_dir().to_owned();
    log.close(tally::RunStatus::Completed).unwrap();
    assert_eq!(service_rows(&service), file_rows(&dir));
    let cursor = Cursor::load(&dir, "mlflow").unwrap().unwrap();
    assert_eq!(cursor.rows, 600);
    assert_eq!(summary(&dir)["remote_sinks"][0]["pending"], 0);
}
