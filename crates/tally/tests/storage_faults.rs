//! Storage faults never lose or misreport a step (docs/contract/run-artifacts.md
//! "Storage faults"): a local sink that fails keeps the unwritten steps and retries them; the
//! summary counts what the file holds.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tally::backlog::BACKLOG_MAX_STEPS;
use tally::sink::BackendStep;
use tally::{
    Backend, Logger, LoggerConfig, ManualClock, MemorySink, OnStorageError, RunStatus, Sink,
    SinkError, StepInput,
};

/// A local disk that refuses writes while `full` is set (space returns when it is cleared).
struct Disk {
    inner: MemorySink,
    full: Arc<AtomicBool>,
}

impl Sink for Disk {
    fn name(&self) -> &str {
        "disk"
    }
    fn is_local_storage(&self) -> bool {
        true
    }
    fn write(&mut self, step: &BackendStep) -> Result<(), SinkError> {
        if self.full.load(Ordering::SeqCst) {
            return Err("No space left on device (os error 28)".into());
        }
        self.inner.write(step)
    }
}

/// A remote sink that always fails.
struct DeadRemote;

impl Sink for DeadRemote {
    fn name(&self) -> &str {
        "remote"
    }
    fn write(&mut self, _step: &BackendStep) -> Result<(), SinkError> {
        Err("connection refused".into())
    }
}

fn config(dir: &Path, max: u64) -> LoggerConfig {
    let mut c = LoggerConfig::new("sac", "task", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.max_iterations = Some(max);
    c.backend = Backend::None;
    c
}

struct Run {
    log: Logger,
    mem: MemorySink,
    full: Arc<AtomicBool>,
    clock: Arc<ManualClock>,
}

fn run(c: LoggerConfig, extra: Vec<Box<dyn Sink>>) -> Run {
    let mem = MemorySink::new();
    let full = Arc::new(AtomicBool::new(false));
    let mut sinks: Vec<Box<dyn Sink>> = vec![Box::new(Disk {
        inner: mem.clone(),
        full: full.clone(),
    })];
    sinks.extend(extra);
    let clock = Arc::new(ManualClock::at(0.0));
    let log = Logger::with_sinks(c, sinks, clock.clone()).unwrap();
    Run {
        log,
        mem,
        full,
        clock,
    }
}

fn step(i: u64) -> StepInput {
    StepInput::new(i).metric("Loss/critic", i as f64)
}

/// A report of the outage, not `flush` saying that steps are still kept (it does so each time).
fn reported(r: tally::Result<()>) -> Option<String> {
    match r {
        Err(tally::Error::NotDurable { .. }) | Ok(()) => None,
        Err(e) => Some(e.to_string()),
    }
}

fn summary(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("run_summary.json")).unwrap()).unwrap()
}

fn iterations(mem: &MemorySink) -> Vec<u64> {
    mem.steps().iter().map(|s| s.iteration).collect()
}

#[test]
fn a_disk_that_fails_then_recovers_gets_every_step_in_order_and_raises_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = run(config(dir.path(), 100), vec![]);
    let mut errors = Vec::new();
    for i in 1..=100 {
        r.full.store((11..=35).contains(&i), Ordering::SeqCst);
        if let Err(e) = r.log.step(&step(i)) {
            errors.push(e.to_string());
        }
        errors.extend(reported(r.log.flush()));
    }
    r.log.close(RunStatus::Completed).unwrap();
    assert_eq!(errors.len(), 1, "reported once: {errors:?}");
    assert!(
        errors[0].contains("disk sink failed at iteration 11: No space left"),
        "{}",
        errors[0]
    );
    assert_eq!(iterations(&r.mem), (1..=100).collect::<Vec<_>>());
    let s = summary(r.log.run_dir());
    assert_eq!(s["status"], "completed");
    assert_eq!(s["completed_iterations"], 100);
    assert_eq!(s["persisted_iterations"], 100);
    assert_eq!(s["lost_iterations"], 0);
    assert_eq!(s["pending_iterations"], 0);
}

/// `flush` is the durability point (docs/contract/run-artifacts.md "Storage faults"): when
/// it returns, every accepted step is in the file; while steps are kept it says so each time.
#[test]
fn flush_raises_while_accepted_steps_are_kept_and_returns_once_they_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = run(config(dir.path(), 20), vec![]);
    r.log.step(&step(1)).unwrap();
    r.log.flush().unwrap();
    r.full.store(true, Ordering::SeqCst);
    let first = r.log.step(&step(2)).and_then(|()| r.log.flush());
    assert!(first.is_err(), "the outage is reported");
    for i in 3..=5 {
        r.log.step(&step(i)).unwrap();
        let err = r.log.flush().unwrap_err().to_string();
        assert!(
            err.contains(&format!(
                "{} accepted steps are not in the event file",
                i - 1
            )) && err.contains("No space left"),
            "{err}"
        );
    }
    r.full.store(false, Ordering::SeqCst);
    r.log.flush().unwrap();
    assert_eq!(iterations(&r.mem), (1..=5).collect::<Vec<_>>());
    r.log.close(RunStatus::Completed).unwrap();
}

