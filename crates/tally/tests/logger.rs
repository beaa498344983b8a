//! Pins the logger core against docs/contract/step.md: payload, gating, axis, fail-closed
//! validation, contract warnings, sinks, summary.

use serde_json::Value;
use std::sync::Arc;
use tally::sink::BackendStep;
use tally::{
    Backend, Error, Logger, LoggerConfig, ManualClock, MemorySink, Profile, RunStatus, Sink,
    SinkError, StepInput,
};

#[path = "support/memory_logger.rs"]
mod memory_logger;
use memory_logger::memory_logger;

fn config(dir: &std::path::Path, profile: Profile, max: u64) -> LoggerConfig {
    let mut c = LoggerConfig::new(
        if profile == Profile::Appo {
            "appo"
        } else {
            "sac"
        },
        "task",
        "mujoco",
    );
    c.log_dir = Some(dir.join("run"));
    c.profile = profile;
    c.max_iterations = Some(max);
    c.backend = Backend::None;
    c
}

fn logger(c: LoggerConfig) -> (Logger, MemorySink, Arc<ManualClock>) {
    memory_logger(c, 100.0)
}

fn tags(s: &BackendStep) -> Vec<&str> {
    s.scalars.iter().map(|(t, _)| t.as_str()).collect()
}

fn value(s: &BackendStep, tag: &str) -> Option<f64> {
    s.scalars
        .iter()
        .find(|(t, _)| t.as_str() == tag)
        .map(|(_, v)| *v)
}

fn sac_step(i: u64) -> StepInput {
    sac_step_critic(i, 3.0)
}

fn sac_step_critic(i: u64, critic: f64) -> StepInput {
    StepInput::new(i)
        .env_steps(256 * i)
        .metric("Loss/critic", critic)
        .learner("collector_wait", 0.1)
        .learner("learning", 0.5)
        .learner("inference_h2d", 0.01)
        .iteration_time(1.0)
        .collector("env_step", 0.012)
        .reward("tracking", 0.25)
        .episode_return(10.0)
        .steps_this_iter(256.0)
}

#[test]
fn backend_payload_holds_canonical_tags_in_persisted_units_unsmoothed() {
    // The backend keeps every iteration's unsmoothed values; _ms fields are ms,
    // Perf/learning_time and Perf/iteration_time are seconds; terminal values never persist
    // (docs/contract/step.md "The backend payload").
    let dir = tempfile::tempdir().unwrap();
    let (mut log, mem, _) = logger(config(dir.path(), Profile::SacFamily, 10));
    log.step(&sac_step(1)).unwrap();
    log.step(&sac_step_critic(2, 4.0)).unwrap();
    log.close(RunStatus::Completed).unwrap();
    let steps = mem.steps();
    assert_eq!(steps.len(), 2);
    let s = &steps[1];
    assert_eq!(
        value(s, "Loss/critic"),
        Some(4.0),
        "unsmoothed latest value"
    );
    assert_eq!(value(s, "Perf/learner_collector_wait_ms"), Some(100.0));
    assert_eq!(value(s, "Perf/learning_time"), Some(0.5));
    assert_eq!(value(s, "Perf/iteration_time"), Some(1.0));
    assert_eq!(value(s, "Perf/learner_inference_h2d_ms"), Some(10.0));
    assert_eq!(value(s, "Perf/collector_env_step_ms"), Some(12.0));
    assert_eq!(value(s, "reward/tracking"), Some(0.25));
    assert_eq!(value(s, "Train/mean_reward"), Some(10.0));
    assert_eq!(value(s, "Perf/total_fps"), Some(256.0));
    assert!(
        tags(s).iter().all(|t| !t.starts_with("Terminal/")),
        "{:?}",
        tags(s)
    );
}

#[test]
fn log_interval_gates_backend_writes_and_the_final_iteration_is_always_written() {
    // Every log_interval-th iteration is written, and always the last one
    // (docs/contract/step.md "Log interval"): max 10 / interval 5 → [5, 10];
    // max 9 / interval 4 → [4, 8, 9].
    for (max, interval, want) in [(10, 5, vec![5, 10]), (9, 4, vec![4, 8, 9])] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = config(dir.path(), Profile::SacFamily, max);
        c.log_interval = interval;
        let (mut log, mem, _) = logger(c);
        for i in 1..=max {
            log.step(&StepInput::new(i).metric("Loss/critic", i as f64))
                .unwrap();
        }
        log.flush().unwrap();
        let got: Vec<u64> = mem.steps().iter().map(|s| s.iteration).collect();
        assert_eq!(got, want);
        // ... but the terminal saw every iteration.
        assert_eq!(log.terminal().lock().unwrap().iteration, max);
    }
}

