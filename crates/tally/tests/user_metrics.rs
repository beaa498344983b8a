//! A user's own metrics (docs/contract/schema.md "User metrics"): any tag outside the canonical
//! groups is accepted, persisted unsmoothed with the step and shown in the window; canonical
//! groups stay closed; legacy and retired names stay refused.

use tally::{Backend, Error, Logger, LoggerConfig, MemorySink, Profile, RunStatus, StepInput};

#[path = "support/memory_logger.rs"]
mod memory_logger;
use memory_logger::memory_logger;

fn logger(dir: &std::path::Path, profile: Profile) -> (Logger, MemorySink) {
    let algo = if profile == Profile::OnPolicy {
        "ppo"
    } else {
        "sac"
    };
    let mut c = LoggerConfig::new(algo, "task", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.profile = profile;
    c.max_iterations = Some(10);
    c.backend = Backend::None;
    let (log, mem, _) = memory_logger(c, 1.0);
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

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn run_config_lists_every_user_metric_with_its_spec_and_the_summary_keeps_its_statistic() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut log, _) = logger(tmp.path(), Profile::SacFamily);
    let best = tally::UserMetricSpec {
        unit: "return".into(),
        label: Some("Episodic return".into()),
        summary: tally::SummaryStat::Max,
        ..Default::default()
    };
    log.define_metric("charts/*", best).unwrap();
    for (i, v) in [(1u64, 5.0), (2, 9.0), (3, 7.0)] {
        let input = StepInput::new(i)
            .metric("charts/episodic_return", v)
            .metric("aux_loss", -v);
        log.step(&input).unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
    let run_dir = log.run_dir().to_owned();
    let config = json(&run_dir.join("run_config.json"));
    let listed = config["user_metrics"].as_array().unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0]["tag"], "charts/episodic_return");
    assert_eq!(listed[0]["unit"], "return");
    assert_eq!(listed[0]["label"], "Episodic return");
    assert_eq!(listed[0]["reduction"], "mean");
    assert_eq!(listed[0]["summary"], "max");
    assert_eq!(listed[1]["tag"], "aux_loss");
    assert_eq!(listed[1]["unit"], "1");
    assert_eq!(listed[1]["summary"], "last");
    let summary = json(&run_dir.join("run_summary.json"));
    assert_eq!(summary["user_metrics"]["charts/episodic_return"], 9.0);
    assert_eq!(summary["user_metrics"]["aux_loss"], -7.0);
    // The typed readers take the new members.
    let _: tally::schema::artifacts::RunConfig =
        serde_json::from_value(config).expect("run_config.json deserialises");
    let _: tally::schema::artifacts::RunSummary =
        serde_json::from_value(summary).expect("run_summary.json deserialises");
}

/// The run config rewritten at close keeps secrets out like every artefact
/// (docs/contract/run-artifacts.md "Secrets").
#[test]
fn a_secret_in_a_user_metrics_label_never_reaches_run_config() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut log, _) = logger(tmp.path(), Profile::SacFamily);
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let spec = tally::UserMetricSpec {
        label: Some(format!("return ({token})")),
        ..Default::default()
    };
    // The first step's summary rewrite comes before the metric: only close lists it.
    log.step(&StepInput::new(1)).unwrap();
    log.define_metric("charts/*", spec).unwrap();
    log.step(&StepInput::new(2).metric("charts/episodic_return", 1.0))
        .unwrap();
    log.close(RunStatus::Completed).unwrap();
    let text = std::fs::read_to_string(log.run_dir().join("run_config.json")).unwrap();
    assert!(!text.contains(token), "{text}");
    let config: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(config["user_metrics"][0]["tag"], "charts/episodic_return");
    assert_eq!(config["user_metrics"][0]["label"], "return (<redacted>)");
}

#[test]
fn a_canonical_group_cannot_be_defined_as_a_user_metric() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut log, _) = logger(tmp.path(), Profile::SacFamily);
    let err = log
        .define_metric("Loss/*", tally::UserMetricSpec::default())
        .unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err}");
    assert!(err.to_string().contains("define_metric('Loss/*')"), "{err}");
}
