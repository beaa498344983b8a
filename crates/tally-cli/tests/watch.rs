//! `tally watch RUN_DIR` (`docs/contract/panel.md`): tailing a growing event file through partial records,
//! the 2 s window rebuilt from event wall times, run facts from run_config.json, and the
//! final state of a finished run in plain mode.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use tally::terminal::{RunFacts, TerminalState};
use tally::Profile;
use tally_cli::cmd::watch::{read_facts, Tailer};

/// A clock whose monotonic reading equals wall time, so replayed sample times are the events'.
fn wall_clock() -> std::sync::Arc<dyn tally::Clock> {
    std::sync::Arc::new(tally::ManualClock::at(0.0))
}
use tally_tfevents::{encode_scalar_event, RecordWriter};

fn record(step: i64, wall: f64, scalars: &[(&str, f64)]) -> Vec<u8> {
    let mut data = Vec::new();
    encode_scalar_event(step, wall, scalars, &mut data);
    let mut w = RecordWriter::new(Vec::new());
    w.write_record(&data).unwrap();
    w.into_inner()
}

fn state() -> Mutex<TerminalState> {
    Mutex::new(TerminalState::new(RunFacts {
        algo: "sac".into(),
        task: "t".into(),
        sim: String::new(),
        name: None,
        num_gpus: 1,
        num_envs: Some(1),
        max_iterations: Some(100),
        profile: Profile::SacFamily,
    }))
}

#[test]
fn tailer_follows_a_growing_event_file_across_a_partial_record() {
    // Tailing it as it grows (Ok(None) at a partial record; call again after more bytes).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.out.tfevents.1700000000.host.1.0");
    let mut f = std::fs::File::create(&path).unwrap();
    let s = state();
    let mut tail = Tailer::new(dir.path(), wall_clock());
    let r1 = record(
        1,
        1000.0,
        &[("Loss/critic", 1.0), ("Perf/total_fps", 100.0)],
    );
    let r2 = record(
        2,
        1001.0,
        &[("Loss/critic", 3.0), ("Perf/total_fps", 300.0)],
    );
    f.write_all(&r1).unwrap();
    f.write_all(&r2[..r2.len() / 2]).unwrap();
    f.flush().unwrap();
    assert_eq!(tail.poll(&s).unwrap(), 1, "the complete record only");
    assert_eq!(s.lock().unwrap().iteration, 1);
    assert_eq!(
        tail.poll(&s).unwrap(),
        0,
        "still partial: not yet, and not an error"
    );
    f.write_all(&r2[r2.len() / 2..]).unwrap();
    f.flush().unwrap();
    assert_eq!(tail.poll(&s).unwrap(), 1);
    let snap = s.lock().unwrap().snapshot();
    assert_eq!(snap.iteration, 2);
    assert_eq!(snap.window.n, 2);
    assert_eq!(snap.window.get("Loss/critic"), Some(2.0));
    assert!(snap.messages.is_empty(), "{:?}", snap.messages);
}

#[test]
fn tailer_reads_a_resumed_runs_event_files_in_name_order() {
    // A resumed run writes a new file beside the old one: the older is read to its end,
    // then the newer is followed (docs/contract/panel.md "tally watch").
    let dir = tempfile::tempdir().unwrap();
    let old = [
        record(1, 1000.0, &[("Loss/critic", 1.0)]),
        record(2, 1000.5, &[("Loss/critic", 2.0)]),
    ]
    .concat();
    std::fs::write(dir.path().join("events.out.tfevents.1.h.1.0"), old).unwrap();
    let newer = dir.path().join("events.out.tfevents.2.h.1.0");
    std::fs::write(&newer, record(3, 1001.0, &[("Loss/critic", 3.0)])).unwrap();
    let s = state();
    let mut tail = Tailer::new(dir.path(), wall_clock());
    assert_eq!(tail.poll(&s).unwrap(), 3);
    assert_eq!(s.lock().unwrap().iteration, 3, "the newer file's step last");
    // The newest file is followed as it grows.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&newer)
        .unwrap();
    f.write_all(&record(4, 1001.5, &[("Loss/critic", 4.0)]))
        .unwrap();
    assert_eq!(tail.poll(&s).unwrap(), 1);
    let snap = s.lock().unwrap().snapshot();
    assert_eq!(snap.iteration, 4);
    assert_eq!(snap.window.get("Loss/critic"), Some(2.5));
    assert!(snap.messages.is_empty(), "{:?}", snap.messages);
}