#[test]
fn a_zero_based_on_policy_run_always_writes_its_last_iteration() {
    // On-policy runners count iterations from 0, so the last of `max_iterations` is
    // `max_iterations - 1`: 0..=9 at interval 4 → [0, 4, 8, 9] (docs/contract/step.md
    // "Log interval").
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), Profile::OnPolicy, 10);
    c.algo = "ppo".into();
    c.log_interval = 4;
    let (mut log, mem, _) = logger(c);
    for i in 0..10 {
        log.step(&StepInput::new(i)).unwrap();
    }
    log.flush().unwrap();
    let got: Vec<u64> = mem.steps().iter().map(|s| s.iteration).collect();
    assert_eq!(got, vec![0, 4, 8, 9]);
}

#[test]
fn step_axis_prefers_env_steps_and_then_writes_train_iteration() {
    // global_step = total env steps when > 0 (Train/iteration then emitted)
    // (docs/contract/step.md, the step axis).
    let dir = tempfile::tempdir().unwrap();
    let (mut log, mem, _) = logger(config(dir.path(), Profile::SacFamily, 10));
    log.step(&StepInput::new(3).env_steps(256).metric("Loss/critic", 1.0))
        .unwrap();
    log.flush().unwrap();
    let s = &mem.steps()[0];
    assert_eq!(s.step, 256);
    assert_eq!(value(s, "Train/iteration"), Some(3.0));
}

#[test]
fn step_axis_falls_back_to_iteration_and_omits_unmeasured_values() {
    // No Train/iteration on the iteration axis; Perf/iteration_time only when measured;
    // Episode/timeout_rate only once an episode finished (docs/contract/step.md "The backend payload").
    let dir = tempfile::tempdir().unwrap();
    let (mut log, mem, _) = logger(config(dir.path(), Profile::SacFamily, 10));
    log.step(
        &StepInput::new(1)
            .metric("Loss/critic", 1.0)
            .learner("learning", 0.2),
    )
    .unwrap();
    log.step(
        &StepInput::new(2)
            .metric("Loss/critic", 1.0)
            .timeout_rate(0.25)
            .iteration_time(0.0),
    )
    .unwrap();
    log.flush().unwrap();
    let steps = mem.steps();
    assert_eq!(steps[0].step, 1);
    for t in [
        "Train/iteration",
        "Perf/iteration_time",
        "Episode/timeout_rate",
        "Perf/total_fps",
    ] {
        assert_eq!(value(&steps[0], t), None, "{t}");
    }
    assert_eq!(value(&steps[1], "Episode/timeout_rate"), Some(0.25));
    assert_eq!(
        value(&steps[1], "Perf/iteration_time"),
        None,
        "a zero wall is not a measurement"
    );
}

fn rejected(log: &mut Logger, input: StepInput, needle: &str) {
    match log.step(&input) {
        Err(e @ Error::InvalidStep { .. }) => {
            assert!(e.to_string().contains(needle), "'{e}' lacks '{needle}'")
        }
        other => panic!("expected rejection containing '{needle}', got {other:?}"),
    }
}

