//! A run's sub-runs reach its remote sinks (docs/contract/remote-sinks.md "Sub-runs"): each
//! directory below the run holding event files (`add_scalars` writes one per series) is sent
//! with the run, its tags named `<sub-run>/<tag>`, exactly once, from the sink's cursor.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tally::remote::{ordered_event_files, scan_pending, send_run, subrun_dirs, Cursor};
use tally::sink::BackendStep;
use tally::{Sink, SinkError};
use tally_tfevents::{read_scalars_from_file, EventFileWriter, WriterOptions};

/// A row a service holds: its step and scalars.
type Held = (i64, Vec<(String, f64)>);

/// A service that keeps rows by index as W&B keeps them by `_step`: an index it holds
/// already is ignored, whatever the row.
#[derive(Default)]
struct Service {
    rows: Mutex<BTreeMap<u64, Held>>,
}

struct Remote {
    service: Arc<Service>,
    next: u64,
    /// `flush` fails (the rows reached the service, the reply was lost).
    flush_fails: Arc<AtomicBool>,
}

impl Remote {
    fn new(service: &Arc<Service>) -> Self {
        Remote {
            service: service.clone(),
            next: 0,
            flush_fails: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl Sink for Remote {
    fn name(&self) -> &str {
        "wandb"
    }
    fn is_remote(&self) -> bool {
        true
    }
    fn resume_at(&mut self, rows: u64) -> Result<(), SinkError> {
        self.next = rows;
        Ok(())
    }
    fn write(&mut self, step: &BackendStep) -> Result<(), SinkError> {
        let scalars = step
            .scalars
            .iter()
            .map(|(t, v)| (t.as_str().to_owned(), *v))
            .collect();
        self.service
            .rows
            .lock()
            .unwrap()
            .entry(self.next)
            .or_insert((step.step, scalars));
        self.next += 1;
        Ok(())
    }
    fn flush(&mut self) -> Result<(), SinkError> {
        if self.flush_fails.load(Ordering::SeqCst) {
            return Err("connection reset by peer".into());
        }
        Ok(())
    }
}

/// An event file in `dir` created at `secs` past 1e9 (so files sort as written), holding
/// `rows` as `(step, tag, value)`, one event each.
fn write_file(dir: &Path, secs: u64, rows: &[(i64, &str, f64)]) {
    std::fs::create_dir_all(dir).unwrap();
    let options = WriterOptions {
        hostname: "host".into(),
        pid: 1,
        created_at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000 + secs),
        fsync: Default::default(),
        suffix: String::new(),
    };
    let mut w = EventFileWriter::open(dir, options).unwrap();
    for &(step, tag, value) in rows {
        let wall = 1.0e9 + secs as f64 + step as f64 / 1000.0;
        w.write_resolved_scalars(step, wall, &[(tag, value)])
            .unwrap();
    }
    w.close().unwrap();
}

/// Every (step, name, value) the run's files hold, a sub-run's tags named `<sub-run>/<tag>`.
fn file_points(run_dir: &Path) -> Vec<(i64, String, f64)> {
    let mut dirs = vec![(String::new(), run_dir.to_owned())];
    dirs.extend(subrun_dirs(run_dir).unwrap());
    let mut out = Vec::new();
    for (name, dir) in dirs {
        for f in ordered_event_files(&dir).unwrap() {
            for s in read_scalars_from_file(&f).unwrap() {
                let tag = if name.is_empty() {
                    s.tag.clone()
                } else {
                    format!("{name}/{}", s.tag)
                };
                out.push((s.step, tag, s.value));
            }
        }
    }
    out.sort_by(|a, b| a.partial_cmp(b).unwrap());
    out
}

/// Every (step, name, value) the service holds, and whether its indices are 0..n.
fn service_points(service: &Service) -> (Vec<(i64, String, f64)>, bool) {
    let rows = service.rows.lock().unwrap();
    let dense = rows.keys().copied().eq(0..rows.len() as u64);
    let mut out: Vec<_> = rows
        .values()
        .flat_map(|(step, scalars)| scalars.iter().map(|(t, v)| (*step, t.clone(), *v)))
        .collect();
    out.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (out, dense)
}

/// torch's `add_scalars("loss", {"train": .., "val": ..})` beside `add_scalar("lr", ..)`.
fn torch_layout(run: &Path, steps: std::ops::Range<i64>, secs: u64) {
    let own: Vec<_> = steps.clone().map(|s| (s, "lr", s as f64 / 10.0)).collect();
    write_file(run, secs, &own);
    let train: Vec<_> = steps.clone().map(|s| (s, "loss", 1.0 / s as f64)).collect();
    write_file(&run.join("loss_train"), secs, &train);
    let val: Vec<_> = steps.map(|s| (s, "loss", 2.0 / s as f64)).collect();
    write_file(&run.join("loss_val"), secs, &val);
}

#[test]
fn every_sub_run_is_sent_with_the_run_under_sub_run_slash_tag() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    torch_layout(&run, 1..6, 0);
    // tensorboardX's layout (`<main_tag>/<tag>/`) and a hidden directory, which is not a run.
    write_file(&run.join("reward/mean"), 0, &[(3, "reward", 0.5)]);
    write_file(&run.join(".tally/scratch"), 0, &[(3, "ignored", 9.0)]);
    let files = ordered_event_files(&run).unwrap();
    let pending = scan_pending(&files, &Cursor::default()).unwrap();
    assert_eq!(pending.rows, 16);
    let tags: Vec<_> = pending.tags.iter().map(String::as_str).collect();
    assert_eq!(
        tags,
        [
            "loss_train/loss",
            "loss_val/loss",
            "lr",
            "reward/mean/reward"
        ]
    );
    let service = Arc::new(Service::default());
    let report = send_run(Box::new(Remote::new(&service)), &run, files, |_, _, _| {}).unwrap();
    assert_eq!(report.sent, 16);
    let (got, dense) = service_points(&service);
    assert!(dense);
    assert_eq!(got, file_points(&run));
    assert!(got
        .iter()
        .any(|(s, t, v)| (*s, t.as_str(), *v) == (2, "loss_val/loss", 1.0)));
    // Sent: nothing is pending, and a second sync sends nothing.
    let cursor = Cursor::load(&run, "wandb").unwrap().unwrap();
    assert_eq!(cursor.rows, 16);
    assert_eq!(cursor.subruns.len(), 3);
    assert!(cursor.inflight.is_none());
    let files = ordered_event_files(&run).unwrap();
    assert_eq!(scan_pending(&files, &cursor).unwrap().rows, 0);
    let again = send_run(Box::new(Remote::new(&service)), &run, files, |_, _, _| {}).unwrap();
    assert_eq!(again.sent, 0);
}

#[test]
fn rows_that_grow_in_each_sub_run_are_sent_from_the_cursor_once() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    torch_layout(&run, 1..4, 0);
    let service = Arc::new(Service::default());
    let files = ordered_event_files(&run).unwrap();
    send_run(Box::new(Remote::new(&service)), &run, files, |_, _, _| {}).unwrap();
    // A later writer of the log_dir: a new file in the run and in each sub-run.
    torch_layout(&run, 4..8, 10);
    let files = ordered_event_files(&run).unwrap();
    let report = send_run(Box::new(Remote::new(&service)), &run, files, |_, _, _| {}).unwrap();
    assert_eq!((report.sent_before, report.sent), (9, 12));
    let (got, dense) = service_points(&service);
    assert!(dense);
    assert_eq!(got, file_points(&run));
}

