//! Pins the canonical schema v1 registry against its contract (`docs/contract/schema.md`; the
//! timeline rows: `docs/contract/timelines.md`; reductions: `docs/contract/ranks.md`).

use std::collections::HashSet;
use tally_schema::*;

fn perf_time_roles(r: Role) -> bool {
    matches!(
        r,
        Role::LearnerPhase
            | Role::LearnerTotal
            | Role::NestedDiagnostic
            | Role::CollectorCyclePhase
            | Role::CollectorDetail
            | Role::CollectorPerStep
            | Role::RolloutTotal
    )
}

#[test]
fn registry_lists_at_least_80_unique_tags() {
    assert!(METRICS.len() >= 80, "only {} tags", METRICS.len());
    let mut seen = HashSet::new();
    for m in METRICS {
        assert!(seen.insert(m.tag), "duplicate tag {}", m.tag);
    }
}

#[test]
fn only_the_three_perf_seconds_tags_are_in_seconds() {
    // `_ms` timing fields are milliseconds; Perf/learning_time, Perf/collection_time and
    // Perf/iteration_time are seconds (docs/contract/schema.md, units).
    let seconds: Vec<_> = METRICS
        .iter()
        .filter(|m| m.unit == Unit::S)
        .map(|m| m.tag)
        .collect();
    assert_eq!(
        seconds,
        [
            "Perf/iteration_time",
            "Perf/learning_time",
            "Perf/collection_time"
        ]
    );
    for m in METRICS.iter().filter(|m| m.tag.starts_with("Perf/")) {
        if m.unit == Unit::S {
            continue;
        }
        if perf_time_roles(m.role) || m.unit == Unit::Ms {
            // The one per-rank timing tag carries its unit mid-name:
            // Perf/dp_gradient_sync_ms_per_rank (migration table: train/dp_sync_time s → ms).
            let named_ms = m.tag.ends_with("_ms") || m.tag == "Perf/dp_gradient_sync_ms_per_rank";
            assert!(named_ms, "{} is a Perf timing tag without _ms", m.tag);
            assert_eq!(m.unit, Unit::Ms, "{}", m.tag);
        }
    }
    for m in METRICS.iter().filter(|m| m.tag.ends_with("_ms")) {
        assert_eq!(
            m.unit,
            Unit::Ms,
            "{} ends in _ms but is in {}",
            m.tag,
            m.unit.as_str()
        );
    }
}

#[test]
fn top_level_groups_are_the_canonical_five_plus_terminal() {
    let groups: HashSet<_> = METRICS
        .iter()
        .map(|m| m.tag.split('/').next().unwrap())
        .collect();
    let want: HashSet<_> = ["Train", "Loss", "Policy", "Episode", "Perf", "Terminal"]
        .into_iter()
        .collect();
    assert_eq!(groups, want);
}

#[test]
fn terminal_only_values_are_declared_and_never_persisted() {
    // Other, percentages, collector cycle total and Rows/s are derived in memory for the
    // terminal and deliberately not persisted (docs/contract/schema.md, terminal-only values).
    for m in METRICS {
        assert_eq!(m.persisted, m.role != Role::TerminalDerived, "{}", m.tag);
        assert_eq!(m.tag.starts_with("Terminal/"), !m.persisted, "{}", m.tag);
    }
    for t in [
        "Terminal/learner_other_ms",
        "Terminal/collector_cycle_ms",
        "Terminal/rows_per_sec",
        "Terminal/learner_learning_pct",
    ] {
        let m = metric(t).unwrap_or_else(|| panic!("{t} not declared"));
        assert!(!m.persisted);
    }
}

#[test]
fn every_spec_has_labels_that_fit_the_tiers() {
    for m in METRICS {
        assert!(
            !m.label.is_empty() && !m.short_label.is_empty() && !m.description.is_empty(),
            "{}",
            m.tag
        );
        assert!(
            m.label.chars().count() <= 24,
            "long label of {} too long: {}",
            m.tag,
            m.label
        );
        assert!(
            m.short_label.chars().count() <= 12,
            "short label of {} too long: {}",
            m.tag,
            m.short_label
        );
        assert!(
            m.short_label.chars().count() <= m.label.chars().count(),
            "{}",
            m.tag
        );
    }
}

