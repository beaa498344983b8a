//! Pins the Perfetto trace: spans recorded on the threads that ran them, counters, tracks for
//! externally timed work, and a streamed file readable after a crash (docs/contract/trace.md).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::Duration;
use tally::trace::{read_trace, TraceOptions, Tracer, TRACE_FILE};
use tally::{Backend, Logger, LoggerConfig, RunStatus, StepInput, SystemClock};

fn config(dir: &Path, trace: bool) -> LoggerConfig {
    let mut c = LoggerConfig::new("sac", "t", "m");
    c.log_dir = Some(dir.join("run"));
    c.max_iterations = Some(5);
    c.backend = Backend::None;
    c.trace = trace;
    c
}

fn run(c: LoggerConfig) -> PathBuf {
    let trace = c.trace;
    let mut log = Logger::new(c).unwrap();
    assert_eq!(log.tracer().is_enabled(), trace);
    for i in 1..=5 {
        log.step(&StepInput::new(i).learner("learning", 0.01))
            .unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
    log.run_dir().to_owned()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn start(dir: &Path, options: TraceOptions) -> (Tracer, PathBuf) {
    let path = dir.join("t.json");
    let t = Tracer::start(&path, "p", Arc::new(SystemClock::default()), options).unwrap();
    (t, path)
}

/// The `thread_name` of each tid.
fn thread_names(events: &[Value]) -> Vec<(u64, String)> {
    events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| {
            (
                e["tid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn slices<'a>(events: &'a [Value], name: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["ph"] == "X" && e["name"] == name)
        .collect()
}

fn bounds(e: &Value) -> (f64, f64) {
    let ts = e["ts"].as_f64().unwrap();
    (ts, ts + e["dur"].as_f64().unwrap())
}

#[test]
fn tracing_on_streams_a_json_array_and_records_the_path_from_the_start() {
    let tmp = tempfile::tempdir().unwrap();
    let mut log = Logger::new(config(tmp.path(), true)).unwrap();
    let path = log.run_dir().join(TRACE_FILE);
    // Known before the run ends, so a run that dies still points at its trace.
    assert_eq!(
        json(&log.run_dir().join("run_summary.json"))["trace_path"],
        path.display().to_string()
    );
    for i in 1..=5 {
        log.step(&StepInput::new(i).learner("learning", 0.01))
            .unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
    let events = json(&path).as_array().unwrap().clone();
    assert_eq!(events[0]["ph"], "M");
    assert_eq!(events[0]["name"], "process_name");
    let steps = slices(&events, "logger/step");
    assert_eq!(steps.len(), 5, "one slice per step");
    let me = thread_names(&events);
    assert!(
        steps
            .iter()
            .all(|e| e["pid"] == std::process::id() && me.iter().any(|(t, _)| e["tid"] == *t)),
        "on the calling thread, which is named: {me:?}"
    );
    assert!(!read_trace(&path).unwrap().truncated);
    assert_eq!(
        json(&log.run_dir().join("run_summary.json"))["trace_path"],
        path.display().to_string()
    );
}

#[test]
fn tracing_off_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = run(config(tmp.path(), false));
    assert!(!dir.join(TRACE_FILE).exists());
    assert_eq!(
        json(&dir.join("run_summary.json"))["trace_path"],
        Value::Null
    );
}

#[test]
fn trace_output_dir_holds_the_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = config(tmp.path(), true);
    c.trace_output_dir = Some(tmp.path().join("traces/here"));
    let dir = run(c);
    let path = tmp.path().join("traces/here").join(TRACE_FILE);
    assert_eq!(
        slices(&read_trace(&path).unwrap().events, "logger/step").len(),
        5
    );
    assert!(!dir.join(TRACE_FILE).exists());
    assert_eq!(
        json(&dir.join("run_summary.json"))["trace_path"],
        path.display().to_string()
    );
}

#[test]
fn spans_from_two_threads_carry_their_own_tids_and_names_and_overlap() {
    let tmp = tempfile::tempdir().unwrap();
    let (t, path) = start(tmp.path(), TraceOptions::default());
    let together = Arc::new(Barrier::new(2));
    let worker = |name: &'static str| {
        let (t, together) = (t.clone(), together.clone());
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                together.wait();
                let _outer = t.span("iteration", name);
                std::thread::sleep(Duration::from_millis(30));
                t.in_span("inner", name, || {
                    std::thread::sleep(Duration::from_millis(5))
                });
            })
            .unwrap()
    };
    let (a, b) = (worker("learner"), worker("collector"));
    a.join().unwrap();
    b.join().unwrap();
    t.finish().unwrap();
    let events = json(&path).as_array().unwrap().clone();
    let names = thread_names(&events);
    let tid_of = |n: &str| names.iter().find(|(_, m)| m == n).unwrap().0;
    let (learner, collector) = (tid_of("learner"), tid_of("collector"));
    assert_ne!(learner, collector);
    assert_eq!(names.len(), 2, "one thread_name per thread: {names:?}");
    let on = |name: &str, tid: u64| {
        let s = slices(&events, name);
        let s: Vec<_> = s.into_iter().filter(|e| e["tid"] == tid).collect();
        assert_eq!(s.len(), 1, "{name} on {tid}");
        bounds(s[0])
    };
    let (l, c) = (on("iteration", learner), on("iteration", collector));
    assert!(
        l.0 < c.1 && c.0 < l.1,
        "the threads ran at once: {l:?} {c:?}"
    );
    assert!(l.1 - l.0 >= 35_000.0, "µs: {l:?}");
    let inner = on("inner", learner);
    assert!(
        l.0 <= inner.0 && inner.1 <= l.1,
        "nested: {inner:?} in {l:?}"
    );
    let cat: Vec<_> = slices(&events, "iteration")
        .iter()
        .map(|e| e["cat"].as_str().unwrap().to_owned())
        .collect();
    assert!(cat.contains(&"learner".to_owned()) && cat.contains(&"collector".to_owned()));
}

#[test]
fn counters_and_the_gpu_track() {
    let tmp = tempfile::tempdir().unwrap();
    let (t, path) = start(tmp.path(), TraceOptions::default());
    t.counter("replay_size", 10.0).unwrap();
    t.counter("replay_size", 20.0).unwrap();
    let s0 = t.now();
    t.add_span("forward", "gpu", s0, 0.004, "gpu").unwrap();
    t.add_span("backward", "gpu", s0 + 0.004, 0.006, "gpu")
        .unwrap();
    t.in_span("host", "learner", || ());
    let e = t.add_span("x", "gpu", s0, -1.0, "gpu").unwrap_err();
    assert!(e.to_string().contains("duration=-1"), "{e}");
    let e = t.counter("replay_size", f64::NAN).unwrap_err();
    assert!(e.to_string().contains("replay_size=NaN"), "{e}");
    assert!(t.add_span("x", "gpu", f64::INFINITY, 1.0, "gpu").is_err());
    assert!(t.add_span("x", "gpu", s0, 1.0, " ").is_err());
    t.finish().unwrap();
    let events = json(&path).as_array().unwrap().clone();
    let values: Vec<f64> = events
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == "replay_size")
        .map(|e| e["args"]["value"].as_f64().unwrap())
        .collect();
    assert_eq!(values, [10.0, 20.0]);
    let names = thread_names(&events);
    let gpu: Vec<_> = names.iter().filter(|(_, n)| n == "gpu").collect();
    assert_eq!(gpu.len(), 1, "{names:?}");
    let host = slices(&events, "host")[0]["tid"].as_u64().unwrap();
    assert_ne!(gpu[0].0, host, "a track of its own");
    let (f, b) = (slices(&events, "forward"), slices(&events, "backward"));
    assert_eq!(f[0]["tid"], gpu[0].0);
    assert_eq!(b[0]["tid"], gpu[0].0);
    assert!((f[0]["dur"].as_f64().unwrap() - 4000.0).abs() < 1e-6);
    assert!((bounds(f[0]).1 - bounds(b[0]).0).abs() < 1e-3, "as timed");
    assert!(
        slices(&events, "x").is_empty(),
        "refused calls record nothing"
    );
    // The same refusals with tracing off: a bad argument does not wait for tracing to show.
    let off = Tracer::disabled();
    assert!(off.add_span("x", "gpu", 0.0, -1.0, "gpu").is_err());
    assert!(off.counter("replay_size", f64::INFINITY).is_err());
}

