//! The board's API over real HTTP (`docs/contract/board.md` "The API", "Who can see it").

mod common;

use common::events;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tally_board::{Board, Options};
use tally_tfevents::RecordWriter;

/// A board serving `paths` on a free port of `host`, stopped when dropped.
struct Running {
    addr: SocketAddr,
    url: String,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

fn start(paths: &[&Path], host: &str) -> Running {
    let host = host.parse().unwrap();
    let options = Options {
        paths: paths.iter().map(|p| p.to_path_buf()).collect(),
        host,
        port: 0,
        token: Options::token_for(host).unwrap(),
    };
    let board = Board::bind(options).unwrap();
    let (addr, url) = (board.addr(), board.url());
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || board.serve(&flag).unwrap());
    Running {
        addr,
        url,
        stop,
        thread: Some(thread),
    }
}

/// `GET target` with extra header lines: the status, the head and the body.
fn get_with(addr: SocketAddr, target: &str, headers: &str) -> (u16, String, String) {
    let addr = SocketAddr::new("127.0.0.1".parse().unwrap(), addr.port());
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "GET {target} HTTP/1.0\r\nHost: {addr}\r\n{headers}\r\n").unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    // An image's bytes are not text: they are kept, each invalid byte as U+FFFD.
    let raw = String::from_utf8_lossy(&raw);
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_owned(), body.to_owned())
}

fn get(addr: SocketAddr, target: &str) -> (u16, Value) {
    let (status, _, body) = get_with(addr, target, "");
    (
        status,
        serde_json::from_str(&body).unwrap_or(Value::String(body)),
    )
}

const FILE: &str = "events.out.tfevents.1700000000.host";

#[test]
fn the_runs_table_lists_every_run_and_names_a_corrupt_file_and_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 0..2 {
        let file = dir.path().join(format!("ppo/seed_{seed}")).join(FILE);
        events(
            &file,
            (0..100).map(|s| (s, vec![("charts/return", s as f64 + seed as f64)])),
        );
    }
    let bad = dir.path().join("broken").join(FILE);
    events(&bad, (0..10).map(|s| (s, vec![("loss", 1.0)])));
    let mut bytes = std::fs::read(&bad).unwrap();
    bytes[40] ^= 0xff;
    std::fs::write(&bad, bytes).unwrap();

    let board = start(&[dir.path()], "127.0.0.1");
    let (status, body) = get(board.addr, "/api/runs?tags=charts/*");
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["names"],
        serde_json::json!(["broken", "ppo/seed_0", "ppo/seed_1"])
    );
    let runs = body["runs"].as_array().unwrap();
    let seed1 = runs.iter().find(|r| r["run"] == "ppo/seed_1").unwrap();
    assert_eq!(seed1["last_step"], 99);
    assert_eq!(seed1["charts/return:max"], 100.0);
    assert_eq!(seed1["points"], 100);
    // A corrupt record: the run shows what precedes it, the damage named (file and offset).
    let broken = runs.iter().find(|r| r["run"] == "broken").unwrap();
    assert!(broken.get("error").is_none(), "{broken}");
    let damage = &broken["damage"][0];
    assert_eq!(damage["file"], bad.display().to_string(), "{broken}");
    assert_eq!(damage["offset"], 40, "{broken}");

    // Nothing changed since: no row sent again.
    let since = body["generation"].as_u64().unwrap();
    let (_, again) = get(board.addr, &format!("/api/runs?since={since}"));
    assert_eq!(again["runs"], serde_json::json!([]));
    assert_eq!(again["names"].as_array().unwrap().len(), 3);

    let (_, tags) = get(board.addr, "/api/tags");
    let tags = tags["tags"].as_array().unwrap();
    let ret = tags.iter().find(|t| t["tag"] == "charts/return").unwrap();
    assert_eq!(
        (ret["runs"].as_u64(), ret["points"].as_u64()),
        (Some(2), Some(200))
    );
}

