//! Pins resuming a run (docs/contract/run-artifacts.md "Resume") and the optional run facts
//! (sim, num_envs, max_iterations, name, seed).

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use tally::tfevents::read_scalars_from_file;
use tally::{
    Backend, Logger, LoggerConfig, ManualClock, MemorySink, Profile, RunStatus, StepInput,
    UserMetricSpec,
};

fn config(run_dir: &Path, algo: &str, profile: Profile) -> LoggerConfig {
    let mut c = LoggerConfig::new(algo, "task", "mujoco");
    c.log_dir = Some(run_dir.to_owned());
    c.profile = profile;
    c.max_iterations = Some(100);
    c
}

/// A logger on a clock whose wall time starts at `wall` (the event files' names and times).
fn logger_at(c: LoggerConfig, wall: f64) -> Logger {
    let clock = Arc::new(ManualClock::with_wall(0.0, wall));
    Logger::with_sinks(c, Vec::new(), clock).unwrap()
}

fn sac_step(i: u64) -> StepInput {
    StepInput::new(i)
        .env_steps(256 * i)
        .metric("Loss/critic", i as f64)
        .episode_return(i as f64)
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn event_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .contains("tfevents")
        })
        .collect();
    v.sort();
    v
}

/// Every (step, value) of `tag` across the run's event files, in step order.
fn series(dir: &Path, tag: &str) -> Vec<(i64, f64)> {
    let mut out: Vec<(i64, f64)> = event_files(dir)
        .iter()
        .flat_map(|f| read_scalars_from_file(f).unwrap())
        .filter(|s| s.tag == tag)
        .map(|s| (s.step, s.value))
        .collect();
    out.sort_by_key(|p| p.0);
    out
}

#[test]
fn a_resumed_run_appends_a_new_event_file_and_continues_the_step_axis() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut log = logger_at(config(&run, "sac", Profile::SacFamily), 1_000.0);
    for i in 1..=5 {
        log.step(&sac_step(i)).unwrap();
    }
    log.close(RunStatus::Interrupted).unwrap();
    let before = json(&run.join("run_summary.json"));

    let mut c = config(&run, "sac", Profile::SacFamily);
    c.resume = true;
    let mut log = logger_at(c, 2_000.0);
    assert_eq!(log.run_dir(), run);
    // The last persisted step was env step 1280 at iteration 5: neither may repeat.
    let err = log.step(&sac_step(5)).unwrap_err().to_string();
    assert!(err.contains("iteration 5 does not advance past 5"), "{err}");
    let err = log
        .step(&StepInput::new(6).env_steps(1280))
        .unwrap_err()
        .to_string();
    assert!(err.contains("env_steps") && err.contains("1280"), "{err}");
    for i in 6..=8 {
        log.step(&sac_step(i)).unwrap();
    }
    log.close(RunStatus::Completed).unwrap();

    assert_eq!(
        event_files(&run).len(),
        2,
        "a new event file beside the old one"
    );
    let critic = series(&run, "Loss/critic");
    let want: Vec<(i64, f64)> = (1..=8).map(|i| (256 * i, i as f64)).collect();
    assert_eq!(critic, want, "one step axis, nothing lost or repeated");

    let s = json(&run.join("run_summary.json"));
    assert_eq!(s["status"], "completed");
    assert_eq!(s["completed_iterations"], 8);
    assert_eq!(s["total_env_steps"], 2048);
    assert_eq!(s["start_time_utc"], before["start_time_utc"]);
    assert_eq!(s["best_mean_reward"], 8.0);
    let seg = &s["resumed"][0];
    assert_eq!(s["resumed"].as_array().unwrap().len(), 1);
    assert_eq!(seg["previous_status"], "interrupted");
    assert_eq!(seg["after_step"], 1280);
    assert_eq!(seg["first_step"], 1536);
    assert!(seg["start_time_utc"]
        .as_str()
        .unwrap()
        .starts_with("1970-01-01T00:33:20"));
}

