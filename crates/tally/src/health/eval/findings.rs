//! The findings of an evaluator and the one place a firing is recorded (docs/contract/health.md).

use crate::health::finding::{Finding, RuleKind};

/// No finding yet.
pub(super) const NONE: u32 = u32::MAX;

/// The findings so far, and the one place a firing is recorded.
#[derive(Debug, Default)]
pub(super) struct Findings(pub(super) Vec<Finding>);

impl Findings {
    /// Records a firing of `rule` on `tag`: creates the finding on its first firing (from
    /// `first_step`, with `count` values and `message()`), else adds `count` to it.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn fire(
        &mut self,
        slot: &mut u32,
        rule: RuleKind,
        tag: &str,
        first_step: i64,
        step: i64,
        value: f64,
        count: u64,
        message: impl FnOnce() -> String,
    ) {
        if *slot == NONE {
            *slot = self.0.len() as u32;
            self.0.push(Finding {
                rule,
                tag: tag.to_owned(),
                first_step,
                last_step: step,
                count,
                last_value: value,
                message: message(),
            });
        } else {
            let f = &mut self.0[*slot as usize];
            f.last_step = step;
            f.count += count;
            f.last_value = value;
        }
    }
}
