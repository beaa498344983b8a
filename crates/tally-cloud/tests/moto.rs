//! The mirror against a real S3 API server, moto's, started here on 127.0.0.1 from the
//! virtualenv that has it (`TALLY_MOTO_SERVER`, else `.venv/bin/moto_server` or
//! `.venv-s3/bin/moto_server` at the workspace root); skipped, saying so, where none is. The
//! client is the one users get (`store::connect`, configured from `AWS_*`), each request
//! counted on our side (docs/contract/object-storage.md "What a poll costs").

use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};
use std::sync::Arc;
use tally_cloud::counting::{Counting, Counts};
use tally_cloud::store::{connect, Remote};
use tally_cloud::Mirror;

mod common;
use common::{moto, reqwest_free_create_bucket, rt, s3_env};

#[test]
fn against_moto_an_unchanged_sweep_costs_one_list_and_a_grown_run_one_ranged_get() {
    let Some((_moto, endpoint)) = moto() else {
        return;
    };
    // The client is configured from the environment, as a user's is; the only test here.
    s3_env(&endpoint);
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
