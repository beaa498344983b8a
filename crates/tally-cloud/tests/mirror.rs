//! The mirror's polls against object_store's in-memory store, each request counted
//! (docs/contract/object-storage.md "What a poll costs"): an unchanged prefix costs one LIST
//! and no GET, a grown event file one ranged GET of its tail, appended in place.

use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};
use std::io::Read;
use std::sync::Arc;
use tally_cloud::counting::{Counting, Counts};
use tally_cloud::store::Remote;
use tally_cloud::Mirror;

fn setup(prefix: &str) -> (Arc<InMemory>, Arc<Counts>, Remote) {
    let inner = Arc::new(InMemory::new());
    let counts = Arc::new(Counts::default());
    let store = Arc::new(Counting {
        inner: inner.clone(),
        counts: counts.clone(),
    });
    let remote = Remote {
        url: format!("s3://bkt/{prefix}"),
        store,
        prefix: Path::from(prefix),
    };
    (inner, counts, remote)
}

fn put(store: &InMemory, key: &str, bytes: &[u8]) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(store.put(&Path::from(key), PutPayload::from(bytes.to_vec())))
        .unwrap();
}

fn delete(store: &InMemory, key: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(store.delete(&Path::from(key))).unwrap();
}

/// The same in-memory store, uncounted.
fn mirror_store(store: &Arc<InMemory>) -> Arc<dyn object_store::ObjectStore> {
    store.clone()
}

const EV: &str = "events.out.tfevents.1700000000.host.1.0";

