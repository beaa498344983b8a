//! One tag's checks: each rule that watches a value, its state, and the one pass over a
//! value (docs/contract/health.md, a section per rule).

use super::findings::{Findings, NONE};
use crate::health::finding::{num, RuleKind};
use crate::health::rules::{Collapse, Divergence, FlatFor, Rule, Throughput};
use crate::health::window::RobustWindow;

/// MAD × this is the standard deviation of a normal distribution.
pub(super) const MAD_TO_SIGMA: f64 = 1.4826;

/// A throughput interval below this share of the median pace, lasting `for_seconds` or more,
/// is a pause (docs/contract/health.md "Throughput").
const PAUSE: f64 = 0.1;

#[derive(Debug)]
pub(super) enum Check {
    Nonfinite {
        finding: u32,
    },
    Divergence {
        p: Divergence,
        window: RobustWindow,
        /// Values out of range in a row, and the step of the first.
        run: u32,
        since: i64,
        finding: u32,
    },
    Collapse {
        p: Collapse,
        /// The early values' sum and count, until `early_values` came.
        early: (f64, u32),
        run: u32,
        since: i64,
        finding: u32,
    },
    FlatFor {
        p: FlatFor,
        last: f64,
        last_step: i64,
        best: f64,
        run: u32,
        since: i64,
        finding: u32,
    },
    Above {
        value: f64,
        finding: u32,
    },
    Below {
        value: f64,
        finding: u32,
    },
    Throughput {
        p: Throughput,
        /// The rates (steps per wall second) between consecutive values.
        window: RobustWindow,
        /// The previous value's step and wall time.
        prev: Option<(i64, f64)>,
        /// The slow stretch while there is one.
        slow: Option<Slow>,
        finding: u32,
    },
}

/// A stretch of slow rates: the step its first slow interval ended at, the step and wall time
/// that interval began at, its slow intervals, the fast ones in a row just now, and whether it
/// fired.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slow {
    from: i64,
    step: i64,
    wall: f64,
    slow: u32,
    fast: u32,
    fired: bool,
}

impl Check {
    /// Forgets a throughput check's pace: what came before training began is a warm-up
    /// (docs/contract/health.md "Throughput").
    pub(super) fn restart_pace(&mut self) {
        if let Check::Throughput {
            window, prev, slow, ..
        } = self
        {
            window.clear();
            *prev = None;
            *slow = None;
        }
    }

    pub(super) fn new(rule: &Rule) -> Check {
        match *rule {
            Rule::Nonfinite => Check::Nonfinite { finding: NONE },
            Rule::Divergence(p) => Check::Divergence {
                p,
                window: RobustWindow::new(p.window, p.min_history, p.refresh, true),
                run: 0,
                since: 0,
                finding: NONE,
            },
            Rule::Collapse(p) => Check::Collapse {
                p,
                early: (0.0, 0),
                run: 0,
                since: 0,
                finding: NONE,
            },
            Rule::FlatFor(p) => Check::FlatFor {
                p,
                last: f64::NAN,
                last_step: i64::MIN,
                best: f64::NEG_INFINITY,
                run: 0,
                since: 0,
                finding: NONE,
            },
            Rule::Above { value } => Check::Above {
                value,
                finding: NONE,
            },
            Rule::Below { value } => Check::Below {
                value,
                finding: NONE,
            },
            Rule::Throughput(p) => Check::Throughput {
                p,
                window: RobustWindow::new(p.window, p.min_history, p.refresh, false),
                prev: None,
                slow: None,
                finding: NONE,
            },
        }
    }
}

/// Where a tag's checks are, kept small so a step's tags sit in a few cache lines.
#[derive(Debug, Clone, Copy)]
pub(super) struct Span {
    pub(super) start: u32,
    pub(super) end: u32,
    /// The tag's only check is `nonfinite`: a finite value has nothing more to do.
    pub(super) plain: bool,
    /// The tag is a loss: its first value says training began.
    pub(super) loss: bool,
}

