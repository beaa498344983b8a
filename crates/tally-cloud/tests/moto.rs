//! The mirror against a real S3 API server, moto's, started here on 127.0.0.1 from the
//! virtualenv that has it (`TALLY_MOTO_SERVER`, else `.venv/bin/moto_server` or
//! `.venv-s3/bin/moto_server` at the workspace root); skipped, saying so, where none is. The
//! client is the one users get (`store::connect`, configured from `AWS_*`), each request
//! counted on our side (docs/contract/object-storage.md "What a poll costs").

use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use tally_cloud::counting::{Counting, Counts};
use tally_cloud::store::{connect, Remote};
use tally_cloud::Mirror;

struct Moto(Child);

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// moto's server on a free loopback port, and its endpoint; `None` (said) without one.
fn moto() -> Option<(Moto, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let candidates = std::env::var_os("TALLY_MOTO_SERVER")
        .map(std::path::PathBuf::from)
        .into_iter()
        .chain([
            root.join(".venv/bin/moto_server"),
            root.join(".venv-s3/bin/moto_server"),
        ]);
    let Some(bin) = candidates.into_iter().find(|p| p.is_file()) else {
        eprintln!("skipped: no moto_server (pip install 'moto[server]' into .venv, or set TALLY_MOTO_SERVER)");
        return None;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(bin)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Werkzeug says "Running on" once it listens.
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    for line in lines.by_ref() {
        if line.unwrap().contains("Running on") {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    Some((Moto(child), format!("http://127.0.0.1:{port}")))
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn against_moto_an_unchanged_sweep_costs_one_list_and_a_grown_run_one_ranged_get() {
    let Some((_moto, endpoint)) = moto() else {
        return;
    };
    // The client is configured from the environment, as a user's is; the only test here.
    for (k, v) in [
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_DEFAULT_REGION", "us-east-1"),
    ] {
        std::env::set_var(k, v);
    }
    let http = reqwest_free_create_bucket(&endpoint, "bkt");
    assert!(http, "moto created the bucket");
    let Remote { store, prefix, url } = connect("s3://bkt/sweep").unwrap();
    let rt = rt();
    let runs = 20;
    for i in 0..runs {
        for (name, bytes) in [
            ("events.out.tfevents.1.host", format!("run {i} first")),
            ("run_config.json", "{}".to_string()),
            ("model.ckpt", "weights".repeat(100)),
        ] {
            rt.block_on(store.put(
                &Path::from(format!("sweep/run{i}/{name}")),
                PutPayload::from(bytes.into_bytes()),
            ))
            .unwrap();
        }
    }
    let counts = Arc::new(Counts::default());
    let counted = Remote {
        url,
        prefix,
        store: Arc::new(Counting {
            inner: store.clone(),
            counts: counts.clone(),
        }),
    };
    let cache = tempfile::tempdir().unwrap();
    let mut mirror = Mirror::with_remote(counted, cache.path(), "s3", "bkt").unwrap();
    mirror.sync().unwrap();
    assert_eq!(
        counts.take(),
        (1, 2 * runs, 0, 0),
        "1 LIST; an event file and a config per run"
    );
    mirror.sync().unwrap();
    assert_eq!(counts.take(), (1, 0, 0, 0), "none changed: 1 LIST, no GET");
    rt.block_on(store.put(
        &Path::from("sweep/run7/events.out.tfevents.1.host"),
        PutPayload::from(b"run 7 first, then more".to_vec()),
    ))
    .unwrap();
    let synced = mirror.sync().unwrap();
    assert_eq!(
        counts.take(),
        (1, 1, 1, 0),
        "one grown: 1 LIST, 1 ranged GET"
    );
    assert_eq!(synced.tails, 1);
    assert_eq!(
        std::fs::read(mirror.local_path().join("run7/events.out.tfevents.1.host")).unwrap(),
        b"run 7 first, then more"
    );
}

/// `PUT /bucket` through the store's own client is not in object_store's API: a raw request.
fn reqwest_free_create_bucket(endpoint: &str, bucket: &str) -> bool {
    use std::io::{Read, Write};
    let addr = endpoint.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "PUT /{bucket} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200")
}
