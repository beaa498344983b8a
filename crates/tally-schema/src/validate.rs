//! Artefact validators: `run_summary.json`, runtime manifest v1 and soak artifact 0.3.0, on `serde_json::Value`, every violation reported.
//!
//! Two layers. The *shape* of each artefact (which members exist, their JSON types, ranges
//! and enumerations) is read from the JSON Schema generated from the typed artefacts
//! ([`crate::artifacts::json_schema`]), so the committed schemas and this validator cannot
//! disagree on a type. On top of it, hand-written *contract* rules: the three version stamps
//! (each wrong kind of value with its own message), a completed run's lifecycle fields, the
//! null-device rule, and the soak artifact's pass/failure classification and drain invariants
//! (seed 000 "Schema 版本与兼容策略", reference §7).
//!
//! Two deliberate differences from a generic JSON Schema validator: an integer is a JSON
//! number written without a fraction or exponent (`1.0` is not the integer 1; JSON Schema says
//! it is), and an unsupported version stops the rules of that version namespace (refuse to
//! guess) while the other namespaces are still checked.
//!
//! `collector_backend_device: null` is accepted only when the manifest does not say the
//! collector backend needs an accelerator: the manifest's own (experimental, optional)
//! `collector_accelerator_context` is the evidence. A context naming an accelerator (any
//! non-empty string other than `none` or `cpu`) makes null a violation; an absent, null,
//! `none` or `cpu` context leaves null accepted, as runtime manifest v1 allows it.

use crate::artifacts::{json_schema, ArtifactKind, FailureClassification};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::OnceLock;

/// The value of `shutdown.classification` a passing run carries.
pub const NORMAL_COMPLETION: &str = "normal_completion";

/// Every `shutdown.classification` a producer snapshot may carry: normal completion and the
/// producer failure classifications.
pub const SHUTDOWN_CLASSIFICATIONS: [&str; 7] = [
    NORMAL_COMPLETION,
    "learner_failure",
    "collector_failure",
    "backend_worker_failure",
    "timeout/stale_tick",
    "external_cancellation",
    "unknown_failure",
];

/// The soak artifact's `started_at_utc` / `ended_at_utc` pattern (`%Y-%m-%dT%H:%M:%SZ`); the
/// only `pattern` the generated schemas use.
pub const UTC_SECOND_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$";

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
    fn new(path: impl Into<String>, expected: impl Into<String>, found: impl Into<String>) -> Self {
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

/// The outcome of [`validate`]: the detected kind (None when it could not be told) and every
/// violation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// What the document was taken for.
    pub kind: Option<ArtifactKind>,
    /// Every violation, in document order of the rules.
    pub violations: Vec<Violation>,
}

impl Report {
    /// Whether the document passed.
    pub fn is_ok(&self) -> bool {
        self.kind.is_some() && self.violations.is_empty()
    }
}

/// Tell an artefact's kind from its members.
///
/// A soak artifact has any of its own top-level members (`run_summary`, `monitor`,
/// `resource_summary`, ...) or a dotted string `schema_version`; a run summary has
/// `metric_schema_version`, `runtime_manifest`, `completed_iterations` or `total_env_steps`;
/// a runtime manifest has `schema_version` or one of its lifecycle members. None otherwise.
pub fn detect_kind(v: &Value) -> Option<ArtifactKind> {
    let obj = v.as_object()?;
    let has = |keys: &[&str]| keys.iter().any(|k| obj.contains_key(*k));
    let dotted_version = obj
        .get("schema_version")
        .and_then(Value::as_str)
        .is_some_and(|s| s.contains('.'));
    if dotted_version
        || has(&[
            "run_summary",
            "monitor",
            "resource_summary",
            "samples",
            "post_shutdown",
            "failure_classification",
            "console_log",
        ])
    {
        return Some(ArtifactKind::SoakArtifact);
    }
    if has(&[
        "metric_schema_version",
        "runtime_manifest",
        "completed_iterations",
        "total_env_steps",
    ]) {
        return Some(ArtifactKind::RunSummary);
    }
    if has(&[
        "schema_version",
        "inference_ring_capacity",
        "collector_metrics_interval",
        "collector_backend_device",
        "inference_flight",
        "replay_ingress",
        "inference_memory_budget",
    ]) {
        return Some(ArtifactKind::RuntimeManifest);
    }
    None
}

