//! Pins the rft key namespace rules: `{category}/...` keys, their parts and units
//! (`docs/contract/rft.md`).

use tally_schema::rft::{validate_rft_key, RFT_CATEGORIES};
use tally_schema::Unit;

#[test]
fn trinity_style_keys_are_valid_and_carry_their_parts() {
    // Keys as Trinity-RFT writes them, one per category and statistic form.
    for key in [
        "rollout/accuracy/mean",
        "rollout/format_score/mean",
        "rollout/total_tokens/sum",
        "rollout/model_version/last",
        "eval/gsm8k-eval/accuracy/mean@4",
        "bench/gsm8k-eval/accuracy/best@4",
        "eval/dummy/accuracy/std@2",
        "eval/dummy/accuracy/mean@2/std",
        "time/eval",
        "time/wait_explore_step",
        "timing_per_token_ms/update_actor",
        "experience_pipeline/experience_count",
        "experience_pipeline/group_advantages/reward_mean/mean",
        "sample/model_version/mean",
        "sample/task_count",
        "actor/pg_loss",
        "global_seqlen/min",
        "response_length/mean",
    ] {
        assert!(
            validate_rft_key(key).is_ok(),
            "{key}: {:?}",
            validate_rft_key(key)
        );
    }
    let k = validate_rft_key("eval/dummy/accuracy/mean@2/std").unwrap();
    assert_eq!(
        (k.category, k.taskset, k.statistic),
        ("eval", Some("dummy"), Some("mean@2"))
    );
    assert_eq!(
        validate_rft_key("time/eval").unwrap().unit,
        Unit::S,
        "time/ metrics are seconds"
    );
    assert_eq!(
        validate_rft_key("timing_per_token_ms/adv").unwrap().unit,
        Unit::Ms
    );
    assert_eq!(RFT_CATEGORIES.len(), 13);
}

#[test]
fn the_step_figures_trinity_adds_without_a_statistic_are_valid() {
    // The explorer's own per-step figures, and the evaluation keys its task-to-step aggregation
    // leaves unsuffixed (docs/contract/rft.md "The rft profile").
    for key in [
        "rollout/finished_task_count",
        "rollout/model_version",
        "eval/gsm8k/finished_task_count",
        "bench/gsm8k/finished_task_count",
        "eval/gsm8k/time/task_execution",
        "eval/gsm8k/time/run_execution",
        "bench/math-500/time/run_execution",
    ] {
        let k = validate_rft_key(key).unwrap_or_else(|e| panic!("{key}: {e}"));
        assert_eq!(k.statistic, None, "{key}");
    }
    assert_eq!(
        validate_rft_key("eval/gsm8k/finished_task_count")
            .unwrap()
            .taskset,
        Some("gsm8k")
    );
    // Only those: another metric still needs its statistic.
    for key in [
        "rollout/finished_tasks",
        "eval/gsm8k/accuracy",
        "eval/gsm8k/time/other_execution",
        "eval/finished_task_count",
    ] {
        assert!(validate_rft_key(key).is_err(), "{key}");
    }
}

#[test]
fn malformed_keys_are_rejected_with_the_rule() {
    let cases = [
        ("rollout/accuracy:sum", "aggregation suffix"),
        ("loss/policy", "unknown category 'loss/'"),
        ("eval/gsm8k/accuracy", "eval/<taskset>/<metric>/<statistic>"),
        ("eval/gsm8k/accuracy/median@4", "not a statistic"),
        ("eval/gsm8k/accuracy/mean@0", "not a statistic"),
        ("rollout/accuracy", "rollout/<metric>/<statistic>"),
        ("rollout//mean", "segment is empty"),
        ("time", "time/<name>"),
        ("time/has space", "printable ASCII"),
        ("", "empty"),
    ];
    for (key, needle) in cases {
        let err = validate_rft_key(key).unwrap_err();
        assert!(err.contains(needle), "{key}: '{err}' lacks '{needle}'");
    }
}
