//! Kill safety: a child process writing steps is SIGKILLed, and every step it reported as written is read back exactly.
//!
//! The child is this same test binary, re-run by libtest with only the ignored
//! `child_writer_process` test selected and an environment variable naming the directory.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use tally_tfevents::{open_event_file, EventFileWriter, FsyncPolicy, WriterOptions};

/// Environment variable that turns `child_writer_process` on and names its output directory.
const CHILD_DIR_VAR: &str = "TALLY_TFEVENTS_CHILD_DIR";
/// The parent kills the child once it has reported at least this step.
const KILL_AFTER_STEP: i64 = 200;
const TAGS: [&str; 4] = [
    "Loss/critic",
    "Perf/iteration_time",
    "Train/mean_reward",
    "reward/tracking_lin_vel",
];

/// The value the child writes for tag `i` at `step`: fractional, signed and step-dependent,
/// so a record from the wrong step or a corrupted one cannot pass for the right one.
fn value(step: i64, i: usize) -> f64 {
    (step as f64 * 0.37 + i as f64).sin() * 10f64.powi(i as i32 - 2)
}

fn wall_time(step: i64) -> f64 {
    1_700_000_000.0 + step as f64 * 0.001
}

#[test]
#[ignore = "child process for sigkill_after_step_n_leaves_steps_1_through_n_readable"]
fn child_writer_process() {
    let Some(dir) = std::env::var_os(CHILD_DIR_VAR) else {
        return;
    };
    let options = WriterOptions::from_env().with_fsync(FsyncPolicy::Never);
    let mut writer = EventFileWriter::open(&dir, options).unwrap();
    let mut stdout = std::io::stdout().lock();
    let mut scalars = Vec::with_capacity(TAGS.len());
    for step in 1.. {
        scalars.clear();
        scalars.extend(
            TAGS.iter()
                .enumerate()
                .map(|(i, tag)| (*tag, value(step, i))),
        );
        writer
            .write_scalars(step, wall_time(step), &scalars)
            .unwrap();
        // Reported only after write_scalars returned: the claim the parent checks.
        writeln!(stdout, "wrote {step}").unwrap();
        stdout.flush().unwrap();
    }
}

#[test]
fn sigkill_after_step_n_leaves_steps_1_through_n_readable() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "child_writer_process",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR_VAR, dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    let mut last_reported = 0;
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while last_reported < KILL_AFTER_STEP {
        let Some(line) = lines.next() else {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "child exited after reporting step {last_reported}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let line = line.unwrap();
        // libtest prints "test child_writer_process ... " without a newline, so the first
        // report shares its line.
        if let Some((_, step)) = line.split_once("wrote ") {
            let step: i64 = step.trim().parse().unwrap();
            assert_eq!(step, last_reported + 1, "child reports steps in order");
            last_reported = step;
        }
    }
    // Kill while the child is still writing: std's kill is SIGKILL on Unix.
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "child was killed, not finished");

    let path = single_event_file(dir.path());
    let mut reader = open_event_file(&path).unwrap().into_scalars();
    let scalars = reader
        .read_to_end()
        .expect("the reader ends without error after a kill");
    assert_eq!(reader.skipped_records(), 0);

    // Steps after the last report may exist too (written before the kill landed).
    let steps_read = scalars.len() / TAGS.len();
    assert!(
        steps_read as i64 >= last_reported,
        "only {steps_read} steps readable, {last_reported} reported"
    );
    for (k, s) in scalars.iter().enumerate() {
        let step = (k / TAGS.len()) as i64 + 1;
        let i = k % TAGS.len();
        assert_eq!(s.tag, TAGS[i], "scalar #{k}");
        assert_eq!(s.step, step, "scalar #{k}");
        assert_eq!(s.wall_time, wall_time(step), "scalar #{k}");
        assert_eq!(s.value, f64::from(value(step, i) as f32), "scalar #{k}");
    }
}

fn single_event_file(dir: &Path) -> std::path::PathBuf {
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .contains("tfevents")
        })
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.into_iter().next().unwrap()
}
