//! The event file as segments against moto's S3 server (docs/contract/object-storage.md
//! "Writing"): a segment closes only before a step past every step written, so no step is
//! split between two files and no file repeats an earlier file's step; names and first wall
//! times both sort in writing order; every event reaches the bucket once.

mod common;

use common::{download_segments, moto, reqwest_free_create_bucket, s3_env};
use std::time::Duration;
use tally::OnStorageError;
use tally_cloud::{Roll, SegmentedEventFile, Uploader};
use tally_tfevents::{encode_scalar_event, read_scalars_from_file, WriterOptions};

#[test]
fn segments_close_only_between_steps_and_read_back_in_writing_order() {
    let Some((_moto, endpoint)) = moto() else {
        return;
    };
    s3_env(&endpoint);
    assert!(reqwest_free_create_bucket(&endpoint, "seg"));
    let staging = tempfile::tempdir().unwrap();
    let root = staging.path().join("stage");
    let uploader = Uploader::start("s3://seg/run", root.clone()).unwrap();
    // Due after 5 ms: almost every step finds its segment due, and only its first event may roll.
    let roll = Roll {
        after: Duration::from_millis(5),
        bytes: u64::MAX,
    };
    let mut file = SegmentedEventFile::open(
        &root,
        WriterOptions::from_env(),
        OnStorageError::Raise,
        roll,
        uploader.clone(),
    )
    .unwrap();
    let mut written = Vec::new();
    for step in 0..40_i64 {
        // Three events a step, the segment due before each: it may close before the first only.
        for (i, tag) in ["a", "b", "c"].iter().enumerate() {
            let value = step as f64 * 10.0 + i as f64;
            file.write_with(Some(step), |buf| {
                encode_scalar_event(step, 1.0e9 + step as f64, &[(tag, value)], buf)
            })
            .unwrap();
            written.push((step, tag.to_string(), value as f32));
            std::thread::sleep(Duration::from_millis(6));
        }
        if step == 20 {
            // A step the writer does not know never closes a segment.
            file.write_with(None, |buf| {
                encode_scalar_event(20, 1.0e9 + 20.0, &[("d", 1.0)], buf)
            })
            .unwrap();
            written.push((20, "d".into(), 1.0));
        }
    }
    file.close().unwrap();
    drop(uploader);

    // Every object of the run, fetched by its key, in name order (TensorBoard's).
    let copy = tempfile::tempdir().unwrap();
    let mut read = Vec::new();
    let mut last_max: Option<i64> = None;
    let mut last_wall = 0.0;
    for path in download_segments("s3://seg/run", copy.path()) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let wall = tally_tfevents::open_event_file(&path)
            .unwrap()
            .read_event()
            .unwrap()
            .unwrap()
            .wall_time;
        assert!(wall >= last_wall, "{name}: created before its predecessor");
        last_wall = wall;
        let scalars = read_scalars_from_file(&path).unwrap();
        let (Some(first), Some(max)) = (
            scalars.first().map(|s| s.step),
            scalars.iter().map(|s| s.step).max(),
        ) else {
            continue;
        };
        if let Some(m) = last_max {
            assert!(first > m, "{name} starts at step {first}, not past {m}");
        }
        last_max = Some(max);
        read.extend(scalars.into_iter().map(|s| (s.step, s.tag, s.value as f32)));
    }
    assert_eq!(read, written, "every event once, in writing order");
}