#[test]
fn a_one_step_spike_and_a_nan_in_a_million_points_reach_a_1000_pixel_chart() {
    let dir = tempfile::tempdir().unwrap();
    let values = (0..1_000_000i64).map(|s| {
        let v = match s {
            612_345 => 1e6,
            900_001 => f64::NAN,
            _ => (s % 7) as f64,
        };
        (s, vec![("loss", v)])
    });
    events(&dir.path().join(FILE), values);
    let board = start(&[dir.path()], "127.0.0.1");
    let (status, body) = get(board.addr, "/api/scalars?run=.&tag=loss&width=1000");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["points"], 1_000_000);
    let buckets = body["buckets"].as_array().unwrap();
    assert!(buckets.len() <= 1000);
    let spike = buckets
        .iter()
        .find(|b| b["max"][2] == 1e6)
        .expect("the spike");
    assert_eq!(spike["max"][0], 612_345);
    let nan = buckets
        .iter()
        .flat_map(|b| b["nonfinite"].as_array().unwrap())
        .collect::<Vec<_>>();
    assert_eq!(nan.len(), 1);
    assert_eq!(
        (nan[0][0].as_i64(), nan[0][2].as_str()),
        (Some(900_001), Some("NaN"))
    );

    // A zoom re-buckets its window only.
    let (_, zoom) = get(
        board.addr,
        "/api/scalars?run=.&tag=loss&width=100&start=612300&end=612399",
    );
    assert_eq!(zoom["points"], 100);
    assert_eq!(zoom["buckets"].as_array().unwrap().len(), 100);
    let (_, near) = get(board.addr, "/api/nearest?run=.&tag=loss&at=612345.2");
    assert_eq!(near["point"][0], 612_345);
}

#[test]
fn bad_requests_name_the_parameter_and_nothing_outside_the_page_is_served() {
    let dir = tempfile::tempdir().unwrap();
    events(&dir.path().join("a").join(FILE), [(1, vec![("x", 1.0)])]);
    std::fs::write(dir.path().join("secret.txt"), "do not serve").unwrap();
    let board = start(&[&dir.path().join("a")], "127.0.0.1");
    for (target, status, culprit) in [
        ("/api/scalars?tag=x", 400, "`run`"),
        ("/api/scalars?run=.&tag=x&width=0", 400, "width=0"),
        ("/api/scalars?run=.&tag=x&start=nan", 400, "start=nan"),
        ("/api/scalars?run=.&tag=x&x=epoch", 400, "x=epoch"),
        ("/api/scalars?run=../secret.txt&tag=x", 404, "no such run"),
        ("/api/scalars?run=.&tag=y", 404, "\"y\""),
        ("/api/nope", 404, "/api/nope"),
    ] {
        let (got, body) = get(board.addr, target);
        assert_eq!(got, status, "{target}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains(culprit),
            "{target}: {body}"
        );
    }
    for target in [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/board.js/../../secret.txt",
        "/a/FILE",
    ] {
        let (status, _, body) = get_with(board.addr, target, "");
        assert_eq!(status, 404, "{target}");
        assert!(!body.contains("do not serve"), "{target}");
    }
    let (status, head, body) = get_with(board.addr, "/", "");
    assert_eq!(status, 200);
    assert!(head.contains("text/html"), "{head}");
    assert!(body.contains("board.js"));
    let mut s = TcpStream::connect(("127.0.0.1", board.addr.port())).unwrap();
    write!(s, "POST /api/runs HTTP/1.0\r\nContent-Length: 0\r\n\r\n").unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    assert!(
        raw.starts_with("HTTP/1.0 405") || raw.starts_with("HTTP/1.1 405"),
        "{raw}"
    );
}

#[test]
fn off_loopback_every_request_needs_the_printed_token() {
    let dir = tempfile::tempdir().unwrap();
    events(&dir.path().join(FILE), [(1, vec![("x", 1.0)])]);
    let board = start(&[dir.path()], "0.0.0.0");
    let token = board
        .url
        .split("token=")
        .nth(1)
        .expect("a token in the URL")
        .to_owned();
    assert_eq!(token.len(), 32);
    assert_eq!(get(board.addr, "/api/runs").0, 403);
    assert_eq!(get(board.addr, "/").0, 403);
    assert_eq!(get(board.addr, "/api/runs?token=wrong").0, 403);
    let (status, head, _) = get_with(board.addr, &format!("/?token={token}"), "");
    assert_eq!(status, 200);
    assert!(
        head.contains(&format!("tally_board_token={token}")),
        "{head}"
    );
    let cookie = format!("Cookie: tally_board_token={token}\r\n");
    assert_eq!(get_with(board.addr, "/api/runs", &cookie).0, 200);
    let header = format!("Authorization: token {token}\r\n");
    assert_eq!(get_with(board.addr, "/api/runs", &header).0, 200);
}

