//! The board against hostile and careless clients (`docs/contract/board.md` "Who can see it",
//! "The API"): a page of another site reaching it through DNS rebinding, clients that never
//! read, slow heads (slowloris), Ctrl-C with clients stuck, HTTP/1.0 keep-alive, heads hyper
//! reads as the RFC says, gzip, and expensive answers kept until their runs change.
//!
//! Every loop is bounded in count and time; all traffic goes to 127.0.0.1. Attackers connect
//! from other loopback addresses (127.0.0.2, ...) so that the per-address bound is seen apart
//! from the head deadline.

mod common;

use common::events;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tally_board::{Board, Options};

const FILE: &str = "events.out.tfevents.1700000000.host";

/// A board serving `paths` on a free port of 127.0.0.1, stopped when dropped (without waiting
/// more than a few seconds for it: a board that does not stop is a failure of its own test).
struct Running {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Running {
    /// Sets the stop flag and waits for `serve` to return, at most `bound`: how long it took.
    fn stop_within(&mut self, bound: Duration) -> Duration {
        let started = Instant::now();
        self.stop.store(true, Ordering::Relaxed);
        let thread = self.thread.take().unwrap();
        while !thread.is_finished() {
            assert!(
                started.elapsed() < bound,
                "the board still serves {bound:?} after it was told to stop"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        thread.join().unwrap();
        started.elapsed()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Not joined: a test that failed because the board does not stop must not hang.
    }
}

fn start(paths: &[&Path], token: Option<&str>) -> Running {
    let options = Options {
        paths: paths.iter().map(|p| p.to_path_buf()).collect(),
        host: "127.0.0.1".parse().unwrap(),
        port: 0,
        token: token.map(str::to_owned),
    };
    let board = Board::bind(options).unwrap();
    let addr = board.addr();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || board.serve(&flag).unwrap());
    Running {
        addr,
        stop,
        thread: Some(thread),
    }
}

/// A connection to `addr` from the loopback address `from` (127.0.0.x).
fn connect_from(from: [u8; 4], addr: SocketAddr) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let source = SocketAddr::new(IpAddr::from(from), 0);
    socket.bind(&source.into()).unwrap();
    socket.connect(&addr.into()).unwrap();
    socket.into()
}

/// An answer: status, head (lines as sent) and body.
struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Reads one answer from `s`, its body by its `Content-Length` (or to the end without one).
fn read_answer(s: &mut TcpStream) -> std::io::Result<Answer> {
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        raw.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&raw).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut answer = Answer {
        status,
        head,
        body: Vec::new(),
    };
    match answer
        .header("Content-Length")
        .map(|n| n.parse::<usize>().unwrap())
    {
        Some(n) => {
            answer.body = vec![0; n];
            s.read_exact(&mut answer.body)?;
        }
        None => {
            s.read_to_end(&mut answer.body)?;
        }
    }
    Ok(answer)
}

/// `GET target` on a new connection with `headers` (a hang fails after 30 s; the tests bound
/// what they need tighter themselves).
fn get(addr: SocketAddr, target: &str, headers: &str) -> Answer {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{headers}\r\n"
    )
    .unwrap();
    read_answer(&mut s).unwrap()
}

/// The resident memory of this process, in bytes.
fn resident() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

/// A run of `points` steps of tag `x`, every few a spike.
fn big_run(dir: &Path, points: i64) {
    events(
        &dir.join("big").join(FILE),
        (0..points).map(|s| (s, vec![("x", ((s * 7919) % 1000) as f64)])),
    );
}

