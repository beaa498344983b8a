//! Input rules that cannot poison a run (docs/contract/step.md "Input bounds"): a refused
//! step changes nothing, so the next normal step is accepted; values the event file cannot
//! hold as finite float32 are persisted, counted and agree with `run_summary.json`.

use serde_json::Value;
use tally::{Backend, Error, Logger, LoggerConfig, MemorySink, Profile, RunStatus, StepInput};

#[path = "support/memory_logger.rs"]
mod memory_logger;
use memory_logger::memory_logger;

fn config(dir: &std::path::Path, profile: Profile, max: Option<u64>) -> LoggerConfig {
    let mut c = LoggerConfig::new("sac", "task", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.profile = profile;
    c.max_iterations = max;
    c.backend = Backend::None;
    c
}

fn logger(c: LoggerConfig) -> (Logger, MemorySink) {
    let (log, mem, _) = memory_logger(c, 100.0);
    (log, mem)
}

fn refused(log: &mut Logger, input: StepInput, needles: &[&str]) {
    let e = log.step(&input).expect_err("step must be refused");
    assert!(matches!(e, Error::InvalidStep { .. }), "{e:?}");
    let text = e.to_string();
    for n in needles {
        assert!(text.contains(n), "{n:?} not in {text:?}");
    }
}

fn steps_of(mem: &MemorySink) -> Vec<(u64, i64)> {
    mem.steps().iter().map(|s| (s.iteration, s.step)).collect()
}

fn summary(log: &Logger) -> Value {
    let text = std::fs::read_to_string(log.run_dir().join("run_summary.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn an_iteration_beyond_exact_counts_is_refused_and_the_next_step_works() {
    // 2^63 overflows TensorBoard's int64 step; anything above 2^53 - 1 is not kept exact by
    // the JSON readers of run_summary.json. On the env-step axis the iteration is not the step,
    // and was accepted before: every later step then failed to advance past it.
    let dir = tempfile::tempdir().unwrap();
    let (mut log, mem) = logger(config(dir.path(), Profile::SacFamily, None));
    log.step(&StepInput::new(1).env_steps(100)).unwrap();
    refused(
        &mut log,
        StepInput::new(1 << 63).env_steps(200),
        &["iteration", "9223372036854775808", "9007199254740991"],
    );
    refused(
        &mut log,
        StepInput::new(1 << 53).env_steps(200),
        &["iteration", "9007199254740992"],
    );
    log.step(&StepInput::new(2).env_steps(200)).unwrap();
    log.flush().unwrap();
    assert_eq!(steps_of(&mem), vec![(1, 100), (2, 200)]);
}

#[test]
fn env_steps_beyond_exact_counts_are_refused_and_the_next_step_works() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, mem) = logger(config(dir.path(), Profile::SacFamily, None));
    log.step(&StepInput::new(1).env_steps(100)).unwrap();
    refused(
        &mut log,
        StepInput::new(2).env_steps(1 << 62),
        &["env_steps", "4611686018427387904", "9007199254740991"],
    );
    log.step(&StepInput::new(2).env_steps(200)).unwrap();
    // The largest exact count is accepted.
    log.step(&StepInput::new(3).env_steps((1 << 53) - 1))
        .unwrap();
    log.flush().unwrap();
    assert_eq!(steps_of(&mem), vec![(1, 100), (2, 200), (3, (1 << 53) - 1)]);
}

#[test]
fn an_iteration_past_max_iterations_is_refused_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, mem) = logger(config(dir.path(), Profile::OnPolicy, Some(10)));
    log.step(&StepInput::new(0)).unwrap();
    refused(
        &mut log,
        StepInput::new(1_000_000),
        &["iteration", "1000000", "max_iterations 10"],
    );
    refused(&mut log, StepInput::new(11), &["max_iterations 10"]);
    log.step(&StepInput::new(1)).unwrap();
    // The last iteration itself is accepted (one-based runners end there).
    log.step(&StepInput::new(10)).unwrap();
    log.flush().unwrap();
    assert_eq!(steps_of(&mem), vec![(0, 0), (1, 1), (10, 10)]);
    log.close(RunStatus::Completed).unwrap();
    assert_eq!(summary(&log)["completed_iterations"], 10);
}

#[test]
fn without_max_iterations_any_exact_iteration_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, mem) = logger(config(dir.path(), Profile::OnPolicy, None));
    log.step(&StepInput::new(1_000_000)).unwrap();
    log.flush().unwrap();
    assert_eq!(steps_of(&mem), vec![(1_000_000, 1_000_000)]);
}

