//! `tally demo` end to end: the run directory a real runner would leave
//! (`docs/contract/run-artifacts.md`).

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn demo(args: &[&str]) -> (std::process::Output, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .arg("demo")
        .args(args)
        .arg("--panel")
        .arg("off")
        .arg(format!("training.log_root={}", root.display()))
        .output()
        .unwrap();
    (out, tmp)
}

fn run_dir(out: &std::process::Output) -> PathBuf {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    PathBuf::from(
        last.strip_prefix("run: ")
            .unwrap_or_else(|| panic!("last line is not 'run: <path>': {stdout}")),
    )
}

fn event_tags(dir: &Path) -> (BTreeSet<String>, Vec<tally_tfevents::ScalarEvent>) {
    let file = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("events.out.tfevents.")
        })
        .expect("an event file in the run directory");
    let scalars = tally_tfevents::read_scalars_from_file(file).unwrap();
    (scalars.iter().map(|s| s.tag.clone()).collect(), scalars)
}

fn summary(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("run_summary.json")).unwrap()).unwrap()
}

fn canonical(profile: tally_schema::Profile) -> BTreeSet<String> {
    tally_schema::METRICS
        .iter()
        .filter(|m| m.persisted && m.profiles.contains(profile))
        .map(|m| m.tag.to_owned())
        .collect()
}

