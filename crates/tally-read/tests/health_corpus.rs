//! The health corpus (tests/fixtures/health_corpus/, written by `make health-corpus`): every
//! default rule over every real run. A healthy run must get no finding; a planted fault must be
//! found by its rule no later than its bound after the step it was planted at, and nothing may
//! fire before it (docs/contract/health.md "Honesty").

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tally::health::{RuleKind, RuleSet};
use tally_read::health::RunChecker;
use tally_read::{run_event_files, RunScalars};
use tally_tfevents::OnCorruption;

/// A finding as it first appeared: its rule, tag, first step and the step of the value it
/// appeared after (when a live logger would have known).
#[derive(Debug)]
struct Seen {
    rule: RuleKind,
    tag: String,
    first_step: i64,
    at: i64,
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/health_corpus")
}

fn check(dir: &Path, rules: &RuleSet) -> Vec<Seen> {
    let files = run_event_files(dir).unwrap();
    let mut checker = RunChecker::new(rules);
    let mut reader = RunScalars::new(files, OnCorruption::Error);
    let mut seen = Vec::new();
    while let Some(i) = reader.advance().unwrap() {
        if let Some(s) = reader.current() {
            checker.scalar(i, &s);
            for f in &checker.findings()[seen.len()..] {
                seen.push(Seen {
                    rule: f.rule,
                    tag: f.tag.clone(),
                    first_step: f.first_step,
                    at: s.step,
                });
            }
        }
    }
    seen
}

#[derive(Default, Debug)]
struct Tally {
    planted: u32,
    found: u32,
    late: u32,
    missed: u32,
    false_alarms: u32,
}

#[test]
fn default_rules_on_the_corpus() {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(corpus().join("manifest.json")).unwrap())
            .unwrap();
    let rules = RuleSet::defaults();
    let mut table: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut problems = Vec::new();
    let runs = manifest["runs"].as_object().unwrap();
    for (name, run) in runs {
        let seen = check(&corpus().join(name), &rules);
        let faults = run["faults"].as_array().unwrap();
        // Nothing may fire before the first planted fault (on a healthy run: at all).
        let first_fault = faults
            .iter()
            .map(|f| f["step"].as_i64().unwrap())
            .min()
            .unwrap_or(i64::MAX);
        for s in seen.iter().filter(|s| s.at < first_fault) {
            table.entry(s.rule.as_str()).or_default().false_alarms += 1;
            problems.push(format!(
                "{name}: false alarm {} on {:?} from step {} (seen at {})",
                s.rule.as_str(),
                s.tag,
                s.first_step,
                s.at
            ));
        }
        for f in faults {
            let rule = f["rule"].as_str().unwrap();
            let tag = f["tag"].as_str().unwrap();
            let (step, within) = (f["step"].as_i64().unwrap(), f["within"].as_i64().unwrap());
            let t = table.entry(rule).or_default();
            t.planted += 1;
            let hit = seen
                .iter()
                .filter(|s| s.rule.as_str() == rule && (tag.is_empty() || s.tag == tag))
                .find(|s| s.at >= step);
            match hit {
                Some(s) if s.at <= step + within => t.found += 1,
                Some(s) => {
                    t.late += 1;
                    problems.push(format!(
                        "{name}: {rule} planted at {step} found at {} (bound {within} steps)",
                        s.at
                    ));
                }
                None => {
                    t.missed += 1;
                    problems.push(format!("{name}: {rule} planted at {step} missed"));
                }
            }
        }
        let told: Vec<String> = seen
            .iter()
            .map(|s| format!("{}:{}@{}", s.rule.as_str(), s.tag, s.at))
            .collect();
        eprintln!("{name}: {}", told.join(" "));
    }
    eprintln!("rule          planted found late missed false_alarms");
    for (rule, t) in &table {
        eprintln!(
            "{rule:13} {:7} {:5} {:4} {:6} {:12}",
            t.planted, t.found, t.late, t.missed, t.false_alarms
        );
    }
    assert!(runs.len() >= 20, "the corpus has {} runs", runs.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
