//! A tally run's learner and collector timelines as shares of their own denominators over the
//! run's steps, for a chart of stacked shares (`docs/contract/board.md` "One run's views"). Each
//! step bucket's phases are averaged, then put through the panel's own timeline rules
//! ([`tally::timeline`]: Other, Iter Wall, the all-or-nothing collector cycle, on-policy's
//! collect + train), so the chart and the panel never disagree.

use crate::downsample::Series;
use std::collections::HashMap;
use tally::timeline::{phase_label, CollectorTimeline, LearnerTimeline};
use tally_schema::{input_spec, Input, Profile};

/// One band of a stacked chart: a phase's share per bucket (`None` where it has none).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Band {
    /// The panel's row label (on-policy: Collect and Train).
    pub label: &'static str,
    /// The persisted tag; `None` for Other, which is derived.
    pub tag: Option<&'static str>,
    /// Percent of the bucket's denominator, per bucket.
    pub pct: Vec<Option<f64>>,
}

/// A run's timelines over its steps.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Shares {
    /// Each bucket's first and last step.
    pub steps: Vec<[i64; 2]>,
    /// The learner's exclusive phases then Other, as shares of Iter Wall.
    pub learner: Vec<Band>,
    /// The collector's cycle phases (sac_family: of the cycle; on-policy: the rollout, of Iter
    /// Time), where the run has them.
    pub collector: Vec<Band>,
}

