//! A sink ten times slower than the step rate: the bounded writer queue makes `step` wait
//! instead of dropping (docs/contract/step.md "Writing: the queue and the sinks"); every wait
//! is counted in `run_summary.json` and the first one is shown on the terminal.

use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tally::sink::BackendStep;
use tally::{Backend, Logger, LoggerConfig, ManualClock, MemorySink, RunStatus, Sink, SinkError};
use tally::{Level, StepInput};

const STEPS: u64 = 400;
const STEP_PERIOD: Duration = Duration::from_micros(100);

/// A local disk that takes ten step periods per write.
struct SlowDisk(MemorySink);

impl Sink for SlowDisk {
    fn name(&self) -> &str {
        "slow-disk"
    }
    fn is_local_storage(&self) -> bool {
        true
    }
    fn write(&mut self, step: &BackendStep) -> Result<(), SinkError> {
        std::thread::sleep(STEP_PERIOD * 10);
        self.0.write(step)
    }
}

fn summary(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("run_summary.json")).unwrap()).unwrap()
}

#[test]
fn a_sink_ten_times_slower_than_the_steps_loses_none_and_counts_and_shows_the_waits() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = LoggerConfig::new("sac", "task", "mujoco");
    c.log_dir = Some(dir.path().join("run"));
    c.max_iterations = Some(STEPS);
    c.backend = Backend::None;
    c.queue_capacity = 16;
    let mem = MemorySink::new();
    let clock = Arc::new(ManualClock::at(0.0));
    let mut log =
        Logger::with_sinks(c, vec![Box::new(SlowDisk(mem.clone()))], clock.clone()).unwrap();
    for i in 1..=STEPS {
        log.step(&StepInput::new(i).metric("Loss/critic", i as f64))
            .unwrap();
        clock.advance(STEP_PERIOD.as_secs_f64());
        std::thread::sleep(STEP_PERIOD);
    }
    log.flush().unwrap();
    // While the run goes on, the terminal says the writer is behind.
    let shown: Vec<String> = {
        let term = log.terminal();
        let t = term.lock().unwrap();
        t.messages
            .iter()
            .filter(|m| m.level == Level::Warning)
            .map(|m| m.text.clone())
            .collect()
    };
    let backpressure: Vec<&String> = shown
        .iter()
        .filter(|t| t.contains("back-pressure"))
        .collect();
    assert_eq!(backpressure.len(), 1, "shown once: {shown:?}");
    assert!(
        backpressure[0].contains("backpressure_waits"),
        "names the summary field: {}",
        backpressure[0]
    );
    log.close(RunStatus::Completed).unwrap();

    let written: Vec<u64> = mem.steps().iter().map(|s| s.iteration).collect();
    assert_eq!(written, (1..=STEPS).collect::<Vec<_>>(), "no step dropped");
    let s = summary(log.run_dir());
    assert_eq!(s["status"], "completed");
    assert_eq!(s["persisted_iterations"], STEPS);
    // 400 writes of 1 ms against 400 steps of 0.1 ms through a 16-step queue: the stepper
    // must have waited for most of them (summary rewrites share the queue and count too).
    let waits = s["backpressure_waits"].as_u64().unwrap();
    assert!(waits >= STEPS / 2, "backpressure_waits = {waits}");
}

/// A sink whose writes wait until the test opens it; each write says it began.
struct Gated {
    began: std::sync::mpsc::Sender<()>,
    open: Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
    mem: MemorySink,
}

impl Sink for Gated {
    fn name(&self) -> &str {
        "gated"
    }
    fn write(&mut self, step: &BackendStep) -> Result<(), SinkError> {
        let _ = self.began.send(());
        let (open, cv) = &*self.open;
        let mut o = open.lock().unwrap();
        while !*o {
            o = cv.wait(o).unwrap();
        }
        drop(o);
        self.mem.write(step)
    }
}

#[test]
fn the_first_wait_is_shown_when_a_summary_rewrite_met_the_full_queue() {
    // docs/contract/step.md "Writing: the queue and the sinks": the first wait of a run is shown
    // once, whichever message met the full queue. Whether the summary's push met it depends on
    // the stepper thread reaching it before the sink is let go, which a loaded machine may
    // delay: each try must show the wait exactly when there was one, and some try must wait.
    const TRIES: usize = 5;
    for attempt in 1..=TRIES {
        let (waits, shown) = summary_rewrite_meets_the_full_queue();
        assert_eq!(
            shown.len(),
            usize::from(waits > 0),
            "try {attempt}: {waits} waits, shown {shown:?}"
        );
        if waits > 0 {
            return;
        }
    }
    panic!("in {TRIES} tries the summary rewrite never met a full queue");
}

/// One run whose summary rewrite is pushed while its sink holds step 1 and the queue is full:
/// the waits counted in `run_summary.json` and the back-pressure messages shown.
fn summary_rewrite_meets_the_full_queue() -> (u64, Vec<String>) {
    const CAPACITY: usize = 4;
    let dir = tempfile::tempdir().unwrap();
    let mut c = LoggerConfig::new("sac", "task", "mujoco");
    c.log_dir = Some(dir.path().join("run"));
    c.backend = Backend::None;
    c.system_metrics = false;
    c.queue_capacity = CAPACITY;
    // No summary rewrite until the clock says an hour has passed.
    c.summary_interval_secs = 3600.0;
    let (began, begun) = std::sync::mpsc::channel();
    let open = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let mem = MemorySink::new();
    let sink = Gated {
        began,
        open: open.clone(),
        mem: mem.clone(),
    };
    let clock = Arc::new(ManualClock::at(0.0));
    let mut log = Logger::with_sinks(c, vec![Box::new(sink)], clock.clone()).unwrap();
    let step = |log: &mut Logger, i: u64| {
        log.step(&StepInput::new(i).metric("Loss/critic", i as f64))
            .unwrap();
    };
    // Step 1 is held in the sink by the writer thread; steps 2..=CAPACITY leave one place,
    // which the next step takes: the summary rewrite after it in the same `step` must wait.
    step(&mut log, 1);
    begun.recv_timeout(Duration::from_secs(30)).unwrap();
    for i in 2..=CAPACITY as u64 {
        step(&mut log, i);
    }
    clock.advance(3600.0);
    let stepper = std::thread::spawn(move || {
        step(&mut log, CAPACITY as u64 + 1);
        log
    });
    // Time for the stepper to reach the summary's push (a try it did not reach proves nothing).
    std::thread::sleep(Duration::from_secs(1));
    *open.0.lock().unwrap() = true;
    open.1.notify_all();
    let mut log = stepper.join().unwrap();
    log.close(RunStatus::Completed).unwrap();
    assert_eq!(mem.steps().len(), CAPACITY + 1);

    let waits = summary(log.run_dir())["backpressure_waits"]
        .as_u64()
        .unwrap();
    let term = log.terminal();
    let t = term.lock().unwrap();
    let shown = t
        .messages
        .iter()
        .map(|m| m.text.clone())
        .filter(|t| t.contains("back-pressure"))
        .collect();
    (waits, shown)
}