#[test]
fn a_batch_the_service_took_but_never_acknowledged_is_sent_first_again_under_its_indices() {
    // The reply to a batch of the sub-run's rows is lost, and the send gives up. Meanwhile the
    // run's own file gets rows. A later send must send that batch again first, under the same
    // indices (which the service ignores, holding them), and the new rows after them: were the
    // run's rows sent first they would take those indices, and be ignored, that is, lost.
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    write_file(&run, 0, &[]);
    let series: Vec<_> = (1..6).map(|s| (s, "loss", s as f64)).collect();
    write_file(&run.join("loss_train"), 0, &series);
    let service = Arc::new(Service::default());
    let failing = Remote::new(&service);
    failing.flush_fails.store(true, Ordering::SeqCst);
    let files = ordered_event_files(&run).unwrap();
    let err = send_run(Box::new(failing), &run, files, |_, _, _| {});
    assert!(err.is_err());
    let cursor = Cursor::load(&run, "wandb").unwrap().unwrap();
    assert_eq!(cursor.rows, 0);
    let inflight = cursor.inflight.expect("the batch recorded in flight");
    assert_eq!((inflight.subrun.as_str(), inflight.rows), ("loss_train", 5));
    assert_eq!(service.rows.lock().unwrap().len(), 5);
    let own: Vec<_> = (1..4).map(|s| (s, "lr", s as f64)).collect();
    write_file(&run, 10, &own);
    let files = ordered_event_files(&run).unwrap();
    send_run(Box::new(Remote::new(&service)), &run, files, |_, _, _| {}).unwrap();
    let (got, dense) = service_points(&service);
    assert!(dense);
    assert_eq!(got, file_points(&run));
    assert_eq!(got.len(), 8);
}