#[test]
fn a_truncated_tail_of_an_older_file_is_a_warning_naming_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let first = record(1, 1000.0, &[("Loss/critic", 1.0)]);
    let torn = record(2, 1000.5, &[("Loss/critic", 2.0)]);
    let old = [first.clone(), torn[..torn.len() / 2].to_vec()].concat();
    std::fs::write(dir.path().join("events.out.tfevents.1.h.1.0"), old).unwrap();
    std::fs::write(
        dir.path().join("events.out.tfevents.2.h.1.0"),
        record(3, 1001.0, &[("Loss/critic", 3.0)]),
    )
    .unwrap();
    let s = state();
    assert_eq!(Tailer::new(dir.path(), wall_clock()).poll(&s).unwrap(), 2);
    let snap = s.lock().unwrap().snapshot();
    let m = snap.messages.last().expect("a warning");
    assert_eq!(m.level, tally::terminal::Level::Warning);
    let at = format!("truncated final record at byte {}", first.len());
    assert!(
        m.text.contains(&at) && m.text.contains("events.out.tfevents.1.h.1.0"),
        "{}",
        m.text
    );
}

#[test]
fn event_files_in_two_directories_below_the_run_are_refused_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["PPO_1", "PPO_2"] {
        std::fs::create_dir(dir.path().join(sub)).unwrap();
        std::fs::write(
            dir.path().join(sub).join("events.out.tfevents.1.h.1.0"),
            record(1, 1000.0, &[("Loss/critic", 1.0)]),
        )
        .unwrap();
    }
    let s = state();
    let err = Tailer::new(dir.path(), wall_clock())
        .poll(&s)
        .unwrap_err()
        .to_string();
    assert!(err.contains("2 runs") && err.contains("PPO_2"), "{err}");
    // One run directory below the one given is that run.
    let one = tempfile::tempdir().unwrap();
    std::fs::create_dir(one.path().join("PPO_1")).unwrap();
    std::fs::write(
        one.path().join("PPO_1").join("events.out.tfevents.1.h.1.0"),
        record(1, 1000.0, &[("Loss/critic", 1.0)]),
    )
    .unwrap();
    assert_eq!(Tailer::new(one.path(), wall_clock()).poll(&s).unwrap(), 1);
}

#[test]
fn the_window_is_rebuilt_from_event_wall_times() {
    // The panel shows two-second time-sliding means; for watch the clock is the events' wall
    // time, and a sample is evicted when t < newest − 2 s (docs/contract/panel.md).
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = Vec::new();
    for (i, wall) in [(1, 1000.0), (2, 1001.0), (3, 1002.5), (4, 1003.0)] {
        bytes.extend(record(i, wall, &[("Loss/critic", i as f64)]));
    }
    std::fs::write(dir.path().join("events.out.tfevents.1.h.1.0"), bytes).unwrap();
    let s = state();
    assert_eq!(Tailer::new(dir.path(), wall_clock()).poll(&s).unwrap(), 4);
    let snap = s.lock().unwrap().snapshot();
    // 1003 − 2 = 1001: iterations 2, 3, 4 remain.
    assert_eq!(snap.window.n, 3);
    assert_eq!(snap.window.get("Loss/critic"), Some(3.0));
    assert_eq!(snap.training_started_at, Some(1000.0));
}

#[test]
fn env_step_axis_events_use_train_iteration_as_the_iteration() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = record(
        4096,
        10.0,
        &[("Train/iteration", 1.0), ("Train/mean_reward", 2.5)],
    );
    std::fs::write(dir.path().join("events.out.tfevents.1.h.1.0"), bytes).unwrap();
    let s = state();
    Tailer::new(dir.path(), wall_clock()).poll(&s).unwrap();
    let st = s.lock().unwrap();
    assert_eq!(st.iteration, 1);
    assert_eq!(st.env_steps, 4096);
    assert_eq!(st.reward_history.back(), Some(&2.5));
}

#[test]
fn a_corrupt_event_file_is_an_error_also_shown_as_an_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = record(1, 10.0, &[("Loss/critic", 1.0)]);
    let n = bytes.len();
    bytes[n - 6] ^= 0xff; // inside the data: data crc mismatch
    std::fs::write(dir.path().join("events.out.tfevents.1.h.1.0"), bytes).unwrap();
    let s = state();
    let err = Tailer::new(dir.path(), wall_clock())
        .poll(&s)
        .unwrap_err()
        .to_string();
    assert!(err.contains("corrupt record at byte 0"), "{err}");
    let st = s.lock().unwrap();
    let m = st.messages.back().expect("an error line");
    assert_eq!(m.level, tally::terminal::Level::Error);
    assert_eq!(m.text, err);
}

