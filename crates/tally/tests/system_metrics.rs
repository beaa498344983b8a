//! System metrics beside a run (docs/contract/system-metrics.md): written to the run's own
//! event file under `system/...`, plausible against `/proc`, GPU tags absent without NVML,
//! nothing when off, and no canonical validation touched.

use std::collections::BTreeMap;
use std::path::Path;
use tally::{Logger, LoggerConfig, RunStatus, StepInput};
use tally_tfevents::ScalarEvent;

fn config(dir: &Path, on: bool) -> LoggerConfig {
    let mut c = LoggerConfig::new("sac", "task", "mujoco");
    c.log_dir = Some(dir.to_path_buf());
    c.system_metrics = on;
    c.system_interval_secs = 0.2;
    c
}

/// Run `secs` of steps (one every 20 ms) and return every scalar of the event file.
fn run(dir: &Path, on: bool, secs: f64) -> Vec<ScalarEvent> {
    let mut log = Logger::new(config(dir, on)).unwrap();
    let t0 = std::time::Instant::now();
    let mut i = 1;
    while t0.elapsed().as_secs_f64() < secs {
        log.step(
            &StepInput::new(i)
                .env_steps(i * 100)
                .metric("Loss/critic", 1.0),
        )
        .unwrap();
        // Some disk and CPU work for the rates to see.
        std::hint::black_box((0..20_000u64).map(|x| x * x).sum::<u64>());
        i += 1;
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    log.close(RunStatus::Completed).unwrap();
    if on && !Path::new("/dev/nvidia0").exists() {
        // No GPU: said once, on the panel's status lines, as information.
        let t = log.terminal();
        let t = t.lock().unwrap();
        let notes = t
            .messages
            .iter()
            .filter(|m| m.text.contains("no GPU metrics"))
            .count();
        assert_eq!(notes, 1, "{:?}", t.messages);
    }
    let file = log.event_file().unwrap().to_owned();
    tally_tfevents::read_scalars_from_file(&file).unwrap()
}

fn kib(file: &str, key: &str) -> f64 {
    let text = std::fs::read_to_string(file).unwrap();
    let line = text.lines().find(|l| l.starts_with(key)).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<f64>()
        .unwrap()
        * 1024.0
}

#[test]
fn samples_are_in_the_event_file_plausible_against_proc() {
    let dir = tempfile::tempdir().unwrap();
    let scalars = run(dir.path(), true, 1.5);
    let mut last: BTreeMap<&str, f64> = BTreeMap::new();
    let mut samples = 0;
    for s in scalars.iter().filter(|s| s.tag.starts_with("system/")) {
        last.insert(&s.tag, s.value);
        samples += usize::from(s.tag == "system/process/rss_bytes");
    }
    assert!(samples >= 3, "{samples} samples in 1.5 s at 0.2 s");
    for tag in [
        "system/process/cpu_percent",
        "system/process/rss_bytes",
        "system/process/threads",
        "system/process/open_files",
        "system/machine/cpu_percent",
        "system/machine/memory_used_bytes",
        "system/machine/memory_available_bytes",
        "system/machine/load_1m",
        "system/machine/disk_read_bytes_per_s",
        "system/machine/disk_write_bytes_per_s",
        "system/machine/disk_free_bytes",
        "system/machine/network_recv_bytes_per_s",
        "system/machine/network_sent_bytes_per_s",
    ] {
        let v = last
            .get(tag)
            .unwrap_or_else(|| panic!("{tag} missing: {last:?}"));
        assert!(v.is_finite() && *v >= 0.0, "{tag} = {v}");
    }
    // Against /proc now: the resident set within a factor of 2, the memory figures within a
    // quarter of the machine's memory.
    let rss = kib("/proc/self/status", "VmRSS:");
    let got = last["system/process/rss_bytes"];
    assert!(got > rss / 2.0 && got < rss * 2.0, "rss {got} vs {rss}");
    let total = kib("/proc/meminfo", "MemTotal:");
    let used = last["system/machine/memory_used_bytes"];
    let avail = last["system/machine/memory_available_bytes"];
    assert!(
        ((used + avail) - total).abs() < 1e6,
        "{used} + {avail} vs {total}"
    );
    assert!((avail - kib("/proc/meminfo", "MemAvailable:")).abs() < total / 4.0);
    assert!(
        last["system/process/threads"] >= 3.0,
        "logger, writer, sampler"
    );
    assert!(last["system/process/open_files"] >= 3.0);
    assert!(last["system/machine/cpu_percent"] <= 100.0);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    assert!(last["system/process/cpu_percent"] <= 100.0 * cores + 1.0);
    let free = rustix::fs::statvfs(dir.path()).unwrap();
    let free = free.f_bavail as f64 * free.f_frsize as f64;
    assert!((last["system/machine/disk_free_bytes"] - free).abs() < free * 0.2 + 1e9);
    // No GPU here: the GPU tags are absent, and the run closed without an error.
    if !Path::new("/dev/nvidia0").exists() {
        assert!(!last.keys().any(|t| t.starts_with("system/gpu")));
    }
}

#[test]
fn samples_sit_at_the_last_steps_step_so_the_file_never_goes_back() {
    let dir = tempfile::tempdir().unwrap();
    let scalars = run(dir.path(), true, 1.0);
    let steps: Vec<i64> = scalars.iter().map(|s| s.step).collect();
    assert!(steps.windows(2).all(|w| w[0] <= w[1]), "{steps:?}");
    let training: std::collections::BTreeSet<i64> = scalars
        .iter()
        .filter(|s| s.tag == "Loss/critic")
        .map(|s| s.step)
        .collect();
    for s in scalars.iter().filter(|s| s.tag.starts_with("system/")) {
        assert!(s.step == 0 || training.contains(&s.step), "{}", s.step);
    }
}

#[test]
fn off_writes_no_system_tag() {
    let dir = tempfile::tempdir().unwrap();
    let scalars = run(dir.path(), false, 0.6);
    assert!(!scalars.iter().any(|s| s.tag.starts_with("system/")));
}

#[test]
fn an_interval_too_short_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), true);
    c.system_interval_secs = 0.0;
    let e = Logger::new(c).err().unwrap().to_string();
    assert!(e.contains("system_interval"), "{e}");
    let mut c = config(dir.path(), false);
    c.system_interval_secs = 0.0;
    assert!(Logger::new(c).is_ok(), "off: the interval is not used");
}

