//! Steps of many values (docs/contract/performance.md "Cost grows at most linearly with the
//! step"): past a few dozen named values a repeated key is found by hash instead of a scan, a
//! window slot's first sample opens its entries without searching, the window's snapshot tries
//! each key's position before hashing it, `reduce_ranks` finds keys by hash, a registry key is
//! looked up by its position in last step's map, and the backend payload keeps last step's tags
//! where they are the same. These check
//! that each keeps the rules it replaces: every value persisted, windowed and reduced, every
//! repeat refused naming its key, and nothing carried from one step to the next.

use std::sync::Arc;
use tally::{Backend, Error, Logger, LoggerConfig, MemorySink, RunStatus, StepInput};

#[path = "support/sixty_values.rs"]
#[allow(dead_code)] // the lists only, not the whole record
mod sixty_values;
use sixty_values::{COLLECTOR_PHASES, LEARNER_PHASES, SAC_METRICS};

#[path = "support/memory_logger.rs"]
mod memory_logger;
use memory_logger::memory_logger;

fn logger(dir: &std::path::Path) -> (Logger, MemorySink) {
    let mut c = LoggerConfig::new("sac", "task", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.max_iterations = Some(100);
    c.backend = Backend::None;
    let (log, mem, _) = memory_logger(c, 1.0);
    (log, mem)
}

/// Iteration `i` with `n` user metrics, `charts/m0000` = `base`, each next one `base + k`.
fn many(i: u64, n: usize, base: f64) -> StepInput {
    let mut s = StepInput::new(i).env_steps(100 * i);
    for k in 0..n {
        s = s.metric(format!("charts/m{k:04}"), base + k as f64);
    }
    s
}

fn refusal(log: &mut Logger, input: &StepInput) -> (String, String) {
    match log.step(input) {
        Err(Error::InvalidStep { key, reason, .. }) => (key, reason),
        other => panic!("expected an invalid step, got {other:?}"),
    }
}

#[test]
fn a_thousand_user_metrics_are_each_persisted_and_windowed() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut log, mem) = logger(tmp.path());
    log.step(&many(1, 1000, 0.0)).unwrap();
    // The same keys in reverse order: each is found in the slot whatever its position.
    let mut second = many(2, 1000, 10.0);
    second.metrics.reverse();
    log.step(&second).unwrap();
    // A subset: a key missing from a sample is averaged over the samples that have it.
    log.step(&many(3, 10, 40.0)).unwrap();
    let snap = log.terminal().lock().unwrap().snapshot();
    log.close(RunStatus::Completed).unwrap();
    let steps = mem.steps();
    assert_eq!(steps.len(), 3);
    for (s, n, base) in [(0, 1000, 0.0), (1, 1000, 10.0), (2, 10, 40.0)] {
        for k in [0, 9, n - 1] {
            let tag = format!("charts/m{k:04}");
            let got = steps[s].scalars.iter().find(|(t, _)| t.as_str() == tag);
            assert_eq!(
                got.map(|(_, v)| *v),
                Some(base + k as f64),
                "step {s}, {tag}"
            );
        }
        let user = steps[s]
            .scalars
            .iter()
            .filter(|(t, _)| t.as_str().starts_with("charts/"));
        assert_eq!(user.count(), n, "step {s}");
    }
    assert_eq!(
        snap.window.get("charts/m0000"),
        Some((0.0 + 10.0 + 40.0) / 3.0)
    );
    assert_eq!(
        snap.window.get("charts/m0999"),
        Some((999.0 + 1009.0) / 2.0)
    );
}

#[test]
fn a_repeat_among_many_named_values_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut log, _) = logger(tmp.path());
    // The repeat of the 6th key comes after 40 others: past the scan, on the hash path.
    let (key, reason) = refusal(&mut log, &many(1, 40, 0.0).metric("charts/m0005", 1.0));
    assert_eq!(key, "charts/m0005");
    assert!(reason.contains("duplicate"), "{reason}");
    // A termination cause given twice after many user metrics: refused the same way.
    let cause = "Episode_Termination/time_out";
    let (key, reason) = refusal(
        &mut log,
        &many(1, 40, 0.0).metric(cause, 0.5).metric(cause, 0.5),
    );
    assert_eq!(key, cause);
    assert!(reason.contains("duplicate"), "{reason}");
    // Nothing of a refused or accepted step is carried into the next: the same keys are
    // accepted again, step after step.
    for i in 1..=3 {
        log.step(&many(i, 40, i as f64).metric(cause, 0.5)).unwrap();
    }
    let (key, _) = refusal(&mut log, &many(4, 33, 0.0).metric("charts/m0032", 1.0));
    assert_eq!(key, "charts/m0032");
    log.step(&many(4, 33, 0.0)).unwrap();
    log.close(RunStatus::Completed).unwrap();
}

