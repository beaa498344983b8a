//! `tally diagnose` on real demo runs made learner-bound, collector-bound and healthy with
//! `tally demo --slow`, and the schema gate it shares with `extract`
//! (`docs/contract/consumers.md` "Reading a bottleneck").

use serde_json::Value;
use std::path::{Path, PathBuf};

use tally_tfevents::{EventFileWriter, WriterOptions};

#[path = "support/run.rs"]
mod run;
use run::{demo, tally};

const LEARNER_BOUND: &str = "collector Learner Action Wait high, learner Collector Wait low";
const COLLECTOR_BOUND: &str = "learner Collector Wait high";

fn diagnose(dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let dir = dir.to_str().unwrap();
    let mut args = vec!["diagnose", dir];
    args.extend_from_slice(extra);
    let out = tally(&args);
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn diagnose_json(dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    let (code, out, err) = diagnose(dir, &args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn symptoms(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .expect("findings is a list")
        .iter()
        .map(|f| f["symptom"].as_str().unwrap().to_owned())
        .collect()
}

fn finding<'a>(report: &'a Value, symptom: &str) -> &'a Value {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["symptom"] == symptom)
        .unwrap_or_else(|| panic!("no finding '{symptom}' in {report:#}"))
}

/// The evidence figure named `figure` of a finding.
fn evidence<'a>(f: &'a Value, figure: &str) -> &'a Value {
    f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["figure"] == figure)
        .unwrap_or_else(|| panic!("no evidence '{figure}' in {f:#}"))
}

#[test]
fn a_learner_bound_sac_run_names_the_learner_row_and_its_shares() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = demo(tmp.path(), &["--iterations", "120", "--slow", "learning=6"]);
    let report = diagnose_json(&dir, &[]);
    assert_eq!(report["healthy"], false, "{report:#}");
    assert_eq!(symptoms(&report), vec![LEARNER_BOUND], "{report:#}");
    let f = finding(&report, LEARNER_BOUND);
    for key in ["meaning", "check_first"] {
        assert!(!f[key].as_str().unwrap().is_empty(), "{key} empty: {f:#}");
    }
    assert!(f["check_first"].as_str().unwrap().contains("Learning"));
    let wait = evidence(f, "collector Learner Action Wait");
    assert_eq!(wait["of"], "collector cycle");
    assert!(wait["share_pct"].as_f64().unwrap() > 60.0, "{wait}");
    let learning = evidence(f, "learner Learning");
    assert_eq!(learning["of"], "Iter Wall");
    // 6 x 5 ms of learning per iteration.
    assert!(learning["ms"].as_f64().unwrap() > 25.0, "{learning}");

    // The threshold is a flag: above the measured share, the row does not fire.
    let strict = diagnose_json(&dir, &["--action-wait-high", "99.9"]);
    assert_eq!(strict["healthy"], true, "{strict:#}");
    assert_eq!(strict["thresholds"]["action_wait_high_pct"], 99.9);
}

#[test]
fn a_collector_bound_sac_run_names_the_collector_row() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = demo(tmp.path(), &["--iterations", "120", "--slow", "env_step=6"]);
    let report = diagnose_json(&dir, &[]);
    assert_eq!(report["healthy"], false, "{report:#}");
    assert_eq!(symptoms(&report), vec![COLLECTOR_BOUND], "{report:#}");
    let f = finding(&report, COLLECTOR_BOUND);
    let wait = evidence(f, "learner Collector Wait");
    assert_eq!(wait["of"], "Iter Wall");
    assert!(wait["share_pct"].as_f64().unwrap() > 40.0, "{wait}");
    // The collector's own split points at the slow part.
    let env = evidence(f, "collector Env Step");
    assert_eq!(env["of"], "collector cycle");
    assert!(env["share_pct"].as_f64().unwrap() > 60.0, "{env}");
    assert!(f["check_first"].as_str().unwrap().contains("env step"));

    let (code, text, err) = diagnose(&dir, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains(COLLECTOR_BOUND), "{text}");
    assert!(text.contains("% of Iter Wall"), "{text}");
}

#[test]
fn a_collector_bound_appo_run_names_the_collector_row() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = demo(
        tmp.path(),
        &[
            "--algo",
            "appo",
            "--iterations",
            "80",
            "--slow",
            "env_step=6",
        ],
    );
    let report = diagnose_json(&dir, &[]);
    assert_eq!(symptoms(&report), vec![COLLECTOR_BOUND], "{report:#}");
    assert_eq!(report["profile"], "appo");
}

