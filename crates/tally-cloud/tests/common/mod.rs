//! moto's S3 server for the tests that need a real store: started on a free loopback port from
//! the virtualenv that has it (`TALLY_MOTO_SERVER`, else `.venv/bin/moto_server` or
//! `.venv-s3/bin/moto_server` at the workspace root); `None`, said, where none is.

#![allow(dead_code)] // each test binary uses its part

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

pub struct Moto(Child);

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// moto's server on a free loopback port, and its endpoint; `None` (said) without one.
pub fn moto() -> Option<(Moto, String)> {
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

/// The environment a user's client takes an S3-compatible store from, naming moto's `endpoint`
/// (docs/contract/object-storage.md "Configuration").
pub fn s3_env(endpoint: &str) {
    for (k, v) in [
        ("AWS_ENDPOINT_URL", endpoint),
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_DEFAULT_REGION", "us-east-1"),
    ] {
        std::env::set_var(k, v);
    }
}

pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// `PUT /bucket` through the store's own client is not in object_store's API: a raw request.
pub fn reqwest_free_create_bucket(endpoint: &str, bucket: &str) -> bool {
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

/// The event-file segments of the run at `url`, fetched into `dir` in name order (TensorBoard's
/// order): each named for its place in the sequence, at least ten of them (the tests roll often).
pub fn download_segments(url: &str, dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    use futures::TryStreamExt;
    use object_store::ObjectStoreExt;
    let remote = tally_cloud::store::connect(url).unwrap();
    let rt = rt();
    let mut keys: Vec<object_store::path::Path> = rt
        .block_on(
            remote
                .store
                .list(Some(&remote.prefix))
                .try_collect::<Vec<_>>(),
        )
        .unwrap()
        .into_iter()
        .map(|m| m.location)
        .filter(|k| k.filename().unwrap().contains("tfevents"))
        .collect();
    keys.sort();
    assert!(keys.len() >= 10, "many segments: {keys:?}");
    keys.iter()
        .enumerate()
        .map(|(seq, key)| {
            let name = key.filename().unwrap();
            assert!(
                name.ends_with(&format!(".{seq:010}")),
                "{name} is segment {seq}"
            );
            let bytes = rt.block_on(remote.store.get(key)).unwrap();
            let path = dir.join(name);
            std::fs::write(&path, rt.block_on(bytes.bytes()).unwrap()).unwrap();
            path
        })
        .collect()
}