#[test]
fn sac_demo_writes_exactly_canonical_sac_tags() {
    let (out, root) = demo(&["--algo", "sac", "--iterations", "200"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = run_dir(&out);
    assert!(
        dir.starts_with(root.path().join("sac/go2_joystick_flat")),
        "{}",
        dir.display()
    );
    let (tags, scalars) = event_tags(&dir);
    let allowed = canonical(tally_schema::Profile::SacFamily);
    for t in &tags {
        let family = t.starts_with("reward/") || t.starts_with("Episode_Termination/");
        assert!(
            allowed.contains(t) || family,
            "non-canonical or non-SAC tag {t}"
        );
        assert!(
            !t.starts_with("Episode_Reward/") && !t.starts_with("Terminal/"),
            "{t}"
        );
    }
    // Replay Stage and Weight Publish are APPO-only learner phases (docs/contract/timelines.md).
    assert!(
        !tags.contains("Perf/learner_replay_stage_ms")
            && !tags.contains("Perf/learner_weight_publish_ms")
    );
    for t in [
        "Perf/learner_collector_wait_ms",
        "Perf/learner_inference_ms",
        "Perf/iteration_time",
        "Perf/total_fps",
        "Perf/collector_env_step_ms",
        "Train/iteration",
    ] {
        assert!(tags.contains(t), "missing {t}");
    }
    // Units: _ms in milliseconds, iteration_time in seconds (the demo's learning phase is ~5 ms).
    let last = |tag: &str| scalars.iter().rev().find(|s| s.tag == tag).unwrap().value;
    let wall_s = last("Perf/iteration_time");
    assert!(
        wall_s > 0.001 && wall_s < 1.0,
        "Perf/iteration_time {wall_s} is not seconds"
    );
    let inference_ms = last("Perf/learner_inference_ms");
    assert!(
        inference_ms > 0.1 && inference_ms < 1000.0,
        "Perf/learner_inference_ms {inference_ms} is not ms"
    );
    let steps: BTreeSet<i64> = scalars
        .iter()
        .filter(|s| s.tag == "Perf/iteration_time")
        .map(|s| s.step)
        .collect();
    assert_eq!(steps.len(), 200, "one event per iteration");
    let s = summary(&dir);
    assert_eq!(s["status"], "completed");
    assert_eq!(s["metric_schema_version"], 1);
    assert_eq!(s["completed_iterations"], 200);
    assert_eq!(s["runtime_manifest"]["schema_version"], 1);
    assert!(dir.join("run_config.json").is_file());
}

#[test]
fn appo_demo_writes_its_own_tag_set() {
    let (out, _root) = demo(&["--algo", "appo", "--iterations", "60", "--num-envs", "64"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = run_dir(&out);
    let (tags, scalars) = event_tags(&dir);
    let allowed = canonical(tally_schema::Profile::Appo);
    for t in &tags {
        let family = t.starts_with("reward/") || t.starts_with("Episode_Termination/");
        assert!(
            allowed.contains(t) || family,
            "non-canonical or non-APPO tag {t}"
        );
    }
    for t in [
        "Perf/learner_replay_stage_ms",
        "Perf/learner_weight_publish_ms",
        "Perf/collection_time",
        "Perf/collector_mlp_infer_ms",
    ] {
        assert!(tags.contains(t), "missing {t}");
    }
    for t in [
        "Perf/learner_inference_ms",
        "Perf/collector_replay_write_ms",
        "Loss/critic",
    ] {
        assert!(!tags.contains(t), "SAC-only {t} in an APPO run");
    }
    let rollout_s = scalars
        .iter()
        .rev()
        .find(|s| s.tag == "Perf/collection_time")
        .unwrap()
        .value;
    assert!(
        rollout_s > 0.0005 && rollout_s < 1.0,
        "Perf/collection_time {rollout_s} is not seconds"
    );
    assert_eq!(summary(&dir)["status"], "completed");
}

#[test]
fn ppo_demo_uses_the_iteration_axis_without_train_iteration() {
    let (out, _root) = demo(&["--algo", "ppo", "--iterations", "20", "--num-envs", "16"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = run_dir(&out);
    assert!(dir.to_str().unwrap().contains("/rsl_rl_ppo/"));
    let (tags, scalars) = event_tags(&dir);
    assert!(!tags.contains("Train/iteration") && !tags.contains("Perf/iteration_time"));
    let steps: BTreeSet<i64> = scalars.iter().map(|s| s.step).collect();
    assert_eq!(steps, (0..20).collect(), "zero-based iteration axis");
}

#[test]
fn multi_gpu_demo_sums_throughput_across_ranks() {
    let (one, _r1) = demo(&["--iterations", "40", "--num-envs", "100"]);
    let (four, _r4) = demo(&["--iterations", "40", "--num-envs", "100", "--gpus", "4"]);
    assert!(
        four.status.success(),
        "{}",
        String::from_utf8_lossy(&four.stderr)
    );
    let fps = |o: &std::process::Output| {
        summary(&run_dir(o))["tail_env_steps_per_sec"]
            .as_f64()
            .unwrap()
    };
    let total =
        |o: &std::process::Output| summary(&run_dir(o))["total_env_steps"].as_u64().unwrap();
    assert_eq!(
        total(&four),
        4 * total(&one),
        "env steps are summed over ranks"
    );
    assert!(
        fps(&four) > 2.5 * fps(&one),
        "4 ranks: {} vs 1 rank: {}",
        fps(&four),
        fps(&one)
    );
    let (tags, _) = event_tags(&run_dir(&four));
    assert!(tags.contains("Perf/dp_gradient_sync_ms_per_rank"));
}

#[test]
fn bad_demo_flags_are_named() {
    let cases: [(&[&str], &str); 7] = [
        (&["--algo", "dqn"], "unknown --algo 'dqn'"),
        (
            &["training.bogus=1"],
            "unknown override 'training.bogus': known keys are training.logger",
        ),
        (&["training.log_interval=0"], "training.log_interval=0"),
        (&["training.logger=wandb"], "Python"),
        // The replicas are written over their Python packages, too.
        (
            &["training.logger=mlflow"],
            "python -m tally demo ... training.logger=mlflow",
        ),
        (
            &["training.logger=tensorboard", "training.trackio_project=p"],
            "add training.logger=trackio",
        ),
        (
            &["--task", "../escape", "--iterations", "1"],
            "invalid task '../escape'",
        ),
    ];
    for (args, needle) in cases {
        let (out, _) = demo(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn logger_none_still_writes_the_run_directory_but_no_event_file() {
    let (out, _root) = demo(&["--iterations", "5", "training.logger=none"]);
    assert!(out.status.success());
    let dir = run_dir(&out);
    assert!(dir.join("run_summary.json").is_file());
    let events = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_str()
                .unwrap()
                .contains("tfevents")
        })
        .count();
    assert_eq!(events, 0);
}

#[test]
fn grpo_demo_logs_trinity_keys_with_periodic_eval() {
    // rollout/{metric}/{statistic} every step; eval/{taskset}/{metric}/mean@N etc.
    // (docs/contract/rft.md).
    let (out, _root) = demo(&["--algo", "grpo", "--iterations", "20"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = run_dir(&out);
    let (tags, scalars) = event_tags(&dir);
    for t in &tags {
        assert!(
            tally_schema::rft::validate_rft_key(t).is_ok(),
            "{t} breaks the rft key convention"
        );
    }
    for t in [
        "rollout/accuracy/mean",
        "rollout/total_tokens/sum",
        "eval/gsm8k-eval/accuracy/mean@4",
        "eval/gsm8k-eval/accuracy/best@4",
        "time/update_actor",
    ] {
        assert!(tags.contains(t), "missing {t}");
    }
    let eval_steps: BTreeSet<i64> = scalars
        .iter()
        .filter(|s| s.tag.starts_with("eval/"))
        .map(|s| s.step)
        .collect();
    assert_eq!(eval_steps, [10, 20].into_iter().collect());
    let mean: Vec<f64> = scalars
        .iter()
        .filter(|s| s.tag == "rollout/accuracy/mean")
        .map(|s| s.value)
        .collect();
    assert!(mean.iter().all(|v| (0.0..=1.0).contains(v)) && mean.len() == 20);
}

/// The demo records system metrics (docs/contract/system-metrics.md), and `validate` and
/// fail-closed `extract` read its run as before.
#[test]
fn the_demo_records_system_metrics_and_validate_and_extract_still_pass() {
    let (out, _tmp) = demo(&["--iterations", "300", "training.system_interval=0.1"]);
    assert!(out.status.success(), "{out:?}");
    let dir = run_dir(&out);
    let (tags, _) = event_tags(&dir);
    assert!(
        tags.contains("system/process/rss_bytes"),
        "no system sample in a 300-iteration demo at 0.1 s: {tags:?}"
    );
    for cmd in ["validate", "extract"] {
        let out = Command::new(env!("CARGO_BIN_EXE_tally"))
            .arg(cmd)
            .arg(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{cmd}: {out:?}");
    }
    let (out, _tmp) = demo(&[
        "--iterations",
        "300",
        "training.system_metrics=false",
        "training.system_interval=0.1",
    ]);
    assert!(out.status.success(), "{out:?}");
    let (tags, _) = event_tags(&run_dir(&out));
    assert!(!tags.iter().any(|t| t.starts_with("system/")), "{tags:?}");
}
