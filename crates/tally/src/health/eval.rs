//! The health evaluator: each tag's rules fed one value at a time, and the run's steps for
//! `stall` (`docs/contract/health.md`; its cost: "Cost").
//!
//! A tag is registered once ([`Evaluator::tag`], which looks its rules up); each value then
//! runs that tag's checks in O(1) amortised and allocates nothing, except when a rule first
//! fires on the tag (the finding is created then, and updated in place afterwards).

use super::finding::{num, Finding, RuleKind};
use super::rules::{Ranks, RuleSet};
use super::sink_lag::LagMarks;
use super::window::RobustWindow;
use check::{evaluate, Check, Span};
use findings::{Findings, NONE};
use run_state::{OverheadState, RanksState, SinkState, StallState};
use tally_schema::health::{health_class, HealthClass};

mod check;
mod findings;
mod run_state;

/// A registered tag: what [`Evaluator::value`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TagSlot(u32);

/// Evaluates a [`RuleSet`] over a run's values, one at a time.
#[derive(Debug)]
pub struct Evaluator {
    rules: RuleSet,
    spans: Vec<Span>,
    names: Vec<Box<str>>,
    checks: Vec<Check>,
    stall: Option<StallState>,
    /// The `disk` rule's state: its finding, and whether space is low now.
    disk: (u32, bool),
    /// The newest step seen (where a `disk` finding is placed).
    last_step: i64,
    /// The `ranks` rule's state: its two findings (rank-local non-finite, straggler), the
    /// straggling rank, since which step and for how many steps.
    ranks: RanksState,
    overhead: Option<OverheadState>,
    /// The `sink` rule's state, one per remote sink (a few: a linear search).
    sinks: Vec<SinkState>,
    /// Whether a loss has had a value yet (`throughput` ignores the pace before it).
    trained: bool,
    findings: Findings,
}

impl Evaluator {
    /// An evaluator of `rules`, no tag registered yet.
    pub fn new(rules: RuleSet) -> Self {
        let overhead = rules.overhead;
        let stall = rules.stall.map(|p| StallState {
            p,
            gaps: RobustWindow::new(p.window, p.min_history, p.refresh, false),
            last: None,
            overdue_at: None,
            finding: NONE,
        });
        Evaluator {
            rules,
            spans: Vec::new(),
            names: Vec::new(),
            checks: Vec::new(),
            stall,
            disk: (NONE, false),
            last_step: 0,
            ranks: RanksState::default(),
            overhead: overhead.map(|p| OverheadState {
                p,
                first: 0,
                steps: 0,
                elapsed: 0.0,
                inside: 0.0,
                over: None,
                finding: NONE,
            }),
            sinks: Vec::new(),
            trained: false,
            findings: Findings::default(),
        }
    }

    /// The rules evaluated.
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    /// Registers `tag` (once per tag: each call makes a new slot with fresh state) and looks
    /// up the rules that watch it.
    pub fn tag(&mut self, tag: &str) -> TagSlot {
        let start = self.checks.len() as u32;
        let new: Vec<Check> = self.rules.rules_for(tag).map(Check::new).collect();
        let plain = matches!(new[..], [Check::Nonfinite { .. }]);
        self.checks.extend(new);
        let slot = TagSlot(self.spans.len() as u32);
        self.spans.push(Span {
            start,
            end: self.checks.len() as u32,
            plain,
            loss: health_class(tag) == Some(HealthClass::Loss),
        });
        self.names.push(tag.into());
        slot
    }

    /// Whether `slot`'s only check is `nonfinite`: a finite value of it has nothing to do.
    pub fn is_plain(&self, slot: TagSlot) -> bool {
        self.spans[slot.0 as usize].plain
    }

    /// The name `slot` was registered with.
    pub fn tag_name(&self, slot: TagSlot) -> &str {
        &self.names[slot.0 as usize]
    }

    /// Feeds one value of a registered tag, in step order.
    #[inline]
    pub fn value(&mut self, slot: TagSlot, step: i64, wall_time: f64, v: f64) {
        let span = self.spans[slot.0 as usize];
        if span.loss && !self.trained {
            self.training_began();
        }
        if span.plain && v.is_finite() {
            return;
        }
        let tag = &*self.names[slot.0 as usize];
        let findings = &mut self.findings;
        for check in &mut self.checks[span.start as usize..span.end as usize] {
            evaluate(check, findings, tag, step, wall_time, v);
        }
    }

    /// A loss's first value: the run trains from here. The pace before it was a warm-up (an
    /// off-policy run's random steps before `learning_starts`), not the run's pace.
    #[cold]
    fn training_began(&mut self) {
        self.trained = true;
        for c in &mut self.checks {
            c.restart_pace();
        }
    }

