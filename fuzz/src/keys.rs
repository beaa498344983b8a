//! Metric keys: the schema lookup, the user-tag rule, the Trinity key convention and the tag
//! globs (`tally.read(tags=...)`, legacy patterns).

use tally_schema::legacy::glob_match;
use tally_schema::lookup::{lookup, metric, validate_user_tag, TagRef};
use tally_schema::rft::{is_eval_statistic, validate_rft_key, RFT_CATEGORIES};

/// Fuzz target `metric_key`: the input (lossy UTF-8) as a key; split at its first newline,
/// as a glob and a text.
pub fn metric_key(input: &[u8]) {
    let key = String::from_utf8_lossy(input);
    let key = key.as_ref();

    match lookup(key) {
        Ok(TagRef::Metric(spec)) => assert_eq!(spec.tag, key),
        Ok(_) => assert!(metric(key).is_none()),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    if let Err(why) = validate_user_tag(key) {
        assert!(!why.is_empty());
    }
    match validate_rft_key(key) {
        Ok(k) => {
            assert!(RFT_CATEGORIES.contains(&k.category));
            assert!(key.starts_with(k.category));
        }
        Err(why) => assert!(!why.is_empty()),
    }
    let _ = is_eval_statistic(key);

    // A glob without `*` matches only itself; every text matches itself and `*`.
    assert!(glob_match(key, key));
    assert!(glob_match("*", key));
    if let Some((pattern, text)) = key.split_once('\n') {
        let matched = glob_match(pattern, text);
        if !pattern.contains('*') {
            assert_eq!(matched, pattern == text);
        }
        // Bounded: the brute force below is quadratic in the text.
        if text.len() <= 64 {
            let starred = glob_match(&format!("*{pattern}"), text);
            assert_eq!(
                starred,
                suffix_match(pattern, text),
                "'*{pattern}' on {text:?}"
            );
        }
    }
}

/// Whether some suffix of `text` matches `pattern` (what a leading `*` adds). Matching is by
/// bytes, but a UTF-8 pattern can only start matching at a character boundary.
fn suffix_match(pattern: &str, text: &str) -> bool {
    (0..=text.len()).any(|i| text.is_char_boundary(i) && glob_match(pattern, &text[i..]))
}