#[test]
fn a_growing_run_is_followed_and_only_its_row_is_sent_again() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        dir.path().join("a").join(FILE),
        dir.path().join("b").join(FILE),
    );
    events(&a, (0..10).map(|s| (s, vec![("x", s as f64)])));
    events(&b, (0..10).map(|s| (s, vec![("x", s as f64)])));
    let board = start(&[dir.path()], "127.0.0.1");
    let (_, first) = get(board.addr, "/api/runs");
    let (_, series) = get(board.addr, "/api/scalars?run=a&tag=x&width=50");
    assert_eq!(series["total"], 10);
    events(&a, (10..25).map(|s| (s, vec![("x", s as f64)])));
    // The row comes back once it is read again (listings at most once a second, a grown run's
    // row paced by its last reading's cost).
    let since = first["generation"].as_u64().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let next = loop {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let (_, next) = get(board.addr, &format!("/api/runs?since={since}"));
        if next["runs"].as_array().is_some_and(|r| !r.is_empty()) {
            break next;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the grown run's row never came back"
        );
    };
    let changed: Vec<&str> = next["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run"].as_str().unwrap())
        .collect();
    assert_eq!(changed, ["a"]);
    assert_eq!(next["runs"][0]["last_step"], 24);
    assert_eq!(next["runs"][0]["state"], "running");
    let (_, series) = get(board.addr, "/api/scalars?run=a&tag=x&width=50");
    assert_eq!(series["total"], 25);
}