    /// Tells the evaluator a step's first value arrived at `wall_time` (for `stall`); the same
    /// step again is ignored.
    #[inline]
    pub fn step(&mut self, step: i64, wall_time: f64) {
        self.last_step = step;
        let Some(s) = self.stall.as_mut() else {
            return;
        };
        match s.last {
            Some((last, _)) if last == step => return,
            Some((last, at)) => {
                let gap = wall_time - at;
                if let Some((threshold, median)) = s.threshold() {
                    if gap > threshold {
                        // A pause the timer already reported ([`Evaluator::overdue`]) is the
                        // same pause: its length is updated, its count is not.
                        let count = u64::from(s.overdue_at != Some(last));
                        self.findings.fire(
                            &mut s.finding,
                            RuleKind::Stall,
                            "",
                            last,
                            last,
                            gap,
                            count,
                            || {
                                format!(
                                    "no new step for {} s after step {last} (median gap {} s)",
                                    num(gap),
                                    num(median)
                                )
                            },
                        );
                    }
                }
                s.gaps.push(gap.max(0.0));
            }
            None => {}
        }
        s.last = Some((step, wall_time));
    }

    /// A new segment of the run begins (a resumed run's next file): the pause before it is not
    /// a stall.
    pub fn new_segment(&mut self) {
        if let Some(s) = self.stall.as_mut() {
            s.last = None;
        }
    }

    /// The free space of the run directory's filesystem, MiB (a live logger's writer timer):
    /// the `disk` rule fires when it falls below `min_free_mb`, once per time it falls there
    /// (space freed and used up again counts again). True when it fired now.
    pub fn disk(&mut self, free_mb: f64) -> bool {
        let Some(d) = self.rules.disk else {
            return false;
        };
        let low = free_mb < d.min_free_mb;
        let (mut slot, was_low) = self.disk;
        let fired = low && !was_low;
        if low {
            let step = self.last_step;
            self.findings.fire(
                &mut slot,
                RuleKind::Disk,
                "",
                step,
                step,
                free_mb,
                u64::from(fired),
                || {
                    format!(
                        "{} MiB free under the run directory at step {step} (below {} MiB)",
                        num(free_mb.floor()),
                        num(d.min_free_mb)
                    )
                },
            );
        }
        self.disk = (slot, low);
        fired
    }

    /// The time between the calls of the steps before `step` and the time spent inside them
    /// (a live logger's own measure): the `overhead` rule sums them over blocks of `window`
    /// steps and fires once the inside share has stayed above `budget` for `for_seconds`, from
    /// the first step of the stretch; one count per stretch (docs/contract/health.md
    /// "Overhead").
    pub fn overhead(&mut self, step: i64, elapsed_s: f64, inside_s: f64) {
        let Some(o) = self.overhead.as_mut() else {
            return;
        };
        if o.steps == 0 {
            o.first = step;
        }
        o.steps += 1;
        o.elapsed += elapsed_s;
        o.inside += inside_s;
        if o.steps < o.p.window {
            return;
        }
        let (first, elapsed, inside) = (o.first, o.elapsed, o.inside);
        (o.steps, o.elapsed, o.inside) = (0, 0.0, 0.0);
        let share = inside / elapsed;
        let over = share > o.p.budget;
        if !over {
            o.over = None;
            return;
        }
        let (since, before, fired) = o.over.unwrap_or((first, 0.0, false));
        let lasted = before + elapsed;
        o.over = Some((since, lasted, fired || lasted >= o.p.for_seconds));
        if lasted < o.p.for_seconds {
            return;
        }
        let (budget, n) = (o.p.budget, o.p.window);
        self.findings.fire(
            &mut o.finding,
            RuleKind::Overhead,
            "",
            since,
            step,
            share,
            u64::from(!fired),
            || {
                format!(
                    "tally took {} % of the iteration on the step's thread from step {since} \
                     (budget {} %; {} µs of {} ms per step over the last {n} steps)",
                    num(100.0 * share),
                    num(100.0 * budget),
                    num(1e6 * inside / f64::from(n)),
                    num(1e3 * elapsed / f64::from(n)),
                )
            },
        );
    }

    /// One step's per-rank facts before reduction (a logger given every rank's step): each
    /// rank's count of non-finite values, and its iteration time (NaN: not measured).
    /// O(ranks), no allocation until a finding is made (docs/contract/health.md "Ranks").
    pub fn ranks(&mut self, step: i64, nonfinite: &[u32], iter_time: &[f64]) {
        let Some(p) = self.rules.ranks else {
            return;
        };
        self.rank_nonfinite(step, nonfinite);
        self.straggler(step, p, iter_time);
    }