#[test]
fn a_poll_fetches_only_what_changed_and_a_grown_event_file_only_its_tail() {
    let cache = tempfile::tempdir().unwrap();
    let (store, counts, remote) = setup("logs");
    for run in ["a", "b", "c"] {
        put(
            &store,
            &format!("logs/{run}/{EV}"),
            format!("{run}-first-bytes").as_bytes(),
        );
        put(&store, &format!("logs/{run}/run_config.json"), b"{}");
    }
    // Not read by any reader: never fetched.
    put(&store, "logs/a/checkpoint.pt", &[0u8; 4096]);
    // Outside the prefix.
    put(&store, "other/x/events.out.tfevents.1", b"x");

    let mut mirror = Mirror::with_remote(remote.clone(), cache.path(), "s3", "bkt").unwrap();
    let first = mirror.sync().unwrap();
    assert_eq!(
        counts.take(),
        (1, 6, 0, 0),
        "1 LIST, 6 GETs: 3 event files, 3 configs"
    );
    assert_eq!((first.listed, first.whole, first.tails), (7, 6, 0));
    let root = mirror.local_path();
    assert_eq!(root, cache.path().join("tree/s3/bkt/logs"));
    assert_eq!(
        std::fs::read(root.join("b").join(EV)).unwrap(),
        b"b-first-bytes"
    );
    assert!(!root.join("a/checkpoint.pt").exists());

    // Nothing changed: one LIST, no GET.
    let again = mirror.sync().unwrap();
    assert_eq!(counts.take(), (1, 0, 0, 0));
    assert!(!again.changed());

    // A follower holding the copy open, as `tally watch` does.
    let mut follower = std::fs::File::open(root.join("a").join(EV)).unwrap();
    let mut seen = Vec::new();
    follower.read_to_end(&mut seen).unwrap();

    // Run a grows: one ranged GET, its tail appended in place.
    put(&store, &format!("logs/a/{EV}"), b"a-first-bytes+more");
    let grown = mirror.sync().unwrap();
    assert_eq!(counts.take(), (1, 1, 1, 0));
    assert_eq!((grown.whole, grown.tails), (0, 1));
    let mut more = Vec::new();
    follower.read_to_end(&mut more).unwrap();
    assert_eq!(more, b"+more", "the open copy grew in place");
    assert_eq!(
        std::fs::read(root.join("a").join(EV)).unwrap(),
        b"a-first-bytes+more"
    );

    // Run b rewritten, longer: the tail's check fails, the object is fetched whole.
    put(&store, &format!("logs/b/{EV}"), b"B-FIRST-BYTES-rewritten");
    let rewritten = mirror.sync().unwrap();
    assert_eq!(counts.take(), (1, 2, 1, 0));
    assert_eq!((rewritten.whole, rewritten.tails), (1, 1));
    assert_eq!(
        std::fs::read(root.join("b").join(EV)).unwrap(),
        b"B-FIRST-BYTES-rewritten"
    );

    // A JSON artefact rewritten: fetched whole.
    put(&store, "logs/c/run_config.json", br#"{"a": 1}"#);
    mirror.sync().unwrap();
    assert_eq!(counts.take(), (1, 1, 0, 0));
    assert_eq!(
        std::fs::read(root.join("c/run_config.json")).unwrap(),
        br#"{"a": 1}"#
    );

    // Run c deleted: its copies removed.
    delete(&store, &format!("logs/c/{EV}"));
    delete(&store, "logs/c/run_config.json");
    let removed = mirror.sync().unwrap();
    assert_eq!(removed.removed, 2);
    assert!(!root.join("c").join(EV).exists());
    counts.take();

    // Another process on the same cache: the state is on disk, nothing fetched again.
    let mut other = Mirror::with_remote(remote, cache.path(), "s3", "bkt").unwrap();
    other.sync().unwrap();
    assert_eq!(counts.take(), (1, 0, 0, 0));
}

#[test]
fn a_url_naming_one_object_mirrors_that_object() {
    let cache = tempfile::tempdir().unwrap();
    let key = format!("logs/a/{EV}");
    let (store, counts, remote) = setup(&key);
    put(&store, &key, b"one file");
    let mut mirror = Mirror::with_remote(remote, cache.path(), "s3", "bkt").unwrap();
    mirror.sync().unwrap();
    assert_eq!(counts.take(), (1, 1, 0, 1), "LIST (empty), HEAD, GET");
    let path = mirror.local_path();
    assert!(path.ends_with(format!("logs/a/{EV}")), "{}", path.display());
    assert_eq!(std::fs::read(&path).unwrap(), b"one file");

    // The directory holding it mirrored too, and the object by its URL again: one copy each.
    let (_, _, dir_remote) = setup("logs");
    let dir_remote = Remote {
        store: mirror_store(&store),
        ..dir_remote
    };
    let mut dir = Mirror::with_remote(dir_remote, cache.path(), "s3", "bkt").unwrap();
    dir.sync().unwrap();
    assert_eq!(
        std::fs::read(dir.local_path().join("a").join(EV)).unwrap(),
        b"one file"
    );
    mirror.sync().unwrap();
    assert_eq!(std::fs::read(mirror.local_path()).unwrap(), b"one file");
}

#[test]
fn an_empty_prefix_is_an_empty_directory_and_a_copy_outliving_its_state_is_fetched_again() {
    let cache = tempfile::tempdir().unwrap();
    let (store, counts, remote) = setup("logs");
    let mut mirror = Mirror::with_remote(remote, cache.path(), "s3", "bkt").unwrap();
    mirror.sync().unwrap();
    assert!(mirror.local_path().is_dir());
    assert_eq!(counts.take(), (1, 0, 0, 0));
    put(&store, &format!("logs/a/{EV}"), b"abc");
    mirror.sync().unwrap();
    // The copy changed behind the mirror's back (a user, a crash): fetched whole again.
    std::fs::write(mirror.local_path().join("a").join(EV), b"ab").unwrap();
    counts.take();
    mirror.sync().unwrap();
    assert_eq!(counts.take(), (1, 1, 0, 0));
    assert_eq!(
        std::fs::read(mirror.local_path().join("a").join(EV)).unwrap(),
        b"abc"
    );
}

#[test]
fn a_url_is_told_from_a_path_by_one_rule_and_a_local_path_stays_as_it_is() {
    use std::path::{Path as P, PathBuf};
    use tally::rundir::url_scheme;
    assert_eq!(url_scheme(P::new("s3://bkt/run")), Some("s3"));
    assert_eq!(url_scheme(P::new("gs://b")), Some("gs"));
    assert_eq!(
        url_scheme(P::new("abfss://c@a.dfs.core.windows.net/x")),
        Some("abfss")
    );
    for local in [
        "runs/a",
        "/abs/s3:/x",
        "s3:/bkt",
        "a b://x",
        "://x",
        "1a://x",
    ] {
        assert_eq!(url_scheme(P::new(local)), None, "{local}");
    }
    let r = tally_cloud::resolve(P::new("runs/a")).unwrap();
    assert_eq!(r.path(), PathBuf::from("runs/a"));
    let r = tally_cloud::resolve(P::new("file:///tmp/x")).unwrap();
    assert_eq!(r.path(), PathBuf::from("/tmp/x"));
    let e = tally_cloud::resolve(P::new("foo://bkt/x")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("foo://bkt/x: not an object-store URL"),
        "{e}"
    );
}