#[test]
fn a_summary_written_during_an_outage_counts_only_what_the_disk_holds() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), 100);
    c.summary_interval_secs = 1.0;
    let mut r = run(c, vec![]);
    for i in 1..=10 {
        r.log.step(&step(i)).unwrap();
    }
    r.log.flush().unwrap();
    r.full.store(true, Ordering::SeqCst);
    for i in 11..=30 {
        let _ = r.log.step(&step(i));
    }
    r.clock.advance(2.0);
    let _ = r.log.step(&step(31));
    let _ = r.log.flush();
    let s = summary(r.log.run_dir());
    assert_eq!(s["status"], "running");
    assert_eq!(s["completed_iterations"], 31);
    assert_eq!(s["persisted_iterations"], 10);
    assert_eq!(s["pending_iterations"], 21);
    assert_eq!(s["lost_iterations"], 0);
    r.full.store(false, Ordering::SeqCst);
    r.log.close(RunStatus::Completed).unwrap();
    assert_eq!(iterations(&r.mem), (1..=31).collect::<Vec<_>>());
    assert_eq!(summary(r.log.run_dir())["persisted_iterations"], 31);
}

#[test]
fn a_disk_still_full_at_close_ends_degraded_with_the_lost_steps_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = run(config(dir.path(), 100), vec![]);
    let mut errors = 0;
    for i in 1..=100 {
        r.full.store(i >= 50, Ordering::SeqCst);
        errors += usize::from(r.log.step(&step(i)).is_err());
        errors += usize::from(reported(r.log.flush()).is_some());
    }
    assert_eq!(errors, 1);
    let err = r.log.close(RunStatus::Completed).unwrap_err().to_string();
    assert!(
        err.contains("51 logged steps are lost") && err.contains("iterations 50–100"),
        "{err}"
    );
    assert_eq!(iterations(&r.mem), (1..=49).collect::<Vec<_>>());
    let s = summary(r.log.run_dir());
    assert_eq!(s["status"], "degraded");
    assert_eq!(s["completed_iterations"], 100);
    assert_eq!(s["persisted_iterations"], 49);
    assert_eq!(s["lost_iterations"], 51);
    assert_eq!(s["pending_iterations"], 0);
    assert!(s["end_time_utc"].is_string());
}

#[test]
fn steps_past_the_backlog_cap_are_lost_counted_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let cap = BACKLOG_MAX_STEPS as u64;
    let mut r = run(config(dir.path(), cap + 100), vec![]);
    r.log.step(&step(1)).unwrap();
    r.log.flush().unwrap();
    r.full.store(true, Ordering::SeqCst);
    let mut errors = Vec::new();
    for i in 2..=cap + 11 {
        match r.log.step(&step(i)) {
            Err(e) => errors.push(e.to_string()),
            Ok(()) => errors.extend(reported(r.log.flush())),
        }
    }
    r.full.store(false, Ordering::SeqCst);
    for i in cap + 12..=cap + 20 {
        r.log.step(&step(i)).unwrap();
    }
    // Close says what the run lost, though the disk took writes again.
    let closed = r.log.close(RunStatus::Completed).unwrap_err().to_string();
    assert!(
        closed.contains(&format!(
            "10 logged steps are lost, not in the event file (iterations {}–{})",
            cap + 2,
            cap + 11
        )),
        "{closed}"
    );
    assert_eq!(errors.len(), 2, "the outage, then the overflow: {errors:?}");
    assert!(
        errors[1].contains(&format!("at iteration {}", cap + 2)) && errors[1].contains("lost"),
        "{}",
        errors[1]
    );
    let got = iterations(&r.mem);
    let want: Vec<u64> = (1..=cap + 1).chain(cap + 12..=cap + 20).collect();
    assert_eq!(
        got, want,
        "the kept steps in order, then the gap, then the rest"
    );
    let s = summary(r.log.run_dir());
    assert_eq!(s["status"], "degraded");
    assert_eq!(s["persisted_iterations"], want.len() as u64);
    assert_eq!(s["lost_iterations"], 10);
}

