//! A disk that fills during a run and stays full (docs/contract/run-artifacts.md "Storage
//! faults"): `close` raises naming the steps lost, `run_summary.json` on disk says what the
//! event file lacks (never `running` with nothing lost), and a resumed run's counts add up
//! over its segments, and a stalled run ended on a full disk still says `failed`. On a real
//! tmpfs, so every write (event file, summary, its temporary file) meets the same full disk.

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use tally::{Logger, LoggerConfig, RunStatus, StepInput};

/// A 2 MiB tmpfs, unmounted on drop; `None` where mounting needs privileges we lack.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount() -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)");
            return None;
        }
        Some(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn fill(&self) -> PathBuf {
        fill(self.path())
    }
}

/// Fill every byte left on `disk` with a file of its own (pages first, then byte by byte).
fn fill(disk: &Path) -> PathBuf {
    let path = disk.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    while f.write_all(&[b'x'; 4096]).is_ok() {}
    while f.write_all(b"x").is_ok() {}
    path
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

fn config(run_dir: &Path, max: u64) -> LoggerConfig {
    let mut c = LoggerConfig::new("sac", "task", "mujoco");
    c.log_dir = Some(run_dir.to_path_buf());
    c.max_iterations = Some(max);
    // A summary after every persisted step: each meets the full disk.
    c.summary_interval_secs = 0.0;
    c
}

fn step(i: u64) -> StepInput {
    StepInput::new(i).metric("Loss/critic", i as f64)
}

fn summary(run_dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(run_dir.join("run_summary.json")).unwrap())
        .unwrap()
}

/// The steps of `Loss/critic` in the run's event files, as readers show them.
fn file_steps(run_dir: &Path) -> Vec<i64> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(run_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| tally::tfevents::is_event_file_name(p.file_name().unwrap().to_str().unwrap()))
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|f| tally_tfevents::read_scalars_from_file(f).unwrap())
        .filter(|e| e.tag == "Loss/critic")
        .map(|e| e.step)
        .collect()
}

/// Log `1..=steps`, filling the disk before step `fill_at` and never freeing it; flushes
/// (which raise while steps are kept) are not counted as reports.
fn run_until_full(run_dir: &Path, disk: &Tmpfs, steps: u64, fill_at: u64) -> (Logger, String) {
    let mut log = Logger::new(config(run_dir, steps)).unwrap();
    for i in 1..=steps {
        if i == fill_at {
            log.flush().unwrap();
            disk.fill();
        }
        let _ = log.step(&step(i));
        let _ = log.flush();
    }
    let err = log
        .close(RunStatus::Completed)
        .expect_err("close says steps were lost")
        .to_string();
    (log, err)
}

#[test]
fn a_disk_that_stays_full_is_said_at_close_and_in_the_summary_on_disk() {
    let Some(disk) = Tmpfs::mount() else { return };
    let run_dir = disk.path().join("run");
    let (_log, err) = run_until_full(&run_dir, &disk, 200, 51);
    let kept = file_steps(&run_dir);
    let k = kept.len() as u64;
    assert!((50..200).contains(&k), "{k} steps in the file");
    assert_eq!(
        kept,
        (1..=k as i64).collect::<Vec<_>>(),
        "a prefix, in order"
    );
    let lost = 200 - k;
    assert!(
        err.contains(&format!("{lost} logged steps are lost"))
            && err.contains(&format!("iterations {}–200", k + 1)),
        "close names how many steps and which: {err}"
    );
    let s = summary(&run_dir);
    assert_eq!(s["status"], "degraded", "{s}");
    assert_eq!(s["completed_iterations"], 200);
    assert_eq!(s["persisted_iterations"], k, "the file's count");
    assert_eq!(s["lost_iterations"], lost);
    assert_eq!(s["pending_iterations"], 0);
    assert!(s["end_time_utc"].is_string());
}