#[test]
fn bad_inputs_fail_closed_naming_the_key_and_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, mem, _) = logger(config(dir.path(), Profile::SacFamily, 10));
    log.step(&sac_step(1)).unwrap();
    rejected(
        &mut log,
        sac_step(2).metric("Loss/critc", 1.0),
        "did you mean 'Loss/critic'",
    );
    rejected(
        &mut log,
        sac_step(2).metric("Episode_Reward/tracking", 1.0),
        "Episode_Reward/tracking",
    );
    rejected(
        &mut log,
        sac_step(2).metric("perf/iter_ms", 1.0),
        "use 'Perf/iteration_time'",
    );
    rejected(
        &mut log,
        sac_step(2).metric("Perf/total_fps", 1.0),
        "logger-owned",
    );
    rejected(
        &mut log,
        sac_step(2).metric("Train/mean_reward", 1.0),
        "episode_return",
    );
    rejected(
        &mut log,
        sac_step(2).metric("Perf/learner_collector_wait_ms", 1.0),
        "learner map as 'collector_wait'",
    );
    rejected(
        &mut log,
        sac_step(2).metric("Terminal/learner_other_ms", 1.0),
        "terminal-only",
    );
    rejected(&mut log, sac_step(2).learner("replay_stage", 0.1), "appo");
    rejected(&mut log, sac_step(2).learner("weight_publish", 0.1), "appo");
    rejected(
        &mut log,
        sac_step(2).learner("bogus", 0.1),
        "unknown learner key",
    );
    rejected(&mut log, sac_step(2).collector("mlp_infer", 0.1), "appo");
    rejected(&mut log, sac_step(2).learner("learning", -0.1), "negative");
    rejected(
        &mut log,
        sac_step(2).collector("replay_write", f64::NAN),
        "not finite",
    );
    rejected(
        &mut log,
        sac_step(2).iteration_time(f64::INFINITY),
        "not finite",
    );
    rejected(
        &mut log,
        sac_step(2).metric("Loss/critic", 2.0),
        "duplicate",
    );
    rejected(&mut log, sac_step(2).reward("tracking", 1.0), "duplicate");
    rejected(
        &mut log,
        sac_step(2).reward("mean", 1.0),
        "Train/mean_reward",
    );
    rejected(&mut log, sac_step(2).metric("reward/x", 1.0), "rewards map");
    rejected(
        &mut log,
        sac_step(2).metric("Loss/surrogate", 1.0),
        "not emitted by the sac_family profile",
    );
    rejected(&mut log, sac_step(2).timeout_rate(1.5), "[0, 1]");
    rejected(
        &mut log,
        sac_step(2).metric("Train/replay_ingress_depth", -1.0),
        ">= 0",
    );
    rejected(&mut log, sac_step(1), "does not advance past 1");
    rejected(&mut log, StepInput::new(2).env_steps(256), "axis collision");
    rejected(&mut log, StepInput::new(2), "cannot switch back");
    // Nothing above was logged, and the run goes on.
    log.step(&sac_step(2)).unwrap();
    log.close(RunStatus::Completed).unwrap();
    let got: Vec<u64> = mem.steps().iter().map(|s| s.iteration).collect();
    assert_eq!(got, [1, 2]);
}

#[test]
fn appo_profile_accepts_its_own_phases_and_persists_collection_time_in_seconds() {
    // APPO: Replay Stage and Weight Publish are learner phases; Rollout Wall is
    // Perf/collection_time in seconds (docs/contract/timelines.md).
    let dir = tempfile::tempdir().unwrap();
    let (mut log, mem, _) = logger(config(dir.path(), Profile::Appo, 5));
    log.step(
        &StepInput::new(1)
            .env_steps(8)
            .learner("collector_wait", 10.0)
            .learner("replay_stage", 0.002)
            .learner("weight_publish", 0.002)
            .iteration_time(10.9)
            .collector("rollout", 0.1)
            .collector("mlp_infer", 0.0015)
            .steps_this_iter(8.0)
            .metric("Loss/surrogate", 0.1),
    )
    .unwrap();
    log.flush().unwrap();
    let s = &mem.steps()[0];
    assert_eq!(value(s, "Perf/learner_collector_wait_ms"), Some(10000.0));
    assert_eq!(value(s, "Perf/collection_time"), Some(0.1));
    assert_eq!(value(s, "Perf/collector_mlp_infer_ms"), Some(1.5));
    assert_eq!(value(s, "Perf/total_fps"), Some(8.0 / 10.9));
    assert!(tags(s)
        .iter()
        .all(|t| !t.starts_with("axis/") && !t.starts_with("distributed/")));
}

