//! `tally board` from the command line (`docs/contract/board.md`): it prints the URL to open,
//! serves the runs under its path there, and Ctrl-C ends it with exit 0.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tally_tfevents::{encode_scalar_event, RecordWriter};

#[test]
fn board_prints_its_url_serves_the_runs_and_ends_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("cartpole");
    std::fs::create_dir_all(&run).unwrap();
    let mut w = RecordWriter::new(Vec::new());
    for step in 0..5 {
        let mut buf = Vec::new();
        encode_scalar_event(
            step,
            100.0 + step as f64,
            &[("charts/return", 1.0)],
            &mut buf,
        );
        w.write_record(&buf).unwrap();
    }
    std::fs::write(run.join("events.out.tfevents.1.host"), w.into_inner()).unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["board", "--port", "0"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("tally board: ")
        .expect(&line)
        .to_owned();
    let authority = url
        .strip_prefix("http://")
        .and_then(|u| u.strip_suffix('/'))
        .expect(&url);
    assert!(authority.starts_with("127.0.0.1:"), "{url}");

    let mut s = TcpStream::connect(authority).unwrap();
    write!(s, "GET /api/runs HTTP/1.0\r\n\r\n").unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.contains("\"names\":[\"cartpole\"]"), "{answer}");

    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the board did not end on Ctrl-C");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
}