#[test]
fn a_summary_rewritten_while_the_disk_is_full_counts_the_kept_steps() {
    let Some(disk) = Tmpfs::mount() else { return };
    let run_dir = disk.path().join("run");
    let mut log = Logger::new(config(&run_dir, 400)).unwrap();
    for i in 1..=20 {
        log.step(&step(i)).unwrap();
    }
    log.flush().unwrap();
    disk.fill();
    // Past what the event file's last page still takes.
    for i in 21..=400 {
        let _ = log.step(&step(i));
        let _ = log.flush();
    }
    let k = file_steps(&run_dir).len() as u64;
    assert!(k < 400, "the disk refused steps: {k} in the file");
    let s = summary(&run_dir);
    assert_eq!(s["status"], "running");
    let completed = s["completed_iterations"].as_u64().unwrap();
    assert!(completed > k, "rewritten after the disk refused steps: {s}");
    assert_eq!(s["persisted_iterations"], k);
    assert_eq!(s["pending_iterations"], completed - k);
    drop(log);
}

#[test]
fn a_resumed_run_counts_every_segment_s_steps() {
    let Some(disk) = Tmpfs::mount() else { return };
    let run_dir = disk.path().join("run");
    let (log, _) = run_until_full(&run_dir, &disk, 100, 41);
    drop(log);
    let first = summary(&run_dir);
    let lost = first["lost_iterations"].as_u64().unwrap();
    assert!(lost > 0, "{first}");
    std::fs::remove_file(disk.path().join("filler")).unwrap();
    let mut c = config(&run_dir, 150);
    c.resume = true;
    let mut log = Logger::new(c).unwrap();
    for i in 101..=150 {
        log.step(&step(i)).unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
    let s = summary(&run_dir);
    let shown = file_steps(&run_dir).len() as u64;
    assert_eq!(s["completed_iterations"], 150);
    assert_eq!(
        s["persisted_iterations"], shown,
        "every segment's steps in the files"
    );
    assert_eq!(
        s["lost_iterations"], lost,
        "the earlier segment's losses stay counted"
    );
    assert_eq!(
        shown + lost,
        150,
        "persisted and lost add up to the steps logged"
    );
    assert_eq!(s["status"], "degraded", "the files still lack steps: {s}");
}

/// The child of the test below: a run on the tmpfs at `TALLY_FULL_DISK_STALL` whose loop logs
/// 20 steps, fills the disk and stops (docs/contract/health.md "Ending a stalled run").
#[test]
#[ignore]
fn child_fills_the_disk_and_stalls() {
    let Ok(disk) = std::env::var("TALLY_FULL_DISK_STALL") else {
        return;
    };
    let disk = Path::new(&disk);
    let mut c = config(&disk.join("run"), 100);
    let mut rules = tally::health::RuleSet::defaults();
    let stall = rules.stall.as_mut().unwrap();
    // A quick threshold so the test is short (docs/contract/health.md "Stall").
    stall.min_gap_s = 0.5;
    stall.min_history = 3;
    c.health = rules;
    c.stall_exit_after_secs = Some(1.0);
    let mut log = Logger::new(c).unwrap();
    for i in 1..=20 {
        log.step(&step(i)).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    log.flush().unwrap();
    fill(disk);
    std::thread::sleep(std::time::Duration::from_secs(3600));
}

#[test]
fn a_stalled_run_ended_on_a_full_disk_says_failed_over_the_room() {
    let Some(disk) = Tmpfs::mount() else { return };
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["child_fills_the_disk_and_stalls", "--exact", "--ignored"])
        .env("TALLY_FULL_DISK_STALL", disk.path())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("the child did not end within 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(
        status.code(),
        Some(tally::health::stall_exit::STALL_EXIT_CODE)
    );
    let run_dir = disk.path().join("run");
    let s = summary(&run_dir);
    assert_eq!(s["status"], "failed", "{s}");
    assert!(
        s["status_reason"]
            .as_str()
            .unwrap()
            .starts_with("stalled: "),
        "{s}"
    );
    assert_eq!(s["completed_iterations"], 20, "{s}");
    // The room is given back once the run is ended, as at close.
    assert!(!run_dir.join(tally::room::ROOM_FILE).exists());
}
