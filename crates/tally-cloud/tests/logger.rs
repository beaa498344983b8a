//! The logger's event file as segments against moto's S3 server (docs/contract/object-storage.md
//! "Writing", "The Logger"): `tally::Logger` handed `tally-cloud`'s uploader
//! (`LoggerConfig::upload`) rolls its event file on the writer thread, only before a step past
//! every step written, so no segment repeats an earlier one's step, and every step reaches the
//! bucket once, in order, with the system samples between them.

mod common;

use common::{download_segments, moto, reqwest_free_create_bucket, s3_env};
use std::time::Duration;
use tally::{Logger, LoggerConfig, RunStatus, StepInput};
use tally_cloud::Uploader;
use tally_tfevents::read_scalars_from_file;

#[test]
fn the_logger_rolls_segments_only_between_steps_and_puts_every_step_once_in_order() {
    let Some((_moto, endpoint)) = moto() else {
        return;
    };
    s3_env(&endpoint);
    // Due after 5 ms: almost every step finds the open segment due.
    std::env::set_var("TALLY_SEGMENT_SECONDS", "0.005");
    assert!(reqwest_free_create_bucket(&endpoint, "logbkt"));
    let staging = tempfile::tempdir().unwrap();
    let root = staging.path().join("stage");
    let uploader = Uploader::start("s3://logbkt/run", root.clone()).unwrap();
    let mut config = LoggerConfig::new("sac", "task", "mujoco");
    config.log_dir = Some(root.clone());
    config.upload = Some(uploader.clone());
    // System samples every 100 ms: events at a step already written, which never roll.
    config.system_interval_secs = 0.1;
    let mut log = Logger::new(config).unwrap();
    for i in 1..=300_u64 {
        log.step(&StepInput::new(i).metric("Loss/critic", i as f64))
            .unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    log.close(RunStatus::Completed).unwrap();
    assert_eq!(uploader.drain(Duration::from_secs(10)), 0);
    drop(uploader);

    let copy = tempfile::tempdir().unwrap();
    let segments = download_segments("s3://logbkt/run", copy.path());
    let mut critic = Vec::new();
    let mut samples = 0;
    let mut last_max: Option<i64> = None;
    for path in &segments {
        let name = path.file_name().unwrap().to_string_lossy();
        let scalars = read_scalars_from_file(path).unwrap();
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
        samples += scalars
            .iter()
            .filter(|s| s.tag.starts_with("system/"))
            .count();
        critic.extend(
            scalars
                .iter()
                .filter(|s| s.tag == "Loss/critic")
                .map(|s| (s.step, s.value)),
        );
    }
    let want: Vec<(i64, f64)> = (1..=300).map(|i| (i, i as f64)).collect();
    assert_eq!(critic, want, "every step once, in writing order");
    assert!(samples > 0, "the system samples went up too");
    // Each segment left staging once it was in the store.
    assert!(!root.join(segments[0].file_name().unwrap()).exists());
}
