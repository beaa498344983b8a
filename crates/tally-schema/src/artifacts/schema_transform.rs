//! Transforms the derived JSON Schemas apply where a type alone cannot say the contract's rule.

use serde_json::Value;

/// Schema transform: every declared property is required (a nullable one may be null, but
/// must be there), as the soak artifact and the optimisation entries demand.
pub(super) fn require_every_property(schema: &mut schemars::Schema) {
    let keys: Vec<Value> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().map(Value::String).collect())
        .unwrap_or_default();
    schema.insert("required".into(), Value::Array(keys));
}
