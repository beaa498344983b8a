//! Logdirs anyone with write access to a shared folder can make hostile: a FIFO named like an
//! event file, a run directory nobody may read, links leading nowhere
//! (docs/contract/untrusted-input.md "Special files"). Every reader lists the rest, names what
//! it skipped, and never waits on a special file: each command runs under a deadline, so a hang
//! fails the test instead of hanging it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use tally_tfevents::{EventFileWriter, WriterOptions};

/// Longer than any of these commands takes on good files, shorter than a CI job's patience.
const DEADLINE: Duration = Duration::from_secs(60);

/// A run of `ret` = `base + step`, steps 0..=10.
fn run(dir: &Path, base: f64) {
    std::fs::create_dir_all(dir).unwrap();
    let mut w = EventFileWriter::open(dir, WriterOptions::from_env()).unwrap();
    for step in 0..=10 {
        w.write_scalars(step, 100.0 + step as f64, &[("ret", base + step as f64)])
            .unwrap();
    }
    w.close().unwrap();
}

fn fifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Whether this process runs as root, who reads any directory whatever its mode.
fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// `tally ARGS`, as the user `nobody` when this test runs as root (so a `chmod 000` directory
/// is unreadable to it), killed and failed if it outlives [`DEADLINE`].
fn tally(args: &[&str], unprivileged: bool) -> Output {
    let mut cmd = if unprivileged && is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_tally"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_tally"))
    };
    let mut child = cmd
        .args(args)
        .env("COLUMNS", "200")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (out, err) = (drain(child.stdout.take()), drain(child.stderr.take()));
    let status = wait(&mut child, args);
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// A pipe read to its end on a thread of its own, so a full pipe never stalls the child.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    })
}

/// The child's exit, or the test failed (the child killed) once [`DEADLINE`] passes.
fn wait(child: &mut Child, what: &[&str]) -> std::process::ExitStatus {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tally {what:?} still running after {DEADLINE:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The runs `tally runs --json` lists.
fn listed(out: &Output) -> Vec<String> {
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&out.stdout), text(&out.stderr)));
    rows.iter()
        .map(|r| r["run"].as_str().unwrap().to_owned())
        .collect()
}

/// Every reader over `root`: `runs`, `sql`, `export`, `health` and `watch --curves` list `expected` runs
/// and name each of `culprits` on stderr (watch: in its frame), all under the deadline.
fn every_reader_lists_and_names(
    root: &Path,
    expected: &[&str],
    culprits: &[&Path],
    unprivileged: bool,
) {
    let r = root.to_str().unwrap();
    let named = |where_: &str, said: &str| {
        for c in culprits {
            let c = c.to_str().unwrap();
            assert!(said.contains(c), "{where_} does not name {c}:\n{said}");
        }
    };
    let out = tally(&["runs", r, "--json"], unprivileged);
    assert!(out.status.success(), "runs: {}", text(&out.stderr));
    assert_eq!(listed(&out), expected);
    named("runs", &text(&out.stderr));

    let query = "SELECT run, count(*) AS n FROM scalars GROUP BY run ORDER BY run";
    let out = tally(&["sql", r, query, "--csv"], unprivileged);
    assert!(out.status.success(), "sql: {}", text(&out.stderr));
    let runs: Vec<String> = text(&out.stdout)
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().to_owned())
        .collect();
    assert_eq!(runs, expected, "sql");
    named("sql", &text(&out.stderr));

    let out = tally(&["export", r, "--format", "csv"], unprivileged);
    assert!(out.status.success(), "export: {}", text(&out.stderr));
    let mut exported: Vec<String> = text(&out.stdout)
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().to_owned())
        .collect();
    exported.dedup();
    let dirs: Vec<String> = expected
        .iter()
        .map(|run| root.join(run).display().to_string())
        .collect();
    assert_eq!(exported, dirs, "export");
    named("export", &text(&out.stderr));

    let out = tally(&["health", r, "--json"], unprivileged);
    assert_eq!(out.status.code(), Some(0), "health: {}", text(&out.stderr));
    let health: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let judged: Vec<&str> = health["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run"].as_str().unwrap())
        .collect();
    assert_eq!(judged, expected, "health");
    named("health", &text(&out.stderr));

    let out = tally(&["watch", r, "--curves", "--panel", "off"], unprivileged);
    assert!(out.status.success(), "watch: {}", text(&out.stderr));
    let frame = text(&out.stdout);
    for run in expected {
        assert!(frame.contains(&format!("[x] {run}")), "watch:\n{frame}");
    }
    named("watch --curves", &frame);
}

