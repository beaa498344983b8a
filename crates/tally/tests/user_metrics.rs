//! A user's own metrics (docs/contract/schema.md "User metrics"): any tag outside the canonical
//! groups is accepted, persisted unsmoothed with the step and shown in the window; canonical
//! groups stay closed; legacy and retired names stay refused.

use std::sync::Arc;
use tally::{
    Backend, Error, Logger, LoggerConfig, ManualClock, MemorySink, Profile, RunStatus, StepInput,
};

fn logger(dir: &std::path::Path, profile: Profile) -> (Logger, MemorySink) {
    let algo = if profile == Profile::OnPolicy {
        "ppo"
    } else {
        "sac"
    };
    let mut c = LoggerConfig::new(algo, "task", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.profile = profile;
    c.max_iterations = 10;
    c.backend = Backend::None;
    let mem = MemorySink::new();
    let log = Logger::with_sinks(
        c,
        vec![Box::new(mem.clone())],
        Arc::new(ManualClock::at(1.0)),
    )
    .unwrap();
    (log, mem)
}

fn refusal(log: &mut Logger, input: &StepInput) -> (String, String) {
    match log.step(input) {
        Err(Error::InvalidStep { key, reason, .. }) => (key, reason),
        other => panic!("expected an invalid step, got {other:?}"),
    }
}

#[test]
fn user_metrics_are_persisted_unsmoothed_beside_canonical_tags() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut log, mem) = logger(tmp.path(), Profile::SacFamily);
    for i in 1..=3u64 {
        let input = StepInput::new(i)
            .env_steps(100 * i)
            .metric("Loss/critic", 1.0)
            .metric("charts/episodic_return", 10.0 * i as f64)
            .metric("losses/explained_variance", -0.5)
            .metric("my_scalar", f64::NAN);
        log.step(&input).unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
    let steps = mem.steps();
    assert_eq!(steps.len(), 3);
    let value = |i: usize, tag: &str| {
        steps[i]
            .scalars
            .iter()
            .find(|(t, _)| t.as_str() == tag)
            .map(|(_, v)| *v)
    };
    assert_eq!(value(0, "charts/episodic_return"), Some(10.0));
    assert_eq!(value(2, "charts/episodic_return"), Some(30.0), "unsmoothed");
    assert_eq!(value(1, "losses/explained_variance"), Some(-0.5));
    assert!(
        value(0, "my_scalar").unwrap().is_nan(),
        "values are passed as given"
    );
    assert_eq!(value(0, "Loss/critic"), Some(1.0));
}

#[test]
fn user_metrics_reach_the_terminal_window() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut log, _) = logger(tmp.path(), Profile::SacFamily);
    log.step(&StepInput::new(1).metric("charts/sps", 4.0))
        .unwrap();
    log.step(&StepInput::new(2).metric("charts/sps", 6.0))
        .unwrap();
    let snap = log.terminal().lock().unwrap().snapshot();
    assert_eq!(snap.window.get("charts/sps"), Some(5.0));
}

#[test]
fn on_policy_runs_forward_slashed_env_log_entries_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut log, mem) = logger(tmp.path(), Profile::OnPolicy);
    let input = StepInput::new(0)
        .metric("Metrics/base_velocity/error_vel_xy", 0.25)
        .metric("Curriculum/terrain_levels", 3.0);
    log.step(&input).unwrap();
    log.close(RunStatus::Completed).unwrap();
    let tags: Vec<String> = mem.steps()[0]
        .scalars
        .iter()
        .map(|(t, _)| t.as_str().to_owned())
        .collect();
    assert!(
        tags.contains(&"Metrics/base_velocity/error_vel_xy".to_owned()),
        "{tags:?}"
    );
    assert!(
        tags.contains(&"Curriculum/terrain_levels".to_owned()),
        "{tags:?}"
    );
}

#[test]
fn a_typo_in_a_canonical_group_is_refused_with_the_nearest_tag_and_the_way_out() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut log, mem) = logger(tmp.path(), Profile::SacFamily);
    let (key, reason) = refusal(&mut log, &StepInput::new(1).metric("Loss/critc", 1.0));
    assert_eq!(key, "Loss/critc");
    assert!(reason.contains("did you mean 'Loss/critic'"), "{reason}");
    assert!(reason.contains("Loss/ holds schema tags only"), "{reason}");
    assert!(reason.contains("'charts/critc'"), "{reason}");
    // Nothing was logged for the refused step, and the next one goes through.
    log.step(&StepInput::new(1).metric("aux/critc", 1.0))
        .unwrap();
    log.flush().unwrap();
    assert_eq!(mem.steps().len(), 1);
}

#[test]
fn legacy_and_retired_names_stay_refused_outside_the_canonical_groups() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut log, _) = logger(tmp.path(), Profile::SacFamily);
    let (_, reason) = refusal(
        &mut log,
        &StepInput::new(1).metric("train/critic_loss", 1.0),
    );
    assert!(reason.contains("use 'Loss/critic'"), "{reason}");
    let (_, reason) = refusal(
        &mut log,
        &StepInput::new(1).metric("distributed/rank0", 1.0),
    );
    assert!(reason.contains("retired"), "{reason}");
}

#[test]
fn unusable_user_tags_and_duplicates_are_refused_naming_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut log, _) = logger(tmp.path(), Profile::SacFamily);
    for bad in ["charts//x", "charts/x/", " charts/x", "a\tb", ""] {
        let (key, reason) = refusal(&mut log, &StepInput::new(1).metric(bad, 1.0));
        assert_eq!(key, bad);
        assert!(
            reason.starts_with("invalid metric tag"),
            "{bad:?}: {reason}"
        );
    }
    let long = "x".repeat(tally::schema::MAX_USER_TAG_LEN + 1);
    let (_, reason) = refusal(&mut log, &StepInput::new(1).metric(long, 1.0));
    assert!(reason.contains("longer than"), "{reason}");
    let twice = StepInput::new(1)
        .metric("charts/a", 1.0)
        .metric("charts/a", 2.0);
    let (key, reason) = refusal(&mut log, &twice);
    assert_eq!(key, "charts/a");
    assert!(reason.contains("duplicate"), "{reason}");
    // A user tag seen before (the cached path) is still checked for duplicates.
    log.step(&StepInput::new(1).metric("charts/a", 1.0))
        .unwrap();
    let (_, reason) = refusal(
        &mut log,
        &StepInput::new(2)
            .metric("charts/a", 1.0)
            .metric("charts/a", 1.0),
    );
    assert!(reason.contains("duplicate"), "{reason}");
}
