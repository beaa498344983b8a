//! The damage a reader found (truncated tails, skipped records), in the JSON form every
//! `--json` report carries (`docs/contract/consumers.md` "What readers report").

use tally_tfevents::Damage;

/// The JSON form of damage found: `[{"file", "offset", "kind", "detail"}]`.
pub fn damage_json(damage: &[Damage]) -> serde_json::Value {
    damage
        .iter()
        .map(|d| {
            serde_json::json!({
                "file": d.path().map(|p| p.display().to_string()),
                "offset": d.offset(),
                "kind": d.kind_name(),
                "detail": d.detail(),
            })
        })
        .collect()
}