    /// Some ranks' values non-finite while another rank's are all finite: the fault is
    /// local to those ranks (all of them non-finite is the reduced value's `nonfinite`).
    fn rank_nonfinite(&mut self, step: i64, nonfinite: &[u32]) {
        let bad = nonfinite.iter().filter(|n| **n > 0).count();
        if bad == 0 || bad == nonfinite.len() {
            return;
        }
        let first = nonfinite.iter().position(|n| *n > 0).unwrap_or(0);
        let n = nonfinite[first];
        let ranks = nonfinite.len();
        self.findings.fire(
            &mut self.ranks.nonfinite,
            RuleKind::Ranks,
            "",
            step,
            step,
            f64::from(n),
            1,
            || {
                format!(
                    "rank {first}: {n} non-finite value(s) at step {step} while {} of {ranks} \
                     ranks' were finite",
                    ranks - bad
                )
            },
        );
    }

    /// The slowest rank's iteration time against the other ranks' mean.
    fn straggler(&mut self, step: i64, p: Ranks, iter_time: &[f64]) {
        let (mut sum, mut n, mut slow, mut max) = (0.0, 0u32, 0, f64::NEG_INFINITY);
        for (r, t) in iter_time.iter().enumerate() {
            if t.is_finite() {
                sum += t;
                n += 1;
                if *t > max {
                    (slow, max) = (r, *t);
                }
            }
        }
        let others = if n >= 2 {
            (sum - max) / f64::from(n - 1)
        } else {
            f64::NAN
        };
        let straggles = max > p.ratio * others && max - others >= p.min_excess_s;
        let st = &mut self.ranks;
        st.slow = match st.slow {
            _ if !straggles => None,
            Some((r, since, k)) if r == slow => Some((r, since, k + 1)),
            _ => Some((slow, step, 1)),
        };
        let Some((r, since, k)) = st.slow else {
            return;
        };
        if k < p.for_steps {
            return;
        }
        // Counted once per stretch, at the step it reaches `for_steps`; updated after.
        let count = u64::from(k == p.for_steps);
        self.findings.fire(
            &mut self.ranks.straggler,
            RuleKind::Ranks,
            "",
            since,
            step,
            max,
            count,
            || {
                format!(
                    "rank {r} straggles from step {since}: iteration time {} s against the \
                     other ranks' mean {} s ({}x)",
                    num(max),
                    num(others),
                    num(max / others)
                )
            },
        );
    }

    /// Remote sink `name` at wall time `now` (a live logger's writer timer): `complete` rows of
    /// the logger's event file are complete, `acked` of them acknowledged by the sink. The
    /// `sink` rule fires when the oldest waiting row has waited more than `max_lag_s`, once
    /// per stretch behind: it ends when the sink catches up (the oldest waiting row younger
    /// than a quarter of `max_lag_s`), and falling behind again counts again on the same
    /// finding (docs/contract/health.md "Sink"). True when it fired now.
    pub fn sink(&mut self, name: &str, now: f64, complete: u64, acked: u64) -> bool {
        let Some(p) = self.rules.sink else {
            return false;
        };
        let i = match self.sinks.iter().position(|s| &*s.name == name) {
            Some(i) => i,
            None => {
                self.sinks.push(SinkState {
                    name: name.into(),
                    marks: LagMarks::default(),
                    behind: false,
                    finding: NONE,
                });
                self.sinks.len() - 1
            }
        };
        let s = &mut self.sinks[i];
        let lag = s.marks.observe(now, complete, acked, p.max_lag_s);
        let fired = !s.behind && lag.secs > p.max_lag_s;
        // Caught up only well below the threshold: a sink hovering near it is one stretch.
        s.behind = fired || (s.behind && lag.secs > p.max_lag_s / 4.0);
        if s.behind {
            let step = self.last_step;
            self.findings.fire(
                &mut s.finding,
                RuleKind::Sink,
                name,
                step,
                step,
                lag.secs,
                u64::from(fired),
                || {
                    format!(
                        "{name}: {} rows of the event file not acknowledged at step {step}, the \
                         oldest waiting {} s (limit {} s)",
                        lag.rows,
                        num(lag.secs.floor()),
                        num(p.max_lag_s)
                    )
                },
            );
        }
        fired
    }

    /// For a run still being written: whether it has had no new step for too long at wall
    /// time `now`. Records a `stall` finding (once per last step) and returns the pause.
    pub fn overdue(&mut self, now: f64) -> Option<f64> {
        let s = self.stall.as_mut()?;
        let (last, at) = s.last?;
        let (threshold, median) = s.threshold()?;
        let gap = now - at;
        if gap <= threshold || s.overdue_at == Some(last) {
            return None;
        }
        s.overdue_at = Some(last);
        self.findings.fire(
            &mut s.finding,
            RuleKind::Stall,
            "",
            last,
            last,
            gap,
            1,
            || {
                format!(
                    "no new step for {} s since step {last} (median gap {} s)",
                    num(gap),
                    num(median)
                )
            },
        );
        Some(gap)
    }

    /// Every finding so far, in the order they first fired.
    pub fn findings(&self) -> &[Finding] {
        &self.findings.0
    }

    /// The findings, taken.
    pub fn into_findings(self) -> Vec<Finding> {
        self.findings.0
    }
}