#[test]
fn warn_never_raises_and_still_keeps_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), 40);
    c.on_storage_error = OnStorageError::Warn;
    let mut r = run(c, vec![]);
    for i in 1..=40 {
        r.full
            .store((5..=9).contains(&i) || i >= 30, Ordering::SeqCst);
        r.log.step(&step(i)).unwrap();
        r.log.flush().unwrap();
    }
    r.log.close(RunStatus::Completed).unwrap();
    assert_eq!(iterations(&r.mem), (1..=29).collect::<Vec<_>>());
    let s = summary(r.log.run_dir());
    assert_eq!(s["status"], "degraded");
    assert_eq!(s["lost_iterations"], 11);
    let errs: Vec<&str> = s["sink_errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert_eq!(errs.len(), 3, "two outages and the loss at close: {errs:?}");
    assert!(errs[0].contains("iteration 5") && errs[1].contains("iteration 30"));
}

#[test]
fn on_storage_error_names_parse_and_a_bad_one_is_refused_naming_the_argument() {
    assert_eq!("raise".parse(), Ok(OnStorageError::Raise));
    assert_eq!("warn".parse(), Ok(OnStorageError::Warn));
    let err = "ignore".parse::<OnStorageError>().unwrap_err();
    assert!(err.contains("on_storage_error='ignore'"), "{err}");
}

#[test]
fn a_failing_remote_sink_never_stops_the_local_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = run(config(dir.path(), 20), vec![Box::new(DeadRemote)]);
    let mut errors = Vec::new();
    for i in 1..=20 {
        if let Err(e) = r.log.step(&step(i)).and_then(|()| r.log.flush()) {
            errors.push(e.to_string());
        }
    }
    r.log.close(RunStatus::Completed).unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("remote sink failed"), "{}", errors[0]);
    assert_eq!(iterations(&r.mem), (1..=20).collect::<Vec<_>>());
    let s = summary(r.log.run_dir());
    assert_eq!(
        s["status"], "completed",
        "a remote failure is not a storage loss"
    );
    assert_eq!(s["persisted_iterations"], 20);
}

#[test]
fn a_summary_that_cannot_be_written_is_retried_on_the_next_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), 10);
    c.summary_interval_secs = 0.0;
    let mut r = run(c, vec![]);
    // A directory where the atomic rewrite's temp file goes, and one where the summary's room
    // is, make every rewrite fail.
    let blocker = r
        .log
        .run_dir()
        .join(format!(".run_summary.json.tmp.{}", std::process::id()));
    std::fs::create_dir(&blocker).unwrap();
    let room = r.log.run_dir().join(tally::room::ROOM_FILE);
    std::fs::remove_file(&room).unwrap();
    std::fs::create_dir(&room).unwrap();
    let mut errors = Vec::new();
    for i in 1..=5 {
        if let Err(e) = r.log.step(&step(i)).and_then(|()| r.log.flush()) {
            errors.push(e.to_string());
        }
    }
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("run_summary"), "{}", errors[0]);
    assert_eq!(summary(r.log.run_dir())["completed_iterations"], 0);
    std::fs::remove_dir(&blocker).unwrap();
    std::fs::remove_dir(&room).unwrap();
    r.log.step(&step(6)).unwrap();
    r.log.flush().unwrap();
    assert_eq!(summary(r.log.run_dir())["completed_iterations"], 6);
    r.log.close(RunStatus::Interrupted).unwrap();
    let s = summary(r.log.run_dir());
    assert_eq!(s["status"], "interrupted");
    assert_eq!(s["persisted_iterations"], 6);
}

// --- The real event file under RLIMIT_FSIZE, in a child process -------------------------------

const CHILD_STEPS: u64 = 600;
/// The iteration after which the child raises its file size limit again ("space returns").
const SPACE_RETURNS_AT: u64 = 400;

/// Set this process's soft RLIMIT_FSIZE (`prlimit`, as the crate forbids unsafe code).
fn set_file_size_limit(soft: &str) {
    let pid = std::process::id().to_string();
    let st = Command::new("prlimit")
        .args(["--pid", &pid, &format!("--fsize={soft}:")])
        .status()
        .expect("prlimit (util-linux) runs");
    assert!(st.success(), "prlimit --fsize={soft}: failed");
}

