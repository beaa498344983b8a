//! The committed JSON Schema documents under `schemas/` are generated from the artefact types.

use tally_schema::artifacts::{json_schema, json_schema_text, ArtifactKind};

#[test]
fn committed_json_schemas_are_fresh() {
    // The committed schemas are generated from the types and must match them; regenerate with
    // TALLY_BLESS=1 (docs/contract/manifest-and-soak.md, run-artifacts.md).
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas");
    let mut stale = Vec::new();
    for kind in ArtifactKind::ALL {
        let path = dir.join(kind.schema_file_name());
        let want = json_schema_text(kind);
        if std::env::var_os("TALLY_BLESS").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if have != want {
            stale.push(kind.schema_file_name());
        }
    }
    assert!(
        stale.is_empty(),
        "schemas/{stale:?} stale: run `TALLY_BLESS=1 cargo test -p tally-schema --test json_schemas`"
    );
}

#[test]
fn every_schema_is_marked_generated_and_draft_2020_12() {
    for kind in ArtifactKind::ALL {
        let s = json_schema(kind);
        assert_eq!(
            s["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{kind:?}"
        );
        let comment = s["$comment"].as_str().unwrap();
        assert!(comment.contains("do not edit"), "{comment}");
        assert!(comment.contains(kind.schema_file_name()), "{comment}");
    }
}