/// Detect the kind and validate. A standalone runtime manifest is checked as not completed
/// (only `schema_version` required, present members typed), as the reference validator's
/// default; use [`validate_runtime_manifest`] with `completed = true` for a completed run's.
pub fn validate(v: &Value) -> Report {
    match detect_kind(v) {
        Some(kind) => Report {
            kind: Some(kind),
            violations: validate_as(kind, v),
        },
        None => {
            let found = match v.as_object() {
                Some(obj) => {
                    let keys: Vec<&str> = obj.keys().take(6).map(String::as_str).collect();
                    if keys.is_empty() {
                        "an empty object".to_owned()
                    } else {
                        format!("an object with keys {}", keys.join(", "))
                    }
                }
                None => describe(Some(v)),
            };
            Report {
                kind: None,
                violations: vec![Violation::new(
                    "$",
                    "a run summary (metric_schema_version), a runtime manifest (schema_version) \
                     or a soak artifact (schema_version \"0.3.0\")",
                    found,
                )],
            }
        }
    }
}

/// Validate `v` as the given kind (a standalone runtime manifest as not completed).
pub fn validate_as(kind: ArtifactKind, v: &Value) -> Vec<Violation> {
    match kind {
        ArtifactKind::RunSummary => validate_run_summary(v),
        ArtifactKind::RuntimeManifest => validate_runtime_manifest(v, false),
        ArtifactKind::SoakArtifact => validate_soak_artifact(v),
    }
}

/// Validate a `run_summary.json`: the metric schema stamp (the integer 1), the summary's typed
/// members, the embedded runtime manifest with completed = (`status == "completed"`), and a
/// top-level `backend_diagnostics` (PPO path) for shape.
pub fn validate_run_summary(v: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    check_run_summary(v, "$", false, &mut out);
    out
}

/// Validate a runtime manifest v1. `completed` adds the lifecycle members a completed run's
/// manifest must carry; an early-failure manifest needs only `schema_version`.
pub fn validate_runtime_manifest(v: &Value, completed: bool) -> Vec<Violation> {
    let mut out = Vec::new();
    check_manifest(v, "$", completed, &mut out);
    out
}

/// Validate a soak-monitor artifact 0.3.0: every member of reference §7 with its type, then
/// the pass or failure rules (classification precedence, shutdown contract, the embedded run
/// summary, and on a pass the replay-ingress / inference-flight drain invariants).
pub fn validate_soak_artifact(v: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    check_soak(v, &mut out);
    out
}

/// Whether the manifest says its collector backend needs an accelerator: the
/// `collector_accelerator_context` when it names one (a non-empty string other than `none` or
/// `cpu`, compared case-insensitively).
pub fn accelerator_context(manifest: &Value) -> Option<&str> {
    let ctx = manifest.get("collector_accelerator_context")?.as_str()?;
    let t = ctx.trim();
    let none = t.is_empty() || t.eq_ignore_ascii_case("none") || t.eq_ignore_ascii_case("cpu");
    (!none).then_some(ctx)
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

// ---------------------------------------------------------------------------------------------
// Paths and small readers.

fn child(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", serde_json::to_string(key).unwrap_or_default())
    }
}

fn is_int(v: &Value) -> bool {
    v.as_number().is_some_and(|n| n.is_i64() || n.is_u64())
}

fn non_empty_str(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty())
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Version stamps.

/// What a version stamp turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stamp {
    /// The supported version.
    Supported,
    /// Missing or of the wrong JSON type: reported, the version's rules still run.
    Malformed,
    /// A well-typed but unsupported version: reported, that namespace's rules are skipped.
    Unsupported,
}