/// A temporary logdir anyone may read (tempfile's own is its owner's alone).
fn logdir() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    tmp
}

#[test]
fn a_fifo_named_like_an_event_file_is_named_and_never_opened() {
    let tmp = logdir();
    let root = tmp.path();
    run(&root.join("a"), 0.0);
    run(&root.join("b"), 5.0);
    // Beside a run's real file, and alone in a directory of its own.
    let beside = root.join("b/events.out.tfevents.9.trap");
    let alone = root.join("trap/events.out.tfevents.1.trap");
    fifo(&beside);
    std::fs::create_dir(root.join("trap")).unwrap();
    fifo(&alone);
    // And in an artefact's place: read as a run's status, it is refused, not waited on.
    fifo(&root.join("b/run_summary.json"));
    every_reader_lists_and_names(root, &["a", "b"], &[&beside, &alone], false);
    let out = tally(&["runs", root.to_str().unwrap()], false);
    assert!(
        text(&out.stderr).contains("a FIFO"),
        "{}",
        text(&out.stderr)
    );

    // The commands reading one run name it too (b is no schema-v1 run: they then refuse it).
    for cmd in ["extract", "diagnose", "scaling"] {
        let out = tally(&[cmd, root.join("b").to_str().unwrap()], false);
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!("{}: skipped: a FIFO", beside.display())),
            "{cmd}: {err}"
        );
    }

    // Given by name, it is refused at once, named.
    for cmd in ["runs", "health"] {
        let out = tally(&[cmd, alone.to_str().unwrap()], false);
        assert!(!out.status.success(), "{cmd}");
        let err = text(&out.stderr);
        assert!(
            err.contains(alone.to_str().unwrap()) && err.contains("a FIFO"),
            "{cmd}: {err}"
        );
    }

    // The board lists the runs and says what it skipped.
    board_lists_and_names(root, &["a", "b"], &[&beside, &alone], false);
}