/// Child body: log CHILD_STEPS steps to a real event file under a 12 KiB file size limit, and
/// print every acknowledged step. Run only by the tests below, with SIGXFSZ ignored.
#[test]
#[ignore = "child process of the RLIMIT_FSIZE tests"]
fn child_fsize_writer() {
    let Ok(dir) = std::env::var("TALLY_FSIZE_CHILD_DIR") else {
        return;
    };
    let space_returns = std::env::var("TALLY_FSIZE_RETURNS").as_deref() == Ok("1");
    let mut c = LoggerConfig::new("sac", "task", "mujoco");
    c.log_dir = Some(Path::new(&dir).join("run"));
    c.max_iterations = Some(CHILD_STEPS);
    c.summary_interval_secs = 0.0;
    let mut log = Logger::new(c).unwrap();
    set_file_size_limit("12288");
    let mut errors = 0;
    for i in 1..=CHILD_STEPS {
        if space_returns && i == SPACE_RETURNS_AT {
            set_file_size_limit("unlimited");
        }
        let r = log.step(&StepInput::new(i).metric("Loss/critic", i as f64));
        errors += usize::from(r.is_err());
        println!("\nack {i}");
        if i % 50 == 0 {
            errors += usize::from(reported(log.flush()).is_some());
        }
    }
    let closed = log.close(RunStatus::Completed);
    println!("errors {errors}");
    println!("close {}", if closed.is_ok() { "ok" } else { "err" });
}

struct ChildRun {
    acked: Vec<u64>,
    errors: usize,
    close_ok: bool,
    file_steps: Vec<i64>,
    summary: Value,
}

fn child_run(space_returns: bool) -> ChildRun {
    let dir = tempfile::tempdir().unwrap();
    // SIGXFSZ ignored (inherited through exec), so a write past the limit fails with EFBIG.
    let out = Command::new("sh")
        .args(["-c", "trap '' XFSZ; exec \"$0\" \"$@\""])
        .arg(std::env::current_exe().unwrap())
        .args([
            "child_fsize_writer",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("TALLY_FSIZE_CHILD_DIR", dir.path())
        .env("TALLY_FSIZE_RETURNS", if space_returns { "1" } else { "0" })
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "child failed: {:?}", out.status);
    let (mut acked, mut errors, mut close_ok) = (Vec::new(), 0, false);
    for line in BufReader::new(&out.stdout[..]).lines() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix("ack ") {
            acked.push(n.parse().unwrap());
        } else if let Some(n) = line.strip_prefix("errors ") {
            errors = n.parse().unwrap();
        } else if line == "close ok" {
            close_ok = true;
        }
    }
    let run_dir = dir.path().join("run");
    let event = std::fs::read_dir(&run_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| tally::tfevents::is_event_file_name(p.file_name().unwrap().to_str().unwrap()))
        .expect("an event file");
    // Every record whole and CRC-checked, and nothing after the last one: no torn record.
    let mut reader = tally::tfevents::open_event_file(&event).unwrap();
    let events = reader.read_to_end().expect("no corrupt record in the file");
    assert_eq!(
        reader.records().pending_bytes(),
        0,
        "the file ends in a torn record"
    );
    let file_steps = events.iter().skip(1).map(|e| e.step).collect();
    ChildRun {
        acked,
        errors,
        close_ok,
        file_steps,
        summary: summary(&run_dir),
    }
}

#[test]
fn event_file_under_a_file_size_limit_resumes_when_space_returns() {
    let r = child_run(true);
    assert_eq!(r.acked, (1..=CHILD_STEPS).collect::<Vec<_>>());
    assert_eq!(r.errors, 1, "the outage is raised once");
    assert!(r.close_ok);
    let want: Vec<i64> = (1..=CHILD_STEPS as i64).collect();
    assert_eq!(r.file_steps, want, "every acknowledged step, in order");
    assert_eq!(r.summary["status"], "completed");
    assert_eq!(r.summary["persisted_iterations"], CHILD_STEPS);
    assert_eq!(r.summary["lost_iterations"], 0);
}

#[test]
fn event_file_under_a_file_size_limit_that_stays_ends_degraded_and_counted() {
    let r = child_run(false);
    assert_eq!(r.acked.len() as u64, CHILD_STEPS);
    assert!(!r.close_ok, "close reports the steps lost at close");
    let k = r.file_steps.len() as u64;
    assert!(k > 0 && k < CHILD_STEPS, "{k} steps in the file");
    let want: Vec<i64> = (1..=k as i64).collect();
    assert_eq!(
        r.file_steps, want,
        "a prefix of the acknowledged steps, in order"
    );
    assert_eq!(r.summary["status"], "degraded");
    assert_eq!(r.summary["completed_iterations"], CHILD_STEPS);
    assert_eq!(
        r.summary["persisted_iterations"], k,
        "the summary's count is the file's"
    );
    assert_eq!(r.summary["lost_iterations"], CHILD_STEPS - k);
}
