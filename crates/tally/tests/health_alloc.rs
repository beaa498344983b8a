//! The health evaluator allocates nothing per value once its tags are registered, windows
//! refreshed included (docs/contract/health.md "Cost"). Alone in its test binary so no other
//! test allocates while the count runs.

use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use tally::health::{Evaluator, RuleSet};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn a_value_allocates_nothing_until_a_rule_fires() {
    let mut eval = Evaluator::new(RuleSet::defaults());
    let tags = [
        "Loss/critic",
        "Loss/entropy",
        "Train/mean_reward",
        "Perf/total_fps",
        "Perf/learning_time",
    ];
    let slots: Vec<_> = tags.iter().map(|t| eval.tag(t)).collect();
    let feed = |eval: &mut Evaluator, from: i64, to: i64| {
        for i in from..to {
            let wobble = 1.0 + (i % 7) as f64 * 0.01;
            eval.step(i, i as f64);
            for &s in &slots {
                eval.value(s, i, i as f64, wobble);
            }
        }
    };
    // Past every window's minimum history, so later values refresh statistics.
    feed(&mut eval, 0, 300);
    // The count is process-wide, and the test harness's own thread can allocate when a loaded
    // machine wakes it: the fewest of three passes is the evaluator's (an allocation of its own
    // would show in every pass).
    let fewest = (0..3)
        .map(|pass| {
            let region = Region::new(GLOBAL);
            feed(&mut eval, 300 + pass * 1000, 1300 + pass * 1000);
            region.change().allocations
        })
        .min();
    assert_eq!(fewest, Some(0));
    assert!(eval.findings().is_empty(), "{:?}", eval.findings());
    // The first firing makes its finding: that is the one allocation allowed.
    let region = Region::new(GLOBAL);
    eval.value(slots[4], 3300, 3300.0, f64::NAN);
    assert!(region.change().allocations > 0);
    assert_eq!(eval.findings().len(), 1);
    // Its next firings update it in place (the fewest of three, as above).
    let fewest = (1..=3)
        .map(|k| {
            let region = Region::new(GLOBAL);
            eval.value(slots[4], 3300 + k, (3300 + k) as f64, f64::NAN);
            region.change().allocations
        })
        .min();
    assert_eq!(fewest, Some(0));
    assert_eq!(eval.findings()[0].count, 4);
}
