//! What the rules read as an integer and as a non-empty string. An integer is written without
//! a fraction or exponent, so `1.0` is not the integer 1 (JSON Schema says it is).

use serde_json::Value;

/// Whether `v` is a JSON integer (written without a fraction or exponent).
pub(super) fn is_int(v: &Value) -> bool {
    v.as_number().is_some_and(|n| n.is_i64() || n.is_u64())
}

/// Whether `v` is a string with something other than whitespace.
pub(super) fn non_empty_str(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty())
}
