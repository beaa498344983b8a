//! The rules file: rules turned off and rules added, in JSON (`docs/contract/health.md`
//! "The rules file"). Every bad entry is refused with the file, the entry and the field named.

use super::finding::RuleKind;
use super::rules::{
    Collapse, Disk, Divergence, FlatFor, Overhead, Ranks, Rule, RuleSet, SinkLag, Stall, TagRule,
    Tags, Throughput,
};
use serde_json::{Map, Value};

/// A rules file that cannot be used; the message names the file, the entry and the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct RulesFileError(pub String);

/// Applies the rules file `text` (named `file` in errors) to `rules`: first its `off` list,
/// then its `rules`, added in order.
pub fn apply_rules_file(file: &str, text: &str, rules: &mut RuleSet) -> Result<(), RulesFileError> {
    let err = |entry: &str, msg: String| RulesFileError(format!("{file}: {entry}{msg}"));
    let doc: Value = serde_json::from_str(text).map_err(|e| err("", format!("not JSON: {e}")))?;
    let Value::Object(top) = doc else {
        return Err(err("", "the file must hold a JSON object".into()));
    };
    for key in top.keys() {
        if key != "off" && key != "rules" {
            return Err(err(
                "",
                format!("unknown key \"{key}\" (the keys are \"off\" and \"rules\")"),
            ));
        }
    }
    if let Some(off) = top.get("off") {
        let Value::Array(off) = off else {
            return Err(err("off: ", "must be a list of rule names".into()));
        };
        for (i, name) in off.iter().enumerate() {
            let kind = name.as_str().and_then(RuleKind::parse).ok_or_else(|| {
                err(
                    &format!("off[{i}]: "),
                    format!("{name} is not a rule (rules: {})", names()),
                )
            })?;
            rules.turn_off(kind);
        }
    }
    if let Some(list) = top.get("rules") {
        let Value::Array(list) = list else {
            return Err(err("rules: ", "must be a list of rules".into()));
        };
        for (i, entry) in list.iter().enumerate() {
            let Value::Object(obj) = entry else {
                return Err(err(&format!("rules[{i}]: "), "must be an object".into()));
            };
            let kind_name = obj.get("kind").and_then(Value::as_str).unwrap_or("");
            let at = format!("rules[{i}] (kind \"{kind_name}\"): ");
            Entry { obj, at: &at, file }.add(rules)?;
        }
    }
    Ok(())
}

fn names() -> String {
    let mut n: Vec<&str> = RuleKind::ALL.iter().map(|k| k.as_str()).collect();
    n.push("spike");
    n.join(", ")
}

/// One entry of `rules`, read field by field.
struct Entry<'a> {
    obj: &'a Map<String, Value>,
    at: &'a str,
    file: &'a str,
}

