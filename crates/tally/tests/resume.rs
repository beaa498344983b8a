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
        matches!(err, tally::Error::RunInUse(ref d, _) if *d == run),
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

// Rewinding to a checkpoint (docs/contract/run-artifacts.md "Resume" (Rewind)).

use tally_tfevents::proto::{event, Event};
use tally_tfevents::reader::open_event_file;

fn events(path: &Path) -> Vec<Event> {
    open_event_file(path).unwrap().read_to_end().unwrap()
}

/// The `SessionLog{status: START}` events of a file: (index in the file, step).
fn session_starts(path: &Path) -> Vec<(usize, i64)> {
    events(path)
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match &e.what {
            Some(event::What::SessionLog(s)) if s.status == 1 => Some((i, e.step)),
            _ => None,
        })
        .collect()
}

/// `tag`'s points as TensorBoard shows the run: files in name order, each session start at
/// step p dropping every point read before it at step >= p.
fn shown(dir: &Path, tag: &str) -> Vec<(i64, f64)> {
    let mut out: Vec<(i64, f64)> = Vec::new();
    for f in event_files(dir) {
        for e in events(&f) {
            match &e.what {
                Some(event::What::SessionLog(s)) if s.status == 1 => {
                    out.retain(|p| p.0 < e.step);
                }
                _ => out.extend(
                    tally_tfevents::scalar::scalars_of(&e)
                        .filter(|s| s.tag == tag)
                        .map(|s| (e.step, s.value)),
                ),
            }
        }
    }
    out
}

fn resume_from(run: &Path, algo: &str, profile: Profile, iteration: i64) -> LoggerConfig {
    let mut c = config(run, algo, profile);
    c.resume = true;
    c.resume_from = Some(iteration);
    c
}

/// A PPO run (iteration axis) logged 0..=37 and interrupted.
fn ppo_run_to_37(run: &Path) {
    let mut log = logger_at(config(run, "ppo", Profile::OnPolicy), 1_000.0);
    for i in 0..=37 {
        log.step(&ppo_step(i)).unwrap();
    }
    log.close(RunStatus::Interrupted).unwrap();
}

/// A SAC run (env-step axis, 256 env steps an iteration) logged 1..=37 and interrupted.
fn sac_run_to_37(run: &Path) {
    let mut log = logger_at(config(run, "sac", Profile::SacFamily), 1_000.0);
    for i in 1..=37 {
        log.step(&sac_step(i)).unwrap();
    }
    log.close(RunStatus::Interrupted).unwrap();
}

