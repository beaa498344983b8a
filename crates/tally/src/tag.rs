//! `Tag`: a resolved canonical tag, either a registry spec or an interned family member.

use rustc_hash::FxHashMap as HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use tally_schema::{FamilySpec, MetricSpec};

/// A validated canonical tag. Cheap to clone (a pointer, or a reference-counted string).
#[derive(Debug, Clone)]
pub enum Tag {
    /// A closed-registry tag.
    Spec(&'static MetricSpec),
    /// A member of an open family (`reward/<term>`, `Episode_Termination/<term>`).
    Family(&'static FamilySpec, Arc<str>),
    /// A key of a free namespace validated by its own rules (the `rft` profile's Trinity keys).
    Free(Arc<str>),
    /// A user's own metric (outside the canonical groups).
    User(Arc<str>),
}

impl Tag {
    /// The tag text as persisted.
    pub fn as_str(&self) -> &str {
        match self {
            Tag::Spec(s) => s.tag,
            Tag::Family(_, t) | Tag::Free(t) | Tag::User(t) => t,
        }
    }

    /// The registry spec, for closed tags.
    pub fn spec(&self) -> Option<&'static MetricSpec> {
        match self {
            Tag::Spec(s) => Some(s),
            Tag::Family(..) | Tag::Free(_) | Tag::User(_) => None,
        }
    }

    /// Whether two family, free or user tags hold the same text `Arc` (for tags from one
    /// [`FamilyInterner`], the same tag).
    pub fn same_interned(&self, other: &Tag) -> bool {
        matches!((self.interned_addr(), other.interned_addr()), (Some(a), Some(b)) if a == b)
    }

    /// The address of a family, free or user tag's interned text, which identifies it (None
    /// for a registry tag).
    pub fn interned_addr(&self) -> Option<usize> {
        match self {
            Tag::Family(_, a) | Tag::Free(a) | Tag::User(a) => Some(a.as_ptr() as usize),
            Tag::Spec(_) => None,
        }
    }

    /// Whether the backend receives this tag.
    pub fn persisted(&self) -> bool {
        match self {
            Tag::Spec(s) => s.persisted,
            Tag::Family(f, _) => f.persisted,
            Tag::Free(_) | Tag::User(_) => true,
        }
    }
}

impl PartialEq for Tag {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.as_str(), other.as_str());
        // The same text in memory (one spec, one interned string: the usual case, a step's key
        // against last step's) is equal without comparing bytes.
        std::ptr::eq(a, b) || a == b
    }
}

impl Eq for Tag {}

impl Hash for Tag {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl std::borrow::Borrow<str> for Tag {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

/// Interns family-member tags so a steady-state step allocates no strings.
#[derive(Debug, Default)]
pub struct FamilyInterner {
    /// One map per family (indexed like `FAMILIES`): input key → full tag.
    by_family: Vec<HashMap<Box<str>, Arc<str>>>,
}

impl FamilyInterner {
    /// The interned tag for `key` of family number `family`, if `key` was seen before.
    pub fn cached(&self, family: usize, key: &str) -> Option<Arc<str>> {
        self.by_family.get(family)?.get(key).cloned()
    }

    /// The interned full tag for `key` of family number `family` (`full` builds it on a miss).
    pub fn get(&mut self, family: usize, key: &str, full: impl FnOnce() -> String) -> Arc<str> {
        if self.by_family.len() <= family {
            self.by_family.resize_with(family + 1, HashMap::default);
        }
        if let Some(t) = self.by_family[family].get(key) {
            return t.clone();
        }
        // One `Arc` per tag text, whichever key named it first (a bare and a prefixed reward
        // term name one tag): interned tags are then equal exactly when their pointers are.
        let text = full();
        let t: Arc<str> = self
            .by_family
            .iter()
            .flat_map(|m| m.values())
            .find(|t| ***t == *text)
            .cloned()
            .unwrap_or_else(|| text.into());
        self.by_family[family].insert(key.into(), t.clone());
        t
    }
}