/// An integer version stamp that must be exactly 1 (`what` names the namespace).
fn int_stamp(v: Option<&Value>, path: &str, what: &str, out: &mut Vec<Violation>) -> Stamp {
    let found = describe(v);
    let expected = match v {
        Some(x) if is_int(x) && x.as_u64() == Some(1) => return Stamp::Supported,
        Some(x) if is_int(x) => {
            out.push(Violation::new(
                path,
                format!("a supported {what} (only 1)"),
                found,
            ));
            return Stamp::Unsupported;
        }
        None => format!("the integer 1 ({what}; a consumer never guesses a missing version)"),
        Some(Value::Bool(_)) => format!("the integer 1 ({what}; a bool is not a version)"),
        Some(Value::String(_)) => format!("the integer 1 ({what}; a string is not a version)"),
        Some(Value::Number(_)) => format!("the integer 1 ({what}; a float is not a version)"),
        Some(_) => format!("the integer 1 ({what})"),
    };
    out.push(Violation::new(path, expected, found));
    Stamp::Malformed
}

fn soak_stamp(v: Option<&Value>, path: &str, out: &mut Vec<Violation>) -> Stamp {
    let want = crate::SOAK_ARTIFACT_SCHEMA_VERSION;
    let expected = match v {
        Some(Value::String(s)) if s == want => return Stamp::Supported,
        Some(Value::String(_)) => {
            out.push(Violation::new(
                path,
                format!(
                    "a supported soak artifact version (only the string {})",
                    quoted(want)
                ),
                describe(v),
            ));
            return Stamp::Unsupported;
        }
        None => format!(
            "the string {} (a consumer never guesses a missing version)",
            quoted(want)
        ),
        Some(Value::Number(_)) => format!(
            "the string {} (soak artifact versions are strings)",
            quoted(want)
        ),
        Some(_) => format!("the string {}", quoted(want)),
    };
    out.push(Violation::new(path, expected, describe(v)));
    Stamp::Malformed
}

// ---------------------------------------------------------------------------------------------
// Shape: a small interpreter for the JSON Schema subset the derived schemas use.

fn schema_root(kind: ArtifactKind) -> &'static Value {
    static ROOTS: OnceLock<[Value; 3]> = OnceLock::new();
    let roots = ROOTS.get_or_init(|| ArtifactKind::ALL.map(json_schema));
    &roots[ArtifactKind::ALL
        .iter()
        .position(|k| *k == kind)
        .expect("ALL lists every kind")]
}

/// The schema keywords [`Shape`] interprets; the others it meets are annotations.
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

struct Shape {
    root: &'static Value,
}