/// Iteration `i` as a SAC runner logs it: one termination cause (a named value), 17 registry
/// metrics, then `extra` metrics, then the 21 learner and collector phases (registry values).
fn sac(i: u64, extra: &[&'static str]) -> StepInput {
    let mut s = StepInput::new(i)
        .env_steps(100 * i)
        .metric("Episode_Termination/time_out", 0.5);
    for t in SAC_METRICS {
        s = s.metric(t, 1.0);
    }
    for t in extra {
        s = s.metric(*t, 2.0);
    }
    for p in LEARNER_PHASES {
        s = s.learner(p, 0.001);
    }
    for p in COLLECTOR_PHASES {
        s = s.collector(p, 0.001);
    }
    s
}

#[test]
fn a_repeat_after_many_registry_values_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut log, mem) = logger(tmp.path());
    // Few named values among many registry ones: a repeat past the first 32 values is found
    // whether its first occurrence came before them or after.
    let twice = sac(1, &[]).reward("lin_vel", 1.0).reward("lin_vel", 2.0);
    let (key, reason) = refusal(&mut log, &twice);
    assert!(key.ends_with("lin_vel"), "{key}");
    assert!(reason.contains("duplicate"), "{reason}");
    let fourteen: Vec<&'static str> = (0..14)
        .map(|k| &*Box::leak(format!("charts/m{k:04}").into_boxed_str()))
        .collect();
    let mut late = fourteen.clone();
    late.push("Episode_Termination/time_out"); // the 33rd value repeats the 1st
    let (key, reason) = refusal(&mut log, &sac(1, &late));
    assert_eq!(key, "Episode_Termination/time_out");
    assert!(reason.contains("duplicate"), "{reason}");
    // The same named values once each: accepted, step after step.
    for i in 1..=3 {
        log.step(&sac(i, &fourteen).reward("lin_vel", 1.0)).unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
    assert_eq!(mem.steps().len(), 3);
}

#[test]
fn keys_that_change_places_between_steps_keep_their_own_values() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut log, mem) = logger(tmp.path());
    // The same literal keys every step (the positions remember them), in another order, then
    // fewer of them: each value still goes to its own tag, and nothing of an earlier step
    // stays in a later one (in the lookups by position, nor in the payload buffer, which the
    // next step refills).
    let steps = [
        vec![
            ("learning", 0.1),
            ("inference", 0.2),
            ("replay_sample", 0.3),
        ],
        vec![
            ("inference", 0.4),
            ("learning", 0.5),
            ("replay_sample", 0.6),
        ],
        vec![("replay_sample", 0.7)],
    ];
    for (i, phases) in steps.iter().enumerate() {
        let it = i as u64 + 1;
        let mut s = StepInput::new(it)
            .env_steps(100 * it)
            .metric("Loss/critic", it as f64)
            .reward(if it == 2 { "air_time" } else { "lin_vel" }, it as f64);
        for (p, secs) in phases {
            s = s.learner(*p, *secs);
        }
        log.step(&s).unwrap();
        // Written before the next step: its payload buffer comes back to be refilled.
        log.flush().unwrap();
    }
    log.close(RunStatus::Completed).unwrap();
    // A phase's tag, and its unit per second.
    let spec = |phase: &'static str| {
        let m = tally_schema::METRICS
            .iter()
            .find(|m| m.input == tally_schema::Input::Learner(phase))
            .unwrap();
        (m.tag, m.unit.per_second().unwrap())
    };
    let tag = |phase: &'static str| spec(phase).0;
    let written = mem.steps();
    assert_eq!(written.len(), 3);
    for (i, phases) in steps.iter().enumerate() {
        let got: Vec<(&str, f64)> = written[i]
            .scalars
            .iter()
            .map(|(t, v)| (t.as_str(), *v))
            .collect();
        let value = |t: &str| got.iter().find(|(g, _)| *g == t).map(|(_, v)| *v);
        for (p, secs) in phases {
            let (t, per_second) = spec(p);
            let v = value(t).unwrap_or_else(|| panic!("step {i}: {p} missing from {got:?}"));
            assert!((v - secs * per_second).abs() < 1e-9, "step {i}: {p} = {v}");
        }
        let others = ["learning", "inference", "replay_sample"]
            .into_iter()
            .filter(|p| !phases.iter().any(|(q, _)| q == p));
        for p in others {
            assert_eq!(value(tag(p)), None, "step {i}: {p} carried over");
        }
        let it = i as f64 + 1.0;
        assert_eq!(value("Loss/critic"), Some(it));
        let (term, gone) = if i == 1 {
            ("reward/air_time", "reward/lin_vel")
        } else {
            ("reward/lin_vel", "reward/air_time")
        };
        assert_eq!(value(term), Some(it), "step {i}");
        assert_eq!(value(gone), None, "step {i}: {gone} carried over");
    }
}