#[test]
fn a_resume_keeps_the_earlier_figures_and_counts_on() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let clock = Arc::new(ManualClock::with_wall(0.0, 1_000.0));
    let mut c = config(&run, "sac", Profile::SacFamily);
    c.backend = Backend::None;
    let mut log = Logger::with_sinks(c, Vec::new(), clock.clone()).unwrap();
    log.define_metric("charts/*", UserMetricSpec::default())
        .unwrap();
    log.step(&sac_step(1).metric("charts/first", 1.0)).unwrap();
    clock.advance(30.0);
    log.step(&sac_step(2).metric("charts/first", 2.0)).unwrap();
    log.close(RunStatus::Failed).unwrap();
    let first = json(&run.join("run_summary.json"));
    assert!(first["wall_time_sec"].as_f64().unwrap() >= 30.0);

    let mut c = config(&run, "sac", Profile::SacFamily);
    c.backend = Backend::None;
    c.resume = true;
    let clock = Arc::new(ManualClock::with_wall(0.0, 5_000.0));
    let mut log = Logger::with_sinks(c, Vec::new(), clock.clone()).unwrap();
    clock.advance(10.0);
    log.step(&sac_step(3).metric("charts/second", 5.0)).unwrap();
    log.close(RunStatus::Completed).unwrap();

    let s = json(&run.join("run_summary.json"));
    let wall = s["wall_time_sec"].as_f64().unwrap();
    let want = first["wall_time_sec"].as_f64().unwrap() + 10.0;
    assert!((wall - want).abs() < 1e-9, "{wall} vs {want}");
    assert_eq!(s["user_metrics"]["charts/first"], 2.0);
    assert_eq!(s["user_metrics"]["charts/second"], 5.0);
    assert_eq!(s["resumed"][0]["previous_status"], "failed");
    let cfg = json(&run.join("run_config.json"));
    let tags: Vec<&str> = cfg["user_metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["tag"].as_str().unwrap())
        .collect();
    assert_eq!(tags, ["charts/first", "charts/second"]);
}

fn ppo_step(i: u64) -> StepInput {
    StepInput::new(i).metric("Loss/value", i as f64)
}

/// Child half of `an_iteration_axis_run_resumes_after_its_last_iteration`: logs four
/// iterations, flushes, says so and waits to be killed.
#[test]
#[ignore = "spawned as a child process by an_iteration_axis_run_resumes_after_its_last_iteration"]
fn child_killed_before_close() {
    let Some(run) = std::env::var_os("TALLY_RESUME_CHILD_DIR") else {
        return;
    };
    let mut log = logger_at(config(Path::new(&run), "ppo", Profile::OnPolicy), 1_000.0);
    for i in 0..4 {
        log.step(&ppo_step(i)).unwrap();
    }
    log.flush().unwrap();
    println!("flushed");
    std::thread::sleep(std::time::Duration::from_secs(600));
}

#[test]
fn an_iteration_axis_run_resumes_after_its_last_iteration() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    // Killed before it could close: flushed, never closed (its lock goes with the process).
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "child_killed_before_close",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env("TALLY_RESUME_CHILD_DIR", &run)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while lines.next().expect("child exited early").unwrap() != "flushed" {}
    child.kill().unwrap();
    child.wait().unwrap();

    let mut c = config(&run, "ppo", Profile::OnPolicy);
    c.resume = true;
    let mut log = logger_at(c, 2_000.0);
    let err = log.step(&ppo_step(3)).unwrap_err().to_string();
    assert!(err.contains("iteration 3 does not advance past 3"), "{err}");
    log.step(&ppo_step(4)).unwrap();
    log.close(RunStatus::Completed).unwrap();
    let steps: Vec<i64> = series(&run, "Loss/value").iter().map(|p| p.0).collect();
    assert_eq!(steps, [0, 1, 2, 3, 4]);
    let s = json(&run.join("run_summary.json"));
    assert_eq!(s["resumed"][0]["previous_status"], "running");
    assert_eq!(s["resumed"][0]["after_step"], 3);
}

#[test]
fn an_existing_log_dir_without_resume_is_refused_and_says_how_to_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    logger_at(config(&run, "sac", Profile::SacFamily), 1_000.0)
        .close(RunStatus::Completed)
        .unwrap();
    let clock = Arc::new(ManualClock::at(0.0));
    let err = Logger::with_sinks(config(&run, "sac", Profile::SacFamily), Vec::new(), clock)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("resume=True"), "{err}");
}