fn learner_phase_keys(p: Profile) -> Vec<&'static str> {
    METRICS
        .iter()
        .filter(|m| m.role == Role::LearnerPhase && m.profiles.contains(p))
        .map(|m| match m.input {
            Input::Learner(k) => k,
            other => panic!("learner phase {} fed by {other}", m.tag),
        })
        .collect()
}

#[test]
fn learner_exclusive_phases_match_the_timeline_per_profile() {
    // Learner timeline: Replay Stage and Weight Publish appear only in APPO
    // (docs/contract/timelines.md, learner timeline).
    let mut sac = learner_phase_keys(Profile::SacFamily);
    sac.sort_unstable();
    assert_eq!(
        sac,
        [
            "collector_release",
            "collector_wait",
            "inference",
            "learning",
            "replay_batch_wait",
            "replay_sample"
        ]
    );
    let mut appo = learner_phase_keys(Profile::Appo);
    appo.sort_unstable();
    assert_eq!(
        appo,
        [
            "collector_wait",
            "learning",
            "replay_sample",
            "replay_stage",
            "weight_publish"
        ]
    );
}

#[test]
fn nested_diagnostics_are_not_exclusive_phases() {
    // Nested and background diagnostics are never extra Iter Wall slices
    // (docs/contract/timelines.md, nested diagnostics).
    for t in [
        "Perf/learner_inference_h2d_ms",
        "Perf/learner_inference_forward_ms",
        "Perf/learner_inference_d2h_ms",
        "Perf/replay_ingress_h2d_submit_ms",
    ] {
        assert_eq!(metric(t).unwrap().role, Role::NestedDiagnostic, "{t}");
    }
}

#[test]
fn input_keys_are_unique_so_each_input_feeds_one_tag() {
    let mut seen = HashSet::new();
    for m in METRICS
        .iter()
        .filter(|m| !matches!(m.input, Input::Metrics | Input::Derived))
    {
        assert!(
            seen.insert(m.input.to_string()),
            "{} shares input {}",
            m.tag,
            m.input
        );
    }
}

#[test]
fn throughput_and_counters_sum_across_ranks_while_timings_average() {
    // Steps/s and Rows/s are summed across ranks; learner metrics and timings are averaged
    // (docs/contract/ranks.md, cross-rank reductions).
    assert_eq!(metric("Perf/total_fps").unwrap().reduction, Reduction::Sum);
    assert_eq!(
        metric("Terminal/rows_per_sec").unwrap().reduction,
        Reduction::Sum
    );
    assert_eq!(
        metric("Train/replay_ingress_depth").unwrap().reduction,
        Reduction::Sum
    );
    for m in METRICS.iter().filter(|m| perf_time_roles(m.role)) {
        assert_eq!(m.reduction, Reduction::Mean, "{}", m.tag);
    }
}

#[test]
fn open_family_terms_resolve() {
    match lookup("reward/tracking_lin_vel").unwrap() {
        TagRef::Family(f, term) => {
            assert_eq!(f.prefix, "reward/");
            assert_eq!(term, "tracking_lin_vel");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        lookup("Episode_Termination/time_out"),
        Ok(TagRef::Family(_, "time_out"))
    ));
}

#[test]
fn reserved_reward_terms_are_rejected_with_replacement() {
    // reward/, reward/mean and reward/mean_ep100 are not reward terms: the last two name
    // Train/mean_reward (docs/contract/schema.md, open families).
    for (tag, repl) in [
        ("reward/mean", Some("Train/mean_reward")),
        ("reward/mean_ep100", Some("Train/mean_reward")),
        ("reward/", None),
    ] {
        let err = lookup(tag).unwrap_err();
        assert_eq!(
            err,
            SchemaError::ReservedTerm {
                tag: tag.into(),
                family: "reward/",
                replacement: repl
            }
        );
        if let Some(r) = repl {
            assert!(err.to_string().contains(r), "{err}");
        }
    }
    assert!(matches!(
        lookup("reward/a//b"),
        Err(SchemaError::InvalidTerm { .. })
    ));
    assert!(matches!(
        lookup("reward/has space"),
        Err(SchemaError::InvalidTerm { .. })
    ));
}

