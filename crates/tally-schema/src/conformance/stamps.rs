//! The three version stamps: `metric_schema_version` and the runtime manifest's
//! `schema_version` (the integer 1), and the soak artifact's `schema_version` (the string
//! "0.3.0"). Each is its own namespace; a consumer never guesses a missing version, and each
//! wrong kind of value gets a message of its own (`docs/contract/schema.md`, the version stamp;
//! `docs/contract/manifest-and-soak.md`, version namespaces).

use super::value::is_int;
use super::violation::{describe, quoted, Violation};
use serde_json::Value;

/// What a version stamp turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stamp {
    /// The supported version.
    Supported,
    /// Missing or of the wrong JSON type: reported, the version's rules still run.
    Malformed,
    /// A well-typed but unsupported version: reported, that namespace's rules are skipped.
    Unsupported,
}

/// An integer version stamp that must be exactly 1 (`what` names the namespace).
pub(super) fn int_stamp(
    v: Option<&Value>,
    path: &str,
    what: &str,
    out: &mut Vec<Violation>,
) -> Stamp {
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

/// The soak artifact's string stamp, which must be exactly [`crate::SOAK_ARTIFACT_SCHEMA_VERSION`].
pub(super) fn soak_stamp(v: Option<&Value>, path: &str, out: &mut Vec<Violation>) -> Stamp {
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
