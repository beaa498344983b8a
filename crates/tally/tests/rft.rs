//! The `rft` profile: Trinity-style keys validated by the `{category}/...` naming convention
//! (docs/contract/rft.md), persisted as given on the iteration axis.

use tally::{Backend, Error, Logger, LoggerConfig, MemorySink, Profile, RunStatus, StepInput};

#[path = "support/memory_logger.rs"]
mod memory_logger;
use memory_logger::memory_logger;

fn logger() -> (tempfile::TempDir, Logger, MemorySink) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = LoggerConfig::new("grpo", "gsm8k", "none");
    c.log_dir = Some(dir.path().join("run"));
    c.profile = Profile::Rft;
    c.max_iterations = Some(10);
    c.backend = Backend::None;
    let (log, mem, _) = memory_logger(c, 0.0);
    (dir, log, mem)
}

#[test]
fn trinity_step_keys_are_persisted_as_given_on_the_iteration_axis() {
    let (_d, mut log, mem) = logger();
    let step = StepInput::new(3)
        .env_steps(999)
        .metric("rollout/accuracy/mean", 0.83)
        .metric("eval/gsm8k-eval/accuracy/mean@4", 0.5)
        .metric("eval/gsm8k-eval/accuracy/best@2", 0.7)
        .metric("time/update_actor", 1.5);
    log.step(&step).unwrap();
    log.close(RunStatus::Completed).unwrap();
    let s = &mem.steps()[0];
    assert_eq!(s.step, 3, "rft runs use the step (iteration) axis");
    let tags: Vec<_> = s
        .scalars
        .iter()
        .map(|(t, v)| (t.as_str().to_owned(), *v))
        .collect();
    assert_eq!(
        tags,
        [
            ("rollout/accuracy/mean".to_owned(), 0.83),
            ("eval/gsm8k-eval/accuracy/mean@4".to_owned(), 0.5),
            ("eval/gsm8k-eval/accuracy/best@2".to_owned(), 0.7),
            ("time/update_actor".to_owned(), 1.5)
        ]
    );
}

#[test]
fn rl_tags_suffixes_and_rl_inputs_are_rejected_naming_the_key() {
    let (_d, mut log, mem) = logger();
    let cases = [
        (
            StepInput::new(1).metric("Loss/critic", 1.0),
            "unknown category 'Loss/'",
        ),
        (
            StepInput::new(1).metric("rollout/total_tokens:sum", 1.0),
            "aggregation suffix",
        ),
        (
            StepInput::new(1).metric("eval/gsm8k/accuracy", 1.0),
            "<statistic>",
        ),
        (
            StepInput::new(1).learner("learning", 0.1),
            "no RL timelines",
        ),
        (StepInput::new(1).episode_return(1.0), "no RL timelines"),
        (
            StepInput::new(1)
                .metric("time/a", 1.0)
                .metric("time/a", 2.0),
            "duplicate",
        ),
    ];
    for (input, needle) in cases {
        match log.step(&input) {
            Err(e @ Error::InvalidStep { .. }) => {
                assert!(e.to_string().contains(needle), "'{e}' lacks '{needle}'")
            }
            other => panic!("{needle}: {other:?}"),
        }
    }
    log.step(&StepInput::new(1).metric("time/a", 1.0)).unwrap();
    log.flush().unwrap();
    assert_eq!(mem.steps().len(), 1);
}

/// docs/contract/rft.md "Keys outside the namespace": with `OutsideKeys::User` a key outside
/// the rft namespace is the user's own metric, listed as one; canonical tags stay refused.
#[test]
fn outside_keys_user_writes_keys_outside_the_namespace_as_user_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = LoggerConfig::new("grpo", "gsm8k", "none");
    c.log_dir = Some(dir.path().join("run"));
    c.profile = Profile::Rft;
    c.backend = Backend::None;
    c.outside_keys = tally::OutsideKeys::User;
    let (mut log, mem, _) = memory_logger(c, 0.0);
    let outside = [
        "advantage/kl/mean",
        "advantage/kl_coef",
        "rollout/total_experience_count",
        "rollout/model_0/accuracy/mean/x",
        "training/rollout_probs_diff_mean",
        "variance_proxy/proxy1_signal_strength",
    ];
    for it in 1..=2u64 {
        let mut step = StepInput::new(it).metric("actor/pg_loss", 0.5);
        for (i, k) in outside.iter().enumerate() {
            step = step.metric(*k, i as f64 + it as f64);
        }
        log.step(&step).unwrap();
    }
    // Still refused: a canonical tag and a legacy name, whichever list they would join.
    for (key, needle) in [
        ("Loss/critic", "canonical"),
        ("train/critic_loss", "Loss/critic"),
    ] {
        match log.step(&StepInput::new(3).metric(key, 1.0)) {
            Err(e @ Error::InvalidStep { .. }) => {
                let text = e.to_string();
                assert!(text.contains(key) && text.contains(needle), "{text}")
            }
            other => panic!("{key}: {other:?}"),
        }
    }
    log.close(RunStatus::Completed).unwrap();
    let steps = mem.steps();
    let tags: Vec<_> = steps[1].scalars.iter().map(|(t, _)| t.as_str()).collect();
    let mut want = vec!["actor/pg_loss"];
    want.extend(outside);
    assert_eq!(tags, want);
    let config: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("run/run_config.json")).unwrap(),
    )
    .unwrap();
    let listed: Vec<_> = config["user_metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["tag"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(listed, outside, "the rft keys are not the user's");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("run/run_summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["user_metrics"]["advantage/kl_coef"], 3.0);
}

#[test]
fn outside_keys_refuse_is_the_default() {
    let (_d, mut log, _mem) = logger();
    match log.step(&StepInput::new(1).metric("advantage/kl/mean", 1.0)) {
        Err(e @ Error::InvalidStep { .. }) => {
            assert!(
                e.to_string().contains("unknown category 'advantage/'"),
                "{e}"
            )
        }
        other => panic!("{other:?}"),
    }
}
