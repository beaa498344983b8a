//! `tally health` on a clean suite that must stay quiet and on planted faults that must each
//! produce exactly their finding at the right step (`docs/contract/health.md` "Honesty").
//!
//! The clean suite: `tally demo` runs of every profile, and stable-baselines3-style and
//! CleanRL-style runs written with tally's own event writer with noisy curves like theirs.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use tally_tfevents::{EventFileWriter, WriterOptions};

#[path = "support/run.rs"]
mod run;
use run::{demo, tally};

/// `tally health --json PATH... EXTRA...`: exit code and report.
fn health(paths: &[&Path], extra: &[&str]) -> (i32, Value, String) {
    let mut args = vec!["health".to_owned(), "--json".to_owned()];
    args.extend(paths.iter().map(|p| p.display().to_string()));
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = tally(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap(),
        report,
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// Every finding of a report, as (rule, tag, first_step, last_step, count).
fn findings(report: &Value) -> Vec<(String, String, i64, i64, u64)> {
    report["runs"]
        .as_array()
        .expect("runs is a list")
        .iter()
        .flat_map(|r| r["findings"].as_array().unwrap())
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_owned(),
                f["tag"].as_str().unwrap().to_owned(),
                f["first_step"].as_i64().unwrap(),
                f["last_step"].as_i64().unwrap(),
                f["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// A reproducible stream of noise (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A standard normal draw (Box-Muller).
    fn normal(&mut self) -> f64 {
        let u = self.next().max(1e-300);
        let v = self.next();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// `median` times a log-normal factor of spread `sigma`: a loss's heavy-tailed noise.
    fn lognormal(&mut self, median: f64, sigma: f64) -> f64 {
        median * (sigma * self.normal()).exp()
    }
}

/// What to plant in a generated run.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// This tag is NaN at this iteration.
    NaN(&'static str, u64),
    /// This loss grows by 10× per iteration from this iteration on (to 1e6 at most).
    Explode(&'static str, u64),
    /// This tag is 0 from this iteration on.
    Zero(&'static str, u64),
    /// The loop pauses this many seconds after this iteration.
    Pause(u64, f64),
    /// Steps/s falls to this share from this iteration on.
    Slow(u64, f64),
}

impl Fault {
    fn apply(self, tag: &str, i: u64, v: f64) -> f64 {
        match self {
            Fault::NaN(t, at) if t == tag && i == at => f64::NAN,
            Fault::Explode(t, from) if t == tag && i >= from => {
                v * 10f64.powi((i - from + 3).min(6) as i32)
            }
            Fault::Zero(t, from) if t == tag && i >= from => 0.0,
            _ => v,
        }
    }
}

/// Iterations of each generated run.
const ITERS: u64 = 600;

/// A stable-baselines3 PPO run as its `tensorboard` format writes it: one event per iteration
/// at `num_timesteps`, the cumulative `time/fps`, losses with heavy-tailed noise.
fn sb3_run(dir: &Path, seed: u64, fault: Fault) {
    let mut rng = Rng(seed);
    std::fs::create_dir_all(dir).unwrap();
    let mut w = EventFileWriter::open(dir, WriterOptions::from_env()).unwrap();
    let (n_steps, t0) = (2048u64, 1.7e9);
    let (mut wall, mut reward, mut busy) = (t0, -200.0, 0.0);
    for i in 1..=ITERS {
        let p = i as f64 / ITERS as f64;
        let step = (i * n_steps) as i64;
        let dt = 1.3 * (1.0 + 0.1 * rng.normal()).max(0.5);
        busy += dt;
        wall += dt;
        if let Fault::Pause(at, secs) = fault {
            if i == at + 1 {
                wall += secs;
            }
        }
        reward += 0.02 * (300.0 / (1.0 + (-10.0 * (p - 0.4)).exp()) - reward) + 3.0 * rng.normal();
        let entropy = 1.4 - 0.9 * p + 0.02 * rng.normal();
        let value_loss = rng.lognormal(60.0 * (-2.0 * p).exp() + 2.0, 0.6);
        let pg = -0.01 + 0.005 * rng.normal();
        let values = [
            ("rollout/ep_rew_mean", reward),
            ("rollout/ep_len_mean", 200.0 + 800.0 * p),
            ("time/fps", ((i * n_steps) as f64 / (wall - t0)).floor()),
            ("time/iterations", i as f64),
            ("time/time_elapsed", (wall - t0).floor()),
            ("time/busy", busy),
            ("train/approx_kl", rng.lognormal(0.01, 0.5)),
            ("train/clip_fraction", (0.12 + 0.04 * rng.normal()).max(0.0)),
            ("train/clip_range", 0.2),
            ("train/entropy_loss", -entropy),
            (
                "train/explained_variance",
                1.0 - rng.lognormal(0.3 * (1.0 - p) + 0.02, 0.5),
            ),
            ("train/learning_rate", 3e-4),
            ("train/loss", 0.5 * value_loss + pg - 0.0 * entropy),
            ("train/n_updates", (i * 10) as f64),
            ("train/policy_gradient_loss", pg),
            ("train/std", 1.0 - 0.6 * p + 0.01 * rng.normal()),
            ("train/value_loss", value_loss),
        ];
        let values: Vec<(&str, f64)> = values
            .iter()
            .map(|&(t, v)| (t, fault.apply(t, i, v)))
            .collect();
        w.write_scalars(step, wall, &values).unwrap();
    }
    w.close().unwrap();
}

/// A CleanRL `ppo_continuous_action` run: an event per scalar, episodic returns at each
/// episode's end, per-iteration losses, the cumulative `charts/SPS`.
fn cleanrl_run(dir: &Path, seed: u64, fault: Fault) {
    let mut rng = Rng(seed);
    std::fs::create_dir_all(dir).unwrap();
    let mut w = EventFileWriter::open(dir, WriterOptions::from_env()).unwrap();
    let (batch, t0) = (2048u64, 1.7e9);
    let mut wall = t0;
    for i in 1..=ITERS {
        let p = i as f64 / ITERS as f64;
        let step = (i * batch) as i64;
        // Episodes of about 1000 steps end during the rollout, each logged on its own.
        for e in 0..2 {
            wall += 0.4 * (1.0 + 0.1 * rng.normal()).max(0.5);
            let ret = 2500.0 / (1.0 + (-8.0 * (p - 0.5)).exp()) + 150.0 * rng.normal();
            let at = step - 1024 + 512 * e;
            w.write_scalars(at, wall, &[("charts/episodic_return", ret)])
                .unwrap();
            w.write_scalars(at, wall, &[("charts/episodic_length", 1000.0)])
                .unwrap();
        }
        wall += 0.3 * (1.0 + 0.1 * rng.normal()).max(0.5);
        if let Fault::Pause(at, secs) = fault {
            if i == at + 1 {
                wall += secs;
            }
        }
        let values = [
            (
                "charts/learning_rate",
                3e-4 * (1.0 - p + 1.0 / ITERS as f64),
            ),
            (
                "losses/value_loss",
                rng.lognormal(40.0 * (-1.5 * p).exp() + 5.0, 0.7),
            ),
            ("losses/policy_loss", -0.005 + 0.01 * rng.normal()),
            ("losses/entropy", 8.5 - 3.0 * p + 0.05 * rng.normal()),
            ("losses/old_approx_kl", rng.lognormal(0.008, 0.6)),
            ("losses/approx_kl", rng.lognormal(0.008, 0.6)),
            ("losses/clipfrac", (0.1 + 0.04 * rng.normal()).max(0.0)),
            ("losses/explained_variance", 0.9 + 0.05 * rng.normal()),
            ("charts/SPS", ((i * batch) as f64 / (wall - t0)).floor()),
        ];
        for (t, v) in values {
            let v = fault.apply(t, i, v);
            w.write_scalars(step, wall, &[(t, v)]).unwrap();
        }
    }
    w.close().unwrap();
}

/// A CleanRL `sac_continuous_action` run: single-minibatch Q and actor losses every 100 env
/// steps (heavier-tailed than an epoch's mean), the temperature's loss around 0, episodic
/// returns at each episode's end, the cumulative `charts/SPS`.
fn cleanrl_sac_run(dir: &Path, seed: u64, fault: Fault) {
    let mut rng = Rng(seed);
    std::fs::create_dir_all(dir).unwrap();
    let mut w = EventFileWriter::open(dir, WriterOptions::from_env()).unwrap();
    let t0 = 1.7e9;
    let mut wall = t0;
    for i in 1..=ITERS {
        let p = i as f64 / ITERS as f64;
        let step = (5000 + i * 100) as i64;
        wall += 0.8 * (1.0 + 0.1 * rng.normal()).max(0.5);
        if let Fault::Pause(at, secs) = fault {
            if i == at + 1 {
                wall += secs;
            }
        }
        if i % 10 == 0 {
            let ret = 4000.0 / (1.0 + (-8.0 * (p - 0.4)).exp()) + 200.0 * rng.normal();
            w.write_scalars(step, wall, &[("charts/episodic_return", ret)])
                .unwrap();
        }
        let q = 300.0 / (1.0 + (-8.0 * (p - 0.4)).exp()) + 5.0;
        let alpha = 0.2 * (-3.0 * p).exp() + 0.01;
        let qf1 = rng.lognormal(0.5 + 0.02 * q, 0.7);
        let qf2 = rng.lognormal(0.5 + 0.02 * q, 0.7);
        let values = [
            ("losses/qf1_values", q * (1.0 + 0.05 * rng.normal())),
            ("losses/qf1_loss", qf1),
            ("losses/qf2_loss", qf2),
            ("losses/qf_loss", (qf1 + qf2) / 2.0),
            ("losses/actor_loss", -q * (1.0 + 0.03 * rng.normal())),
            ("losses/alpha", alpha),
            ("losses/alpha_loss", alpha * 0.5 * rng.normal()),
            ("charts/SPS", ((i * 100) as f64 / (wall - t0)).floor()),
        ];
        for (t, v) in values {
            let v = fault.apply(t, i, v);
            w.write_scalars(step, wall, &[(t, v)]).unwrap();
        }
    }
    w.close().unwrap();
}

/// A run with tally's canonical tags, as a logger writes it: one event per iteration,
/// `Perf/total_fps` of that iteration alone.
fn tally_style_run(dir: &Path, seed: u64, fault: Fault) {
    let mut rng = Rng(seed);
    std::fs::create_dir_all(dir).unwrap();
    let mut w = EventFileWriter::open(dir, WriterOptions::from_env()).unwrap();
    let mut wall = 1.7e9;
    for i in 1..=ITERS {
        let p = i as f64 / ITERS as f64;
        let step = (i * 4096) as i64;
        let mut iter_time = 0.5 * (1.0 + 0.05 * rng.normal());
        if let Fault::Slow(from, share) = fault {
            if i >= from {
                iter_time /= share;
            }
        }
        wall += iter_time;
        if let Fault::Pause(at, secs) = fault {
            if i == at + 1 {
                wall += secs;
            }
        }
        let values = [
            (
                "Train/mean_reward",
                50.0 / (1.0 + (-10.0 * (p - 0.4)).exp()) + rng.normal(),
            ),
            ("Loss/surrogate", -0.01 + 0.004 * rng.normal()),
            (
                "Loss/value",
                rng.lognormal(0.5 * (-2.0 * p).exp() + 0.05, 0.5),
            ),
            ("Loss/entropy", 1.2 - 0.4 * p + 0.01 * rng.normal()),
            ("Policy/mean_std", 1.0 - 0.6 * p + 0.005 * rng.normal()),
            ("Perf/total_fps", 4096.0 / iter_time),
            ("Perf/iteration_time", iter_time),
        ];
        let values: Vec<(&str, f64)> = values
            .iter()
            .map(|&(t, v)| (t, fault.apply(t, i, v)))
            .collect();
        w.write_scalars(step, wall, &values).unwrap();
    }
    w.close().unwrap();
}

type Writer = fn(&Path, u64, Fault);

/// The generated clean runs: each style with three seeds.
fn generated_clean_suite(root: &Path) {
    let styles: [(&str, Writer); 4] = [
        ("sb3", sb3_run),
        ("cleanrl", cleanrl_run),
        ("cleanrl_sac", cleanrl_sac_run),
        ("tally", tally_style_run),
    ];
    for (name, write) in styles {
        for seed in 1..=3u64 {
            write(&root.join(format!("{name}_{seed}")), seed, Fault::None);
        }
    }
}

#[test]
fn the_clean_suite_produces_no_finding() {
    let tmp = tempfile::tempdir().unwrap();
    for algo in ["sac", "flashsac", "warpsac", "appo", "ppo", "grpo"] {
        demo(
            &tmp.path().join("demo"),
            &["--algo", algo, "--iterations", "200"],
        );
    }
    generated_clean_suite(&tmp.path().join("generated"));
    let (code, report, err) = health(&[tmp.path()], &[]);
    assert_eq!(findings(&report), vec![], "{report:#}\n{err}");
    assert_eq!(code, 0, "{err}");
    assert_eq!(report["healthy"], true);
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(
        runs.len(),
        6 + 12,
        "every run of the suite is read: {report:#}"
    );
    assert!(runs.iter().all(|r| r["values"].as_u64().unwrap() > 1000));
}

/// The step of iteration `i` of a generated run.
fn sb3_step(i: u64) -> i64 {
    (i * 2048) as i64
}

/// Checks one planted run and returns its findings.
fn planted(write: Writer, fault: Fault) -> Vec<(String, String, i64, i64, u64)> {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), 7, fault);
    let (code, report, err) = health(&[tmp.path()], &[]);
    assert_eq!(code, 1, "a planted fault makes exit 1: {report:#}\n{err}");
    assert_eq!(report["healthy"], false);
    findings(&report)
}

#[test]
fn a_nan_at_one_step_is_one_nonfinite_finding_at_that_step() {
    let got = planted(sb3_run, Fault::NaN("train/value_loss", 300));
    let s = sb3_step(300);
    assert_eq!(
        got,
        [("nonfinite".into(), "train/value_loss".into(), s, s, 1)]
    );
}

#[test]
fn a_loss_that_explodes_is_a_divergence_from_its_first_step() {
    let got = planted(cleanrl_run, Fault::Explode("losses/value_loss", 400));
    assert_eq!(got.len(), 1, "{got:?}");
    let (rule, tag, first, _, count) = &got[0];
    assert_eq!(
        (rule.as_str(), tag.as_str()),
        ("divergence", "losses/value_loss")
    );
    assert_eq!(*first, sb3_step(400));
    // It stays out of range for a while, then the window takes the new level in.
    assert!(*count >= 20, "{got:?}");
}

#[test]
fn entropy_collapsing_to_zero_is_a_collapse_from_where_it_began() {
    let got = planted(sb3_run, Fault::Zero("train/entropy_loss", 450));
    let first = sb3_step(450);
    assert_eq!(
        got,
        [(
            "collapse".into(),
            "train/entropy_loss".into(),
            first,
            sb3_step(ITERS),
            ITERS - 450 + 1
        )]
    );
}

#[test]
fn a_long_pause_inside_the_run_is_one_stall_after_the_last_step_before_it() {
    // A tally run's Steps/s is per iteration: one slow iteration is not slow throughput.
    let got = planted(tally_style_run, Fault::Pause(250, 900.0));
    let s = (250 * 4096) as i64;
    assert_eq!(got, [("stall".into(), String::new(), s, s, 1)]);
}

#[test]
fn a_pause_in_a_run_whose_fps_is_cumulative_is_a_stall_alone() {
    // stable-baselines3's time/fps averages since the start, so it stays low after a pause;
    // throughput is judged on the pace of steps, which is back at once
    // (docs/contract/health.md "Throughput").
    let got = planted(sb3_run, Fault::Pause(250, 900.0));
    let s = sb3_step(250);
    assert_eq!(got, [("stall".into(), String::new(), s, s, 1)]);
}

#[test]
fn throughput_dropping_is_found_from_the_first_slow_step() {
    let got = planted(tally_style_run, Fault::Slow(400, 0.3));
    assert_eq!(got.len(), 1, "{got:?}");
    let (rule, tag, first, last, _) = &got[0];
    assert_eq!(
        (rule.as_str(), tag.as_str()),
        ("throughput", "Perf/total_fps")
    );
    assert_eq!(*first, (400 * 4096) as i64);
    assert!(*last > *first);
}

/// Bytes of the event files at or below `dir`.
fn event_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            let path = e.path();
            if path.is_dir() {
                event_bytes(&path)
            } else if e.file_name().to_string_lossy().contains("tfevents") {
                e.metadata().map_or(0, |m| m.len())
            } else {
                0
            }
        })
        .sum()
}

#[test]
fn a_demo_paused_with_sigstop_shows_one_stall() {
    let tmp = tempfile::tempdir().unwrap();
    let log_root = format!("training.log_root={}", tmp.path().display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["demo", "--panel", "off", "--iterations", "500", &log_root])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Pause once the run has written a few dozen steps (the stall rule wants 10 gaps first).
    let grown = |dir: &Path| event_bytes(dir) > 64 * 1024;
    let t0 = std::time::Instant::now();
    while !grown(tmp.path()) {
        assert!(t0.elapsed().as_secs() < 60, "the demo wrote nothing");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-STOP", &pid])
        .status()
        .unwrap()
        .success());
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert!(Command::new("kill")
        .args(["-CONT", &pid])
        .status()
        .unwrap()
        .success());
    assert!(child.wait().unwrap().success());
    // A stall is 60 s at least by default; this rules file makes it 1.5 s, to test fast.
    let rules = tmp.path().join("rules.json");
    std::fs::write(
        &rules,
        r#"{"rules": [{"kind": "stall", "min_gap_s": 1.5}]}"#,
    )
    .unwrap();
    let (code, report, err) = health(&[tmp.path()], &["--rules", rules.to_str().unwrap()]);
    let got = findings(&report);
    assert_eq!(code, 1, "{report:#}\n{err}");
    assert_eq!(got.len(), 1, "{report:#}");
    assert_eq!(got[0].0, "stall");
    let pause = report["runs"][0]["findings"][0]["last_value"]
        .as_f64()
        .unwrap();
    assert!((2.0..30.0).contains(&pause), "the pause measured: {pause}");
    // By default a stall is a minute at least: this pause is not one.
    let (code, report, _) = health(&[tmp.path()], &[]);
    assert_eq!((code, findings(&report)), (0, vec![]));
}

#[test]
fn user_rules_fire_and_any_rule_turns_off() {
    let tmp = tempfile::tempdir().unwrap();
    sb3_run(tmp.path(), 3, Fault::NaN("train/value_loss", 100));
    let rules = tmp.path().join("rules.json");
    std::fs::write(
        &rules,
        r#"{"off": ["nonfinite"],
            "rules": [{"kind": "above", "tag": "train/approx_kl", "value": 1e9},
                      {"kind": "below", "tag": "rollout/ep_rew_mean", "value": -100}]}"#,
    )
    .unwrap();
    let (code, report, err) = health(&[tmp.path()], &["--rules", rules.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    let got = findings(&report);
    assert_eq!(
        got.len(),
        1,
        "the NaN is not reported, the low reward is: {got:?}"
    );
    assert_eq!(
        (got[0].0.as_str(), got[0].1.as_str()),
        ("below", "rollout/ep_rew_mean")
    );
    assert_eq!(got[0].2, sb3_step(1));
}

#[test]
fn bad_input_is_exit_2_naming_the_culprit() {
    let tmp = tempfile::tempdir().unwrap();
    sb3_run(tmp.path(), 3, Fault::None);
    let rules = tmp.path().join("bad.json");
    std::fs::write(&rules, r#"{"rules": [{"kind": "above", "tag": "x"}]}"#).unwrap();
    let (code, _, err) = health(&[tmp.path()], &["--rules", rules.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad.json: rules[0] (kind \"above\"): field \"value\": missing"),
        "{err}"
    );
    let missing = tmp.path().join("nowhere");
    let (code, _, err) = health(&[&missing], &[]);
    assert_eq!(code, 2);
    assert!(err.contains("nowhere"), "{err}");
}

#[test]
fn the_table_lists_each_finding_with_its_run() {
    let tmp = tempfile::tempdir().unwrap();
    sb3_run(&tmp.path().join("bad"), 5, Fault::NaN("train/loss", 42));
    sb3_run(&tmp.path().join("good"), 5, Fault::None);
    let out = tally(&["health", tmp.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("run") && lines[0].contains("message"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("bad ") && lines[1].contains("nonfinite"),
        "{text}"
    );
    assert!(lines[1].contains("NaN at step 86016"), "{text}");
    assert_eq!(lines[2], "1 finding(s) in 1 of 2 run(s)");
}

/// Writes the generated clean suite to `$TALLY_HEALTH_SUITE` (for measuring thresholds with
/// `tally health --rules`; see docs/contract/health.md "Honesty").
#[test]
#[ignore]
fn write_the_generated_clean_suite() {
    let root = PathBuf::from(std::env::var("TALLY_HEALTH_SUITE").unwrap());
    generated_clean_suite(&root);
}