#[test]
fn ranks_of_many_metrics_reduce_each_key_in_first_seen_order() {
    use tally::reduce::reduce_ranks;
    use tally::user::UserMetrics;
    // Eight ranks of 300 user metrics (mean across ranks); rank 7 adds one key of its own.
    let mut ranks: Vec<StepInput> = (0..8).map(|r| many(5, 300, r as f64)).collect();
    ranks[7] = ranks[7].clone().metric("charts/only_rank_7", 2.0);
    let (out, _) = reduce_ranks(&ranks, &UserMetrics::default()).unwrap();
    assert_eq!(out.metrics.len(), 301);
    for k in [0usize, 150, 299] {
        let (tag, v) = &out.metrics[k];
        assert_eq!(tag.as_ref(), format!("charts/m{k:04}"));
        // The mean of base + k over bases 0..8.
        assert_eq!(*v, 3.5 + k as f64, "{tag}");
    }
    assert_eq!(out.metrics[300].0.as_ref(), "charts/only_rank_7");
    assert_eq!(
        out.metrics[300].1, 2.0,
        "reduced over the ranks that have it"
    );
    // A key given twice by one rank, far down its map: refused naming the rank and the key.
    ranks[3] = ranks[3].clone().metric("charts/m0123", 1.0);
    match reduce_ranks(&ranks, &UserMetrics::default()) {
        Err(Error::Ranks(m)) => assert!(
            m.contains("rank 3: metrics['charts/m0123'] is given twice"),
            "{m}"
        ),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn the_window_finds_each_key_whatever_its_position_in_each_slot() {
    use tally::window::{Sample, TimeWindow};
    use tally::Tag;
    let spec = |t: &str| Tag::Spec(tally::schema::metric(t).unwrap());
    let user = Tag::User(Arc::from("charts/x"));
    let (a, b, c) = (
        spec("Loss/critic"),
        spec("Loss/actor"),
        spec("Loss/entropy"),
    );
    let mut w = TimeWindow::default();
    // Three slots: keys reordered, missing, and new in a later slot.
    for (t, values) in [
        (
            100.0,
            vec![(a.clone(), 1.0), (b.clone(), 10.0), (user.clone(), 5.0)],
        ),
        (100.5, vec![(c.clone(), 7.0), (a.clone(), 3.0)]),
        (
            101.0,
            vec![
                (b.clone(), 20.0),
                (user.clone(), 7.0),
                (a.clone(), 5.0),
                (c.clone(), 9.0),
            ],
        ),
    ] {
        w.push(Sample {
            t,
            iteration: t as u64,
            values,
        });
    }
    let s = w.snapshot();
    assert_eq!(s.n, 3);
    assert_eq!(s.get("Loss/critic"), Some(3.0));
    assert_eq!(s.get("Loss/actor"), Some(15.0));
    assert_eq!(s.get("Loss/entropy"), Some(8.0));
    assert_eq!(s.get("charts/x"), Some(6.0));
    assert_eq!(s.means.len(), 4);
    // A user metric's newest time is its newest sample's.
    assert_eq!(s.user_updated.get(&user), Some(&101.0));
    assert_eq!(s.user_updated.len(), 1);
}