#[test]
fn thread_time_adds_cpu_time_only_when_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let spin = || {
        let t0 = std::time::Instant::now();
        let mut x = 0u64;
        while t0.elapsed() < Duration::from_millis(20) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    };
    let sleepy = || std::thread::sleep(Duration::from_millis(20));
    let (t, path) = start(
        tmp.path(),
        TraceOptions {
            thread_time: true,
            ..Default::default()
        },
    );
    t.in_span("spin", "c", spin);
    t.in_span("sleep", "c", sleepy);
    t.finish().unwrap();
    let events = json(&path).as_array().unwrap().clone();
    let tdur = |n: &str| slices(&events, n)[0]["tdur"].as_f64().unwrap();
    // The machine may be shared: the spin gets some CPU, the sleep almost none.
    let (busy, idle) = (tdur("spin"), tdur("sleep"));
    assert!(
        busy > 2_000.0 && busy > 20.0 * idle,
        "busy {busy} µs, asleep {idle} µs"
    );
    assert!(busy <= slices(&events, "spin")[0]["dur"].as_f64().unwrap() + 1_000.0);
    let dir2 = tempfile::tempdir().unwrap();
    let (t, path) = start(dir2.path(), TraceOptions::default());
    t.in_span("spin", "c", spin);
    t.finish().unwrap();
    let events = json(&path).as_array().unwrap().clone();
    assert!(slices(&events, "spin")[0].get("tdur").is_none());
}

