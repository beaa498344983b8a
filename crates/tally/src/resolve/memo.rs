//! The registry spec of each position of a step map, remembered from the last step: a training
//! loop submits the same keys in the same order every step, so the key at a position is first
//! compared with the one seen there last time, before its text is hashed and compared
//! (docs/contract/step.md "The hot path").

use crate::input::Key;
use std::borrow::Cow;
use tally_schema::MetricSpec;

/// Positions remembered per map, at most (a step of more keys looks the rest up each time).
const MAX_POSITIONS: usize = 256;

/// One step map's last keys by position: the address and length of a `'static` key's text,
/// and what looking it up gave.
#[derive(Debug, Default)]
pub struct SpecMemo(Vec<(usize, usize, Option<&'static MetricSpec>)>);

impl SpecMemo {
    /// The spec of `key` at position `pos`: last step's answer when `key` is the same
    /// `'static` text there, else `lookup(key)`, remembered when `key` is `'static`.
    #[inline]
    pub fn spec(
        &mut self,
        pos: usize,
        key: &Key,
        lookup: impl FnOnce(&str) -> Option<&'static MetricSpec>,
    ) -> Option<&'static MetricSpec> {
        // Only borrowed text is `'static`: never freed, so its address and length always name
        // the same text. An owned key's address may be reused by other text next step.
        let Cow::Borrowed(text) = key else {
            return lookup(key);
        };
        let id = (text.as_ptr() as usize, text.len());
        match self.0.get(pos) {
            Some(&(addr, len, spec)) if (addr, len) == id => spec,
            _ => {
                let spec = lookup(text);
                if pos < self.0.len() {
                    self.0[pos] = (id.0, id.1, spec);
                } else if pos == self.0.len() && pos < MAX_POSITIONS {
                    self.0.push((id.0, id.1, spec));
                }
                spec
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_schema::METRICS;

    #[test]
    fn each_position_answers_for_its_own_text_only() {
        let (a, b) = (&METRICS[0], &METRICS[1]);
        let mut memo = SpecMemo::default();
        let find = |t: &str| METRICS.iter().find(|m| m.tag == t);
        let ka: Key = Cow::Borrowed(a.tag);
        let kb: Key = Cow::Borrowed(b.tag);
        assert!(std::ptr::eq(memo.spec(0, &ka, find).unwrap(), a));
        assert!(std::ptr::eq(memo.spec(1, &kb, find).unwrap(), b));
        // Swapped: each position looks its new key up, never answering with the old one.
        assert!(std::ptr::eq(memo.spec(0, &kb, find).unwrap(), b));
        assert!(std::ptr::eq(memo.spec(1, &ka, find).unwrap(), a));
        // The same text at a position: answered without looking up.
        assert!(std::ptr::eq(memo.spec(0, &kb, |_| None).unwrap(), b));
        // An owned key is always looked up (its address may be reused by other text).
        let owned: Key = Cow::Owned(b.tag.to_owned());
        assert!(memo.spec(0, &owned, |_| None).is_none());
        // A position past the end is looked up and not remembered out of order.
        let none = memo.spec(5, &ka, |_| None);
        assert!(none.is_none());
        assert!(std::ptr::eq(memo.spec(5, &ka, find).unwrap(), a));
    }
}