fn demo_run(root: &Path, algo: &str, iterations: &str) -> std::path::PathBuf {
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args([
            "demo",
            "--algo",
            algo,
            "--iterations",
            iterations,
            "--gpus",
            "2",
            "--panel",
            "off",
        ])
        .arg(format!("training.log_root={}", root.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let dir = stdout
        .lines()
        .last()
        .unwrap()
        .strip_prefix("run: ")
        .unwrap();
    dir.into()
}

#[test]
fn watch_reads_algo_task_gpus_and_profile_from_run_config() {
    let tmp = tempfile::tempdir().unwrap();
    let run = demo_run(tmp.path(), "appo", "20");
    let f = read_facts(&run);
    assert_eq!(
        (f.algo.as_str(), f.task.as_str()),
        ("appo", "go2_joystick_flat")
    );
    assert_eq!(
        (f.num_gpus, f.num_envs, f.max_iterations),
        (2, Some(4096), Some(20))
    );
    assert_eq!(f.profile, Profile::Appo);
    // The title's sim and name come from the same file.
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("run_config.json")).unwrap())
            .unwrap();
    let sim = config["run"]["sim_backend"].as_str().unwrap();
    assert!(!sim.is_empty());
    assert_eq!((f.sim.as_str(), f.name.as_deref()), (sim, None));
    // Without run_config.json: defaults, never a failure.
    let f = read_facts(tmp.path());
    assert_eq!(
        (f.algo.as_str(), f.num_gpus, f.profile),
        ("unknown", 1, Profile::SacFamily)
    );
}

#[test]
fn watch_of_a_finished_run_prints_its_final_state_in_plain_mode() {
    // For a finished run it shows the final state; off a terminal: no escape codes.
    let tmp = tempfile::tempdir().unwrap();
    let run = demo_run(tmp.path(), "sac", "40");
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["watch", "--panel", "off"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.stdout.contains(&0x1b));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let last = stdout.lines().last().unwrap();
    for part in [
        "iter 40/40",
        "Steps/s ",
        "Reward ",
        "Iter Wall ",
        "Learning ",
        "Run completed",
    ] {
        assert!(last.contains(part), "{part} not in {last:?}\n{stdout}");
    }
    // Rows/s is terminal-only (never persisted), so the event file cannot show it.
    assert!(!last.contains("Rows/s"), "{last}");
}