impl Shape {
    fn of(kind: ArtifactKind) -> Self {
        Shape {
            root: schema_root(kind),
        }
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

// ---------------------------------------------------------------------------------------------
// Run summary.

/// `soak`: the summary is embedded in a passing soak artifact, which needs a runtime manifest
/// (the soak runs an off-policy job).
fn check_run_summary(v: &Value, path: &str, soak: bool, out: &mut Vec<Violation>) {
    let Some(obj) = v.as_object() else {
        out.push(Violation::new(
            path,
            "a run summary object",
            describe(Some(v)),
        ));
        return;
    };
    let stamp = int_stamp(
        obj.get("metric_schema_version"),
        &child(path, "metric_schema_version"),
        "metric schema version",
        out,
    );
    if stamp != Stamp::Unsupported {
        let root = Shape::of(ArtifactKind::RunSummary);
        root.check(
            root.root,
            v,
            path,
            &["metric_schema_version", "runtime_manifest"],
            out,
        );
    }
    let completed = obj.get("status").and_then(Value::as_str) == Some("completed");
    let mpath = child(path, "runtime_manifest");
    match obj.get("runtime_manifest") {
        Some(Value::Null) | None if soak => out.push(Violation::new(
            mpath,
            "a runtime manifest (a soak runs an off-policy job, which records one)",
            describe(obj.get("runtime_manifest")),
        )),
        Some(Value::Null) | None => {}
        Some(m) => check_manifest(m, &mpath, completed, out),
    }
}

// ---------------------------------------------------------------------------------------------
// Runtime manifest v1.

fn check_manifest(v: &Value, path: &str, completed: bool, out: &mut Vec<Violation>) {
    let Some(obj) = v.as_object() else {
        out.push(Violation::new(
            path,
            "a runtime manifest object",
            describe(Some(v)),
        ));
        return;
    };
    let stamp = int_stamp(
        obj.get("schema_version"),
        &child(path, "schema_version"),
        "runtime manifest schema version",
        out,
    );
    if stamp == Stamp::Unsupported {
        return;
    }
    let when = " (required when the run completed)";
    for key in ["inference_ring_capacity", "collector_metrics_interval"] {
        let x = obj.get(key);
        let ok = x.is_some_and(|x| is_int(x) && x.as_u64().is_some_and(|n| n > 0));
        let absent = matches!(x, None | Some(Value::Null));
        if ok || (absent && !completed) {
            continue;
        }
        let expected = if absent {
            format!("a positive integer{when}")
        } else {
            "a positive integer".to_owned()
        };
        out.push(Violation::new(child(path, key), expected, describe(x)));
    }
    check_device(obj, v, path, completed, out);
    let root = Shape::of(ArtifactKind::RuntimeManifest);
    root.check(
        root.root,
        v,
        path,
        &[
            "schema_version",
            "inference_ring_capacity",
            "collector_metrics_interval",
            "collector_backend_device",
        ],
        out,
    );
    if completed {
        for key in ["inference_flight", "replay_ingress"] {
            let x = obj.get(key);
            if matches!(x, None | Some(Value::Null)) {
                out.push(Violation::new(
                    child(path, key),
                    format!(
                        "{} {key} mapping{when}",
                        if key.starts_with('i') { "an" } else { "a" }
                    ),
                    describe(x),
                ));
            }
        }
    }
}

fn check_device(
    obj: &Map<String, Value>,
    v: &Value,
    path: &str,
    completed: bool,
    out: &mut Vec<Violation>,
) {
    let key = "collector_backend_device";
    let x = obj.get(key);
    let rule = "a non-empty device string, or null when the backend needs no accelerator";
    match x {
        None if completed => out.push(Violation::new(
            child(path, key),
            format!("{rule} (required when the run completed)"),
            "missing",
        )),
        None => {}
        Some(Value::String(s)) if !s.trim().is_empty() => {}
        Some(Value::Null) => {
            if let Some(ctx) = accelerator_context(v) {
                out.push(Violation::new(
                    child(path, key),
                    format!(
                        "a non-empty device string (collector_accelerator_context {} names an \
                         accelerator, so the backend needs one)",
                        quoted(ctx)
                    ),
                    "null",
                ));
            }
        }
        Some(other) => out.push(Violation::new(
            child(path, key),
            rule,
            describe(Some(other)),
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// Soak artifact 0.3.0.

fn check_soak(v: &Value, out: &mut Vec<Violation>) {
    let Some(obj) = v.as_object() else {
        out.push(Violation::new(
            "$",
            "a soak artifact object",
            describe(Some(v)),
        ));
        return;
    };
    if soak_stamp(obj.get("schema_version"), "$.schema_version", out) == Stamp::Unsupported {
        return;
    }
    let root = Shape::of(ArtifactKind::SoakArtifact);
    root.check(root.root, v, "$", &["schema_version"], out);

    let summary = obj.get("run_summary");
    let shutdown = obj.get("shutdown").filter(|s| !s.is_null());
    // The top-level shutdown is the producer's raw runtime_manifest.shutdown.
    if let (Some(top), Some(raw)) = (
        shutdown,
        summary
            .and_then(|s| s.get("runtime_manifest"))
            .and_then(|m| m.get("shutdown")),
    ) {
        if top != raw {
            out.push(Violation::new(
                "$.shutdown",
                "the run summary's runtime_manifest.shutdown, copied raw",
                "a different value",
            ));
        }
    }
    match obj.get("status").and_then(Value::as_str) {
        Some("passed") => check_soak_pass(obj, out),
        Some("failed") => check_soak_failure(obj, out),
        _ => {} // the shape check reported the status
    }
}

fn check_soak_pass(obj: &Map<String, Value>, out: &mut Vec<Violation>) {
    let passed = " (the soak passed)";
    for key in ["failure_classification", "failure_reason"] {
        let x = obj.get(key);
        // Missing is the shape check's to report.
        if x.is_some_and(|x| !x.is_null()) {
            out.push(Violation::new(
                child("$", key),
                format!("null{passed}"),
                describe(x),
            ));
        }
    }
    let rc = obj.get("returncode");
    if rc.and_then(Value::as_i64) != Some(0) && rc.is_some_and(|r| r.is_null() || is_int(r)) {
        out.push(Violation::new(
            "$.returncode",
            "0 (the soak passed, so its command exited cleanly)",
            describe(rc),
        ));
    }
    let min = obj
        .get("monitor")
        .and_then(|m| m.get("min_duration_s"))
        .and_then(Value::as_f64);
    if let (Some(min), Some(d)) = (min, obj.get("duration_s").and_then(Value::as_f64)) {
        if d < min {
            out.push(Violation::new(
                "$.duration_s",
                format!("at least monitor.min_duration_s = {min}{passed}"),
                describe(obj.get("duration_s")),
            ));
        }
    }
    let residual = obj
        .get("post_shutdown")
        .and_then(|p| p.get("residual_processes"))
        .and_then(Value::as_array);
    if residual.is_some_and(|r| !r.is_empty()) {
        out.push(Violation::new(
            "$.post_shutdown.residual_processes",
            "no residual process (the soak passed; leftovers are a resource_leak)",
            describe(
                obj.get("post_shutdown")
                    .and_then(|p| p.get("residual_processes")),
            ),
        ));
    }
    let count = obj
        .get("resource_summary")
        .and_then(|r| r.get("residual_process_count"));
    if count.and_then(Value::as_u64).is_some_and(|n| n > 0) {
        out.push(Violation::new(
            "$.resource_summary.residual_process_count",
            format!("0{passed}"),
            describe(count),
        ));
    }

    // The producer's shutdown snapshot: a clean, owned, normal completion.
    match obj.get("shutdown") {
        Some(s) if s.is_object() => {
            let c = s.get("classification");
            if c.and_then(Value::as_str) != Some(NORMAL_COMPLETION) {
                out.push(Violation::new(
                    "$.shutdown.classification",
                    format!("{}{passed}", quoted(NORMAL_COMPLETION)),
                    describe(c),
                ));
            }
            for key in ["owner", "phase"] {
                // A missing or non-string owner/phase is the shape check's to report.
                let x = s.get(key);
                if x.and_then(Value::as_str)
                    .is_some_and(|t| t.trim().is_empty())
                {
                    out.push(Violation::new(
                        child("$.shutdown", key),
                        format!("a non-empty string{passed}"),
                        describe(x),
                    ));
                }
            }
            let errors = s.get("cleanup").and_then(|c| c.get("errors"));
            if errors
                .and_then(Value::as_array)
                .is_some_and(|e| !e.is_empty())
            {
                out.push(Violation::new(
                    "$.shutdown.cleanup.errors",
                    format!("no cleanup error{passed}"),
                    describe(errors),
                ));
            }
        }
        None => {} // the shape check reports it missing
        other => out.push(Violation::new(
            "$.shutdown",
            format!("the producer's shutdown snapshot{passed}"),
            describe(other),
        )),
    }

    // The run summary: present, completed, drained, then valid on its own.
    let summary = obj.get("run_summary");
    let Some(s) = summary.filter(|s| s.is_object()) else {
        if summary.is_none() {
            return; // the shape check reports it missing
        }
        out.push(Violation::new(
            "$.run_summary",
            format!("the run's summary object{passed}"),
            describe(summary),
        ));
        return;
    };
    let status = s.get("status");
    if status.and_then(Value::as_str) != Some("completed") {
        out.push(Violation::new(
            "$.run_summary.status",
            format!("\"completed\"{passed}"),
            describe(status),
        ));
    } else {
        check_drained(s, out);
    }
    check_run_summary(s, "$.run_summary", true, out);
}

/// Reference §7: the invariants a completed run's replay ingress and inference flight hold.
fn check_drained(summary: &Value, out: &mut Vec<Violation>) {
    let m = "$.run_summary.runtime_manifest";
    let Some(manifest) = summary.get("runtime_manifest") else {
        return;
    };
    let drained = "a completed run drains";
    if let Some(flight) = manifest.get("inference_flight") {
        for key in ["queue_depth", "publication_lag"] {
            let x = flight.get(key);
            if x.and_then(Value::as_u64).is_some_and(|n| n != 0) {
                out.push(Violation::new(
                    format!("{m}.inference_flight.{key}"),
                    format!("0 or absent ({drained} the inference flight)"),
                    describe(x),
                ));
            }
        }
    }
    let Some(ri) = manifest.get("replay_ingress").filter(|r| r.is_object()) else {
        return;
    };
    let p = format!("{m}.replay_ingress");
    let get = |k: &str| ri.get(k).filter(|x| is_int(x)).and_then(Value::as_u64);
    let mut bad = |key: &str, expected: String| {
        out.push(Violation::new(
            child(&p, key),
            expected,
            describe(ri.get(key)),
        ));
    };
    let depth = get("ingress_depth");
    let rows = get("ingress_slot_rows");
    let published = get("published_sequence");
    let released = get("release_sequence");
    let occupancy = get("occupancy");
    let high = get("high_water_occupancy");
    if depth == Some(0) {
        bad(
            "ingress_depth",
            "a positive integer (a completed run had an ingress)".into(),
        );
    }
    if rows == Some(0) {
        bad(
            "ingress_slot_rows",
            "a positive integer (a completed run wrote rows)".into(),
        );
    }
    let mut occupancy_reported = false;
    if let (Some(pu), Some(re)) = (published, released) {
        if re > pu {
            bad(
                "release_sequence",
                format!("at most published_sequence ({pu})"),
            );
        } else if occupancy.is_some_and(|o| o != pu - re) {
            bad(
                "occupancy",
                format!("published_sequence − release_sequence ({})", pu - re),
            );
            occupancy_reported = true;
        }
    }
    if !occupancy_reported && occupancy.is_some_and(|o| o != 0) {
        bad("occupancy", format!("0 ({drained} the replay ingress)"));
    }
    if let (Some(h), Some(d)) = (high, depth) {
        if h > d {
            bad(
                "high_water_occupancy",
                format!("at most ingress_depth ({d})"),
            );
        }
    }
    if let (Some(h), Some(o)) = (high, occupancy) {
        if h < o {
            bad("high_water_occupancy", format!("at least occupancy ({o})"));
        }
    }
    if high == Some(0) {
        bad(
            "high_water_occupancy",
            "a positive integer (a completed run used the ingress)".into(),
        );
    }
    for key in ["early_returns", "dropped_batches"] {
        if get(key).is_some_and(|n| n != 0) {
            bad(key, "0 on a completed run".into());
        }
    }
    if let (Some(c), Some(s), Some(e)) = (
        get("closed_returns"),
        get("stop_returns"),
        get("early_returns"),
    ) {
        if c + s != e {
            out.push(Violation::new(
                format!("{p}.closed_returns"),
                format!("closed_returns + stop_returns == early_returns ({e})"),
                format!("closed_returns + stop_returns = {}", c + s),
            ));
        }
    }
    let steps_v = summary.get("total_env_steps");
    let Some(steps) = steps_v.filter(|x| is_int(x)).and_then(Value::as_u64) else {
        return;
    };
    if steps == 0 {
        out.push(Violation::new(
            "$.run_summary.total_env_steps",
            "a positive integer (a completed run stepped)",
            describe(steps_v),
        ));
        return;
    }
    let Some(rows) = rows.filter(|r| *r > 0) else {
        return;
    };
    if steps % rows != 0 {
        out.push(Violation::new(
            "$.run_summary.total_env_steps",
            format!("a multiple of ingress_slot_rows ({rows})"),
            describe(steps_v),
        ));
        return;
    }
    let slots = steps / rows;
    for key in ["published_sequence", "release_sequence"] {
        if get(key).is_some_and(|n| n != slots) {
            out.push(Violation::new(
                child(&p, key),
                format!("total_env_steps / ingress_slot_rows ({slots})"),
                describe(ri.get(key)),
            ));
        }
    }
}

fn check_soak_failure(obj: &Map<String, Value>, out: &mut Vec<Violation>) {
    let failed = " (the soak failed)";
    let reason = obj.get("failure_reason");
    // Missing is the shape check's to report.
    if reason.is_some() && !non_empty_str(reason) {
        out.push(Violation::new(
            "$.failure_reason",
            format!("a non-empty string{failed}"),
            describe(obj.get("failure_reason")),
        ));
    }
    let fc = obj.get("failure_classification");
    let Some(have) = fc.and_then(Value::as_str) else {
        if matches!(fc, Some(Value::Null)) {
            out.push(Violation::new(
                "$.failure_classification",
                format!("a failure classification{failed}"),
                describe(fc),
            ));
        }
        return;
    };
    let Some(have_c) = FailureClassification::from_name(have) else {
        return; // the shape check reported the unknown name
    };
    let mut want = |expected: String| {
        out.push(Violation::new(
            "$.failure_classification",
            expected,
            describe(fc),
        ));
    };
    let summary = obj.get("run_summary");
    match summary {
        None | Some(Value::Null) => return,
        Some(s) if !s.is_object() => {
            if have_c != FailureClassification::InvalidRunSummary {
                want(format!(
                    "\"invalid_run_summary\" (run_summary is {})",
                    describe(Some(s))
                ));
            }
            return;
        }
        Some(_) => {}
    }
    let s = summary.expect("matched above");
    let mut stamps = Vec::new();
    let metric = int_stamp(s.get("metric_schema_version"), "", "", &mut stamps);
    let manifest = match s.get("runtime_manifest") {
        Some(m) if m.is_object() => int_stamp(m.get("schema_version"), "", "", &mut stamps),
        _ => Stamp::Malformed,
    };
    if metric != Stamp::Supported || manifest != Stamp::Supported {
        // The monitor refuses to read a producer classification out of an unsupported schema.
        if have_c != FailureClassification::SchemaViolation {
            want(
                "\"schema_violation\" (the run summary's metric or manifest schema is missing or \
                  unsupported)"
                    .into(),
            );
        }
        return;
    }
    let status = s.get("status").and_then(Value::as_str);
    let shutdown = obj.get("shutdown").filter(|x| x.is_object());
    let classification = shutdown
        .and_then(|x| x.get("classification"))
        .and_then(Value::as_str);
    if status.is_some_and(|st| st != "completed") {
        if classification == Some(NORMAL_COMPLETION) {
            if have_c != FailureClassification::ShutdownContractViolation {
                want(format!(
                    "\"shutdown_contract_violation\" (normal_completion on a run whose summary \
                     status is {})",
                    quoted(status.unwrap_or_default())
                ));
            }
            return;
        }
        let trusted = shutdown.is_some_and(well_formed_shutdown);
        if let Some(producer) = classification
            .filter(|_| trusted)
            .and_then(FailureClassification::from_name)
            .filter(|c| c.is_producer())
        {
            if have_c != producer {
                want(format!(
                    "{} (the producer's shutdown classification wins over the monitor's)",
                    quoted(producer.as_str())
                ));
            }
            return;
        }
    }
    // No valid producer classification: one only a producer can make has no source.
    let producer_only = matches!(
        have_c,
        FailureClassification::LearnerFailure
            | FailureClassification::CollectorFailure
            | FailureClassification::BackendWorkerFailure
    );
    if producer_only {
        want(format!(
            "a monitor classification or unknown_failure ({} names an owner, but the shutdown \
             snapshot carries no valid producer classification)",
            quoted(have)
        ));
    }
}

/// A shutdown snapshot whose classification may be trusted: reference §7's shape.
fn well_formed_shutdown(s: &Value) -> bool {
    let class_ok = s
        .get("classification")
        .and_then(Value::as_str)
        .is_some_and(|c| SHUTDOWN_CLASSIFICATIONS.contains(&c));
    let exception_ok = match s.get("exception") {
        None | Some(Value::Null) => true,
        Some(e) => {
            e.get("type").is_some_and(Value::is_string)
                && e.get("message").is_some_and(Value::is_string)
        }
    };
    let cleanup_ok = s
        .get("cleanup")
        .and_then(|c| c.get("errors"))
        .is_some_and(Value::is_array);
    class_ok
        && exception_ok
        && cleanup_ok
        && non_empty_str(s.get("owner"))
        && non_empty_str(s.get("phase"))
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

    #[test]
    fn child_paths_quote_keys_that_are_not_identifiers() {
        assert_eq!(child("$", "replay_ingress"), "$.replay_ingress");
        assert_eq!(
            child("$.context.environment", "CUDA_VISIBLE_DEVICES"),
            "$.context.environment.CUDA_VISIBLE_DEVICES"
        );
        assert_eq!(
            child("$.x", "timeout/stale_tick"),
            "$.x[\"timeout/stale_tick\"]"
        );
    }

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
