//! A tally run's learner and collector timelines as shares of their own denominators over the
//! run's steps, for a chart of stacked shares (`docs/contract/board.md` "One run's views"). Each
//! step bucket's phases are averaged, then put through the panel's own timeline rules
//! ([`tally::timeline`]: Other, Iter Wall, the all-or-nothing collector cycle, on-policy's
//! collect + train), so the chart and the panel never disagree.

use crate::downsample::Series;
use crate::error::Error;
use crate::live::LiveRun;
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
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
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
    let tags = timeline_tags(profile);
    let held: Vec<Option<&Series>> = tags.iter().map(|t| series(t)).collect();
    let points = || {
        held.iter()
            .enumerate()
            .filter_map(|(i, s)| Some((i, (*s)?)))
            .flat_map(|(i, s)| (0..s.len()).map(move |k| (i, s.point(k))))
    };
    let range = points()
        .map(|(_, p)| (p.step, p.step))
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
    let Some(range) = range else {
        return Shares::default();
    };
    let mut sums = Sums::new(tags.len(), range, width);
    points().for_each(|(i, p)| sums.add(i, p.step, p.value));
    sums.shares(profile, &tags)
}

/// [`timeline_shares`] of a run as the board holds it: from its series while it holds their
/// points, else from their step ranges and one more read of its files, in memory of `width`
/// buckets (`docs/contract/board.md` "Bounded reads").
pub fn run_timeline_shares(profile: Profile, run: &LiveRun, width: usize) -> Result<Shares, Error> {
    if !run.points_let_go() {
        return Ok(timeline_shares(profile, |t| run.series(t), width));
    }
    let tags = timeline_tags(profile);
    let range = tags
        .iter()
        .filter_map(|t| run.chart(t)?.step_range())
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
    let Some(range) = range else {
        return Ok(Shares::default());
    };
    let mut sums = Sums::new(tags.len(), range, width);
    run.read_again(&tags, |i, p| sums.add(i, p.step, p.value))?;
    Ok(sums.shares(profile, &tags))
}

/// The tags a `profile` run's timelines are drawn from: its learner phases, its collector
/// phases and Iter Wall.
fn timeline_tags(profile: Profile) -> Vec<&'static str> {
    tally::timeline::learner_phases(profile)
        .iter()
        .map(|m| m.tag)
        .chain(
            tally::timeline::collector_specs(profile)
                .iter()
                .map(|(_, m)| m.tag),
        )
        .chain(input_spec(Input::Field("iteration_time")).map(|m| m.tag))
        .collect()
}

/// Per timeline tag and step bucket: the sum and count of its finite values.
struct Sums {
    lo: i64,
    hi: i64,
    width: usize,
    by_tag: Vec<Vec<(f64, u32)>>,
}

impl Sums {
    /// `tags` tags over steps `lo..=hi` in `width` buckets (at least one).
    fn new(tags: usize, (lo, hi): (i64, i64), width: usize) -> Self {
        let width = width.max(1);
        Sums {
            lo,
            hi,
            width,
            by_tag: vec![vec![(0.0, 0); width]; tags],
        }
    }

    fn span(&self) -> f64 {
        (self.hi - self.lo) as f64 + 1.0
    }

    /// The value of tag `tag` at `step`; a step outside the range (a point newer than the
    /// range read) is left out.
    fn add(&mut self, tag: usize, step: i64, value: f64) {
        if !value.is_finite() || step < self.lo || step > self.hi {
            return;
        }
        let b = (((step - self.lo) as f64) / self.span() * self.width as f64) as usize;
        let a = &mut self.by_tag[tag][b.min(self.width - 1)];
        a.0 += value;
        a.1 += 1;
    }

    /// The bands: each filled bucket's means put through the panel's timeline rules.
    fn shares(self, profile: Profile, tags: &[&'static str]) -> Shares {
        let (lo, hi, width, span) = (self.lo, self.hi, self.width, self.span());
        let filled: Vec<usize> = (0..width)
            .filter(|&b| self.by_tag.iter().any(|acc| acc[b].1 > 0))
            .collect();
        let mean = |b: usize, tag: &str| {
            let i = tags.iter().position(|t| *t == tag)?;
            let (sum, n) = self.by_tag[i][b];
            (n > 0).then(|| sum / n as f64)
        };
        let mut shares = Shares::default();
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
    fn a_run_past_the_board_s_budget_has_the_timelines_of_the_run_held_whole() {
        // docs/contract/board.md "Bounded reads": the shares from the files read again equal
        // those from every point held, across a slowdown at step 5 000.
        use tally_tfevents::{encode_scalar_event, RecordWriter};
        let dir = tempfile::tempdir().unwrap();
        let mut w = RecordWriter::new(Vec::new());
        for step in 0..10_000i64 {
            let wait = if step < 5_000 { 2.0 } else { 8.0 };
            let scalars = [
                ("Perf/learner_collector_wait_ms", wait),
                ("Perf/learning_time", 0.001),
                ("Perf/iteration_time", 0.010),
            ];
            let mut buf = Vec::new();
            encode_scalar_event(step, step as f64, &scalars, &mut buf);
            w.write_record(&buf).unwrap();
        }
        std::fs::write(
            dir.path().join("events.out.tfevents.1.host"),
            w.into_inner(),
        )
        .unwrap();
        let whole = LiveRun::open_own(dir.path()).unwrap();
        let mut held = LiveRun::unread_own(dir.path());
        held.hold_points_up_to(1);
        held.refresh().unwrap();
        assert!(held.points_let_go());
        let expected = run_timeline_shares(Profile::SacFamily, &whole, 7).unwrap();
        let wait = band(&expected.learner, "Collector Wait").pct.clone();
        assert!(
            wait[0].unwrap() < 21.0 && wait[6].unwrap() > 79.0,
            "{wait:?}"
        );
        let shares = run_timeline_shares(Profile::SacFamily, &held, 7).unwrap();
        assert_eq!(shares.steps, expected.steps);
        for (a, b) in shares.learner.iter().zip(&expected.learner) {
            assert_eq!(a.label, b.label);
            for (x, y) in a.pct.iter().zip(&b.pct) {
                assert!(
                    (x.unwrap() - y.unwrap()).abs() < 1e-9,
                    "{}: {x:?} {y:?}",
                    a.label
                );
            }
        }
        assert_eq!(shares.learner.len(), expected.learner.len());
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
