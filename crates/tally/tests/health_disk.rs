//! The `disk` rule (docs/contract/health.md "Disk"): little free space on the filesystem of the
//! run directory, checked by a live logger's writer timer; quiet on a disk with room.

use std::time::{Duration, Instant};
use tally::health::{apply_rules_file, Disk, Evaluator, RuleKind, RuleSet};
use tally::{Backend, Logger, LoggerConfig, RunStatus, StepInput};

#[test]
fn the_evaluator_fires_once_per_time_space_runs_low() {
    let mut rules = RuleSet::empty();
    rules.disk = Some(Disk { min_free_mb: 100.0 });
    let mut e = Evaluator::new(rules);
    e.step(7, 1.0);
    assert!(!e.disk(500.0));
    assert!(e.disk(99.5), "below the threshold: fires");
    assert!(!e.disk(50.0), "still low: the same episode");
    e.step(9, 2.0);
    assert!(!e.disk(300.0), "space freed");
    assert!(e.disk(10.0), "low again: counted again");
    let f = e.findings();
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(
        (f[0].rule, f[0].first_step, f[0].last_step, f[0].count),
        (RuleKind::Disk, 7, 9, 2)
    );
    assert_eq!(f[0].last_value, 10.0);
    assert_eq!(
        f[0].message,
        "99 MiB free under the run directory at step 7 (below 100 MiB)"
    );
    // Off: never fires.
    let mut e = Evaluator::new(RuleSet::empty());
    assert!(!e.disk(0.0));
}

#[test]
fn the_rules_file_sets_or_refuses_its_threshold() {
    let mut r = RuleSet::empty();
    apply_rules_file(
        "r.json",
        r#"{"rules": [{"kind": "disk", "min_free_mb": 64}]}"#,
        &mut r,
    )
    .unwrap();
    assert_eq!(r.disk, Some(Disk { min_free_mb: 64.0 }));
    let mut r = RuleSet::defaults();
    apply_rules_file("r.json", r#"{"off": ["disk"]}"#, &mut r).unwrap();
    assert_eq!(r.disk, None);
    for (json, says) in [
        (
            r#"{"rules": [{"kind": "disk", "min_free_mb": 0}]}"#,
            "field \"min_free_mb\": 0 must be above 0",
        ),
        (
            r#"{"rules": [{"kind": "disk", "tag": "x"}]}"#,
            "field \"tag\": not a field of this rule",
        ),
    ] {
        let e = apply_rules_file("r.json", json, &mut RuleSet::empty()).unwrap_err();
        assert!(e.to_string().contains(says), "{e}");
    }
}

fn logger(dir: &std::path::Path, disk: Option<Disk>) -> Logger {
    let mut c = LoggerConfig::new("sac", "disk", "mujoco");
    c.log_dir = Some(dir.join("run"));
    c.backend = Backend::TensorBoard;
    c.health.disk = disk;
    Logger::new(c).unwrap()
}

fn disk_findings(log: &Logger) -> Vec<tally::health::Finding> {
    log.health_findings()
        .into_iter()
        .filter(|f| f.rule == RuleKind::Disk)
        .collect()
}

#[test]
fn a_nearly_full_disk_is_found_by_the_writers_timer() {
    let dir = tempfile::tempdir().unwrap();
    // A threshold above any disk's size: the planted fault.
    let mut log = logger(dir.path(), Some(Disk { min_free_mb: 1e12 }));
    log.step(&StepInput::new(1).metric("Loss/critic", 1.0))
        .unwrap();
    let start = Instant::now();
    while disk_findings(&log).is_empty() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let f = disk_findings(&log);
    assert_eq!(f.len(), 1, "{:?}", log.health_findings());
    assert!(
        f[0].message.contains("MiB free under the run directory"),
        "{f:?}"
    );
    assert!(f[0].tag.is_empty());
    log.close(RunStatus::Completed).unwrap();
    let s: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(log.run_dir().join("run_summary.json")).unwrap(),
    )
    .unwrap();
    assert!(s["health"]
        .as_array()
        .unwrap()
        .iter()
        .any(|h| h["rule"] == "disk"));
}

#[test]
fn a_disk_with_room_stays_quiet() {
    // The default threshold (1 GiB) on the test machine's temporary directory, which has more.
    let dir = tempfile::tempdir().unwrap();
    let mut log = logger(dir.path(), Some(Disk::default()));
    for it in 1..=5 {
        log.step(&StepInput::new(it).metric("Loss/critic", 1.0))
            .unwrap();
    }
    // Two ticks of the writer's timer, at most a second apart.
    std::thread::sleep(Duration::from_millis(2500));
    log.close(RunStatus::Completed).unwrap();
    assert!(
        log.health_findings().is_empty(),
        "{:?}",
        log.health_findings()
    );
}