#[test]
fn a_balanced_demo_run_is_healthy_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    // Every phase x4: the same balance, with the threads' hand-off latency on a busy machine
    // a smaller share of each wait.
    let dir = demo(tmp.path(), &["--iterations", "60", "--slow", "all=4"]);
    let report = diagnose_json(&dir, &[]);
    assert_eq!(report["healthy"], true, "{report:#}");
    let wait = &report["checked"][0];
    assert_eq!(wait["figure"], "learner Collector Wait", "{report:#}");
    assert!(
        wait["of_ms"].as_f64().unwrap() > 20.0,
        "4 x 5 ms of learning: {wait}"
    );
    assert_eq!(report["findings"], Value::Array(vec![]));
    assert_eq!(report["damage"], Value::Array(vec![]));
    let (code, text, err) = diagnose(&dir, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("healthy"), "{text}");

    // A slow inference is its own row, with the split that locates it.
    let dir = demo(
        tmp.path(),
        &["--iterations", "80", "--slow", "inference=20"],
    );
    let report = diagnose_json(&dir, &[]);
    let f = finding(&report, "learner Inference high");
    for part in ["Inference H2D", "Inference Forward", "Inference D2H"] {
        let e = evidence(f, &format!("learner {part}"));
        assert_eq!(e["of"], "learner Inference", "{e}");
    }

    // A large background submit with normal learner phases points at the trace.
    let dir = demo(
        tmp.path(),
        &[
            "--iterations",
            "60",
            "--slow",
            "all=4",
            "--slow",
            "replay_ingress_h2d_submit=50",
        ],
    );
    let report = diagnose_json(&dir, &[]);
    assert_eq!(
        symptoms(&report),
        vec!["Replay H2D Submit high, learner phases normal"],
        "{report:#}"
    );
}

#[test]
fn a_run_without_the_schema_stamp_is_refused_like_extract_refuses_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("other");
    std::fs::create_dir_all(&dir).unwrap();
    let mut w = EventFileWriter::open(&dir, WriterOptions::from_env()).unwrap();
    for step in 1..=3 {
        w.write_scalars(step, 1000.0 + step as f64, &[("Perf/iteration_time", 0.01)])
            .unwrap();
    }
    w.close().unwrap();
    let (code, out, err) = diagnose(&dir, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("run_summary.json: missing"), "{err}");
    let extract = tally(&["extract", dir.to_str().unwrap()]);
    let extract_err = String::from_utf8_lossy(&extract.stderr);
    assert_eq!(err, extract_err, "diagnose and extract refuse alike");
    // The way out it names is one diagnose has: extract's flag, said with its command.
    assert!(err.contains("tally extract --legacy-unversioned"), "{err}");
}