/// One check on one value.
#[inline]
pub(super) fn evaluate(
    check: &mut Check,
    f: &mut Findings,
    tag: &str,
    step: i64,
    wall: f64,
    v: f64,
) {
    match check {
        Check::Nonfinite { finding } => {
            if !v.is_finite() {
                f.fire(finding, RuleKind::Nonfinite, tag, step, step, v, 1, || {
                    format!("{v} at step {step}")
                });
            }
        }
        Check::Divergence {
            p,
            window,
            run,
            since,
            finding,
        } => {
            if !v.is_finite() {
                return;
            }
            if let Some((median, mad)) = window.stats() {
                let scale = (MAD_TO_SIGMA * mad)
                    .max(p.rel_floor * median.abs())
                    .max(f64::MIN_POSITIVE);
                let z = (v - median) / scale;
                if z.abs() > p.z {
                    if *run == 0 {
                        *since = step;
                    }
                    *run = run.saturating_add(1);
                } else {
                    *run = 0;
                }
                // One batch's loss out of range is a spike (A2C's value loss at an episode's
                // end); a loss that stays out for `for_values` values has diverged.
                if *run >= p.for_values {
                    let count = if *run == p.for_values {
                        u64::from(p.for_values)
                    } else {
                        1
                    };
                    let from = *since;
                    f.fire(
                        finding,
                        RuleKind::Divergence,
                        tag,
                        from,
                        step,
                        v,
                        count,
                        || {
                            format!(
                                "{} at step {step} out of its recent range since step {from} \
                             (median {}, z = {})",
                                num(v),
                                num(median),
                                num(z)
                            )
                        },
                    );
                }
            }
            window.push(v);
        }
        Check::Collapse {
            p,
            early,
            run,
            since,
            finding,
        } => {
            if !v.is_finite() {
                return;
            }
            let (sum, n) = early;
            if *n < p.early_values {
                *sum += v;
                *n += 1;
                return;
            }
            let level = *sum / f64::from(*n);
            // A metric that starts at 0 (a clip fraction at its defaults) has nothing to lose.
            if level.abs() <= p.eps {
                return;
            }
            // Toward zero from the early level's side, or past it (a Gaussian's entropy).
            if level.signum() * v > p.fraction * level.abs() {
                *run = 0;
                return;
            }
            if *run == 0 {
                *since = step;
            }
            *run = run.saturating_add(1);
            if *run >= p.for_values {
                let count = if *run == p.for_values {
                    u64::from(p.for_values)
                } else {
                    1
                };
                let (n, from, fraction) = (p.for_values, *since, p.fraction);
                f.fire(
                    finding,
                    RuleKind::Collapse,
                    tag,
                    from,
                    step,
                    v,
                    count,
                    || {
                        format!(
                            "at or below {} % of its early level {} for {n} values from step {from}",
                            num(100.0 * fraction),
                            num(level)
                        )
                    },
                );
            }
        }
        Check::FlatFor {
            p,
            last,
            last_step,
            best,
            run,
            since,
            finding,
        } => {
            if !v.is_finite() {
                return;
            }
            if v == *last {
                if step > *last_step {
                    *run = run.saturating_add(1);
                    *last_step = step;
                }
            } else {
                *last = v;
                *last_step = step;
                *run = 1;
                *since = step;
            }
            *best = best.max(v);
            // Holding at a whole-number best is a solved task (every episode the same capped
            // return, CartPole's 500), not a frozen one; a stale mean is rarely whole.
            let solved = v >= *best && v.fract() == 0.0;
            if *run >= p.for_values && !solved {
                let count = if *run == p.for_values {
                    u64::from(p.for_values)
                } else {
                    1
                };
                let (n, from) = (p.for_values, *since);
                f.fire(
                    finding,
                    RuleKind::FlatFor,
                    tag,
                    from,
                    step,
                    v,
                    count,
                    || {
                        format!(
                            "unchanged at {} for {n} values from step {from} (its best {})",
                            num(v),
                            num(*best)
                        )
                    },
                );
            }
        }
        Check::Above { value, finding } => {
            if v > *value {
                let t = *value;
                f.fire(finding, RuleKind::Above, tag, step, step, v, 1, || {
                    format!("{} at step {step} is above {}", num(v), num(t))
                });
            }
        }
        Check::Below { value, finding } => {
            if v < *value {
                let t = *value;
                f.fire(finding, RuleKind::Below, tag, step, step, v, 1, || {
                    format!("{} at step {step} is below {}", num(v), num(t))
                });
            }
        }
        Check::Throughput {
            p,
            window,
            prev,
            slow,
            finding,
        } => {
            if !v.is_finite() {
                return;
            }
            // The pace is the step's advance over wall time, not the value: an average since
            // the start (SB3's time/fps, CleanRL's charts/SPS) hides a slowdown for long.
            let Some((step0, wall0)) = *prev else {
                *prev = Some((step, wall));
                return;
            };
            if step <= step0 || wall <= wall0 {
                return;
            }
            *prev = Some((step, wall));
            let rate = (step - step0) as f64 / (wall - wall0);
            if let Some((median, _)) = window.stats() {
                // One interval of `for_seconds` or more at under a tenth of the pace is a pause
                // (the stall rule's), not a slower run: it ends a stretch and is not the pace.
                if rate < PAUSE * median && wall - wall0 >= p.for_seconds {
                    *slow = None;
                    return;
                }
                let limit = p.fraction * median;
                let st = slow.get_or_insert(Slow {
                    from: step,
                    step: step0,
                    wall: wall0,
                    slow: 0,
                    fast: 0,
                    fired: false,
                });
                if rate < limit {
                    st.slow += 1;
                    st.fast = 0;
                } else {
                    st.fast += 1;
                }
                // Two fast intervals in a row end a stretch (one is noise); a stretch that
                // never had a slow interval is none.
                if st.slow == 0 || st.fast >= 2 {
                    *slow = None;
                } else {
                    let secs = wall - st.wall;
                    let pace = (step - st.step) as f64 / secs;
                    if secs >= p.for_seconds && st.slow >= 3 && pace < limit {
                        let count = if st.fired { 1 } else { u64::from(st.slow) };
                        st.fired = true;
                        let (from, fraction) = (st.from, p.fraction);
                        f.fire(
                            finding,
                            RuleKind::Throughput,
                            tag,
                            from,
                            step,
                            rate,
                            count,
                            || {
                                format!(
                                    "{} steps/s from step {from} for {} s, below {} × its running \
                                     median {} steps/s",
                                    num(pace),
                                    num(secs),
                                    num(fraction),
                                    num(median)
                                )
                            },
                        );
                    }
                }
            }
            // A stretch not yet judged stays out of the median it is judged against (a run
            // logging ten times a second fills a window in 20 s); once fired, or ended, the
            // median follows the run's pace again.
            if !slow.is_some_and(|st| !st.fired) {
                window.push(rate);
            }
        }
    }
}
