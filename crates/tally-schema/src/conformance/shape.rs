//! The shape layer: a small interpreter for the JSON Schema subset the generated artefact
//! schemas use (`$ref`, `anyOf`/`oneOf`, `const`, `enum`, `type`, bounds, the one time
//! pattern, properties, items). Violations name what the schema accepts in words.

use super::path::child;
use super::value::is_int;
use super::violation::{describe, quoted, Violation};
use crate::artifacts::{json_schema, ArtifactKind};
use serde_json::Value;
use std::sync::OnceLock;

/// The soak artifact's `started_at_utc` / `ended_at_utc` pattern (`%Y-%m-%dT%H:%M:%SZ`); the
/// only `pattern` the generated schemas use.
pub const UTC_SECOND_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$";

fn schema_root(kind: ArtifactKind) -> &'static Value {
    static ROOTS: OnceLock<[Value; 3]> = OnceLock::new();
    let roots = ROOTS.get_or_init(|| ArtifactKind::ALL.map(json_schema));
    &roots[ArtifactKind::ALL
        .iter()
        .position(|k| *k == kind)
        .expect("ALL lists every kind")]
}

/// The schema keywords the shape checker interprets; the others it meets are annotations.
pub const SHAPE_KEYWORDS: [&str; 13] = [
    "$ref",
    "anyOf",
    "oneOf",
    "const",
    "enum",
    "type",
    "minimum",
    "maximum",
    "pattern",
    "properties",
    "required",
    "additionalProperties",
    "items",
];

/// The generated schema of one artefact kind, ready to check documents against.
pub(super) struct Shape {
    root: &'static Value,
}

impl Shape {
    pub(super) fn of(kind: ArtifactKind) -> Self {
        Shape {
            root: schema_root(kind),
        }
    }

    /// Check a whole document (present) at `path`; top-level members named in `skip` are left
    /// to the contract rules.
    pub(super) fn check_document(
        &self,
        v: &Value,
        path: &str,
        skip: &[&str],
        out: &mut Vec<Violation>,
    ) {
        self.check(self.root, v, path, skip, out);
    }