#[test]
fn over_accounted_iteration_raises_a_counted_visible_contract_warning() {
    // Accounted > 100% of Iter Wall is a contract warning, not a silent clamp
    // (docs/contract/timelines.md "Accounted and Other").
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _mem, _) = logger(config(dir.path(), Profile::SacFamily, 3));
    log.step(
        &StepInput::new(1)
            .learner("learning", 0.9)
            .learner("collector_wait", 0.2)
            .iteration_time(1.0),
    )
    .unwrap();
    log.step(
        &StepInput::new(2)
            .learner("learning", 0.5)
            .iteration_time(1.0),
    )
    .unwrap();
    {
        let term = log.terminal();
        let term = term.lock().unwrap();
        assert_eq!(term.contract_warnings, 1);
        assert!(term
            .messages
            .iter()
            .any(|m| m.text.contains("110.0% of Iter Wall at iteration 1")));
    }
    log.close(RunStatus::Completed).unwrap();
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(log.run_dir().join("run_summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(s["contract_warnings"], 1);
}

struct FailingSink {
    fail_at: u64,
}

impl Sink for FailingSink {
    fn name(&self) -> &str {
        "flaky"
    }
    fn write(&mut self, step: &BackendStep) -> Result<(), SinkError> {
        if step.iteration >= self.fail_at {
            Err("No space left on device (os error 28)".into())
        } else {
            Ok(())
        }
    }
}

#[test]
fn a_failing_sink_surfaces_on_the_next_call_while_other_sinks_keep_everything() {
    let dir = tempfile::tempdir().unwrap();
    let mem = MemorySink::new();
    let sinks: Vec<Box<dyn Sink>> =
        vec![Box::new(FailingSink { fail_at: 3 }), Box::new(mem.clone())];
    let mut log = Logger::with_sinks(
        config(dir.path(), Profile::SacFamily, 6),
        sinks,
        Arc::new(ManualClock::at(0.0)),
    )
    .unwrap();
    let mut errors = Vec::new();
    for i in 1..=6 {
        if let Err(e) = log.step(&StepInput::new(i).metric("Loss/critic", 1.0)) {
            errors.push(e.to_string());
        }
        if let Err(e) = log.flush() {
            errors.push(e.to_string());
        }
    }
    log.close(RunStatus::Completed).unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("flaky sink failed at iteration 3: No space left"),
        "{}",
        errors[0]
    );
    assert_eq!(mem.steps().len(), 6, "the other sink kept every step");
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(log.run_dir().join("run_summary.json")).unwrap(),
    )
    .unwrap();
    assert!(s["sink_errors"][0].as_str().unwrap().contains("flaky"));
}

struct SlowSink(MemorySink);

impl Sink for SlowSink {
    fn name(&self) -> &str {
        "slow"
    }
    fn write(&mut self, step: &BackendStep) -> Result<(), SinkError> {
        std::thread::sleep(std::time::Duration::from_millis(2));
        self.0.write(step)
    }
}

#[test]
fn a_full_queue_makes_step_wait_and_counts_it_never_drops() {
    let dir = tempfile::tempdir().unwrap();
    let mem = MemorySink::new();
    let mut c = config(dir.path(), Profile::SacFamily, 50);
    c.queue_capacity = 1;
    let mut log = Logger::with_sinks(
        c,
        vec![Box::new(SlowSink(mem.clone()))],
        Arc::new(ManualClock::at(0.0)),
    )
    .unwrap();
    for i in 1..=50 {
        log.step(&StepInput::new(i).metric("Loss/critic", i as f64))
            .unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
    assert_eq!(mem.steps().len(), 50);
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(log.run_dir().join("run_summary.json")).unwrap(),
    )
    .unwrap();
    assert!(s["backpressure_waits"].as_u64().unwrap() > 0, "{s}");
}

/// The run's `play_video_path` at close (docs/contract/remote-sinks.md "The playback video").
fn play_video_path(log: &Logger) -> Value {
    let text = std::fs::read_to_string(log.run_dir().join("run_summary.json")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["play_video_path"].clone()
}

#[test]
fn close_records_the_run_directorys_playback_video_unless_one_was_named() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _mem, _clock) = logger(config(dir.path(), Profile::SacFamily, 1));
    let video = log.run_dir().join("play_video.mp4");
    std::fs::write(&video, b"mp4").unwrap();
    log.close(RunStatus::Completed).unwrap();
    assert_eq!(play_video_path(&log), video.to_string_lossy().as_ref());

    let dir = tempfile::tempdir().unwrap();
    let (mut log, _mem, _clock) = logger(config(dir.path(), Profile::SacFamily, 1));
    std::fs::write(log.run_dir().join("play_video.mp4"), b"mp4").unwrap();
    log.set_play_video_path("/elsewhere/eval.mp4");
    log.close(RunStatus::Completed).unwrap();
    assert_eq!(play_video_path(&log), "/elsewhere/eval.mp4");

    let dir = tempfile::tempdir().unwrap();
    let (mut log, _mem, _clock) = logger(config(dir.path(), Profile::SacFamily, 1));
    log.close(RunStatus::Completed).unwrap();
    assert_eq!(play_video_path(&log), Value::Null);
}