#[test]
fn runs_grouped_by_a_configuration_key_give_each_group_its_mean_and_band() {
    let dir = tempfile::tempdir().unwrap();
    for (lr, scale) in [("0.1", 1.0), ("0.01", 2.0)] {
        for seed in 0..3 {
            let run = dir.path().join(format!("lr{lr}_s{seed}"));
            events(
                &run.join(FILE),
                (0..=10).map(|s| (s * 10, vec![("return", scale * s as f64 + seed as f64)])),
            );
            std::fs::write(
                run.join("run_config.json"),
                format!(r#"{{"lr": {lr}, "seed": {seed}}}"#),
            )
            .unwrap();
        }
    }
    let board = start(&[dir.path()], "127.0.0.1");
    let (status, body) = get(board.addr, "/api/groups?tag=return&by=config.lr&width=11");
    assert_eq!(status, 200, "{body}");
    let groups = body["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    // Best mean first: lr 0.01 climbs twice as fast.
    assert_eq!(groups[0]["key"]["config.lr"], 0.01);
    assert_eq!(groups[0]["n"], 3);
    let curve = groups[0]["curve"].as_array().unwrap();
    assert_eq!(curve.len(), 11);
    let at_50 = curve.iter().find(|p| p["step"] == 50).unwrap();
    // Seeds 0, 1, 2 at step 50: 10, 11, 12.
    assert_eq!(at_50["mean"], 11.0);
    let (low, high) = (
        at_50["low"].as_f64().unwrap(),
        at_50["high"].as_f64().unwrap(),
    );
    assert!(
        (10.0..11.0).contains(&low) && high > 11.0 && high <= 12.0,
        "{at_50}"
    );
    assert!(body["absent"].as_array().unwrap().is_empty(), "{body}");
    // A key no run has is said, not drawn as one group of nulls.
    let (status, body) = get(board.addr, "/api/groups?tag=return&by=config.nope&width=11");
    assert_eq!(status, 200, "{body}");
    let said = body["absent"][0].as_str().unwrap_or_default();
    assert!(
        said.contains("no run has configuration key \"config.nope\""),
        "{body}"
    );
    let (status, body) = get(board.addr, "/api/groups?tag=return");
    assert_eq!(status, 400);
    assert!(body["error"].as_str().unwrap().contains("`by`"));
}

#[test]
fn a_large_logdir_is_read_a_batch_per_look_and_its_unread_runs_are_listed_and_charted() {
    use tally_board::api::{answer, Body};
    use tally_board::catalog::{Catalog, READ_BATCH};
    use tally_board::query::Target;

    let dir = tempfile::tempdir().unwrap();
    let runs = 2 * READ_BATCH + 10;
    for i in 0..runs {
        let file = dir.path().join(format!("run_{i:04}")).join(FILE);
        events(
            &file,
            (0..5).map(|s| (s, vec![("loss", (i * 10 + s as usize) as f64)])),
        );
    }
    // No time budget: each look reads one batch of rows.
    let catalog =
        Catalog::new(vec![dir.path().to_owned()]).with_look_budget(std::time::Duration::ZERO);
    let json = |target: &str| match answer(&catalog, &Target::parse(target), &|| true).body {
        Body::Json(v) => v,
        Body::File(..) => panic!("{target} answered a file"),
    };
    let first = json("/api/runs");
    assert_eq!(first["names"].as_array().unwrap().len(), runs);
    assert_eq!(first["pending"], runs - READ_BATCH);
    let last = &first["runs"][runs - 1];
    assert_eq!(
        (last["run"].as_str(), last["state"].as_str()),
        (Some("run_0137"), Some("reading"))
    );
    assert!(last.get("points").is_none(), "{last}");
    // A chart of a run not read yet is served now, not after the table.
    let chart = json("/api/scalars?run=run_0137&tag=loss&width=10");
    assert_eq!(chart["total"], 5, "{chart}");

    let generation = first["generation"].as_u64().unwrap();
    let second = json(&format!("/api/runs?since={generation}"));
    assert_eq!(second["pending"], runs - 2 * READ_BATCH);
    assert_eq!(
        second["runs"].as_array().unwrap().len(),
        READ_BATCH,
        "only the rows just read"
    );
    let third = json("/api/runs");
    assert_eq!(third["pending"], 0);
    let read: Vec<_> = third["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["points"] == 5)
        .collect();
    assert_eq!(read.len(), runs);
}

#[test]
fn charts_asking_at_once_for_a_run_not_held_read_it_once() {
    use tally_board::catalog::Catalog;

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big").join(FILE);
    events(
        &file,
        (0..400_000).map(|s| (s, vec![("a", s as f64), ("b", 1.0)])),
    );
    let catalog = Arc::new(Catalog::new(vec![dir.path().to_owned()]));
    // As a page's charts ask: one request per tag, all at once.
    let asks: Vec<_> = (0..8)
        .map(|_| {
            let catalog = catalog.clone();
            std::thread::spawn(move || {
                let run = catalog.live("big", &|| true).unwrap().unwrap();
                let held = run.lock().unwrap();
                held.points()
            })
        })
        .collect();
    for ask in asks {
        assert_eq!(ask.join().unwrap(), 800_000);
    }
    assert_eq!(catalog.runs_opened(), 1);
}

#[test]
fn a_read_no_one_waits_for_stops_and_the_next_request_reads_on_from_there() {
    // docs/contract/board.md "Bounded reads".
    use tally_board::catalog::Catalog;
    use tally_board::Error;

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big").join(FILE);
    events(&file, (0..100_000).map(|s| (s, vec![("a", s as f64)])));
    let catalog = Catalog::new(vec![dir.path().to_owned()]);
    // The page went away at once: the read stops at its first ask.
    match catalog.live("big", &|| false) {
        Err(Error::NotWanted(run)) => assert_eq!(run, "big"),
        other => panic!("{:?}", other.map(|r| r.map(|r| r.lock().unwrap().points()))),
    }
    let run = catalog.live("big", &|| true).unwrap().unwrap();
    let points = run.lock().unwrap().points();
    assert_eq!(points, 100_000);
    // Read on from where it stopped, not again from the start.
    assert_eq!(catalog.runs_opened(), 1);
}

#[test]
fn a_run_of_text_and_images_only_is_a_row_and_its_media_are_served() {
    use tally_tfevents::{encode_summary, encode_summary_event, image_value, text_value};

    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("notes");
    std::fs::create_dir_all(&run).unwrap();
    let mut w = RecordWriter::new(Vec::new());
    let summary = encode_summary(vec![
        text_value("setup", "seed 3"),
        image_value("frame", &[0, 255, 0, 0, 0, 255], 1, 2, 3).unwrap(),
    ]);
    w.write_record(&encode_summary_event(Some(4), 1000.0, &summary))
        .unwrap();
    std::fs::write(run.join(FILE), w.into_inner()).unwrap();

    let board = start(&[dir.path()], "127.0.0.1");
    let (_, runs) = get(board.addr, "/api/runs");
    let row = &runs["runs"][0];
    assert_eq!(row["run"], "notes");
    assert!(row.get("error").is_none(), "{row}");
    assert_eq!(row["points"], 0);

    let (status, media) = get(board.addr, "/api/media?run=notes");
    assert_eq!(status, 200, "{media}");
    assert_eq!(media["text"][0]["tag"], "setup/text_summary");
    assert_eq!(media["text"][0]["entries"][0]["text"], "seed 3");
    assert_eq!(media["images"][0]["width"], 2);
    let (status, head, body) = get_with(board.addr, "/api/image?run=notes&tag=frame", "");
    assert_eq!(status, 200);
    assert!(head.contains("Content-Type: image/png"), "{head}");
    assert!(
        body.starts_with("\u{fffd}PNG") || body.contains("PNG"),
        "a PNG"
    );
    let (status, missing) = get(board.addr, "/api/image?run=notes&tag=nope");
    assert_eq!(status, 404);
    assert!(
        missing["error"].as_str().unwrap().contains("nope"),
        "{missing}"
    );
}

#[test]
fn a_growing_runs_newest_buckets_are_served_at_the_span_asked() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r").join(FILE);
    events(&file, (0..100).map(|s| (s, vec![("loss", s as f64)])));
    let board = start(&[dir.path()], "127.0.0.1");
    let (status, body) = get(board.addr, "/api/scalars?run=r&tag=loss&start=50&span=10");
    assert_eq!(status, 200, "{body}");
    let firsts: Vec<i64> = body["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["first"][0].as_i64().unwrap())
        .collect();
    assert_eq!(firsts, [50, 60, 70, 80, 90]);
    assert_eq!(
        (body["points"].as_u64(), body["total"].as_u64()),
        (Some(50), Some(100))
    );
    for (target, culprit) in [
        ("/api/scalars?run=r&tag=loss&span=10", "start="),
        (
            "/api/scalars?run=r&tag=loss&start=0&span=0.001",
            "span=0.001",
        ),
        ("/api/scalars?run=r&tag=loss&start=0&span=-1", "span=-1"),
    ] {
        let (status, body) = get(board.addr, target);
        assert_eq!(status, 400, "{target}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains(culprit),
            "{target}: {body}"
        );
    }
}

#[test]
fn connections_held_open_and_idle_never_keep_another_request_waiting() {
    // A browser keeps up to six connections open between requests, and opens some before it
    // has anything to send: none of them may hold a request on another connection waiting
    // (docs/contract/board.md "The API"). A few rounds: a server with a pool of threads lost
    // requests this way only when its threads woke late.
    let dir = tempfile::tempdir().unwrap();
    for round in 0..4 {
        let board = start(&[dir.path()], "127.0.0.1");
        let addr = SocketAddr::new("127.0.0.1".parse().unwrap(), board.addr.port());
        let idle: Vec<TcpStream> = (0..16).map(|_| TcpStream::connect(addr).unwrap()).collect();
        let mut asking: Vec<TcpStream> =
            (0..6).map(|_| TcpStream::connect(addr).unwrap()).collect();
        for s in &mut asking {
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            write!(s, "GET /api/runs HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
        }
        for (i, s) in asking.iter_mut().enumerate() {
            let mut head = [0u8; 12];
            s.read_exact(&mut head)
                .unwrap_or_else(|e| panic!("round {round}, connection {i}: no answer: {e}"));
            assert_eq!(&head, b"HTTP/1.1 200", "round {round}, connection {i}");
        }
        drop(idle);
    }
}

#[test]
fn one_connection_answers_its_requests_in_order_and_refuses_what_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let board = start(&[dir.path()], "127.0.0.1");
    let addr = SocketAddr::new("127.0.0.1".parse().unwrap(), board.addr.port());
    // Two requests sent at once, then a HEAD: three answers, in order, on one connection.
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET /api/runs HTTP/1.1\r\nHost: {addr}\r\n\r\nGET /api/nope HTTP/1.1\r\nHost: {addr}\r\n\r\n\
         HEAD /api/runs HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let statuses: Vec<&str> = raw
        .match_indices("HTTP/1.1 ")
        .map(|(i, _)| &raw[i + 9..i + 12])
        .collect();
    assert_eq!(statuses, ["200", "404", "200"], "{raw}");
    let head_answer = &raw[raw.rfind("HTTP/1.1 ").unwrap()..];
    assert!(
        head_answer.ends_with("\r\n\r\n"),
        "a HEAD answer has no body: {head_answer}"
    );

    // A head past 16 KiB, and a body: refused with their reasons, and the connection closed.
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET /api/runs HTTP/1.1\r\nX: {}\r\n\r\n",
        "a".repeat(20_000)
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    // hyper answers a head it cannot hold itself, without a body.
    assert!(raw.starts_with("HTTP/1.1 431"), "{raw}");
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "POST /api/runs HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc").unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    assert!(
        raw.starts_with("HTTP/1.1 413") && raw.contains("no request body"),
        "{raw}"
    );
}

#[test]
fn a_run_past_its_share_of_the_budget_answers_charts_as_when_held_whole() {
    // docs/contract/board.md "Bounded reads": the run lets go of its points and holds per-block
    // summaries; every chart, zoom and hover answers as when every point is held (the windows
    // here hold few enough blocks to read back: bucket edges stay where they are).
    use tally_board::api::answer;
    use tally_board::catalog::Catalog;
    use tally_board::query::Target;

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big").join(FILE);
    let value = |s: i64| match s {
        77_777 => 1e9,
        12_345 => f64::NAN,
        50_000 => f64::INFINITY,
        _ => (s % 17) as f64,
    };
    events(
        &file,
        (0..200_000).map(|s| (s, vec![("a", value(s)), ("b", 1.0)])),
    );
    let whole = Catalog::new(vec![dir.path().to_owned()]);
    let blocks = Catalog::new(vec![dir.path().to_owned()]).with_run_bytes(1 << 20);
    let held = |c: &Catalog| {
        c.live("big", &|| true)
            .unwrap()
            .unwrap()
            .lock()
            .unwrap()
            .bytes()
    };
    let (whole_bytes, held_bytes) = (held(&whole), held(&blocks));
    assert!(
        held_bytes * 20 < whole_bytes,
        "{held_bytes} vs {whole_bytes}"
    );
    let let_go = |c: &Catalog| {
        c.live("big", &|| true)
            .unwrap()
            .unwrap()
            .lock()
            .unwrap()
            .points_let_go()
    };
    assert!(let_go(&blocks) && !let_go(&whole));
    for url in [
        "/api/scalars?run=big&tag=a",
        "/api/scalars?run=big&tag=a&width=7",
        "/api/scalars?run=big&tag=a&width=1000&start=12000&end=12999",
        "/api/scalars?run=big&tag=a&width=4000&start=77000&end=78000.5&x=step",
        "/api/scalars?run=big&tag=a&x=wall&start=60500&end=61000&width=300",
        "/api/scalars?run=big&tag=a&start=150000&span=250",
        "/api/nearest?run=big&tag=a&at=77777.3",
        "/api/nearest?run=big&tag=a&at=1e9&x=wall",
    ] {
        let target = Target::parse(url);
        let a = answer(&whole, &target, &|| true);
        let b = answer(&blocks, &target, &|| true);
        assert_eq!((a.status, b.status), (200, 200), "{url}");
        let json = |a: &tally_board::api::Answer| match &a.body {
            tally_board::api::Body::Json(v) => v.to_string(),
            _ => panic!("{url}"),
        };
        assert_eq!(json(&a), json(&b), "{url}");
    }
    // After those charts: the summaries, and the points read back last (16 MiB at most).
    let after = blocks.live("big", &|| true).unwrap().unwrap();
    assert!(after.lock().unwrap().bytes() <= held_bytes + (16 << 20));
}

#[test]
fn every_image_step_held_is_listed_and_served_by_its_step_and_plotly_js_is_served() {
    use tally_tfevents::{encode_summary, encode_summary_event, image_value};

    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("pics");
    std::fs::create_dir_all(&run).unwrap();
    let mut w = RecordWriter::new(Vec::new());
    // A 1x1 image at step 4, one 2 wide and 1 high at step 6.
    for (step, width, pixels) in [
        (4, 1, vec![255u8, 0, 0]),
        (6, 2, vec![0, 255, 0, 0, 255, 0]),
    ] {
        let summary = encode_summary(vec![image_value("frame", &pixels, 1, width, 3).unwrap()]);
        w.write_record(&encode_summary_event(Some(step), 1000.0, &summary))
            .unwrap();
    }
    std::fs::write(run.join(FILE), w.into_inner()).unwrap();

    let board = start(&[dir.path()], "127.0.0.1");
    let (status, media) = get(board.addr, "/api/media?run=pics");
    assert_eq!(status, 200, "{media}");
    let image = &media["images"][0];
    assert_eq!(
        (image["step"].as_i64(), image["width"].as_u64()),
        (Some(6), Some(2))
    );
    let steps: Vec<_> = image["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["step"].as_i64().unwrap(), s["width"].as_u64().unwrap()))
        .collect();
    assert_eq!(steps, [(4, 1), (6, 2)]);
    let (status, _, old) = get_with(board.addr, "/api/image?run=pics&tag=frame&step=4", "");
    assert_eq!(status, 200);
    let (_, _, new) = get_with(board.addr, "/api/image?run=pics&tag=frame", "");
    let (_, _, six) = get_with(board.addr, "/api/image?run=pics&tag=frame&step=6", "");
    assert_eq!(new, six);
    assert_ne!(old, new);
    let (status, missing) = get(board.addr, "/api/image?run=pics&tag=frame&step=5");
    assert_eq!(status, 404, "{missing}");
    assert!(
        missing["error"].as_str().unwrap().contains("step 5"),
        "{missing}"
    );

    // plotly.js, served by the board itself.
    let (status, head, body) = get_with(board.addr, "/plotly.min.js", "");
    assert_eq!(status, 200);
    assert!(head.contains("text/javascript"), "{head}");
    assert!(body.contains("plotly.js v3"));
    // Gzipped for a client that takes it, by the rule every embedded file is sent by.
    let (status, head, _) = get_with(board.addr, "/plotly.min.js", "Accept-Encoding: gzip\r\n");
    assert_eq!(status, 200);
    let head = head.to_ascii_lowercase();
    assert!(head.contains("content-encoding: gzip"), "{head}");
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .and_then(|v| v.trim().parse().ok())
        .expect("content-length");
    assert!(length * 2 < body.len(), "{length} of {}", body.len());
}

#[test]
fn a_live_run_that_hangs_after_its_row_was_read_shows_its_stall_in_the_table() {
    // docs/contract/health.md "In the board": the row of a run still being written is read
    // again, files unchanged, until its end is judged a stall.
    use tally::health::RuleKind;
    use tally_board::catalog::Catalog;
    use tally_tfevents::{EventFileWriter, WriterOptions};

    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("hung");
    std::fs::create_dir_all(&run).unwrap();
    // Its writer keeps the file open: the run is being written (health.md "tally health").
    let mut w = EventFileWriter::open(&run, WriterOptions::from_env()).unwrap();
    let wall_now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
    };
    // Steps 0.1 s apart, the last 50 s ago: the default stall, a minute at least, is 10 s away.
    let last = wall_now() - 50.0;
    for s in 0..20i64 {
        let wall = last - (19 - s) as f64 * 0.1;
        w.write_scalars(s, wall, &[("loss", 1.0)]).unwrap();
    }
    w.flush().unwrap();
    // The listing of open files is kept for 2 s: one made before this file was open is stale.
    std::thread::sleep(Duration::from_millis(2100));
    let catalog = Catalog::new(vec![dir.path().to_owned()]);
    let stalls = || {
        let table = catalog.table();
        let row = table.runs["hung"].row.clone().unwrap().unwrap();
        let health = row.health.unwrap_or_default();
        health.iter().filter(|f| f.rule == RuleKind::Stall).count()
    };
    // Each judgement is held to the wall clock read after it, not to a sleep: a loaded machine
    // may take seconds to get from one line to the next.
    let found = stalls();
    let quiet = wall_now() - last;
    assert!(
        quiet >= 60.0 || found == 0,
        "a stall after {quiet:.1} s of quiet"
    );
    let t = std::time::Instant::now();
    while stalls() == 0 && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(stalls(), 1, "no stall after {:?}", t.elapsed());
    let quiet = wall_now() - last;
    assert!(quiet >= 60.0, "a stall after {quiet:.1} s of quiet");
    // Stalled at its last step: not read again while its files stay as they are.
    let generation = catalog.table().generation;
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(catalog.table().generation, generation);
    w.close().unwrap();
}
