//! User metrics (docs/contract/schema.md "User metrics"): the run's definitions, the tags it
//! has logged, and each tag's running summary value.

use crate::error::Error;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::sync::Arc;
use tally_schema::artifacts::UserMetric;
use tally_schema::legacy::glob_match;
use tally_schema::{in_canonical_group, validate_user_tag, Reduction, SummaryStat};

/// How a user metric is described, combined across ranks and summarised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserMetricSpec {
    /// Unit, free text (`1` when undefined).
    pub unit: String,
    /// How ranks combine it.
    pub reduction: Reduction,
    /// Display label.
    pub label: Option<String>,
    /// Which value the run summary keeps.
    pub summary: SummaryStat,
}

impl Default for UserMetricSpec {
    fn default() -> Self {
        UserMetricSpec {
            unit: "1".into(),
            reduction: Reduction::Mean,
            label: None,
            summary: SummaryStat::Last,
        }
    }
}

/// The running fold behind one tag's summary value.
#[derive(Debug, Clone, Copy)]
struct Fold {
    last: f64,
    max: f64,
    min: f64,
    sum: f64,
    n: u64,
}

impl Fold {
    fn new(v: f64) -> Self {
        Fold {
            last: v,
            max: v,
            min: v,
            sum: v,
            n: 1,
        }
    }

    fn add(&mut self, v: f64) {
        self.last = v;
        self.max = self.max.max(v);
        self.min = self.min.min(v);
        self.sum += v;
        self.n += 1;
    }

    fn value(&self, stat: SummaryStat) -> f64 {
        match stat {
            SummaryStat::Last => self.last,
            SummaryStat::Max => self.max,
            SummaryStat::Min => self.min,
            SummaryStat::Mean => self.sum / self.n as f64,
        }
    }
}

/// The run's user metrics.
#[derive(Debug, Default)]
pub struct UserMetrics {
    /// `(pattern, spec)` in definition order; the last matching definition wins.
    defs: Vec<(String, UserMetricSpec)>,
    /// Tags logged so far, in first-logged order, with their folds.
    seen: Vec<(Arc<str>, Fold)>,
    index: HashMap<Arc<str>, usize>,
    /// Whether a tag or a definition was added since [`UserMetrics::take_changed`].
    changed: bool,
}

impl UserMetrics {
    /// Define (or refine) the metrics matching `pattern`: one tag, or a glob where `*` stands
    /// for any run of characters (`charts/*`). Canonical groups cannot be redefined.
    pub fn define(&mut self, pattern: &str, spec: UserMetricSpec) -> Result<(), Error> {
        let bad = |why: String| Err(Error::Config(format!("define_metric('{pattern}'): {why}")));
        let literal = pattern.split('*').next().unwrap_or_default();
        if in_canonical_group(literal) || in_canonical_group(pattern) {
            return bad(
                "a canonical group's tags have the schema's units and reductions; define only \
                 metrics of your own"
                    .into(),
            );
        }
        if let Err(why) = validate_user_tag(&pattern.replace('*', "x")) {
            return bad(format!("not a usable tag pattern: {why}"));
        }
        if spec.unit.trim().is_empty() {
            return bad("unit is empty (use '1' for a plain number)".into());
        }
        self.defs.push((pattern.to_owned(), spec));
        self.changed = true;
        Ok(())
    }

    /// The last definition matching `tag`, if any.
    fn definition(&self, tag: &str) -> Option<&UserMetricSpec> {
        self.defs
            .iter()
            .rev()
            .find(|(p, _)| glob_match(p, tag))
            .map(|(_, s)| s)
    }

    /// The spec of `tag`: the last definition matching it, else the defaults.
    pub fn spec(&self, tag: &str) -> UserMetricSpec {
        self.definition(tag).cloned().unwrap_or_default()
    }

    /// How ranks combine `tag`.
    pub fn reduction(&self, tag: &str) -> Reduction {
        self.definition(tag)
            .map_or(Reduction::Mean, |s| s.reduction)
    }

    /// Fold one logged value of `tag` into its summary.
    pub fn observe(&mut self, tag: &Arc<str>, v: f64) {
        match self.index.get(tag) {
            Some(&i) => self.seen[i].1.add(v),
            None => {
                self.index.insert(tag.clone(), self.seen.len());
                self.seen.push((tag.clone(), Fold::new(v)));
                self.changed = true;
            }
        }
    }

    /// Whether anything `run_config.json` records changed since the last call.
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// Every logged tag with its spec, in first-logged order (for `run_config.json`).
    pub fn documented(&self) -> Vec<UserMetric> {
        self.seen
            .iter()
            .map(|(tag, _)| {
                let s = self.spec(tag);
                UserMetric {
                    tag: tag.to_string(),
                    unit: s.unit,
                    reduction: s.reduction,
                    label: s.label,
                    summary: s.summary,
                }
            })
            .collect()
    }

    /// Each logged tag's summary value per its spec (`None` when the event file would hold it
    /// as NaN or ±inf: docs/contract/step.md "Input bounds").
    pub fn summary_values(&self) -> BTreeMap<String, Option<f64>> {
        self.seen
            .iter()
            .map(|(tag, fold)| {
                let v = fold.value(self.spec(tag).summary);
                (tag.to_string(), crate::values::Stored::finite(v))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_matching_definition_wins_and_undefined_tags_get_the_defaults() {
        let mut u = UserMetrics::default();
        let sum = UserMetricSpec {
            reduction: Reduction::Sum,
            ..Default::default()
        };
        u.define("charts/*", sum.clone()).unwrap();
        let max = UserMetricSpec {
            unit: "s".into(),
            summary: SummaryStat::Max,
            ..Default::default()
        };
        u.define("charts/time", max.clone()).unwrap();
        assert_eq!(u.spec("charts/sps"), sum);
        assert_eq!(u.spec("charts/time"), max);
        assert_eq!(u.spec("other"), UserMetricSpec::default());
        assert_eq!(u.reduction("charts/sps"), Reduction::Sum);
    }

    #[test]
    fn canonical_groups_and_unusable_patterns_cannot_be_defined() {
        let mut u = UserMetrics::default();
        for bad in ["Loss/*", "Perf/my", "charts//x", "", "a/b "] {
            let err = u.define(bad, UserMetricSpec::default()).unwrap_err();
            assert!(
                err.to_string().contains(&format!("define_metric('{bad}')")),
                "{err}"
            );
        }
        let no_unit = UserMetricSpec {
            unit: " ".into(),
            ..Default::default()
        };
        assert!(u.define("charts/x", no_unit).is_err());
    }

    #[test]
    fn summaries_follow_each_tags_statistic() {
        let mut u = UserMetrics::default();
        for (pattern, stat) in [
            ("a", SummaryStat::Max),
            ("b", SummaryStat::Min),
            ("c", SummaryStat::Mean),
        ] {
            let spec = UserMetricSpec {
                summary: stat,
                ..Default::default()
            };
            u.define(pattern, spec).unwrap();
        }
        for v in [1.0, 3.0, 2.0] {
            for t in ["a", "b", "c", "d"] {
                u.observe(&Arc::from(t), v);
            }
        }
        let s = u.summary_values();
        assert_eq!(s["a"], Some(3.0));
        assert_eq!(s["b"], Some(1.0));
        assert_eq!(s["c"], Some(2.0));
        assert_eq!(s["d"], Some(2.0), "last by default");
        let order: Vec<String> = u.documented().into_iter().map(|m| m.tag).collect();
        assert_eq!(order, ["a", "b", "c", "d"]);
    }
}
