//! One broken rule, and how its message names what the rule expects and what the file holds.

use serde_json::Value;
use std::fmt;

/// One broken rule: where, what the contract expects there, and what the file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSONPath of the offending member, e.g. `$.runtime_manifest.replay_ingress.occupancy`.
    pub path: String,
    /// What the rule expects.
    pub expected: String,
    /// What was found (`missing` when the member is absent).
    pub found: String,
}

impl Violation {
    pub(super) fn new(
        path: impl Into<String>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        Violation {
            path: path.into(),
            expected: expected.into(),
            found: found.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: expected {}, found {}",
            self.path, self.expected, self.found
        )
    }
}

/// How a violation names a found value: `missing`, `null`, `the bool true`, `the integer 2`,
/// `the float 1.0`, `the string "1"`, `an array of 3 items`, `an object`.
pub fn describe(v: Option<&Value>) -> String {
    match v {
        None => "missing".to_owned(),
        Some(Value::Null) => "null".to_owned(),
        Some(Value::Bool(b)) => format!("the bool {b}"),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => format!("the integer {n}"),
        Some(Value::Number(n)) => format!("the float {:?}", n.as_f64().unwrap_or(f64::NAN)),
        Some(Value::String(s)) => {
            let shown: String = s.chars().take(60).collect();
            let more = if shown.len() < s.len() { "…" } else { "" };
            format!(
                "the string {}{more}",
                serde_json::to_string(&shown).unwrap_or_default()
            )
        }
        Some(Value::Array(a)) => match a.len() {
            1 => "an array of 1 item".to_owned(),
            n => format!("an array of {n} items"),
        },
        Some(Value::Object(o)) if o.is_empty() => "an empty object".to_owned(),
        Some(Value::Object(_)) => "an object".to_owned(),
    }
}

/// `s` as a JSON string literal.
pub(super) fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn describe_names_each_json_type_distinctly() {
        assert_eq!(describe(None), "missing");
        assert_eq!(describe(Some(&json!(true))), "the bool true");
        assert_eq!(describe(Some(&json!(1))), "the integer 1");
        assert_eq!(describe(Some(&json!(1.0))), "the float 1.0");
        assert_eq!(describe(Some(&json!("1"))), "the string \"1\"");
        assert_eq!(describe(Some(&json!([1]))), "an array of 1 item");
    }
}