#[test]
fn watching_one_run_names_a_fifo_beside_its_event_file_once() {
    let tmp = logdir();
    let dir = tmp.path().join("b");
    run(&dir, 5.0);
    let beside = dir.join("events.out.tfevents.9.trap");
    fifo(&beside);
    // A run without a summary never ends: its lines are read until both are seen, under the
    // deadline, then it is ended.
    let mut child = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["watch", "--panel", "off", "--every", "0.2"])
        .arg(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    for pipe in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    drop(tx);
    let name = beside.to_str().unwrap();
    let deadline = Instant::now() + DEADLINE;
    let mut said = Vec::new();
    let shown = |said: &[String]| {
        // Four summary lines, 0.2 s apart: the run's files listed again at several polls.
        said.iter().filter(|l| l.starts_with("step 10 ")).count() >= 4
            && said
                .iter()
                .any(|l| l.contains(name) && l.contains("a FIFO"))
    };
    while !shown(&said) {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => said.push(line),
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let shown_all = shown(&said);
    let said = said.join("\n");
    assert!(
        shown_all,
        "watch does not show the run and name {name}:\n{said}"
    );
    // Named once, not at every poll.
    assert_eq!(said.matches(name).count(), 1, "{said}");
}

#[test]
fn links_leading_nowhere_are_named_and_their_run_still_listed() {
    let tmp = logdir();
    let root = tmp.path();
    run(&root.join("a"), 0.0);
    run(&root.join("c"), 5.0);
    let dangling = root.join("c/events.out.tfevents.8.gone");
    let looped = root.join("c/events.out.tfevents.9.self");
    std::os::unix::fs::symlink(root.join("c/nothing"), &dangling).unwrap();
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    // A link to a real event file is an event file.
    run(&root.join("real"), 7.0);
    std::fs::create_dir(root.join("d")).unwrap();
    let real = std::fs::read_dir(root.join("real"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::os::unix::fs::symlink(&real, root.join("d/events.out.tfevents.1.link")).unwrap();
    every_reader_lists_and_names(root, &["a", "c", "d", "real"], &[&dangling, &looped], false);
    board_lists_and_names(root, &["a", "c", "d", "real"], &[&dangling, &looped], false);
}

#[test]
fn a_directory_nobody_may_read_is_named_and_the_other_runs_listed() {
    // Root reads a chmod 000 directory anyway: as root, the readers run as nobody, who must be
    // able to run the binary (not so when the build lies under a directory only root enters).
    let as_nobody = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args([env!("CARGO_BIN_EXE_tally"), "--version"])
        .output();
    if is_root() && !as_nobody.is_ok_and(|o| o.status.success()) {
        eprintln!(
            "skipped: running as root, who reads a chmod 000 directory anyway, and nobody cannot \
             run {} through setpriv",
            env!("CARGO_BIN_EXE_tally")
        );
        return;
    }
    let tmp = logdir();
    let root = tmp.path();
    run(&root.join("a"), 0.0);
    run(&root.join("b"), 5.0);
    run(&root.join("locked"), 9.0);
    let locked = root.join("locked");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let check = || {
        every_reader_lists_and_names(root, &["a", "b"], &[&locked], true);
        board_lists_and_names(root, &["a", "b"], &[&locked], true);
    };
    let result = std::panic::catch_unwind(check);
    // Readable again, so the temporary directory can be removed.
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

/// `tally board` over `root` answers `/api/runs` under the deadline with `expected` runs and a
/// notice naming each of `culprits`; then it is ended.
fn board_lists_and_names(root: &Path, expected: &[&str], culprits: &[&Path], unprivileged: bool) {
    let bin = env!("CARGO_BIN_EXE_tally");
    let mut cmd = if unprivileged && is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", bin]);
        c
    } else {
        Command::new(bin)
    };
    let mut child = cmd
        .args(["board", "--port", "0"])
        .arg(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let authority = line
        .trim()
        .strip_prefix("tally board: http://")
        .and_then(|u| u.strip_suffix('/'))
        .unwrap_or_else(|| panic!("{line}"))
        .to_owned();
    let answer = get(&authority, "/api/runs");
    let _ = child.kill();
    let _ = child.wait();
    let body: serde_json::Value =
        serde_json::from_str(answer.split_once("\r\n\r\n").map_or(&*answer, |(_, b)| b))
            .unwrap_or_else(|e| panic!("{e}: {answer}"));
    assert_eq!(body["names"], serde_json::json!(expected), "{body}");
    let notice = body["notice"].as_str().unwrap_or_default();
    for c in culprits {
        assert!(notice.contains(c.to_str().unwrap()), "{notice}");
    }
}

/// The answer to `GET target`, or the test failed when none comes within [`DEADLINE`].
fn get(authority: &str, target: &str) -> String {
    let mut s = TcpStream::connect(authority).unwrap();
    s.set_read_timeout(Some(DEADLINE)).unwrap();
    write!(s, "GET {target} HTTP/1.0\r\n\r\n").unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer)
        .unwrap_or_else(|e| panic!("GET {target}: no answer ({e}): the board hangs"));
    answer
}
