//! Pins cross-rank reduction of multi-rank runs (docs/contract/ranks.md).

use tally::{Error, StepInput, SystemInfo, UserMetrics};

/// Rank reduction with no user metric definitions.
fn reduce_ranks(ranks: &[StepInput]) -> Result<(StepInput, tally::Rates), Error> {
    tally::reduce_ranks(ranks, &UserMetrics::default())
}

fn rank(critic: f64, wait: f64, steps: f64, iter_time: f64) -> StepInput {
    StepInput::new(7)
        .env_steps(1000)
        .metric("Loss/critic", critic)
        .metric("Train/replay_ingress_depth", 4.0)
        .learner("collector_wait", wait)
        .iteration_time(iter_time)
        .steps_this_iter(steps)
        .replay_rows_this_iter(steps * 2.0)
        .reward("tracking", critic)
        .system(SystemInfo {
            buffer_size: Some(100),
            batch_size_per_rank: Some(256),
            cuda_mps: None,
        })
}

fn get(map: &[(tally::Key, f64)], k: &str) -> Option<f64> {
    map.iter().find(|(p, _)| p == k).map(|(_, v)| *v)
}

#[test]
fn two_ranks_average_learner_values_and_sum_throughput_and_counters() {
    // Learner metrics and timings are averaged across ranks; Steps/s and Rows/s are each
    // rank's rate summed, so both are the whole job's throughput (docs/contract/ranks.md).
    let (r, rates) =
        reduce_ranks(&[rank(1.0, 0.1, 100.0, 1.0), rank(3.0, 0.3, 100.0, 0.5)]).unwrap();
    assert_eq!(get(&r.metrics, "Loss/critic"), Some(2.0));
    assert_eq!(
        get(&r.metrics, "Train/replay_ingress_depth"),
        Some(8.0),
        "schema says sum"
    );
    assert!((get(&r.learner, "collector_wait").unwrap() - 0.2).abs() < 1e-12);
    assert_eq!(get(&r.rewards, "tracking"), Some(2.0));
    assert_eq!(r.iteration_time, Some(0.75));
    assert_eq!(
        rates.env_steps_per_sec,
        Some(100.0 / 1.0 + 100.0 / 0.5),
        "sum of per-rank rates"
    );
    assert_eq!(rates.rows_per_sec, Some(200.0 + 400.0));
    assert_eq!(r.env_steps, 2000);
    assert_eq!(r.steps_this_iter, Some(200.0));
    assert_eq!(r.system.buffer_size, Some(200));
    assert_eq!(r.system.batch_size_per_rank, Some(256));
}

#[test]
fn four_ranks_with_sparse_keys_reduce_over_the_ranks_that_have_them() {
    let mut ranks: Vec<_> = (0..4).map(|i| rank(i as f64, 0.1, 10.0, 1.0)).collect();
    ranks[2] = ranks[2]
        .clone()
        .metric("Policy/temperature", 0.2)
        .learner("inference_h2d", 0.04);
    ranks[3] = ranks[3].clone().metric("Policy/temperature", 0.4);
    let (r, rates) = reduce_ranks(&ranks).unwrap();
    assert_eq!(get(&r.metrics, "Loss/critic"), Some(1.5));
    assert!(
        (get(&r.metrics, "Policy/temperature").unwrap() - 0.3).abs() < 1e-12,
        "mean of the two ranks that had it"
    );
    assert_eq!(
        get(&r.learner, "inference_h2d"),
        Some(0.04),
        "present on one rank only"
    );
    assert_eq!(get(&r.metrics, "Train/replay_ingress_depth"), Some(16.0));
    assert_eq!(rates.env_steps_per_sec, Some(40.0));
}

#[test]
fn ranks_without_a_measured_wall_add_no_rate() {
    let (_, rates) = reduce_ranks(&[
        rank(1.0, 0.1, 100.0, 1.0),
        StepInput::new(7).steps_this_iter(100.0),
    ])
    .unwrap();
    assert_eq!(rates.env_steps_per_sec, Some(100.0));
    let (_, none) = reduce_ranks(&[StepInput::new(7)]).unwrap();
    assert_eq!(none.env_steps_per_sec, None);
}

#[test]
fn ranks_must_agree_on_the_iteration_and_not_repeat_keys() {
    let err = reduce_ranks(&[StepInput::new(1), StepInput::new(2)]).unwrap_err();
    assert!(matches!(err, Error::Ranks(_)));
    assert!(
        err.to_string().contains("rank 1 submitted iteration 2"),
        "{err}"
    );
    let dup = StepInput::new(1)
        .metric("Loss/critic", 1.0)
        .metric("Loss/critic", 2.0);
    let err = reduce_ranks(&[StepInput::new(1), dup]).unwrap_err();
    assert!(
        err.to_string()
            .contains("rank 1: metrics['Loss/critic'] is given twice"),
        "{err}"
    );
    assert!(reduce_ranks(&[]).is_err());
}

#[test]
fn a_multi_rank_logger_persists_the_summed_total_fps() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = tally::LoggerConfig::new("sac", "t", "m");
    c.log_dir = Some(dir.path().join("run"));
    c.max_iterations = Some(7);
    c.num_gpus = 2;
    c.backend = tally::Backend::None;
    let mem = tally::MemorySink::new();
    let mut log = tally::Logger::with_sinks(
        c,
        vec![Box::new(mem.clone())],
        std::sync::Arc::new(tally::ManualClock::at(0.0)),
    )
    .unwrap();
    log.step_ranks(&[rank(1.0, 0.1, 100.0, 1.0), rank(3.0, 0.3, 100.0, 0.5)])
        .unwrap();
    log.close(tally::RunStatus::Completed).unwrap();
    let s = &mem.steps()[0];
    let v = |t: &str| {
        s.scalars
            .iter()
            .find(|(k, _)| k.as_str() == t)
            .map(|(_, v)| *v)
    };
    assert_eq!(v("Perf/total_fps"), Some(300.0));
    assert_eq!(v("Loss/critic"), Some(2.0));
    assert_eq!(s.step, 2000);
}

#[test]
fn user_metrics_reduce_per_their_definition_and_default_to_the_mean() {
    let mut user = UserMetrics::default();
    let spec = |r| tally::UserMetricSpec {
        reduction: r,
        ..Default::default()
    };
    user.define("charts/sum", spec(tally::Reduction::Sum))
        .unwrap();
    user.define("charts/max*", spec(tally::Reduction::Max))
        .unwrap();
    user.define("charts/min", spec(tally::Reduction::Min))
        .unwrap();
    user.define("charts/last", spec(tally::Reduction::Last))
        .unwrap();
    let rank = |v: f64| {
        [
            "charts/sum",
            "charts/max_q",
            "charts/min",
            "charts/last",
            "charts/mean",
        ]
        .into_iter()
        .fold(StepInput::new(3), |s, t| s.metric(t, v))
    };
    let (r, _) = tally::reduce_ranks(&[rank(1.0), rank(4.0), rank(2.0)], &user).unwrap();
    let get = |t: &str| r.metrics.iter().find(|(k, _)| k == t).map(|(_, v)| *v);
    assert_eq!(get("charts/sum"), Some(7.0));
    assert_eq!(get("charts/max_q"), Some(4.0));
    assert_eq!(get("charts/min"), Some(1.0));
    assert_eq!(get("charts/last"), Some(2.0), "the highest rank's value");
    assert!((get("charts/mean").unwrap() - 7.0 / 3.0).abs() < 1e-12);
}