#[test]
fn resume_from_a_checkpoint_rewinds_an_iteration_axis_run() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    ppo_run_to_37(&run);

    let mut log = logger_at(resume_from(&run, "ppo", Profile::OnPolicy, 30), 2_000.0);
    assert_eq!(
        (log.last_step(), log.last_iteration()),
        (Some(30), Some(30))
    );
    // The marker is in the new file from the start, right after file_version.
    let new_file = log.event_file().unwrap().to_owned();
    assert_eq!(session_starts(&new_file), [(1, 31)]);
    let s = json(&run.join("run_summary.json"));
    assert_eq!(
        s["completed_iterations"], 30,
        "the summary follows the rewind"
    );
    let err = log.step(&ppo_step(30)).unwrap_err().to_string();
    assert!(
        err.contains("iteration 30 does not advance past 30"),
        "{err}"
    );
    for i in 31..=40 {
        log.step(&StepInput::new(i).metric("Loss/value", 1000.0 + i as f64))
            .unwrap();
    }
    assert_eq!(
        (log.last_step(), log.last_iteration()),
        (Some(40), Some(40))
    );
    log.close(RunStatus::Completed).unwrap();

    // The earlier file is untouched: it still holds 31..=37; TensorBoard drops them.
    assert_eq!(event_files(&run).len(), 2);
    let want: Vec<(i64, f64)> = (0..=40)
        .map(|i| (i, if i > 30 { 1000.0 + i as f64 } else { i as f64 }))
        .collect();
    assert_eq!(shown(&run, "Loss/value"), want);
    assert_eq!(session_starts(&new_file), [(1, 31)], "one marker");

    let s = json(&run.join("run_summary.json"));
    assert_eq!(s["completed_iterations"], 40);
    let seg = &s["resumed"][0];
    assert_eq!(seg["after_step"], 37);
    assert_eq!(seg["rewound_to_iteration"], 30);
    assert_eq!(seg["rewound_to_step"], 30);
    assert_eq!(seg["purged_from_step"], 31);
    assert_eq!(seg["first_step"], 31);
    assert_eq!(seg["previous_status"], "interrupted");
    let errors = tally::schema::conformance::validate_run_summary(&s);
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn resume_from_a_checkpoint_rewinds_an_env_step_axis_run_to_the_step_of_its_iteration() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    sac_run_to_37(&run);

    let mut log = logger_at(resume_from(&run, "sac", Profile::SacFamily, 30), 2_000.0);
    // Iteration 30 was written at env step 7680.
    assert_eq!(
        (log.last_step(), log.last_iteration()),
        (Some(7680), Some(30))
    );
    assert_eq!(session_starts(log.event_file().unwrap()), [(1, 7681)]);
    let s = json(&run.join("run_summary.json"));
    assert_eq!(
        (&s["completed_iterations"], &s["total_env_steps"]),
        (&Value::from(30), &Value::from(7680))
    );
    let err = log
        .step(&StepInput::new(31).env_steps(7680))
        .unwrap_err()
        .to_string();
    assert!(err.contains("7680"), "{err}");
    // The resumed job collects 100 more env steps an iteration than before.
    let step = |i: u64| {
        StepInput::new(i)
            .env_steps(7680 + 356 * (i - 30))
            .metric("Loss/critic", 1000.0 + i as f64)
    };
    for i in 31..=34 {
        log.step(&step(i)).unwrap();
    }
    assert_eq!(
        (log.last_step(), log.last_iteration()),
        (Some(7680 + 4 * 356), Some(34))
    );
    log.close(RunStatus::Interrupted).unwrap();

    let mut want: Vec<(i64, f64)> = (1..=30).map(|i| (256 * i, i as f64)).collect();
    want.extend((31..=34).map(|i| (7680 + 356 * (i - 30), 1000.0 + i as f64)));
    assert_eq!(shown(&run, "Loss/critic"), want);
    let s = json(&run.join("run_summary.json"));
    assert_eq!(s["completed_iterations"], 34);
    assert_eq!(s["total_env_steps"], 7680 + 4 * 356);
    let seg = &s["resumed"][0];
    assert_eq!(
        (
            &seg["after_step"],
            &seg["rewound_to_step"],
            &seg["rewound_to_iteration"],
            &seg["purged_from_step"]
        ),
        (
            &Value::from(256 * 37),
            &Value::from(7680),
            &Value::from(30),
            &Value::from(7681)
        )
    );

    // A later resume continues after the rewound run's last step (8104 at iteration 34), not
    // after the purged 9472 at 37; a later rewind finds iteration 32 in the new file.
    let mut c = config(&run, "sac", Profile::SacFamily);
    c.resume = true;
    let log = logger_at(c, 3_000.0);
    assert_eq!(
        (log.last_step(), log.last_iteration()),
        (Some(7680 + 4 * 356), Some(34))
    );
    drop(log);
    let log = logger_at(resume_from(&run, "sac", Profile::SacFamily, 32), 4_000.0);
    assert_eq!(
        (log.last_step(), log.last_iteration()),
        (Some(7680 + 2 * 356), Some(32))
    );
}

#[test]
fn resume_from_the_last_iteration_is_an_ordinary_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    ppo_run_to_37(&run);
    let mut log = logger_at(resume_from(&run, "ppo", Profile::OnPolicy, 37), 2_000.0);
    assert_eq!(session_starts(log.event_file().unwrap()), []);
    log.step(&ppo_step(38)).unwrap();
    log.close(RunStatus::Completed).unwrap();
    let seg = &json(&run.join("run_summary.json"))["resumed"][0];
    assert_eq!(seg["rewound_to_step"], Value::Null);
    assert_eq!(seg["rewound_to_iteration"], Value::Null);
    assert_eq!(seg["purged_from_step"], Value::Null);
    assert_eq!(seg["after_step"], 37);
}

/// What a refused or failed resume must leave: every file of the run as it was.
fn snapshot(run: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(run)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn resume_from_is_refused_without_resume_past_the_last_iteration_or_where_never_logged() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    ppo_run_to_37(&run);
    let before = snapshot(&run);
    let refused = |c: LoggerConfig| {
        let clock = Arc::new(ManualClock::with_wall(0.0, 2_000.0));
        let err = Logger::with_sinks(c, Vec::new(), clock)
            .err()
            .expect("refused");
        assert!(matches!(err, tally::Error::Config(_)), "{err:?}");
        err.to_string()
    };

    let mut c = resume_from(&run, "ppo", Profile::OnPolicy, 30);
    c.resume = false;
    let err = refused(c);
    assert!(
        err.contains("resume_from") && err.contains("resume=True"),
        "{err}"
    );
    for bad in [38, -1] {
        let err = refused(resume_from(&run, "ppo", Profile::OnPolicy, bad));
        assert!(
            err.contains(&format!("resume_from={bad}")) && err.contains("37"),
            "{err}"
        );
    }
    assert_eq!(snapshot(&run), before, "nothing written");

    // No run to rewind: resume_from names an iteration of a run that is not there.
    let err = refused(resume_from(
        &tmp.path().join("none"),
        "ppo",
        Profile::OnPolicy,
        3,
    ));
    assert!(err.contains("resume_from=3"), "{err}");
    assert!(!tmp.path().join("none").exists());

    // On an env-step axis the iteration must have been written: its step is read from the file.
    let sac = tmp.path().join("sac");
    let mut c = config(&sac, "sac", Profile::SacFamily);
    c.log_interval = 2;
    let mut log = logger_at(c, 1_000.0);
    for i in 1..=9 {
        log.step(&sac_step(i)).unwrap();
    }
    log.close(RunStatus::Interrupted).unwrap();
    let before = snapshot(&sac);
    let err = refused(resume_from(&sac, "sac", Profile::SacFamily, 5));
    assert!(
        err.contains("resume_from=5") && err.contains("never") && err.contains('8'),
        "{err}"
    );
    assert_eq!(snapshot(&sac), before, "nothing written");
}

