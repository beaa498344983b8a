//! Which iterations a run lost, as `close` names them (docs/contract/run-artifacts.md
//! "Storage faults" (Close says what was lost)).

use tally::lost::{LostSteps, LOST_RUNS_NAMED};

#[test]
fn steps_lost_with_nothing_persisted_between_read_as_one_run() {
    let mut l = LostSteps::default();
    // Persisted counts 5, then 6: a step reached the file between 3 and 7.
    l.add(3, 5);
    l.add(7, 6);
    l.add(8, 6);
    l.add(9, 6);
    assert_eq!(l.total(), 4);
    assert_eq!(l.first(), Some(3));
    assert_eq!(l.describe(), "iterations 3, 7–9");
}

#[test]
fn a_backlog_lost_at_close_before_the_steps_lost_past_its_cap_reads_in_order() {
    let mut l = LostSteps::default();
    // Past the cap first (iterations 11–20), then the backlog (2–10) at close.
    for i in 11..=20 {
        l.add(i, 1);
    }
    l.add_run(2, 10, 9, 1);
    assert_eq!(l.total(), 19);
    assert_eq!(l.first(), Some(2));
    assert_eq!(l.describe(), "iterations 2–20");
}

#[test]
fn past_the_runs_named_the_rest_is_counted() {
    let mut l = LostSteps::default();
    let runs = LOST_RUNS_NAMED as u64 + 3;
    for k in 0..runs {
        // Every other iteration lost, one persisted between: each loss its own run.
        l.add(2 * k + 1, k);
    }
    assert_eq!(l.total(), runs);
    let text = l.describe();
    assert!(text.ends_with(" and 3 more"), "{text}");
    assert!(text.starts_with("iterations 1, 3, 5"), "{text}");
}
