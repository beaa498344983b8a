//! The trace's writer thread: appends events to the file as they arrive.
//!
//! The file is the JSON Array Format of the trace-event spec: `[`, one event per line, `]` at
//! the end. The spec makes the closing `]` optional so that a process that dies mid-run still
//! leaves a loadable trace; every event line is written whole (`,` leads all but the first),
//! so cutting a file after its last newline and adding `]` is always valid JSON
//! (docs/contract/trace.md "What survives a crash").

use crate::redact::redact_text;
use serde_json::json;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::thread::JoinHandle;

/// One recorded event, in trace microseconds.
#[derive(Debug)]
pub(super) enum Event {
    /// An `X` complete slice; `cpu` is the thread's CPU (start, duration).
    Slice {
        name: String,
        cat: String,
        ts: f64,
        dur: f64,
        tid: u64,
        cpu: Option<(f64, f64)>,
    },
    /// A `C` counter sample.
    Counter { name: String, ts: f64, value: f64 },
    /// An `M` event naming a thread or track.
    ThreadName { tid: u64, name: String },
}

#[derive(Debug)]
pub(super) enum Msg {
    Event(Event),
    /// Write the closing `]` and stop.
    Finish,
}

/// Create the file (and its directory), write the opening lines, and start the writer.
pub(super) fn spawn(
    path: &Path,
    process_name: &str,
    pid: u32,
    capacity: usize,
) -> crate::Result<(SyncSender<Msg>, JoinHandle<std::io::Result<()>>)> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(crate::Error::io("create trace directory", dir))?;
    }
    let file = File::create(path).map_err(crate::Error::io("create trace", path))?;
    let mut out = BufWriter::new(file);
    let head = json!({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
        "args": {"name": redact_text(process_name)}});
    writeln!(out, "[\n{head}")
        .and_then(|()| out.flush())
        .map_err(crate::Error::io("write trace", path))?;
    let (tx, rx) = sync_channel(capacity);
    let handle = std::thread::Builder::new()
        .name("tally-trace".into())
        .spawn(move || run(out, &rx, pid))
        .map_err(crate::Error::io("start trace writer thread", path))?;
    Ok((tx, handle))
}

/// Append events until `Finish` (or every sender is gone), flushing whenever the channel runs
/// empty so a killed process loses at most what was still in flight. The first write error is
/// kept and returned; later events are still drained so recording threads never block on it.
fn run(mut out: BufWriter<File>, rx: &Receiver<Msg>, pid: u32) -> std::io::Result<()> {
    let mut failed: Option<std::io::Error> = None;
    loop {
        let msg = match rx.try_recv() {
            Ok(m) => m,
            Err(TryRecvError::Empty) => {
                if failed.is_none() {
                    failed = out.flush().err();
                }
                match rx.recv() {
                    Ok(m) => m,
                    Err(_) => break,
                }
            }
            Err(TryRecvError::Disconnected) => break,
        };
        let Msg::Event(e) = msg else { break };
        if failed.is_none() {
            failed = writeln!(out, ",{}", line(&e, pid)).err();
        }
    }
    if let Some(e) = failed {
        return Err(e);
    }
    out.write_all(b"]\n")?;
    out.flush()?;
    out.get_ref().sync_all()
}

/// Microseconds to the nanosecond: the clock's float noise below that only bloats the file.
fn ns(us: f64) -> f64 {
    (us * 1e3).round() / 1e3
}

fn line(e: &Event, pid: u32) -> serde_json::Value {
    match e {
        Event::Slice {
            name,
            cat,
            ts,
            dur,
            tid,
            cpu,
        } => {
            let mut v = json!({"name": name, "cat": cat, "ph": "X", "ts": ns(*ts),
                "dur": ns(*dur), "pid": pid, "tid": tid});
            if let Some((tts, tdur)) = cpu {
                v["tts"] = json!(ns(*tts));
                v["tdur"] = json!(ns(*tdur));
            }
            v
        }
        Event::Counter { name, ts, value } => {
            json!({"name": name, "ph": "C", "ts": ns(*ts), "pid": pid, "tid": 0,
                "args": {"value": value}})
        }
        Event::ThreadName { tid, name } => {
            json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                "args": {"name": redact_text(name)}})
        }
    }
}