#[test]
fn a_duration_or_count_beyond_float32_is_refused_naming_the_key_and_value() {
    // Durations, gauges and counts must be finite; one stored as float32 infinity is not.
    let dir = tempfile::tempdir().unwrap();
    let (mut log, mem) = logger(config(dir.path(), Profile::SacFamily, None));
    refused(
        &mut log,
        StepInput::new(1).iteration_time(1e300),
        &["iteration_time", "1e300", "float32"],
    );
    // 1e36 s is 1e39 ms in Perf/learner_collector_wait_ms: beyond float32 only once converted.
    refused(
        &mut log,
        StepInput::new(1).learner("collector_wait", 1e36),
        &["learner['collector_wait']", "e39 ms", "float32"],
    );
    refused(
        &mut log,
        StepInput::new(1).steps_this_iter(1e39),
        &["steps_this_iter", "1e39", "float32"],
    );
    refused(
        &mut log,
        StepInput::new(1).episode_length(1e39),
        &["episode_length", "1e39", "float32"],
    );
    log.step(&StepInput::new(1).iteration_time(1.0)).unwrap();
    log.flush().unwrap();
    assert_eq!(steps_of(&mem), vec![(1, 1)]);
}

fn event_values(log: &Logger, tag: &str) -> Vec<(i64, f64)> {
    let path = log.event_file().unwrap().to_owned();
    tally::tfevents::read_scalars_from_file(path)
        .unwrap()
        .into_iter()
        .filter(|s| s.tag == tag)
        .map(|s| (s.step, s.value))
        .collect()
}

#[test]
fn values_the_file_holds_as_nonfinite_are_persisted_counted_and_agree_with_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), Profile::SacFamily, Some(3));
    c.backend = Backend::TensorBoard;
    let mut log = Logger::new(c).unwrap();
    log.step(
        &StepInput::new(1)
            .metric("Loss/critic", 1e300)
            .metric("Loss/actor", 1e-50)
            .episode_return(5.0),
    )
    .unwrap();
    log.step(
        &StepInput::new(2)
            .metric("Loss/critic", f64::NAN)
            .metric("Loss/actor", 1e-40)
            .episode_return(7.0),
    )
    .unwrap();
    log.step(
        &StepInput::new(3)
            .metric("Loss/critic", f64::NEG_INFINITY)
            .episode_return(f64::NAN),
    )
    .unwrap();
    log.close(RunStatus::Completed).unwrap();

    // What TensorBoard holds: 1e300 as +inf, NaN as NaN, 1e-50 as 0, 1e-40 subnormal.
    let critic = event_values(&log, "Loss/critic");
    assert_eq!(critic.len(), 3);
    assert_eq!(critic[0].1, f64::INFINITY);
    assert!(critic[1].1.is_nan());
    assert_eq!(critic[2].1, f64::NEG_INFINITY);
    let actor = event_values(&log, "Loss/actor");
    assert_eq!(actor[0].1, 0.0);
    assert!(actor[1].1 > 0.0 && actor[1].1 < f64::from(f32::MIN_POSITIVE));
    let reward = event_values(&log, "Train/mean_reward");
    assert!(reward[2].1.is_nan(), "{reward:?}");

    let s = summary(&log);
    // 1e300, NaN, -inf (critic) and the NaN return.
    assert_eq!(s["nonfinite_values"], 4, "{s}");
    // 1e-50 (stored 0) and 1e-40 (stored subnormal).
    assert_eq!(s["underflow_values"], 2, "{s}");
    // The file's last reward is NaN: the summary does not show the one before it.
    assert_eq!(s["final_mean_reward"], Value::Null, "{s}");
    // Best is over the smoothed (mean of the last 10) finite reports: (5 + 7) / 2.
    assert_eq!(s["best_mean_reward"], 6.0, "{s}");
}

#[test]
fn a_finite_return_beyond_float32_is_null_in_the_summary_as_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, mem) = logger(config(dir.path(), Profile::SacFamily, Some(2)));
    log.step(&StepInput::new(1).episode_return(3.0)).unwrap();
    log.step(&StepInput::new(2).episode_return(-1e300)).unwrap();
    log.close(RunStatus::Completed).unwrap();
    assert_eq!(mem.steps().len(), 2);
    let s = summary(&log);
    assert_eq!(s["final_mean_reward"], Value::Null, "{s}");
    assert_eq!(s["best_mean_reward"], 3.0, "{s}");
    assert_eq!(s["nonfinite_values"], 1, "{s}");
}

#[test]
fn a_run_without_odd_values_counts_none() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = logger(config(dir.path(), Profile::SacFamily, Some(1)));
    log.step(
        &StepInput::new(1)
            .metric("Loss/critic", 0.0)
            .episode_return(1.0),
    )
    .unwrap();
    log.close(RunStatus::Completed).unwrap();
    let s = summary(&log);
    assert_eq!(s["nonfinite_values"], 0, "{s}");
    assert_eq!(s["underflow_values"], 0, "{s}");
    assert_eq!(s["final_mean_reward"], 1.0, "{s}");
}