    fn resolve<'s>(&'s self, schema: &'s Value) -> (&'s Value, Option<&'s str>) {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                let name = r.trim_start_matches("#/$defs/");
                (
                    self.root
                        .get("$defs")
                        .and_then(|d| d.get(name))
                        .unwrap_or(&Value::Bool(true)),
                    Some(name),
                )
            }
            None => (schema, None),
        }
    }

    fn consts<'s>(&self, schema: &'s Value) -> Option<Vec<&'s Value>> {
        let branches = schema.get("oneOf")?.as_array()?;
        branches.iter().map(|b| b.get("const")).collect()
    }

    /// Words for what `schema` accepts.
    fn expected(&self, schema: &Value) -> String {
        let (s, name) = self.resolve(schema);
        if let Some(c) = s.get("const") {
            return literal(c);
        }
        if let Some(cs) = self.consts(s) {
            return format!(
                "one of {}",
                cs.iter().map(|c| literal(c)).collect::<Vec<_>>().join(", ")
            );
        }
        if let Some(any) = s.get("anyOf").and_then(Value::as_array) {
            return any
                .iter()
                .map(|b| self.expected(b))
                .collect::<Vec<_>>()
                .join(" or ");
        }
        let types: Vec<&str> = match s.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => return "any value".to_owned(),
        };
        let min = s.get("minimum").and_then(Value::as_f64);
        let max = s.get("maximum").and_then(Value::as_f64);
        let bound = match (min, max) {
            (Some(a), Some(b)) if a == b => format!(" equal to {a}"),
            (Some(a), Some(b)) => format!(" between {a} and {b}"),
            (Some(a), None) => format!(" ≥ {a}"),
            (None, Some(b)) => format!(" ≤ {b}"),
            (None, None) => String::new(),
        };
        types
            .iter()
            .map(|t| match *t {
                "integer" => format!("an integer{bound}"),
                "number" => format!("a number{bound}"),
                "string" if s.get("pattern").is_some() => {
                    "a UTC time like 2026-01-31T12:00:00Z".to_owned()
                }
                "string" => "a string".to_owned(),
                "boolean" => "a bool".to_owned(),
                "object"
                    if s.get("additionalProperties")
                        .and_then(|a| a.get("$ref"))
                        .is_some() =>
                {
                    let of = s["additionalProperties"]["$ref"]
                        .as_str()
                        .unwrap_or_default();
                    format!(
                        "an object mapping names to {} objects",
                        of.trim_start_matches("#/$defs/")
                    )
                }
                "object" => match name {
                    Some(n) => format!("an object ({n})"),
                    None => "an object".to_owned(),
                },
                "array" => "an array".to_owned(),
                "null" => "null".to_owned(),
                other => other.to_owned(),
            })
            .collect::<Vec<_>>()
            .join(" or ")
    }

    /// Check `v` (present) against `schema`; top-level members named in `skip` are left to
    /// the contract rules.
    fn check(
        &self,
        schema: &Value,
        v: &Value,
        path: &str,
        skip: &[&str],
        out: &mut Vec<Violation>,
    ) {
        let (s, _) = self.resolve(schema);
        if let Some(any) = s.get("anyOf").and_then(Value::as_array) {
            if v.is_null()
                && any
                    .iter()
                    .any(|b| b.get("type") == Some(&Value::from("null")))
            {
                return;
            }
            let non_null: Vec<&Value> = any
                .iter()
                .filter(|b| b.get("type") != Some(&Value::from("null")))
                .collect();
            if let [only] = non_null.as_slice() {
                return self.check(only, v, path, skip, out);
            }
            let fits = non_null.iter().any(|b| {
                let mut tmp = Vec::new();
                self.check(b, v, path, skip, &mut tmp);
                tmp.is_empty()
            });
            if !fits {
                out.push(Violation::new(path, self.expected(s), describe(Some(v))));
            }
            return;
        }
        if let Some(cs) = self.consts(s) {
            if !cs.contains(&v) {
                out.push(Violation::new(path, self.expected(s), describe(Some(v))));
            }
            return;
        }
        if let Some(c) = s.get("const") {
            if c != v {
                out.push(Violation::new(path, literal(c), describe(Some(v))));
            }
            return;
        }
        if let Some(Value::Array(options)) = s.get("enum") {
            if !options.contains(v) {
                out.push(Violation::new(path, self.expected(s), describe(Some(v))));
            }
            return;
        }
        if let Some(t) = s.get("type") {
            let types: Vec<&str> = match t {
                Value::String(t) => vec![t.as_str()],
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            let fits = types.iter().any(|t| match *t {
                "integer" => is_int(v),
                "number" => v.is_number(),
                "string" => v.is_string(),
                "boolean" => v.is_boolean(),
                "object" => v.is_object(),
                "array" => v.is_array(),
                "null" => v.is_null(),
                _ => false,
            });
            if !fits {
                out.push(Violation::new(
                    path,
                    self.expected(schema),
                    describe(Some(v)),
                ));
                return;
            }
        }
        if let Some(x) = v.as_f64() {
            let below = s
                .get("minimum")
                .and_then(Value::as_f64)
                .is_some_and(|m| x < m);
            let above = s
                .get("maximum")
                .and_then(Value::as_f64)
                .is_some_and(|m| x > m);
            if below || above {
                out.push(Violation::new(
                    path,
                    self.expected(schema),
                    describe(Some(v)),
                ));
            }
        }
        if let (Some(p), Some(text)) = (s.get("pattern").and_then(Value::as_str), v.as_str()) {
            if p == UTC_SECOND_PATTERN && !is_utc_second(text) {
                out.push(Violation::new(
                    path,
                    self.expected(schema),
                    describe(Some(v)),
                ));
            }
        }
        if let Some(obj) = v.as_object() {
            let props = s.get("properties").and_then(Value::as_object);
            let required: Vec<&str> = s
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(props) = props {
                for (key, sub) in props {
                    if skip.contains(&key.as_str()) {
                        continue;
                    }
                    match obj.get(key) {
                        Some(x) => self.check(sub, x, &child(path, key), &[], out),
                        None if required.contains(&key.as_str()) => out.push(Violation::new(
                            child(path, key),
                            self.expected(sub),
                            "missing",
                        )),
                        None => {}
                    }
                }
            }
            if let Some(extra) = s.get("additionalProperties").filter(|a| a.is_object()) {
                for (key, x) in obj {
                    if props.is_some_and(|p| p.contains_key(key)) {
                        continue;
                    }
                    self.check(extra, x, &child(path, key), &[], out);
                }
            }
        }
        if let (Some(items), Some(arr)) = (s.get("items"), v.as_array()) {
            for (i, x) in arr.iter().enumerate() {
                self.check(items, x, &format!("{path}[{i}]"), &[], out);
            }
        }
    }
}

fn literal(v: &Value) -> String {
    match v {
        Value::String(s) => quoted(s),
        other => other.to_string(),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` with digits where digits go.
fn is_utc_second(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_second_format_is_exact() {
        assert!(is_utc_second("2026-01-31T12:00:05Z"));
        assert!(!is_utc_second("2026-01-31T12:00:05+00:00"));
        assert!(!is_utc_second("2026-01-31 12:00:05Z"));
    }

    #[test]
    fn generated_schemas_use_only_interpreted_keywords() {
        // The shape checker must understand every validation keyword the schemas carry, or a
        // rule in the committed schema would silently not be enforced here.
        const ANNOTATIONS: [&str; 8] = [
            "$schema",
            "$comment",
            "$defs",
            "title",
            "description",
            "format",
            "default",
            "x-unit",
        ];
        fn walk(v: &Value, bad: &mut Vec<String>) {
            match v {
                Value::Object(o) => {
                    for (k, x) in o {
                        if !SHAPE_KEYWORDS.contains(&k.as_str())
                            && !ANNOTATIONS.contains(&k.as_str())
                        {
                            bad.push(k.clone());
                        }
                        match k.as_str() {
                            "properties" | "$defs" => {
                                for sub in x.as_object().into_iter().flat_map(|m| m.values()) {
                                    walk(sub, bad);
                                }
                            }
                            "const" | "required" | "enum" | "default" => {}
                            _ => walk(x, bad),
                        }
                    }
                }
                Value::Array(a) => a.iter().for_each(|x| walk(x, bad)),
                _ => {}
            }
        }
        for kind in ArtifactKind::ALL {
            let mut bad = Vec::new();
            walk(&json_schema(kind), &mut bad);
            assert!(
                bad.is_empty(),
                "{kind:?} uses uninterpreted keywords {bad:?}"
            );
        }
    }
}