#[test]
fn a_cut_file_reads_up_to_its_last_complete_event() {
    let tmp = tempfile::tempdir().unwrap();
    let (t, path) = start(tmp.path(), TraceOptions::default());
    for k in 0..20 {
        t.in_span(&format!("s{k}"), "c", || ());
    }
    t.finish().unwrap();
    let full = std::fs::read(&path).unwrap();
    let whole = read_trace(&path).unwrap().events;
    let cut = tmp.path().join("cut.json");
    // Every cut after the opening line: a prefix of the events, flagged truncated.
    for n in 2..full.len() - 2 {
        std::fs::write(&cut, &full[..n]).unwrap();
        let r = read_trace(&cut).unwrap_or_else(|e| panic!("cut at {n}: {e}"));
        assert!(r.truncated, "cut at {n}");
        assert_eq!(r.events[..], whole[..r.events.len()], "cut at {n}");
    }
}

#[test]
fn a_crashed_process_leaves_a_readable_trace() {
    const CHILD: &str = "TALLY_TRACE_CRASH_CHILD";
    if let Ok(path) = std::env::var(CHILD) {
        let clock = Arc::new(SystemClock::default());
        let t = Tracer::start(Path::new(&path), "p", clock, TraceOptions::default()).unwrap();
        for k in 0..100 {
            t.in_span(&format!("s{k}"), "c", || ());
        }
        // Give the writer thread time to drain, then die without finishing the trace.
        std::thread::sleep(Duration::from_millis(300));
        std::process::abort();
    }
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("crash.json");
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_crashed_process_leaves_a_readable_trace",
            "--nocapture",
        ])
        .env(CHILD, &path)
        .status()
        .unwrap();
    assert!(!status.success());
    assert!(serde_json::from_slice::<Value>(&std::fs::read(&path).unwrap()).is_err());
    let r = read_trace(&path).unwrap();
    assert!(r.truncated);
    assert_eq!(
        slices(&r.events, "s99").len(),
        1,
        "drained events are on disk"
    );
}
