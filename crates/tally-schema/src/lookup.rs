//! Resolving a tag against schema v1: canonical metric, family term, or a clear rejection.

use crate::legacy::{legacy_rows, retired_match};
use crate::registry::{FamilySpec, MetricSpec, FAMILIES, METRICS};
use rustc_hash::FxHashMap as HashMap;
use std::sync::OnceLock;

/// What a valid tag resolves to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TagRef<'a> {
    /// A closed-registry tag.
    Metric(&'static MetricSpec),
    /// A member of an open family, with its term.
    Family(&'static FamilySpec, &'a str),
    /// A user's own metric: a tag outside the canonical groups that is not a legacy or
    /// retired name (docs/contract/schema.md "User metrics").
    User(&'a str),
}

/// Why a tag is not a canonical schema-v1 tag.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// In a canonical group, but not in the registry and not a family member.
    #[error(
        "unregistered canonical metric tag '{tag}'{}; {} holds schema tags only: log a metric \
         of your own under a group of your own (e.g. 'charts/{}')",
        suggestion_text(.suggestion),
        group_of(.tag),
        leaf_of(.tag)
    )]
    Unknown {
        /// The rejected tag.
        tag: String,
        /// The closest canonical tag, when one is close.
        suggestion: Option<&'static str>,
    },
    /// A legacy tag that has a canonical replacement.
    #[error("retired metric tag '{tag}': use '{replacement}' ({note})")]
    Legacy {
        /// The rejected tag.
        tag: String,
        /// Canonical replacement(s), `a | b` when the mapping depends on the profile.
        replacement: String,
        /// The scale and meaning of the mapping.
        note: String,
    },
    /// A name retired with no one-to-one replacement.
    #[error("retired metric tag '{tag}': {reason}{}", see_text(.see))]
    Retired {
        /// The rejected tag.
        tag: String,
        /// Why it was retired.
        reason: &'static str,
        /// A related canonical tag or family, if any.
        see: Option<&'static str>,
    },
    /// A reserved term of an open family.
    #[error("'{tag}' is reserved and not a {family}<term> tag{}", replacement_text(.replacement))]
    ReservedTerm {
        /// The rejected tag.
        tag: String,
        /// The family prefix.
        family: &'static str,
        /// The canonical tag with this meaning, if any.
        replacement: Option<&'static str>,
    },
    /// A user tag that cannot be a TensorBoard / W&B tag.
    #[error("invalid metric tag '{tag}': {reason}")]
    InvalidTag {
        /// The rejected tag (escaped for display).
        tag: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A family term that is not a well-formed name.
    #[error("invalid term in '{tag}': {reason}")]
    InvalidTerm {
        /// The rejected tag.
        tag: String,
        /// What is wrong with the term.
        reason: &'static str,
    },
}

/// The group of `tag` with its slash (`Loss/`), or the tag itself when it has none.
fn group_of(tag: &str) -> String {
    match tag.split_once('/') {
        Some((g, _)) => format!("{g}/"),
        None => tag.to_owned(),
    }
}

/// The last path segment of `tag`.
fn leaf_of(tag: &str) -> &str {
    tag.rsplit('/').next().unwrap_or(tag)
}

/// The top-level groups (first path segment with its slash, or a whole slash-free tag) that
/// hold schema tags only: every registry tag's group and every family prefix.
pub fn canonical_groups() -> &'static [String] {
    static GROUPS: OnceLock<Vec<String>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        let mut groups: Vec<String> = METRICS
            .iter()
            .map(|m| group_of(m.tag))
            .chain(FAMILIES.iter().map(|f| f.prefix.to_owned()))
            .collect();
        groups.sort();
        groups.dedup();
        groups
    })
}

/// Whether `tag` lies in a canonical group (and so must be a schema tag).
pub fn in_canonical_group(tag: &str) -> bool {
    let group = group_of(tag);
    canonical_groups().contains(&group)
}

/// Longest user tag accepted, in bytes.
pub const MAX_USER_TAG_LEN: usize = 256;

/// Unicode's bidirectional controls (ALM, LRM, RLM, the embeddings and overrides, the
/// isolates): text after one is shown reordered, so a tag holding one reads as another.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// A user tag must be usable as a TensorBoard and W&B key and shown as itself: non-empty, at
/// most [`MAX_USER_TAG_LEN`] bytes, no control characters (bidirectional ones included), no
/// surrounding whitespace, no empty path segment (docs/contract/schema.md "User metrics").
pub fn validate_user_tag(tag: &str) -> Result<(), String> {
    if tag.is_empty() {
        return Err("it is empty".into());
    }
    if tag.len() > MAX_USER_TAG_LEN {
        return Err("it is longer than 256 bytes".into());
    }
    if tag.chars().any(char::is_control) {
        return Err("it contains a control character".into());
    }
    if let Some(c) = tag.chars().find(|&c| is_bidi_control(c)) {
        return Err(format!(
            "it contains the bidirectional control character U+{:04X}, which makes the text \
             after it show reordered (the panel would show another tag)",
            c as u32
        ));
    }
    if tag.trim() != tag {
        return Err("it starts or ends with whitespace".into());
    }
    if tag.split('/').any(str::is_empty) {
        return Err("it has an empty path segment ('//', or a leading or trailing '/')".into());
    }
    Ok(())
}