#[test]
fn a_rebinding_host_is_refused_on_loopback_and_the_token_lets_any_host_in() {
    let dir = tempfile::tempdir().unwrap();
    events(&dir.path().join("a").join(FILE), [(1, vec![("x", 1.0)])]);
    let board = start(&[dir.path()], None);
    let port = board.addr.port();
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LocalHost:{port}"),
        format!("[::1]:{port}"),
    ] {
        let mut s = TcpStream::connect(board.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(s, "GET /api/runs HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
        assert_eq!(read_answer(&mut s).unwrap().status, 200, "{host}");
    }
    // A page of evil.example whose name now resolves to 127.0.0.1 sends its own name.
    for host in [
        format!("evil.example:{port}"),
        "localhost".to_owned(),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        format!("localhost.evil.example:{port}"),
    ] {
        let mut s = TcpStream::connect(board.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(s, "GET /api/runs HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
        let a = read_answer(&mut s).unwrap();
        assert!(
            [403, 421].contains(&a.status),
            "{host}: {}",
            String::from_utf8_lossy(&a.body)
        );
        assert!(
            !String::from_utf8_lossy(&a.body).contains("names"),
            "{host}"
        );
    }
    drop(board);

    // A loopback board given a token: any Host with the token, none without.
    let token = "0123456789abcdef0123456789abcdef";
    let board = start(&[dir.path()], Some(token));
    let port = board.addr.port();
    let ask = |extra: &str| {
        let mut s = TcpStream::connect(board.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(
            s,
            "GET /api/runs HTTP/1.1\r\nHost: evil.example:{port}\r\n{extra}\r\n"
        )
        .unwrap();
        read_answer(&mut s).unwrap().status
    };
    assert_eq!(ask(&format!("Authorization: token {token}\r\n")), 200);
    assert_eq!(ask(&format!("Cookie: tally_board_token={token}\r\n")), 200);
    assert!([403, 421].contains(&ask("")));
}

/// Sends `GET target` on `n` connections from `from` and never reads: the sockets, kept.
fn never_reading(addr: SocketAddr, from: &[[u8; 4]], n: usize, target: &str) -> Vec<TcpStream> {
    (0..n)
        .map(|i| {
            let mut s = connect_from(from[i % from.len()], addr);
            s.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
            // Refused connections may be closed already: that is what they are for.
            let _ = write!(s, "GET {target} HTTP/1.1\r\nHost: {addr}\r\n\r\n");
            s
        })
        .collect()
}

/// A `GET /api/runs` from 127.0.0.1 is answered 200 within `bound`, `times` times over.
fn answered_promptly(addr: SocketAddr, times: usize, bound: Duration) {
    for i in 0..times {
        let started = Instant::now();
        let a = get(addr, "/api/runs", "");
        assert_eq!(a.status, 200, "request {i}");
        assert!(
            started.elapsed() < bound,
            "request {i} took {:?}",
            started.elapsed()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn clients_that_never_read_a_large_answer_do_not_pin_the_board() {
    let dir = tempfile::tempdir().unwrap();
    big_run(dir.path(), 120_000);
    let mut board = start(&[dir.path()], None);
    let large = "/api/scalars?run=big&tag=x&width=16384";
    // The answer is megabytes: more than the sockets' buffers hold.
    assert!(get(board.addr, large, "").body.len() > 2 << 20);

    // Three, from one address.
    let stuck = never_reading(board.addr, &[[127, 0, 0, 2]], 3, large);
    std::thread::sleep(Duration::from_millis(500));
    answered_promptly(board.addr, 5, Duration::from_secs(3));

    // 130 more, from three addresses (so the per-address bound does not turn them away):
    // the board's memory stays bounded and others are still answered.
    let before = resident();
    let many = never_reading(
        board.addr,
        &[[127, 0, 0, 3], [127, 0, 0, 4], [127, 0, 0, 5]],
        130,
        large,
    );
    std::thread::sleep(Duration::from_secs(2));
    answered_promptly(board.addr, 5, Duration::from_secs(3));
    let grown = resident().saturating_sub(before);
    // Answers waiting for their clients are bounded (128 MiB); the rest is the answers being
    // computed (8 per address) and what the allocator keeps of them: 620-710 MiB seen in a debug
    // build under load, so 600 MiB failed by chance. The hand-written server reached 1.5 GB.
    assert!(grown < 1 << 30, "the board grew by {} MiB", grown >> 20);

    // Ctrl-C does not wait for them.
    let took = board.stop_within(Duration::from_secs(5));
    assert!(took < Duration::from_secs(3), "stop took {took:?}");
    drop((stuck, many));
}

#[test]
fn slow_heads_do_not_deny_service_and_are_closed_at_the_head_deadline() {
    let dir = tempfile::tempdir().unwrap();
    events(&dir.path().join("a").join(FILE), [(1, vec![("x", 1.0)])]);
    let mut board = start(&[dir.path()], None);
    let attacker = [127, 0, 0, 2];
    let started = Instant::now();
    // 200 connections, each sending its head a byte at a time, never finishing it.
    let mut slow: Vec<TcpStream> = (0..200)
        .map(|_| {
            let mut s = connect_from(attacker, board.addr);
            let _ = s.write_all(b"GET / HTTP/1.1\r\nX-");
            s
        })
        .collect();
    // Other addresses are answered at once, all along.
    for round in 0..12 {
        for s in &mut slow {
            let _ = s.write_all(b"a");
        }
        let asked = Instant::now();
        let a = get(board.addr, "/api/runs", "");
        assert_eq!(a.status, 200, "round {round}");
        assert!(asked.elapsed() < Duration::from_secs(3), "round {round}");
        std::thread::sleep(Duration::from_millis(500));
    }
    // The slow heads' own address is answered again once the head deadline (10 s) closed them.
    let answered = loop {
        for s in &mut slow {
            let _ = s.write_all(b"a");
        }
        let mut s = connect_from(attacker, board.addr);
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let _ = write!(s, "GET /api/runs HTTP/1.1\r\nHost: {}\r\n\r\n", board.addr);
        if read_answer(&mut s).is_ok_and(|a| a.status == 200) {
            break started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the slow heads' address was never answered again"
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    assert!(answered < Duration::from_secs(16), "{answered:?}");
    // Every slow head was closed by the board: reading finds its end (or a reset).
    for s in &mut slow {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut rest = Vec::new();
        match s.read_to_end(&mut rest) {
            Ok(_) => {}
            Err(e) => assert_ne!(e.kind(), std::io::ErrorKind::WouldBlock, "still open"),
        }
    }
    board.stop_within(Duration::from_secs(5));
}

#[test]
fn stop_returns_promptly_with_idle_slow_and_stuck_clients_connected() {
    let dir = tempfile::tempdir().unwrap();
    big_run(dir.path(), 120_000);
    let mut board = start(&[dir.path()], None);
    let large = "/api/scalars?run=big&tag=x&width=16384";
    assert_eq!(get(board.addr, large, "").status, 200);
    // Idle connections, a head half sent, a keep-alive connection between requests, and
    // answers no one reads.
    let idle: Vec<TcpStream> = (0..8)
        .map(|_| TcpStream::connect(board.addr).unwrap())
        .collect();
    let mut half = TcpStream::connect(board.addr).unwrap();
    half.write_all(b"GET / HTTP/1.1\r\nHo").unwrap();
    let mut kept = TcpStream::connect(board.addr).unwrap();
    kept.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        kept,
        "GET /api/runs HTTP/1.1\r\nHost: {}\r\n\r\n",
        board.addr
    )
    .unwrap();
    assert_eq!(read_answer(&mut kept).unwrap().status, 200);
    let stuck = never_reading(board.addr, &[[127, 0, 0, 2]], 4, large);
    std::thread::sleep(Duration::from_millis(500));
    let took = board.stop_within(Duration::from_secs(5));
    assert!(took < Duration::from_secs(3), "stop took {took:?}");
    drop((idle, half, kept, stuck));
}

#[test]
fn http_1_0_keep_alive_is_kept_and_said_and_1_0_without_it_closes() {
    let dir = tempfile::tempdir().unwrap();
    events(&dir.path().join("a").join(FILE), [(1, vec![("x", 1.0)])]);
    let board = start(&[dir.path()], None);
    let mut s = TcpStream::connect(board.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    for i in 0..3 {
        write!(
            s,
            "GET /api/runs HTTP/1.0\r\nHost: {}\r\nConnection: keep-alive\r\n\r\n",
            board.addr
        )
        .unwrap();
        let a = read_answer(&mut s).unwrap();
        assert_eq!(a.status, 200, "request {i}");
        // An HTTP/1.0 client closes unless the answer says the connection is kept.
        assert!(
            a.header("Connection")
                .is_some_and(|c| c.eq_ignore_ascii_case("keep-alive")),
            "request {i}: {}",
            a.head
        );
        assert!(a.header("Content-Length").is_some(), "{}", a.head);
    }
    // Without keep-alive, HTTP/1.0 closes after the answer.
    let mut s = TcpStream::connect(board.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET /api/runs HTTP/1.0\r\nHost: {}\r\n\r\n", board.addr).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    assert!(raw.starts_with(b"HTTP/1.0 200") || raw.starts_with(b"HTTP/1.1 200"));
}

#[test]
fn a_duplicate_content_length_is_refused_and_a_bare_lf_head_is_read_as_the_rfc_allows() {
    let dir = tempfile::tempdir().unwrap();
    events(&dir.path().join("a").join(FILE), [(1, vec![("x", 1.0)])]);
    let board = start(&[dir.path()], None);
    // Two lengths that disagree: a request smuggled behind another, for a proxy in front.
    let mut s = TcpStream::connect(board.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET /api/runs HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\nhello",
        board.addr
    )
    .unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let raw = String::from_utf8_lossy(&raw);
    assert!(raw.starts_with("HTTP/1.1 400"), "{raw}");
    assert_eq!(raw.matches("HTTP/1.1 ").count(), 1, "{raw}");

    // Lines ended by LF alone: answered (as RFC 9112 lets a server read them), not left
    // waiting for a CRLF that never comes.
    let mut s = TcpStream::connect(board.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET /api/runs HTTP/1.1\nHost: {}\nConnection: close\n\n",
        board.addr
    )
    .unwrap();
    let a = read_answer(&mut s).expect("an answer, not a wait");
    assert!([200, 400].contains(&a.status), "{}", a.head);
}

#[test]
fn answers_are_gzipped_when_the_client_takes_gzip() {
    let dir = tempfile::tempdir().unwrap();
    big_run(dir.path(), 20_000);
    let board = start(&[dir.path()], None);
    for target in ["/board.js", "/", "/api/scalars?run=big&tag=x&width=2000"] {
        let plain = get(board.addr, target, "");
        assert_eq!(plain.status, 200, "{target}");
        assert_eq!(plain.header("Content-Encoding"), None, "{target}");
        let zipped = get(board.addr, target, "Accept-Encoding: br, gzip;q=0.8\r\n");
        assert_eq!(zipped.status, 200, "{target}");
        assert_eq!(zipped.header("Content-Encoding"), Some("gzip"), "{target}");
        assert!(zipped.body.len() < plain.body.len() / 2, "{target}");
        let mut unzipped = Vec::new();
        flate2::read::GzDecoder::new(&zipped.body[..])
            .read_to_end(&mut unzipped)
            .unwrap();
        assert_eq!(unzipped, plain.body, "{target}");
    }
    // Refused at q=0: sent as it is.
    let refused = get(board.addr, "/board.js", "Accept-Encoding: gzip;q=0\r\n");
    assert_eq!(refused.header("Content-Encoding"), None);
}

#[test]
fn groups_are_computed_once_per_generation_of_their_runs() {
    let dir = tempfile::tempdir().unwrap();
    for (lr, scale) in [("0.1", 1.0), ("0.01", 2.0)] {
        for seed in 0..3 {
            let run = dir.path().join(format!("lr{lr}_s{seed}"));
            events(
                &run.join(FILE),
                (0..=2000).map(|s| (s, vec![("return", scale * s as f64 + seed as f64)])),
            );
            std::fs::write(
                run.join("run_config.json"),
                format!(r#"{{"lr": {lr}, "seed": {seed}}}"#),
            )
            .unwrap();
        }
    }
    let board = start(&[dir.path()], None);
    let groups = "/api/groups?tag=return&by=config.lr&width=50";
    let first = get(board.addr, groups, "");
    assert_eq!(first.status, 200);
    assert_eq!(first.header("X-Tally-Cache"), Some("miss"));
    let second = get(board.addr, groups, "");
    assert_eq!(second.header("X-Tally-Cache"), Some("hit"));
    assert_eq!(second.body, first.body);
    // The same answer gzipped is the one kept.
    let zipped = get(board.addr, groups, "Accept-Encoding: gzip\r\n");
    assert_eq!(zipped.header("X-Tally-Cache"), Some("hit"));
    // A run written to: computed again once the listing (at most a second old) sees it.
    events(
        &dir.path().join("lr0.1_s0").join(FILE),
        [(2001, vec![("return", 1e6)])],
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let again = get(board.addr, groups, "");
        if again.header("X-Tally-Cache") == Some("miss") {
            assert_ne!(again.body, first.body);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the grown run was never read again"
        );
    }
    // Another request is a key of its own.
    let other = get(
        board.addr,
        "/api/groups?tag=return&by=config.lr&width=40",
        "",
    );
    assert_eq!(other.header("X-Tally-Cache"), Some("miss"));
}

#[test]
fn a_runs_view_is_kept_until_its_files_change() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("a");
    events(
        &run.join(FILE),
        (0..100).map(|s| (s, vec![("x", s as f64)])),
    );
    let board = start(&[dir.path()], None);
    let view = "/api/run?run=a&width=20";
    let first = get(board.addr, view, "");
    assert_eq!(first.status, 200);
    assert_eq!(first.header("X-Tally-Cache"), Some("miss"));
    let second = get(board.addr, view, "");
    assert_eq!(second.header("X-Tally-Cache"), Some("hit"));
    assert_eq!(second.body, first.body);
    // Its summary written: computed again, with it.
    std::fs::write(run.join("run_summary.json"), r#"{"status": "completed"}"#).unwrap();
    let again = get(board.addr, view, "");
    assert_eq!(again.header("X-Tally-Cache"), Some("miss"));
    assert!(String::from_utf8_lossy(&again.body).contains("completed"));
    // Another run's name is not this one's answer.
    assert_eq!(get(board.addr, "/api/run?run=nope", "").status, 404);
}