#[test]
fn a_failed_resume_leaves_the_run_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    ppo_run_to_37(&run);
    let before = snapshot(&run);

    // The first step does not advance, the runner gives up and closes the run failed.
    let mut c = config(&run, "ppo", Profile::OnPolicy);
    c.resume = true;
    let mut log = logger_at(c, 2_000.0);
    assert!(log.step(&ppo_step(31)).is_err());
    log.close(RunStatus::Failed).unwrap();
    assert_eq!(snapshot(&run), before, "status and files as they were");

    // The same through a rewind, and through a logger dropped while a panic unwinds.
    let run2 = run.clone();
    let panicked = std::thread::spawn(move || {
        let mut log = logger_at(resume_from(&run2, "ppo", Profile::OnPolicy, 30), 3_000.0);
        let _ = log.step(&ppo_step(30));
        panic!("the training loop failed before its first step");
    })
    .join();
    assert!(panicked.is_err());
    assert_eq!(snapshot(&run), before);
    assert_eq!(json(&run.join("run_summary.json"))["status"], "interrupted");

    // An event file that cannot be read refuses the resume before anything is written.
    let first = event_files(&run)[0].clone();
    let mut bytes = std::fs::read(&first).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&first, &bytes).unwrap();
    let before = snapshot(&run);
    let mut c = config(&run, "ppo", Profile::OnPolicy);
    c.resume = true;
    let clock = Arc::new(ManualClock::with_wall(0.0, 4_000.0));
    let err = Logger::with_sinks(c, Vec::new(), clock)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("cannot read"), "{err}");
    assert_eq!(snapshot(&run), before);
}

#[test]
fn last_step_and_last_iteration_are_what_the_run_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut log = logger_at(config(&run, "sac", Profile::SacFamily), 1_000.0);
    assert_eq!((log.last_step(), log.last_iteration()), (None, None));
    log.step(&sac_step(1)).unwrap();
    log.step(&sac_step(2)).unwrap();
    assert_eq!(
        (log.last_step(), log.last_iteration()),
        (Some(512), Some(2))
    );
    // A refused step changes nothing.
    assert!(log.step(&sac_step(2)).is_err());
    assert_eq!(
        (log.last_step(), log.last_iteration()),
        (Some(512), Some(2))
    );
    log.close(RunStatus::Interrupted).unwrap();

    let mut c = config(&run, "sac", Profile::SacFamily);
    c.resume = true;
    let mut log = logger_at(c, 2_000.0);
    assert_eq!(
        (log.last_step(), log.last_iteration()),
        (Some(512), Some(2))
    );
    log.step(&sac_step(3)).unwrap();
    assert_eq!(
        (log.last_step(), log.last_iteration()),
        (Some(768), Some(3))
    );
    log.close(RunStatus::Completed).unwrap();

    // An iteration-axis run's step is its iteration.
    let ppo = tmp.path().join("ppo");
    let mut log = logger_at(config(&ppo, "ppo", Profile::OnPolicy), 1_000.0);
    log.step(&ppo_step(0).env_steps(4096)).unwrap();
    assert_eq!((log.last_step(), log.last_iteration()), (Some(0), Some(0)));
}

#[test]
fn a_resume_removes_what_a_killed_rewrite_left_behind() {
    // SIGKILL between creating an artefact's temporary file and renaming it into place leaves
    // `.run_summary.json.tmp.<pid>`; the next logger of the run, holding its lock, removes it.
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut log = logger_at(config(&run, "sac", Profile::SacFamily), 1_700_000_000.0);
    log.step(&sac_step(1)).unwrap();
    log.close(RunStatus::Completed).unwrap();
    let left = [".run_summary.json.tmp.4242", ".run_config.json.tmp.77"];
    for name in left {
        std::fs::write(run.join(name), b"{\"half\": ").unwrap();
    }
    std::fs::write(run.join(".notes.tmp.1"), b"the user's").unwrap();
    let mut c = config(&run, "sac", Profile::SacFamily);
    c.resume = true;
    let mut log = logger_at(c, 1_700_000_100.0);
    for name in left {
        assert!(!run.join(name).exists(), "{name} left behind");
    }
    assert!(
        run.join(".notes.tmp.1").exists(),
        "not an artefact's temporary: kept"
    );
    log.step(&sac_step(2)).unwrap();
    log.close(RunStatus::Completed).unwrap();
}