fn suggestion_text(s: &Option<&'static str>) -> String {
    s.map(|s| format!(" (did you mean '{s}'?)"))
        .unwrap_or_default()
}

fn see_text(s: &Option<&'static str>) -> String {
    s.map(|s| format!(" (see '{s}')")).unwrap_or_default()
}

fn replacement_text(s: &Option<&'static str>) -> String {
    s.map(|s| format!(": use '{s}'")).unwrap_or_default()
}

fn index() -> &'static HashMap<&'static str, usize> {
    static INDEX: OnceLock<HashMap<&'static str, usize>> = OnceLock::new();
    INDEX.get_or_init(|| {
        METRICS
            .iter()
            .enumerate()
            .map(|(i, m)| (m.tag, i))
            .collect()
    })
}

/// The position of `tag` in [`METRICS`], if it is a closed-registry tag.
pub fn metric_index(tag: &str) -> Option<usize> {
    index().get(tag).copied()
}

/// The position in [`METRICS`] of a spec borrowed from it (None for a spec from elsewhere).
pub fn spec_index(spec: &MetricSpec) -> Option<usize> {
    let range = METRICS.as_ptr_range();
    let p: *const MetricSpec = spec;
    range
        .contains(&p)
        .then(|| (p as usize - range.start as usize) / std::mem::size_of::<MetricSpec>())
}

/// The spec fed by `input` (a learner/collector/gauge key or a dedicated field), if any.
pub fn input_spec(input: crate::Input) -> Option<&'static MetricSpec> {
    static BY_INPUT: OnceLock<HashMap<crate::Input, usize>> = OnceLock::new();
    let map = BY_INPUT.get_or_init(|| {
        METRICS
            .iter()
            .enumerate()
            .filter(|(_, m)| !matches!(m.input, crate::Input::Metrics | crate::Input::Derived))
            .map(|(i, m)| (m.input, i))
            .collect()
    });
    map.get(&input).map(|&i| &METRICS[i])
}

/// The spec of a closed-registry tag.
pub fn metric(tag: &str) -> Option<&'static MetricSpec> {
    metric_index(tag).map(|i| &METRICS[i])
}

/// Resolve `tag` to a canonical metric, a family member or a user metric, or say exactly why it
/// is rejected, naming the replacement where one exists. Canonical groups are closed; legacy
/// and retired names stay refused everywhere, so a schema-v1 run never holds one.
pub fn lookup(tag: &str) -> Result<TagRef<'_>, SchemaError> {
    if let Some(spec) = metric(tag) {
        return Ok(TagRef::Metric(spec));
    }
    for family in FAMILIES {
        if let Some(term) = tag.strip_prefix(family.prefix) {
            if let Some(r) = family.reserved_terms.iter().find(|r| r.term == term) {
                return Err(SchemaError::ReservedTerm {
                    tag: tag.to_owned(),
                    family: family.prefix,
                    replacement: r.replacement,
                });
            }
            validate_term(term).map_err(|reason| SchemaError::InvalidTerm {
                tag: tag.to_owned(),
                reason,
            })?;
            return Ok(TagRef::Family(family, term));
        }
    }
    let mut rows = legacy_rows(tag).peekable();
    if rows.peek().is_some() {
        let rows: Vec<_> = rows.collect();
        let replacement = rows.iter().map(|r| r.new).collect::<Vec<_>>().join(" | ");
        let note = rows
            .iter()
            .map(|r| match r.profile {
                Some(p) => format!("{p}: {}", r.note),
                None => r.note.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("; ");
        return Err(SchemaError::Legacy {
            tag: tag.to_owned(),
            replacement,
            note,
        });
    }
    if let Some(r) = retired_match(tag) {
        return Err(SchemaError::Retired {
            tag: tag.to_owned(),
            reason: r.reason,
            see: r.see,
        });
    }
    if in_canonical_group(tag) {
        return Err(SchemaError::Unknown {
            tag: tag.to_owned(),
            suggestion: closest(tag),
        });
    }
    validate_user_tag(tag).map_err(|reason| SchemaError::InvalidTag {
        tag: tag.escape_debug().to_string(),
        reason,
    })?;
    Ok(TagRef::User(tag))
}

/// A family term must be a non-empty path of non-empty segments of printable, non-space ASCII.
fn validate_term(term: &str) -> Result<(), &'static str> {
    if term.is_empty() {
        return Err("the term is empty");
    }
    if term.split('/').any(str::is_empty) {
        return Err("the term has an empty path segment");
    }
    if !term.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("the term must be printable ASCII without spaces");
    }
    Ok(())
}

/// The closest persisted canonical tag by edit distance, if it is within a third of the length.
fn closest(tag: &str) -> Option<&'static str> {
    let limit = (tag.len() / 3).max(2);
    METRICS
        .iter()
        .filter(|m| m.persisted)
        .map(|m| {
            (
                edit_distance(&tag.to_ascii_lowercase(), &m.tag.to_ascii_lowercase()),
                m.tag,
            )
        })
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, t)| t)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