#[test]
fn a_learner_phase_name_is_checked_against_the_profile() {
    use tally::resolve::learner_phase;
    assert_eq!(
        learner_phase(Profile::SacFamily, "learning"),
        Ok("learning")
    );
    let e = learner_phase(Profile::SacFamily, "bogus").unwrap_err();
    assert!(e.contains("'bogus'") && e.contains("collector_wait"), "{e}");
    let e = learner_phase(Profile::SacFamily, "replay_stage").unwrap_err();
    assert!(e.contains("sac_family") && e.contains("appo"), "{e}");
    let e = learner_phase(Profile::Rft, "learning").unwrap_err();
    assert!(e.contains("no learner phases"), "{e}");
}

#[test]
fn max_iterations_beyond_the_largest_iteration_is_a_config_error() {
    let dir = tempfile::tempdir().unwrap();
    let c = config(dir.path(), Profile::SacFamily, Some(1 << 53));
    let e = Logger::new(c).err().expect("refused");
    assert!(matches!(e, Error::Config(_)), "{e:?}");
    assert!(
        e.to_string().contains("max_iterations 9007199254740992"),
        "{e}"
    );
    assert!(!dir.path().join("run").exists());
}

#[test]
fn the_panel_flags_each_tag_once_when_it_first_holds_a_nonfinite_value() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = logger(config(dir.path(), Profile::SacFamily, None));
    log.step(&StepInput::new(1).metric("Loss/critic", 1.0))
        .unwrap();
    log.step(&StepInput::new(2).metric("Loss/critic", f64::NAN))
        .unwrap();
    log.step(&StepInput::new(3).metric("Loss/critic", f64::NAN))
        .unwrap();
    log.step(
        &StepInput::new(4)
            .metric("Loss/critic", f64::INFINITY)
            .metric("Loss/actor", -1e300),
    )
    .unwrap();
    let term = log.terminal();
    let term = term.lock().unwrap();
    let flags: Vec<(tally::Level, &str)> = term
        .messages
        .iter()
        .filter(|m| m.text.contains("non-finite"))
        .map(|m| (m.level, m.text.as_str()))
        .collect();
    assert_eq!(flags.len(), 2, "{flags:?}");
    assert_eq!(flags[0].0, tally::Level::Warning);
    assert!(
        flags[0].1.contains("iteration 2") && flags[0].1.contains("Loss/critic = NaN"),
        "{flags:?}"
    );
    assert!(
        flags[1].1.contains("iteration 4")
            && flags[1].1.contains("Loss/actor = -1e300")
            && !flags[1].1.contains("Loss/critic"),
        "{flags:?}"
    );
}

#[test]
fn env_steps_summed_over_ranks_past_u64_are_refused_not_wrapped() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, mem) = logger(config(dir.path(), Profile::SacFamily, None));
    let rank = |steps| StepInput::new(1).env_steps(steps);
    // Wrapped, 2^63 + 2^63 + 5 would be 5: a plausible count.
    let e = log
        .step_ranks(&[rank(1 << 63), rank(1 << 63), rank(5)])
        .expect_err("refused");
    assert!(e.to_string().contains("env_steps"), "{e}");
    log.step_ranks(&[rank(10), rank(10)]).unwrap();
    log.flush().unwrap();
    assert_eq!(steps_of(&mem), vec![(1, 20)]);
}

#[test]
fn a_user_metric_the_file_holds_as_inf_is_null_in_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = logger(config(dir.path(), Profile::SacFamily, Some(2)));
    log.step(&StepInput::new(1).metric("charts/score", 1.0))
        .unwrap();
    log.step(&StepInput::new(2).metric("charts/score", 1e300))
        .unwrap();
    log.close(RunStatus::Completed).unwrap();
    let s = summary(&log);
    assert_eq!(s["user_metrics"]["charts/score"], Value::Null, "{s}");
    assert_eq!(s["nonfinite_values"], 1, "{s}");
}

#[test]
fn a_resumed_run_keeps_counting_from_the_earlier_segments() {
    let dir = tempfile::tempdir().unwrap();
    let c = config(dir.path(), Profile::SacFamily, Some(4));
    let (mut log, _) = logger(c.clone());
    log.step(
        &StepInput::new(1)
            .env_steps(10)
            .metric("Loss/critic", f64::NAN),
    )
    .unwrap();
    log.close(RunStatus::Interrupted).unwrap();
    drop(log);
    let mut c = c;
    c.resume = true;
    let (mut log, _) = logger(c);
    log.step(&StepInput::new(2).env_steps(20).metric("Loss/critic", 1e-45))
        .unwrap();
    log.close(RunStatus::Completed).unwrap();
    let s = summary(&log);
    assert_eq!(s["nonfinite_values"], 1, "{s}");
    assert_eq!(s["underflow_values"], 1, "{s}");
}
