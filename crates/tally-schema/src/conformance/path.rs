//! How a violation names the offending member: its JSONPath.

/// The JSONPath of member `key` under `path`: `$.a.b`, or `$.a["x/y"]` for a key that is not
/// an identifier.
pub(super) fn child(path: &str, key: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