/// Two loggers appending to one run would interleave its files and overwrite each other's
/// summary: a run takes one live logger at a time (docs/contract/run-artifacts.md "Resume").
#[test]
fn a_run_with_a_live_logger_refuses_a_second_one_until_it_closes() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut first = logger_at(config(&run, "sac", Profile::SacFamily), 1_000.0);
    first.step(&sac_step(1)).unwrap();
    let mut c = config(&run, "sac", Profile::SacFamily);
    c.resume = true;
    let clock = Arc::new(ManualClock::with_wall(0.0, 2_000.0));
    let err = Logger::with_sinks(c.clone(), Vec::new(), clock)
        .err()
        .expect("a second logger on a live run is refused");
    assert!(
        matches!(err, tally::Error::RunInUse(ref d) if *d == run),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains(&run.display().to_string()) && text.contains("live logger"),
        "{text}"
    );
    // The refusal touched nothing: the first logger goes on and closes its run.
    first.step(&sac_step(2)).unwrap();
    first.close(RunStatus::Completed).unwrap();
    assert_eq!(event_files(&run).len(), 1);
    let mut second = logger_at(c, 2_000.0);
    second.step(&sac_step(3)).unwrap();
    second.close(RunStatus::Completed).unwrap();
    assert_eq!(
        json(&run.join("run_summary.json"))["completed_iterations"],
        3
    );
}

#[test]
fn resume_without_a_run_starts_a_new_one() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = config(&tmp.path().join("fresh"), "sac", Profile::SacFamily);
    c.resume = true;
    let mut log = logger_at(c, 1_000.0);
    log.step(&sac_step(1)).unwrap();
    log.close(RunStatus::Completed).unwrap();
    let s = json(&log.run_dir().join("run_summary.json"));
    assert!(s.get("resumed").is_none(), "{s}");
    assert_eq!(s["completed_iterations"], 1);

    // Without log_dir and with no run of this algo and task under log_root either.
    let mut c = LoggerConfig::new("sac", "task", "mujoco");
    c.log_root = tmp.path().join("logs");
    c.resume = true;
    let log = logger_at(c, 1_000.0);
    assert!(log.run_dir().starts_with(tmp.path().join("logs/sac/task")));
}

#[test]
fn resume_without_log_dir_takes_the_latest_run_of_the_algo_and_task() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("logs");
    let fresh = |wall: f64| {
        let mut c = LoggerConfig::new("sac", "task", "mujoco");
        c.log_root = root.clone();
        let mut log = logger_at(c, wall);
        log.step(&sac_step(1)).unwrap();
        log.close(RunStatus::Interrupted).unwrap();
        log.run_dir().to_owned()
    };
    let _older = fresh(1_000_000.0);
    let newer = fresh(2_000_000.0);
    // Another task's later run is not a candidate.
    let mut other = LoggerConfig::new("sac", "other", "mujoco");
    other.log_root = root.clone();
    logger_at(other, 3_000_000.0)
        .close(RunStatus::Completed)
        .unwrap();

    let mut c = LoggerConfig::new("sac", "task", "mujoco");
    c.log_root = root.clone();
    c.resume = true;
    let log = logger_at(c, 4_000_000.0);
    assert_eq!(log.run_dir(), newer);
}

#[test]
fn a_resume_that_would_break_the_run_is_refused_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut log = logger_at(config(&run, "sac", Profile::SacFamily), 1_000.0);
    log.step(&sac_step(1)).unwrap();
    log.close(RunStatus::Interrupted).unwrap();
    let summary = std::fs::read_to_string(run.join("run_summary.json")).unwrap();
    let clock = || Arc::new(ManualClock::at(0.0));

    let mut c = config(&run, "appo", Profile::Appo);
    c.resume = true;
    let err = Logger::with_sinks(c, Vec::new(), clock())
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("algo 'appo'") && err.contains("algo 'sac'"),
        "{err}"
    );

    let mut c = config(&run, "sac", Profile::Appo);
    c.resume = true;
    let err = Logger::with_sinks(c, Vec::new(), clock())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("profile 'appo'"), "{err}");

    let mut c = config(&run, "sac", Profile::SacFamily);
    c.sim_backend = "isaac".into();
    c.resume = true;
    let err = Logger::with_sinks(c, Vec::new(), clock())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("sim 'isaac'"), "{err}");
    // A refused resume leaves the run as it was.
    assert_eq!(
        std::fs::read_to_string(run.join("run_summary.json")).unwrap(),
        summary
    );
    assert_eq!(event_files(&run).len(), 1);
}