#[test]
fn close_writes_the_final_summary_and_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, mem, clock) = logger(config(dir.path(), Profile::SacFamily, 30));
    // The tail throughput is Σsteps/Σtime over the last ≤ 20 measured iterations
    // (docs/contract/run-artifacts.md): 30 steps of 0.5 s × 8 steps → tail over 20
    // iterations, 16 steps/s.
    for i in 1..=30 {
        clock.advance(0.5);
        let ret = if i == 10 { 50.0 } else { i as f64 };
        log.step(
            &StepInput::new(i)
                .env_steps(8 * i)
                .iteration_time(0.5)
                .steps_this_iter(8.0)
                .episode_return(ret),
        )
        .unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
    log.close(RunStatus::Failed).unwrap();
    assert!(mem.is_closed());
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(log.run_dir().join("run_summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(s["status"], "completed");
    assert_eq!(s["metric_schema_version"], 1);
    assert_eq!(s["completed_iterations"], 30);
    assert_eq!(s["total_env_steps"], 240);
    assert_eq!(s["tail_iteration_count"], 20);
    assert_eq!(s["tail_env_steps_per_sec"], 16.0);
    assert_eq!(
        s["final_mean_reward"], 30.0,
        "after shutdown final is the last report"
    );
    // best = max over the 10-report means: the window 10..=19 holds 50 instead of 10.
    let best = (11..=19).sum::<i32>() as f64 / 10.0 + 5.0;
    let best = best.max((21..=30).sum::<i32>() as f64 / 10.0).max(30.0);
    assert_eq!(s["best_mean_reward"], best);
    assert!(s["end_time_utc"].is_string());
    assert!(matches!(log.step(&StepInput::new(31)), Err(Error::Closed)));
}

#[test]
fn dropping_a_logger_closes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, mem, _) = logger(config(dir.path(), Profile::SacFamily, 2));
    log.step(&StepInput::new(1)).unwrap();
    let run_dir = log.run_dir().to_owned();
    drop(log);
    assert!(mem.is_closed());
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("run_summary.json")).unwrap())
            .unwrap();
    assert_eq!(s["status"], "interrupted", "dropped before max_iterations");
}

#[test]
fn tensorboard_backend_writes_an_event_file_in_the_run_dir() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), Profile::SacFamily, 3);
    c.backend = Backend::TensorBoard;
    let mut log = Logger::new(c).unwrap();
    for i in 1..=3 {
        log.step(&sac_step(i)).unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
    let path = log.event_file().unwrap().to_owned();
    assert_eq!(path.parent().unwrap(), log.run_dir());
    let scalars = tally::tfevents::read_scalars_from_file(&path).unwrap();
    let waits: Vec<_> = scalars
        .iter()
        .filter(|s| s.tag == "Perf/learner_collector_wait_ms")
        .map(|s| (s.step, s.value))
        .collect();
    assert_eq!(waits.len(), 3);
    assert_eq!(waits[2].0, 768);
    assert!((waits[2].1 - 100.0).abs() < 1e-4);
}

#[test]
fn wandb_from_rust_without_the_python_sink_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), Profile::SacFamily, 3);
    c.backend = Backend::Wandb;
    let err = Logger::new(c).err().unwrap();
    assert!(err.to_string().contains("Python package"), "{err}");
}

#[test]
fn invalid_config_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), Profile::SacFamily, 3);
    c.log_interval = 0;
    assert!(Logger::new(c)
        .err()
        .unwrap()
        .to_string()
        .contains("log_interval"));
}

struct RefusingSink;

impl Sink for RefusingSink {
    fn name(&self) -> &str {
        "refusing"
    }
    fn start(&mut self, _run_dir: &std::path::Path) -> Result<(), SinkError> {
        Err("login required".into())
    }
    fn write(&mut self, _step: &BackendStep) -> Result<(), SinkError> {
        Ok(())
    }
}

#[test]
fn a_sink_that_cannot_start_fails_the_logger_and_closes_the_sinks_started_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let mem = MemorySink::new();
    let sinks: Vec<Box<dyn Sink>> = vec![Box::new(mem.clone()), Box::new(RefusingSink)];
    let err = Logger::with_sinks(
        config(dir.path(), Profile::SacFamily, 3),
        sinks,
        Arc::new(ManualClock::at(0.0)),
    )
    .err()
    .expect("start failure is an error");
    assert!(
        err.to_string()
            .contains("refusing sink failed at iteration 0: login required"),
        "{err}"
    );
    assert!(
        mem.is_closed(),
        "the memory sink started first and must be closed"
    );
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("run/run_summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(s["status"], "failed");
}
