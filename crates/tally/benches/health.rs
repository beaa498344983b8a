//! Criterion bench of the health evaluator with the default rules on the 60-value SAC step
//! the logger's step bench uses (docs/contract/health.md "Cost"): what evaluating the rules
//! would add to each `Logger::step`.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use tally::health::{Evaluator, RuleSet, TagSlot};
use tally::resolve::{Axis, Resolver};
use tally::Profile;

#[path = "../tests/support/sixty_values.rs"]
mod sixty_values;
mod support;
use sixty_values::record;
use support::thread_cpu;

fn bench(c: &mut Criterion) {
    // The step's tags and values as the logger resolves them.
    let resolved = Resolver::new(Profile::SacFamily, None)
        .resolve(&record(1), Axis::default(), Vec::new())
        .unwrap();
    let mut values: Vec<(String, f64)> = resolved
        .values
        .entries()
        .iter()
        .map(|(t, v)| (t.as_str().to_owned(), *v))
        .collect();
    // The logger derives Steps/s from the step and would feed it too.
    values.push(("Perf/total_fps".to_owned(), 1e6));
    let mut eval = Evaluator::new(RuleSet::defaults());
    let slots: Vec<(TagSlot, f64)> = values.iter().map(|(t, v)| (eval.tag(t), *v)).collect();
    let watched = slots
        .iter()
        .filter(|(s, _)| eval.tag_name(*s).starts_with("Loss/"))
        .count();
    assert!(watched >= 4, "the step's losses are watched");
    let name = format!("health_default_rules_{}_values_thread_cpu", slots.len());
    let mut step = 0i64;
    c.bench_function(&name, |b| {
        b.iter_custom(|n| {
            let t0 = thread_cpu();
            for _ in 0..n {
                step += 4096;
                let wall = step as f64 * 1e-3;
                // Values that move from step to step, so the windows' statistics are refreshed.
                let wobble = 1.0 + ((step >> 12) % 7) as f64 * 0.01;
                eval.step(step, wall);
                for &(slot, v) in &slots {
                    eval.value(slot, step, wall, black_box(v * wobble));
                }
            }
            thread_cpu() - t0
        })
    });
    assert!(eval.findings().is_empty(), "{:?}", eval.findings());

    // The same through the logger's `LiveHealth` (its lock and the tags' slots found by
    // position): what `Logger::step` pays for the rules.
    let live = tally::health::LiveHealth::new(RuleSet::defaults());
    let mut payload: Vec<(tally::Tag, f64)> = resolved
        .values
        .entries()
        .iter()
        .filter(|(t, _)| t.persisted())
        .cloned()
        .collect();
    payload.push((
        tally::Tag::Spec(tally::schema::metric("Perf/total_fps").unwrap()),
        1e6,
    ));
    let base: Vec<f64> = payload.iter().map(|(_, v)| *v).collect();
    let name = format!(
        "health_live_default_rules_{}_values_thread_cpu",
        payload.len()
    );
    let mut step = 0i64;
    c.bench_function(&name, |b| {
        b.iter_custom(|n| {
            let t0 = thread_cpu();
            for _ in 0..n {
                step += 4096;
                let wall = step as f64 * 1e-3;
                let wobble = 1.0 + ((step >> 12) % 7) as f64 * 0.01;
                for ((_, v), b) in payload.iter_mut().zip(&base) {
                    *v = b * wobble;
                }
                live.step(step, wall, black_box(&payload), true);
            }
            thread_cpu() - t0
        })
    });
    assert!(live.is_empty(), "{:?}", live.findings());
}

criterion_group!(benches, bench);
criterion_main!(benches);