impl Entry<'_> {
    fn err(&self, field: &str, msg: impl std::fmt::Display) -> RulesFileError {
        RulesFileError(format!(
            "{}: {}field \"{field}\": {msg}",
            self.file, self.at
        ))
    }

    fn add(&self, rules: &mut RuleSet) -> Result<(), RulesFileError> {
        let kind = match self.obj.get("kind") {
            None => return Err(self.err("kind", "missing")),
            Some(k) => k.as_str().and_then(RuleKind::parse).ok_or_else(|| {
                self.err("kind", format!("{k} is not a rule (rules: {})", names()))
            })?,
        };
        let (allowed, rule): (&[&str], Option<Rule>) = match kind {
            RuleKind::Nonfinite => (&["tag"], Some(Rule::Nonfinite)),
            RuleKind::Divergence => {
                let d = Divergence::default();
                let p = Divergence {
                    window: self.count("window", d.window, 3)?,
                    min_history: self.count("min_history", d.min_history, 3)?,
                    z: self.positive("z", d.z)?,
                    rel_floor: self.non_negative("rel_floor", d.rel_floor)?,
                    refresh: self.count("refresh", d.refresh, 1)?,
                    for_values: self.count32("for_values", d.for_values)?,
                };
                if p.min_history > p.window {
                    return Err(self.err("min_history", "must not exceed window"));
                }
                const FIELDS: &[&str] = &[
                    "tag",
                    "window",
                    "min_history",
                    "z",
                    "rel_floor",
                    "refresh",
                    "for_values",
                ];
                (FIELDS, Some(Rule::Divergence(p)))
            }
            RuleKind::Collapse => {
                let d = Collapse::default();
                let p = Collapse {
                    eps: self.non_negative("eps", d.eps)?,
                    for_values: self.count32("for_values", d.for_values)?,
                    fraction: self.non_negative("fraction", d.fraction)?,
                    early_values: self.count32("early_values", d.early_values)?,
                };
                if p.fraction >= 1.0 {
                    return Err(self.err("fraction", "must be below 1"));
                }
                const FIELDS: &[&str] = &["tag", "eps", "for_values", "fraction", "early_values"];
                (FIELDS, Some(Rule::Collapse(p)))
            }
            RuleKind::FlatFor => {
                let p = FlatFor {
                    for_values: self.count32("for_values", FlatFor::default().for_values)?,
                };
                (&["tag", "for_values"], Some(Rule::FlatFor(p)))
            }
            RuleKind::Above | RuleKind::Below => {
                let value = match self.obj.get("value") {
                    None => return Err(self.err("value", "missing")),
                    Some(v) => v
                        .as_f64()
                        .filter(|v| v.is_finite())
                        .ok_or_else(|| self.err("value", format!("{v} is not a number")))?,
                };
                let rule = if kind == RuleKind::Above {
                    Rule::Above { value }
                } else {
                    Rule::Below { value }
                };
                (&["tag", "value"], Some(rule))
            }
            RuleKind::Throughput => {
                let d = Throughput::default();
                let p = Throughput {
                    fraction: self.positive("fraction", d.fraction)?,
                    window: self.count("window", d.window, 3)?,
                    min_history: self.count("min_history", d.min_history, 3)?,
                    for_seconds: self.non_negative("for_seconds", d.for_seconds)?,
                    refresh: d.refresh,
                };
                if p.fraction >= 1.0 {
                    return Err(self.err("fraction", "must be below 1"));
                }
                const FIELDS: &[&str] =
                    &["tag", "fraction", "window", "min_history", "for_seconds"];
                (FIELDS, Some(Rule::Throughput(p)))
            }
            RuleKind::Stall => {
                let d = Stall::default();
                let p = Stall {
                    k: self.positive("k", d.k)?,
                    min_gap_s: self.non_negative("min_gap_s", d.min_gap_s)?,
                    min_history: self.count("min_history", d.min_history, 1)?,
                    window: d.window,
                    refresh: d.refresh,
                };
                if p.k <= 1.0 {
                    return Err(self.err("k", "must be above 1"));
                }
                self.only(&["k", "min_gap_s", "min_history"])?;
                rules.stall = Some(p);
                (&[], None)
            }
            RuleKind::Disk => {
                let p = Disk {
                    min_free_mb: self.positive("min_free_mb", Disk::default().min_free_mb)?,
                };
                self.only(&["min_free_mb"])?;
                rules.disk = Some(p);
                (&[], None)
            }
            RuleKind::Ranks => {
                let d = Ranks::default();
                let p = Ranks {
                    ratio: self.positive("ratio", d.ratio)?,
                    min_excess_s: self.non_negative("min_excess_s", d.min_excess_s)?,
                    for_steps: self.count32("for_steps", d.for_steps)?,
                };
                if p.ratio <= 1.0 {
                    return Err(self.err("ratio", "must be above 1"));
                }
                self.only(&["ratio", "min_excess_s", "for_steps"])?;
                rules.ranks = Some(p);
                (&[], None)
            }
            RuleKind::Overhead => {
                let d = Overhead::default();
                let p = Overhead {
                    budget: self.positive("budget", d.budget)?,
                    window: self.count32("window", d.window)?,
                    for_seconds: self.non_negative("for_seconds", d.for_seconds)?,
                };
                if p.budget >= 1.0 {
                    return Err(self.err("budget", "must be below 1 (a share of the iteration)"));
                }
                self.only(&["budget", "window", "for_seconds"])?;
                rules.overhead = Some(p);
                (&[], None)
            }
            RuleKind::Sink => {
                let p = SinkLag {
                    max_lag_s: self.positive("max_lag_s", SinkLag::default().max_lag_s)?,
                };
                self.only(&["max_lag_s"])?;
                rules.sink = Some(p);
                (&[], None)
            }
        };
        let Some(rule) = rule else {
            return Ok(());
        };
        self.only(allowed)?;
        let tags = self.tags()?;
        rules.tag_rules.push(TagRule { rule, tags });
        Ok(())
    }

    /// Refuses a field the kind does not take.
    fn only(&self, allowed: &[&str]) -> Result<(), RulesFileError> {
        for key in self.obj.keys() {
            if key != "kind" && !allowed.contains(&key.as_str()) {
                let takes = if allowed.is_empty() {
                    "none".to_owned()
                } else {
                    allowed.join(", ")
                };
                return Err(self.err(key, format!("not a field of this rule (it takes: {takes})")));
            }
        }
        Ok(())
    }

    fn tags(&self) -> Result<Tags, RulesFileError> {
        let bad = || self.err("tag", "must be a non-empty tag glob or a list of them");
        let globs: Vec<String> = match self.obj.get("tag") {
            None => return Err(self.err("tag", "missing")),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .map(|g| g.as_str().map(str::to_owned).ok_or_else(bad))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(bad()),
        };
        if globs.is_empty() || globs.iter().any(String::is_empty) {
            return Err(bad());
        }
        // Only `*` is a wildcard: another glob's syntax would silently match nothing
        // (docs/contract/health.md "The rules file").
        if let Some(g) = globs.iter().find(|g| g.contains(['?', '[', ']', '{', '}'])) {
            return Err(self.err(
                "tag",
                format!("{g:?}: only `*` is a wildcard in a tag glob (not ?, [ ], {{ }})"),
            ));
        }
        Ok(Tags::Globs(globs))
    }

    fn number(&self, field: &str) -> Result<Option<f64>, RulesFileError> {
        match self.obj.get(field) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|v| v.is_finite())
                .map(Some)
                .ok_or_else(|| self.err(field, format!("{v} is not a number"))),
        }
    }

    fn positive(&self, field: &str, default: f64) -> Result<f64, RulesFileError> {
        match self.number(field)? {
            None => Ok(default),
            Some(v) if v > 0.0 => Ok(v),
            Some(v) => Err(self.err(field, format!("{v} must be above 0"))),
        }
    }

    fn non_negative(&self, field: &str, default: f64) -> Result<f64, RulesFileError> {
        match self.number(field)? {
            None => Ok(default),
            Some(v) if v >= 0.0 => Ok(v),
            Some(v) => Err(self.err(field, format!("{v} must not be negative"))),
        }
    }

    fn count(&self, field: &str, default: usize, min: u64) -> Result<usize, RulesFileError> {
        match self.obj.get(field) {
            None => Ok(default),
            Some(v) => match v.as_u64() {
                Some(n) if n >= min && n <= 1_000_000 => Ok(n as usize),
                _ => Err(self.err(
                    field,
                    format!("{v} must be a whole number from {min} to 1000000"),
                )),
            },
        }
    }

    fn count32(&self, field: &str, default: u32) -> Result<u32, RulesFileError> {
        self.count(field, default as usize, 1).map(|n| n as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(text: &str) -> Result<RuleSet, String> {
        let mut r = RuleSet::defaults();
        apply_rules_file("rules.json", text, &mut r).map_err(|e| e.0)?;
        Ok(r)
    }

    #[test]
    fn rules_are_added_and_turned_off() {
        let r = apply(
            r#"{"off": ["flat_for", "stall"],
                "rules": [{"kind": "above", "tag": "charts/kl", "value": 0.05},
                          {"kind": "spike", "tag": ["a/*", "b"], "z": 8}]}"#,
        )
        .unwrap();
        assert_eq!(r.stall, None);
        assert!(r
            .tag_rules
            .iter()
            .all(|t| t.rule.kind() != RuleKind::FlatFor));
        let kinds: Vec<_> = r.rules_for("charts/kl").map(Rule::kind).collect();
        assert_eq!(kinds, [RuleKind::Nonfinite, RuleKind::Above]);
        let spike = r.rules_for("a/x").nth(1).copied();
        assert!(matches!(spike, Some(Rule::Divergence(d)) if d.z == 8.0 && d.window == 200));
    }

    #[test]
    fn every_bad_entry_names_the_file_the_entry_and_the_field() {
        for (text, want) in [
            (
                r#"{"rules": [{"kind": "above", "tag": "x"}]}"#,
                r#"rules.json: rules[0] (kind "above"): field "value": missing"#,
            ),
            (
                r#"{"rules": [{"kind": "nonfinite"}, {"kind": "below", "tag": "x", "value": "1"}]}"#,
                r#"rules.json: rules[0] (kind "nonfinite"): field "tag": missing"#,
            ),
            (
                r#"{"rules": [{"kind": "below", "tag": "x", "value": "1"}]}"#,
                r#"rules.json: rules[0] (kind "below"): field "value": "1" is not a number"#,
            ),
            (
                r#"{"rules": [{"kind": "collapse", "tag": "x", "for": 3}]}"#,
                r#"rules.json: rules[0] (kind "collapse"): field "for": not a field of this rule (it takes: tag, eps, for_values, fraction, early_values)"#,
            ),
            (
                r#"{"rules": [{"kind": "nan", "tag": "x"}]}"#,
                r#"rules.json: rules[0] (kind "nan"): field "kind": "nan" is not a rule"#,
            ),
            (
                r#"{"off": ["nan"]}"#,
                r#"rules.json: off[0]: "nan" is not a rule"#,
            ),
            (r#"{"rule": []}"#, r#"rules.json: unknown key "rule""#),
            (
                r#"{"rules": [{"kind": "spike", "tag": "x", "window": 10, "min_history": 20}]}"#,
                r#"field "min_history": must not exceed window"#,
            ),
            ("[", "rules.json: not JSON"),
            (
                r#"{"rules": [{"kind": "above", "tag": "losses/?", "value": 1}]}"#,
                r#"field "tag": "losses/?": only `*` is a wildcard"#,
            ),
        ] {
            let e = apply(text).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
    }
}