#[test]
fn sim_num_envs_and_max_iterations_are_optional_and_name_and_seed_are_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = LoggerConfig::new("sac", "task", "");
    c.log_root = tmp.path().to_owned();
    c.name = Some("ablation-7".into());
    c.seed = Some(42);
    let mem = MemorySink::new();
    let clock = Arc::new(ManualClock::with_wall(0.0, 1_000.0));
    let mut log = Logger::with_sinks(c, vec![Box::new(mem.clone())], clock).unwrap();
    // No sim: the directory has no `_<sim>` suffix.
    let name = log
        .run_dir()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(name.len(), "YYYY-MM-DD_HH-MM-SS".len(), "{name}");
    for i in 1..=3 {
        log.step(&sac_step(i)).unwrap();
    }
    let run_dir = log.run_dir().to_owned();
    // No max_iterations: a script that ends without close() completed its run.
    drop(log);
    assert_eq!(mem.steps().len(), 3);
    let cfg = json(&run_dir.join("run_config.json"));
    assert_eq!(cfg["run"]["name"], "ablation-7");
    assert_eq!(cfg["run"]["seed"], 42);
    assert_eq!(cfg["run"]["sim_backend"], "");
    assert_eq!(cfg["run"]["logger"]["max_iterations"], Value::Null);
    assert_eq!(cfg["run"]["logger"]["num_envs"], Value::Null);
    assert_eq!(
        json(&run_dir.join("run_summary.json"))["status"],
        "completed"
    );
}

#[test]
fn a_blank_name_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = config(&tmp.path().join("run"), "sac", Profile::SacFamily);
    c.name = Some("  ".into());
    let err = Logger::new(c).err().unwrap().to_string();
    assert!(err.contains("name"), "{err}");
}

#[test]
fn a_run_without_event_files_resumes_after_the_step_its_summary_recorded() {
    // W&B-only and backend-less runs have no event file: run_summary.json holds the axis.
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut c = config(&run, "sac", Profile::SacFamily);
    c.backend = Backend::None;
    let mut log = logger_at(c.clone(), 1_000.0);
    for i in 1..=4 {
        log.step(&sac_step(i)).unwrap();
    }
    log.close(RunStatus::Interrupted).unwrap();
    c.resume = true;
    let mut log = logger_at(c, 2_000.0);
    let err = log.step(&sac_step(4)).unwrap_err().to_string();
    assert!(err.contains("does not advance past 4"), "{err}");
    log.step(&sac_step(5)).unwrap();
    log.close(RunStatus::Completed).unwrap();
    let s = json(&run.join("run_summary.json"));
    assert_eq!(s["resumed"][0]["after_step"], 1024);
    assert_eq!(s["resumed"][0]["first_step"], 1280);
}

#[test]
fn the_new_event_file_sorts_after_the_earlier_ones_even_when_the_clock_is_behind() {
    // TensorBoard reads a directory's event files in name order: a resumed segment on a host
    // whose clock is behind must still come last, or its steps would read as out of order.
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut log = logger_at(config(&run, "sac", Profile::SacFamily), 5_000.0);
    log.step(&sac_step(1)).unwrap();
    log.close(RunStatus::Interrupted).unwrap();
    let mut c = config(&run, "sac", Profile::SacFamily);
    c.resume = true;
    let mut log = logger_at(c, 1_000.0);
    log.step(&sac_step(2)).unwrap();
    log.close(RunStatus::Completed).unwrap();
    let files = event_files(&run);
    assert_eq!(files.len(), 2);
    assert_eq!(
        files.last().unwrap(),
        log.event_file().unwrap(),
        "{files:?}"
    );
}

#[test]
fn a_resumed_trace_keeps_the_earlier_segments_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut c = config(&run, "sac", Profile::SacFamily);
    c.trace = true;
    let mut log = logger_at(c.clone(), 1_000.0);
    log.step(&sac_step(1)).unwrap();
    log.close(RunStatus::Interrupted).unwrap();
    let first = std::fs::read(run.join("perfetto_offpolicy_timeline.json")).unwrap();
    c.resume = true;
    let mut log = logger_at(c, 2_000.0);
    log.step(&sac_step(2)).unwrap();
    log.close(RunStatus::Completed).unwrap();
    assert_eq!(
        std::fs::read(run.join("perfetto_offpolicy_timeline.json")).unwrap(),
        first
    );
    let second = run.join("perfetto_offpolicy_timeline.resume1.json");
    assert!(json(&second).is_array());
    let s = json(&run.join("run_summary.json"));
    assert_eq!(s["trace_path"], second.display().to_string());
}