#[test]
fn bad_flags_are_refused_naming_the_culprit() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, err) = diagnose(tmp.path(), &["--last", "0"]);
    assert_eq!(code, 1);
    assert!(err.contains("--last"), "{err}");
    let (code, _, err) = diagnose(tmp.path(), &["--wait-high", "120"]);
    assert_eq!(code, 1);
    assert!(err.contains("--wait-high 120"), "{err}");

    let root = format!("training.log_root={}", tmp.path().display());
    let out = tally(&["demo", "--panel", "off", "--slow", "warp=2", &root]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("'warp'") && err.contains("learning") && err.contains("env_step"),
        "{err}"
    );
    let out = tally(&[
        "demo",
        "--panel",
        "off",
        "--algo",
        "ppo",
        "--slow",
        "replay_write=2",
        &root,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("ppo"), "{err}");
    for bad in [
        "learning",
        "learning=0",
        "learning=-1",
        "learning=nan",
        "learning=1e9",
    ] {
        let out = tally(&["demo", "--panel", "off", "--slow", bad, &root]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{bad}: {err}");
        assert!(err.contains(bad), "{bad}: {err}");
    }
    let out = tally(&[
        "demo",
        "--panel",
        "off",
        "--slow",
        "learning=2",
        "--slow",
        "learning=3",
        &root,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("learning") && err.contains("twice"), "{err}");
}

#[test]
fn an_onpolicy_run_is_refused_and_a_torn_tail_is_reported_not_fatal() {
    let tmp = tempfile::tempdir().unwrap();
    let ppo = demo(tmp.path(), &["--algo", "ppo", "--iterations", "20"]);
    let (code, _, err) = diagnose(&ppo, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("onpolicy") && err.contains("sac_family, appo"),
        "{err}"
    );

    // A run killed mid-write: its last record is cut; what is on disk is still diagnosed.
    let dir = demo(tmp.path(), &["--iterations", "60"]);
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_str().unwrap().contains("events.out.tfevents."))
        .unwrap();
    let len = std::fs::metadata(&file).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_len(len - 7).unwrap();
    let (code, out, err) = diagnose(&dir, &["--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("truncated tail"), "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["damage"][0]["kind"], "truncated_tail", "{report:#}");
    assert_eq!(report["healthy"], true, "{report:#}");
}

/// A run a user's own runner wrote through the Logger (not the demo), with known phase times.
fn user_run(root: &Path, profile: tally::Profile, algo: &str) -> PathBuf {
    let mut lc = tally::LoggerConfig::new(algo, "my_task", "isaac");
    lc.profile = profile;
    lc.log_root = root.to_owned();
    lc.max_iterations = Some(40);
    let mut log = tally::Logger::new(lc).unwrap();
    for i in 1..=40u64 {
        let mut s = tally::StepInput::new(i)
            .env_steps(i * 1000)
            .steps_this_iter(1000.0)
            .iteration_time(0.010)
            .learner("collector_wait", 0.004)
            .learner("learning", 0.005);
        s = match profile {
            tally::Profile::Appo => s
                .collector("mlp_infer", 0.0001)
                .collector("env_step", 0.0005)
                .collector("rollout", 0.010),
            _ => s
                .collector("inference_request", 0.0001)
                .collector("learner_action_wait", 0.0002)
                .collector("env_step", 0.0080)
                .collector("transition_extract", 0.0001)
                .collector("replay_write", 0.0015)
                .collector("metrics_publish", 0.0001),
        };
        log.step(&s).unwrap();
    }
    log.close(tally::RunStatus::Completed).unwrap();
    log.run_dir().to_owned()
}

#[test]
fn a_users_own_runs_are_read_through_the_same_table() {
    let tmp = tempfile::tempdir().unwrap();
    for (profile, algo) in [
        (tally::Profile::SacFamily, "my_sac"),
        (tally::Profile::Appo, "appo"),
    ] {
        let dir = user_run(tmp.path(), profile, algo);
        let report = diagnose_json(&dir, &["--last", "10"]);
        assert_eq!(symptoms(&report), vec![COLLECTOR_BOUND], "{report:#}");
        let f = finding(&report, COLLECTOR_BOUND);
        let wait = evidence(f, "learner Collector Wait");
        // 4 ms of a 10 ms iteration.
        assert!((wait["ms"].as_f64().unwrap() - 4.0).abs() < 1e-3, "{wait}");
        assert!(
            (wait["share_pct"].as_f64().unwrap() - 40.0).abs() < 1e-2,
            "{wait}"
        );
        if profile == tally::Profile::SacFamily {
            // 8 ms of a 10 ms cycle (0.1 + 0.2 + 8 + 0.1 + 1.5 + 0.1).
            let env = evidence(f, "collector Env Step");
            assert!(
                (env["share_pct"].as_f64().unwrap() - 80.0).abs() < 1e-2,
                "{env}"
            );
        }
    }
}

/// A collector-bound run (no GPU here) whose event file holds a GPU's utilisation as the
/// system sampler writes it (docs/contract/system-metrics.md "GPU starvation").
fn gpu_run(root: &Path, util: f64) -> PathBuf {
    let mut lc = tally::LoggerConfig::new("sac", "gpu_task", "isaac");
    lc.log_root = root.join(format!("util{util}"));
    lc.max_iterations = Some(40);
    lc.system_metrics = false;
    let mut log = tally::Logger::new(lc).unwrap();
    for i in 1..=40u64 {
        let s = tally::StepInput::new(i)
            .env_steps(i * 1000)
            .iteration_time(0.010)
            .learner("collector_wait", 0.004)
            .learner("learning", 0.005)
            .metric("system/gpu0/util_percent", util)
            .metric("system/gpu1/util_percent", util + 2.0);
        log.step(&s).unwrap();
    }
    log.close(tally::RunStatus::Completed).unwrap();
    log.run_dir().to_owned()
}

#[test]
fn gpu_starvation_is_named_when_the_gpus_idle_while_the_learner_waits() {
    let tmp = tempfile::tempdir().unwrap();
    let starved = diagnose_json(&gpu_run(tmp.path(), 12.0), &[]);
    assert_eq!(
        symptoms(&starved),
        vec![COLLECTOR_BOUND, tally_read::diagnose::GPU_STARVED],
        "{starved:#}"
    );
    let f = finding(&starved, tally_read::diagnose::GPU_STARVED);
    let gpu = evidence(f, "GPU utilisation (mean of 2 GPU)");
    assert!(
        (gpu["percent"].as_f64().unwrap() - 13.0).abs() < 1e-6,
        "{gpu}"
    );
    assert!(gpu["ms"].is_null());
    // A busy GPU: the collector row alone; the reading is among the figures checked.
    let busy = diagnose_json(&gpu_run(tmp.path(), 90.0), &[]);
    assert_eq!(symptoms(&busy), vec![COLLECTOR_BOUND], "{busy:#}");
    let (code, text, _) = diagnose(&gpu_run(tmp.path(), 10.0), &["--gpu-low", "5"]);
    assert_eq!(code, 0);
    assert!(!text.contains("GPU starved"), "{text}");
    let (code, _, err) = diagnose(&gpu_run(tmp.path(), 11.0), &["--gpu-low", "101"]);
    assert_ne!(code, 0);
    assert!(err.contains("--gpu-low"), "{err}");
}