#[test]
fn replay_shows_a_sample_in_the_system_column_never_as_a_step() {
    use tally::replay::Replay;
    use tally::terminal::{RunFacts, TerminalState};
    let facts = RunFacts {
        algo: "sac".into(),
        task: "t".into(),
        sim: String::new(),
        name: None,
        num_gpus: 1,
        num_envs: None,
        max_iterations: None,
        profile: tally::Profile::SacFamily,
    };
    let mut state = TerminalState::new(facts);
    let clock: std::sync::Arc<dyn tally::Clock> =
        std::sync::Arc::new(tally::SystemClock::default());
    let mut replay = Replay::new(clock);
    let scalar = |tag: &str, value: f64| ScalarEvent {
        tag: tag.into(),
        step: 7,
        wall_time: 1000.0,
        value,
    };
    replay.event(&mut state, 7, 1000.0, &[scalar("Loss/critic", 1.0)]);
    let before = state.snapshot();
    replay.event(
        &mut state,
        7,
        1001.0,
        &[
            scalar("system/process/rss_bytes", 5e8),
            scalar("system/gpu0/util_percent", 40.0),
        ],
    );
    let after = state.snapshot();
    assert_eq!(after.window.n, before.window.n, "a sample is not a step");
    assert_eq!(after.machine.len(), 2);
    assert_eq!(&*after.machine[1].0, "system/gpu0/util_percent");
    // Other ranks' samples (docs/contract/system-metrics.md "Ranks") are no step either, and
    // the System column keeps rank 0's sample.
    replay.event(
        &mut state,
        7,
        1002.0,
        &[
            scalar("system/rank1/process/rss_bytes", 9e8),
            scalar("system/rank1/gpu1/util_percent", 90.0),
        ],
    );
    let ranks = state.snapshot();
    assert_eq!(
        ranks.window.n, before.window.n,
        "a rank's sample is not a step"
    );
    assert_eq!(ranks.machine, after.machine);
}