#[test]
fn episode_reward_tree_is_retired_and_points_at_reward_terms() {
    // Episode_Reward/<term> was retired on purpose; reward/<term> is the diagnostic
    // (docs/contract/schema.md, retired names).
    let err = lookup("Episode_Reward/tracking").unwrap_err();
    assert!(
        matches!(
            err,
            SchemaError::Retired {
                see: Some("reward/<term>"),
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("reward/<term>"));
}

#[test]
fn every_legacy_tag_is_rejected_naming_its_replacement() {
    for row in LEGACY {
        let err = lookup(row.old).unwrap_err();
        assert!(err.to_string().contains(row.new), "{} → {err}", row.old);
        let new =
            metric(row.new).unwrap_or_else(|| panic!("legacy target {} is not canonical", row.new));
        assert!(new.persisted, "{}", row.new);
    }
}

#[test]
fn legacy_unit_scales_follow_the_migration_table() {
    // The legacy map scales units: perf/iter_ms ms→s, timing/learner_train_ms ms→s,
    // timing/collector_rollout_ms ms→s, train/dp_sync_time s→ms (docs/contract/schema.md,
    // legacy map).
    let scale = |old| legacy_mapping(old, None).unwrap().scale;
    assert_eq!(scale("perf/iter_ms"), 0.001);
    assert_eq!(scale("timing/learner_train_ms"), 0.001);
    assert_eq!(scale("timing/collector_rollout_ms"), 0.001);
    assert_eq!(scale("train/dp_sync_time"), 1000.0);
    assert_eq!(scale("timing/learner_collector_wait_ms"), 1.0);
    for row in LEGACY {
        let new_unit = metric(row.new).unwrap().unit;
        if row.old.ends_with("_ms") && new_unit == Unit::S {
            assert_eq!(row.scale, 0.001, "{}", row.old);
        } else if row.old.ends_with("_ms") && new_unit == Unit::Ms {
            assert_eq!(row.scale, 1.0, "{}", row.old);
        }
    }
}

#[test]
fn incremental_h2d_splits_by_profile() {
    // timing/learner_incremental_h2d_ms is a submit diagnostic in SAC-family runs and the
    // synchronous staging phase in APPO runs (docs/contract/schema.md, legacy map).
    let old = "timing/learner_incremental_h2d_ms";
    assert_eq!(
        legacy_mapping(old, Some(Profile::SacFamily)).unwrap().new,
        "Perf/replay_ingress_h2d_submit_ms"
    );
    assert_eq!(
        legacy_mapping(old, Some(Profile::Appo)).unwrap().new,
        "Perf/learner_replay_stage_ms"
    );
    assert!(
        legacy_mapping(old, None).is_none(),
        "ambiguous without a profile"
    );
    let msg = lookup(old).unwrap_err().to_string();
    assert!(
        msg.contains("Perf/replay_ingress_h2d_submit_ms")
            && msg.contains("Perf/learner_replay_stage_ms"),
        "{msg}"
    );
}

#[test]
fn retired_without_replacement_names_are_rejected_with_reason() {
    for tag in [
        "perf/effective_samples_per_sec",
        "perf/learner_samples_per_sec",
        "perf/collector_active_steps_per_sec",
        "perf/collector_cycle_ms",
        "perf/learner_inference_pct",
        "timing/learner_other_ms",
        "perf/learner_pipeline_ms",
    ] {
        match lookup(tag) {
            Err(SchemaError::Retired { reason, .. }) => assert!(!reason.is_empty()),
            other => panic!("{tag}: {other:?}"),
        }
    }
}

#[test]
fn no_legacy_or_retired_name_shadows_a_canonical_tag() {
    for m in METRICS {
        assert!(legacy::legacy_rows(m.tag).next().is_none(), "{}", m.tag);
        assert!(legacy::retired_match(m.tag).is_none(), "{}", m.tag);
    }
}

#[test]
fn unknown_tag_in_a_canonical_group_names_the_tag_the_closest_and_the_way_out() {
    let err = lookup("Loss/critc").unwrap_err();
    assert_eq!(
        err.to_string(),
        "unregistered canonical metric tag 'Loss/critc' (did you mean 'Loss/critic'?); Loss/ \
         holds schema tags only: log a metric of your own under a group of your own (e.g. \
         'charts/critc')"
    );
    let err = lookup("Perf/Completely/Different").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("unregistered canonical metric tag 'Perf/Completely/Different'; Perf/"),
        "{err}"
    );
}

#[test]
fn a_tag_outside_the_canonical_groups_is_a_user_metric() {
    for tag in ["Completely/Different", "charts/sps", "loss", "Metrics/a/b"] {
        assert_eq!(lookup(tag), Ok(TagRef::User(tag)), "{tag}");
    }
    for group in [
        "Train/",
        "Loss/",
        "Policy/",
        "Episode/",
        "Perf/",
        "Terminal/",
        "reward/",
    ] {
        assert!(
            tally_schema::canonical_groups().iter().any(|g| g == group),
            "{group}"
        );
    }
    assert!(!tally_schema::in_canonical_group("Losses/x"));
}

#[test]
fn glob_matching_is_anchored() {
    assert!(legacy::glob_match(
        "perf/learner_*_pct",
        "perf/learner_x_pct"
    ));
    assert!(!legacy::glob_match(
        "perf/learner_*_pct",
        "perf/learner_x_pct2"
    ));
    assert!(legacy::glob_match("distributed/*", "distributed/rank"));
    assert!(!legacy::glob_match("distributed/*", "xdistributed/rank"));
}

#[test]
fn json_document_has_the_documented_shape() {
    let v: serde_json::Value = serde_json::from_str(&render::to_json()).unwrap();
    assert_eq!(v["metric_schema_version"], 1);
    let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys,
        [
            "metric_schema_version",
            "metrics",
            "families",
            "legacy",
            "retired"
        ]
    );
    let first = v["metrics"][0].as_object().unwrap();
    for k in [
        "tag",
        "unit",
        "owner",
        "role",
        "reduction",
        "profiles",
        "label",
        "short_label",
        "persisted",
    ] {
        assert!(first.contains_key(k), "metric object lacks {k}");
    }
    let row = v["legacy"][0].as_object().unwrap();
    for k in ["old", "new", "scale", "note"] {
        assert!(row.contains_key(k), "legacy row lacks {k}");
    }
    let it = v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tag"] == "Perf/iteration_time")
        .unwrap();
    assert_eq!(it["unit"], "s");
    assert_eq!(it["profiles"], serde_json::json!(["sac_family", "appo"]));
}

#[test]
fn docs_metrics_md_is_fresh() {
    // docs/metrics.md is generated from the registry; regenerate with TALLY_BLESS=1.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/metrics.md");
    let want = render::to_markdown();
    if std::env::var_os("TALLY_BLESS").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(have == want, "docs/metrics.md is stale: run `TALLY_BLESS=1 cargo test -p tally-schema` (or `tally schema --markdown > docs/metrics.md`)");
}

#[test]
fn spec_index_and_input_spec_resolve_back_to_the_registry() {
    for (i, m) in METRICS.iter().enumerate() {
        assert_eq!(spec_index(m), Some(i));
        if !matches!(m.input, Input::Metrics | Input::Derived) {
            assert_eq!(input_spec(m.input).map(|s| s.tag), Some(m.tag));
        }
    }
    let copy = METRICS[0];
    assert_eq!(spec_index(&copy), None, "a copy is not the registry's spec");
    assert!(input_spec(Input::Learner("nope")).is_none());
}
