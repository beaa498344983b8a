//! One tag's checks: each rule that watches a value, its state, and the one pass over a
//! value (docs/contract/health.md, a section per rule).

use super::findings::{Findings, NONE};
use crate::health::finding::{num, RuleKind};
use crate::health::rules::{Collapse, Divergence, FlatFor, Rule, Throughput};
use crate::health::window::RobustWindow;

/// MAD × this is the standard deviation of a normal distribution.
pub(super) const MAD_TO_SIGMA: f64 = 1.4826;

#[derive(Debug)]
pub(super) enum Check {
    Nonfinite {
        finding: u32,
    },
    Divergence {
        p: Divergence,
        window: RobustWindow,
        finding: u32,
    },
    Collapse {
        p: Collapse,
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
        window: RobustWindow,
        /// Step, wall time and values of the slow stretch while slow, and whether it fired.
        slow: Option<(i64, f64, u32, bool)>,
        finding: u32,
    },
}

impl Check {
    pub(super) fn new(rule: &Rule) -> Check {
        match *rule {
            Rule::Nonfinite => Check::Nonfinite { finding: NONE },
            Rule::Divergence(p) => Check::Divergence {
                p,
                window: RobustWindow::new(p.window, p.min_history, p.refresh, true),
                finding: NONE,
            },
            Rule::Collapse(p) => Check::Collapse {
                p,
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
        Check::Divergence { p, window, finding } => {
            if !v.is_finite() {
                return;
            }
            if let Some((median, mad)) = window.stats() {
                let scale = (MAD_TO_SIGMA * mad)
                    .max(p.rel_floor * median.abs())
                    .max(f64::MIN_POSITIVE);
                let z = (v - median) / scale;
                if z.abs() > p.z {
                    f.fire(finding, RuleKind::Divergence, tag, step, step, v, 1, || {
                        format!(
                            "{} at step {step} left its recent range (median {}, z = {})",
                            num(v),
                            num(median),
                            num(z)
                        )
                    });
                }
            }
            window.push(v);
        }
        Check::Collapse {
            p,
            run,
            since,
            finding,
        } => {
            if !v.is_finite() {
                return;
            }
            if v.abs() > p.eps {
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
                let (n, from) = (p.for_values, *since);
                f.fire(
                    finding,
                    RuleKind::Collapse,
                    tag,
                    from,
                    step,
                    v,
                    count,
                    || format!("|value| ≤ {} for {n} values from step {from}", num(p.eps)),
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
            // Holding at its best is a solved task, not a frozen one.
            if *run >= p.for_values && v < *best {
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
                            "unchanged at {} for {n} values from step {from}, below its best {}",
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
            slow,
            finding,
        } => {
            if !v.is_finite() {
                return;
            }
            if let Some((median, _)) = window.stats() {
                if v < p.fraction * median {
                    let (from, since, n, fired) = slow.get_or_insert((step, wall, 0, false));
                    *n += 1;
                    if wall - *since >= p.for_seconds && *n >= 2 {
                        // The stretch's values so far on its first firing, one each after.
                        let count = if *fired { 1 } else { u64::from(*n) };
                        *fired = true;
                        let (from, secs, fraction) = (*from, wall - *since, p.fraction);
                        f.fire(
                            finding,
                            RuleKind::Throughput,
                            tag,
                            from,
                            step,
                            v,
                            count,
                            || {
                                format!(
                                "{} from step {from} for {} s, below {} × its running median {}",
                                num(v),
                                num(secs),
                                num(fraction),
                                num(median)
                            )
                            },
                        );
                    }
                } else {
                    *slow = None;
                }
            }
            window.push(v);
        }
    }
}