#[test]
fn watch_rejects_a_missing_run_directory() {
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["watch", "--panel", "off", "/nonexistent/run"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a run directory"));
}

#[test]
fn a_quiet_writer_is_reported_once_after_the_idle_time_and_again_after_it_resumes() {
    // No producer pid is recorded, so "no new record for N s" is all watch can say.
    use tally_cli::cmd::watch::IDLE_SECS;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.out.tfevents.1.h.1.0");
    std::fs::write(&path, record(1, 1000.0, &[("charts/return", 1.0)])).unwrap();
    let clock = std::sync::Arc::new(tally::ManualClock::at(0.0));
    let s = state();
    let mut tail = Tailer::generic(dir.path(), clock.clone());
    assert_eq!(tail.poll(&s).unwrap(), 1);
    clock.advance(IDLE_SECS - 1.0);
    assert!(!tail.check_idle(&s));
    clock.advance(1.0);
    assert!(tail.check_idle(&s));
    let said = |s: &Mutex<TerminalState>| {
        let st = s.lock().unwrap();
        st.messages
            .iter()
            .filter(|m| m.text == "No new record for 30s: the writer may have stopped")
            .count()
    };
    assert_eq!(said(&s), 1);
    assert_eq!(
        s.lock().unwrap().status,
        "No new record for 30s: the writer may have stopped"
    );
    clock.advance(100.0);
    assert!(!tail.check_idle(&s), "said once");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(&record(2, 1001.0, &[("charts/return", 2.0)]))
        .unwrap();
    assert_eq!(tail.poll(&s).unwrap(), 1);
    assert_eq!(
        s.lock().unwrap().status,
        "Training",
        "records again: the status clears"
    );
    clock.advance(IDLE_SECS);
    assert!(tail.check_idle(&s));
    assert_eq!(said(&s), 2);
}

/// An event file created at `created` (its first wall time), optionally opening with a purge
/// marker at `purge` (what `SummaryWriter(purge_step=...)` and a rewinding resume write), then
/// one event per step with `tags` valued `base + step`, one second apart.
fn segment(
    dir: &Path,
    created: f64,
    purge: Option<i64>,
    steps: std::ops::RangeInclusive<i64>,
    base: f64,
    tags: &[&str],
) -> std::path::PathBuf {
    use std::time::{Duration, UNIX_EPOCH};
    use tally_tfevents::{EventFileWriter, FsyncPolicy, WriterOptions};
    let options = WriterOptions {
        hostname: "h".into(),
        pid: 7,
        created_at: UNIX_EPOCH + Duration::from_secs_f64(created),
        fsync: FsyncPolicy::Never,
        suffix: String::new(),
    };
    let mut w = EventFileWriter::open(dir, options).unwrap();
    if let Some(step) = purge {
        w.write_event(&tally_tfevents::proto::session_start_event(step, created))
            .unwrap();
    }
    for step in steps {
        let values: Vec<(&str, f64)> = tags.iter().map(|t| (*t, base + step as f64)).collect();
        w.write_scalars(step, created + step as f64, &values)
            .unwrap();
    }
    let path = w.path().to_owned();
    w.close().unwrap();
    path
}

#[test]
fn a_purge_marker_takes_the_purged_points_off_the_panel_and_is_reported() {
    // Session one wrote steps 1..=8, then the run was resumed from step 4: the second file's
    // marker at step 5 drops the first file's steps 5..=8, as every other reader drops them
    // (docs/contract/consumers.md "Following a run: tally watch").
    let dir = tempfile::tempdir().unwrap();
    let first = segment(dir.path(), 1000.0, None, 1..=8, 0.0, &["x"]);
    // A tag the first session logged at a purged step only, and one before the cut.
    let rare = [
        record(6, 1006.5, &[("rare", 60.0)]),
        record(3, 1003.5, &[("early", 30.0)]),
    ]
    .concat();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&first)
        .unwrap();
    f.write_all(&rare).unwrap();
    drop(f);
    // The second session resumes 1 s later: its own steps land beside the first's last ones.
    let second = segment(dir.path(), 1009.0, Some(5), 5..=6, 100.0, &["x"]);
    let s = Mutex::new(TerminalState::new(RunFacts {
        algo: String::new(),
        task: "t".into(),
        sim: String::new(),
        name: None,
        num_gpus: 1,
        num_envs: None,
        max_iterations: None,
        profile: Profile::SacFamily,
    }));
    let mut tail = Tailer::generic(dir.path(), wall_clock());
    tail.poll(&s).unwrap();
    let snap = s.lock().unwrap().snapshot();
    let board = snap.board.as_ref().unwrap();
    assert_eq!(board.tags["x"].value, 106.0, "the new session's value");
    assert!(
        !board.tags.contains_key("rare"),
        "its only point was purged"
    );
    assert_eq!(board.tags["early"].value, 30.0, "before the cut: kept");
    assert_eq!(board.step(), Some(6), "the step axis of the new session");
    // The window holds the new session's samples only (steps 5 and 6 at 1014 and 1015 s; the
    // purged 7 and 8 of the first session were at 1007 and 1008).
    assert_eq!(snap.window.n, 2);
    assert_eq!(snap.window.get("x"), Some(105.5));
    let warning = snap
        .messages
        .iter()
        .find(|m| m.text.contains("purge"))
        .unwrap_or_else(|| panic!("no purge reported: {:?}", snap.messages));
    assert!(
        warning
            .text
            .starts_with(&format!("{}: purge at byte", second.display()))
            && warning.text.contains("purge marker at step 5: 5 points of")
            && warning.text.contains(&first.display().to_string()),
        "{}",
        warning.text
    );
}

#[test]
fn a_purge_marker_drops_the_purged_rewards_of_a_loggers_run() {
    let dir = tempfile::tempdir().unwrap();
    segment(dir.path(), 1000.0, None, 1..=8, 0.0, &["Train/mean_reward"]);
    segment(
        dir.path(),
        1009.0,
        Some(5),
        5..=6,
        100.0,
        &["Train/mean_reward"],
    );
    let s = state();
    let mut tail = Tailer::new(dir.path(), wall_clock());
    tail.poll(&s).unwrap();
    let snap = s.lock().unwrap().snapshot();
    assert_eq!(snap.reward_history, [1.0, 2.0, 3.0, 4.0, 105.0, 106.0]);
    assert_eq!(snap.iteration, 6);
}