/// The timelines of a `profile` run whose series `series(tag)` gives, in at most `width`
/// buckets of equal step span. Empty when the run has none of the profile's phases.
pub fn timeline_shares<'a>(
    profile: Profile,
    series: impl Fn(&str) -> Option<&'a Series>,
    width: usize,
) -> Shares {
    let width = width.max(1);
    let tags: Vec<&'static str> = tally::timeline::learner_phases(profile)
        .iter()
        .map(|m| m.tag)
        .chain(
            tally::timeline::collector_specs(profile)
                .iter()
                .map(|(_, m)| m.tag),
        )
        .chain(input_spec(Input::Field("iteration_time")).map(|m| m.tag))
        .collect();
    let held: Vec<(&'static str, &Series)> = tags
        .iter()
        .filter_map(|t| series(t).filter(|s| !s.is_empty()).map(|s| (*t, s)))
        .collect();
    let empty = Shares {
        steps: Vec::new(),
        learner: Vec::new(),
        collector: Vec::new(),
    };
    let Some((lo, hi)) = held
        .iter()
        .flat_map(|(_, s)| (0..s.len()).map(|i| s.point(i).step))
        .fold(None, |r: Option<(i64, i64)>, x| {
            Some(r.map_or((x, x), |(a, b)| (a.min(x), b.max(x))))
        })
    else {
        return empty;
    };
    let span = (hi - lo) as f64 + 1.0;
    let bucket = |step: i64| ((((step - lo) as f64) / span * width as f64) as usize).min(width - 1);
    // Per tag and bucket: the sum and count of its finite values.
    let mut sums: HashMap<&str, Vec<(f64, u32)>> = HashMap::new();
    for (tag, s) in &held {
        let acc = sums.entry(tag).or_insert_with(|| vec![(0.0, 0); width]);
        for i in 0..s.len() {
            let p = s.point(i);
            if p.value.is_finite() {
                let a = &mut acc[bucket(p.step)];
                a.0 += p.value;
                a.1 += 1;
            }
        }
    }
    let filled: Vec<usize> = (0..width)
        .filter(|&b| sums.values().any(|acc| acc[b].1 > 0))
        .collect();
    let mean = |b: usize, tag: &str| {
        sums.get(tag)
            .map(|acc| acc[b])
            .filter(|a| a.1 > 0)
            .map(|(sum, n)| sum / n as f64)
    };
    let mut shares = empty;
    for &b in &filled {
        let first = lo + (b as f64 * span / width as f64).ceil() as i64;
        let last = (lo + ((b + 1) as f64 * span / width as f64).ceil() as i64 - 1).min(hi);
        shares.steps.push([first, last]);
    }
    let learner: Vec<LearnerTimeline> = filled
        .iter()
        .map(|&b| LearnerTimeline::from_values(profile, |t| mean(b, t)))
        .collect();
    let collector: Vec<CollectorTimeline> = filled
        .iter()
        .map(|&b| CollectorTimeline::from_values(profile, |t| mean(b, t)))
        .collect();
    if let Some(first) = learner.first() {
        for (i, row) in first.rows.iter().enumerate() {
            let pct = learner
                .iter()
                .map(|t| Some(t.rows[i].pct).filter(|_| t.iter_wall_ms > 0.0));
            shares.learner.push(Band {
                label: phase_label(profile, row.spec),
                tag: Some(row.spec.tag),
                pct: pct.collect(),
            });
        }
        if profile != Profile::OnPolicy {
            let pct = learner
                .iter()
                .map(|t| Some(t.other_pct).filter(|_| t.iter_wall_ms > 0.0));
            shares.learner.push(Band {
                label: "Other",
                tag: None,
                pct: pct.collect(),
            });
        }
    }
    if let Some(first) = collector.first() {
        for (i, row) in first.rows.iter().enumerate().filter(|(_, r)| !r.detail) {
            let pct: Vec<Option<f64>> = collector.iter().map(|t| t.rows[i].pct).collect();
            if pct.iter().any(Option::is_some) {
                shares.collector.push(Band {
                    label: phase_label(profile, row.spec),
                    tag: Some(row.spec.tag),
                    pct,
                });
            }
        }
    }
    shares
        .learner
        .retain(|band| band.pct.iter().any(|p| p.is_some_and(|p| p > 0.0)));
    shares
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(values: impl Iterator<Item = (i64, f64)>) -> Series {
        let mut s = Series::new();
        for (step, v) in values {
            s.push(step, step as f64, v);
        }
        s
    }

    fn band<'a>(bands: &'a [Band], label: &str) -> &'a Band {
        bands
            .iter()
            .find(|b| b.label == label)
            .unwrap_or_else(|| panic!("no band {label}"))
    }

    #[test]
    fn off_policy_learner_shares_follow_iter_wall_with_other_and_change_where_the_run_did() {
        // Steps 0..100: collector wait 2 ms of a 10 ms iteration; 100..200: 8 ms of it.
        let wait = series((0..200).map(|s| (s, if s < 100 { 2.0 } else { 8.0 })));
        let learning = series((0..200).map(|s| (s, 0.001)));
        let wall = series((0..200).map(|s| (s, 0.010)));
        let shares = timeline_shares(
            Profile::SacFamily,
            |tag| match tag {
                "Perf/learner_collector_wait_ms" => Some(&wait),
                "Perf/learning_time" => Some(&learning),
                "Perf/iteration_time" => Some(&wall),
                _ => None,
            },
            2,
        );
        assert_eq!(shares.steps, [[0, 99], [100, 199]]);
        let approx = |b: &Band| {
            b.pct
                .iter()
                .map(|p| (p.unwrap() * 1e6).round() / 1e6)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            approx(band(&shares.learner, "Collector Wait")),
            [20.0, 80.0]
        );
        assert_eq!(approx(band(&shares.learner, "Learning")), [10.0, 10.0]);
        assert_eq!(approx(band(&shares.learner, "Other")), [70.0, 10.0]);
        // Phases the run never reported are not drawn; the collector reported nothing.
        assert!(shares.learner.iter().all(|b| b.label != "Inference"));
        assert!(shares.collector.is_empty());
    }

    #[test]
    fn on_policy_shares_are_collect_and_train_of_their_sum() {
        let collect = series((0..10).map(|s| (s, 0.3)));
        let train = series((0..10).map(|s| (s, 0.1)));
        let shares = timeline_shares(
            Profile::OnPolicy,
            |tag| match tag {
                "Perf/collection_time" => Some(&collect),
                "Perf/learning_time" => Some(&train),
                _ => None,
            },
            100,
        );
        assert_eq!(shares.steps.len(), 10);
        let first = |bands: &[Band], label: &str| band(bands, label).pct[0].unwrap();
        assert!((first(&shares.learner, "Train") - 25.0).abs() < 1e-9);
        assert!((first(&shares.collector, "Collect") - 75.0).abs() < 1e-9);
        assert!(shares.learner.iter().all(|b| b.label != "Other"));
    }

    #[test]
    fn a_run_without_timelines_has_no_bands() {
        let loss = series((0..10).map(|s| (s, 1.0)));
        let shares = timeline_shares(Profile::SacFamily, |t| (t == "loss").then_some(&loss), 10);
        assert!(
            shares.steps.is_empty() && shares.learner.is_empty() && shares.collector.is_empty()
        );
    }
}
