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
