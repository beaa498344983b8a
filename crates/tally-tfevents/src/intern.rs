//! [`Interner`]: a small id per distinct tag, looked up once per scalar at the cost of one
//! string comparison in the common case.

use std::collections::HashMap;

const NO_ID: usize = usize::MAX;

/// Distinct strings numbered in first-seen order (0, 1, 2, ...).
///
/// Writers repeat their tags in a fixed order (tally: one event's tags; torch and tensorboardX:
/// one event per tag, cycling), so the string that followed the previous one last time is tried
/// first, with one comparison; the hash map is only for the rest. Readers that turn tags into
/// columns, codes or encoded text keep their per-tag data in a `Vec` indexed by the id.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    names: Vec<Box<str>>,
    /// Each id's successor the last time it was followed, or `NO_ID`.
    next: Vec<usize>,
    ids: HashMap<Box<str>, usize>,
    prev: Option<usize>,
}

impl Interner {
    /// An empty interner.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `s`; a string not seen before gets the next id, [`len`](Self::len) − 1 after
    /// the call.
    pub fn id(&mut self, s: &str) -> usize {
        if let Some(prev) = self.prev {
            let guess = self.next[prev];
            if guess != NO_ID && *self.names[guess] == *s {
                self.prev = Some(guess);
                return guess;
            }
        }
        let id = match self.ids.get(s) {
            Some(&id) => id,
            None => {
                let id = self.names.len();
                self.names.push(s.into());
                self.next.push(NO_ID);
                self.ids.insert(s.into(), id);
                id
            }
        };
        if let Some(prev) = self.prev {
            self.next[prev] = id;
        }
        self.prev = Some(id);
        id
    }

    /// The id of the UTF-8 string `bytes`, or `None` when they are not UTF-8. When they equal
    /// the expected successor's bytes no validation is needed (that string was checked once).
    #[inline]
    pub fn id_of_bytes(&mut self, bytes: &[u8]) -> Option<usize> {
        if let Some(prev) = self.prev {
            let guess = self.next[prev];
            if let Some(name) = self.names.get(guess) {
                if same_bytes(name.as_bytes(), bytes) {
                    self.prev = Some(guess);
                    return Some(guess);
                }
            }
        }
        self.id_of_new_bytes(bytes)
    }

    /// [`id_of_bytes`](Self::id_of_bytes) when the guess missed.
    fn id_of_new_bytes(&mut self, bytes: &[u8]) -> Option<usize> {
        Some(self.id(std::str::from_utf8(bytes).ok()?))
    }

    /// Forgets every string numbered `len` or above, so the next new string gets `len` (the
    /// tags of a record a reader then refused must not leave unused ids).
    pub fn truncate(&mut self, len: usize) {
        if len >= self.names.len() {
            return;
        }
        for name in self.names.drain(len..) {
            self.ids.remove(&name);
        }
        self.next.truncate(len);
        for next in &mut self.next {
            if *next >= len {
                *next = NO_ID;
            }
        }
        if self.prev.is_some_and(|p| p >= len) {
            self.prev = None;
        }
    }

    /// How many distinct strings.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no string was interned.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The string of `id`.
    pub fn name(&self, id: usize) -> Option<&str> {
        self.names.get(id).map(|s| &**s)
    }
}

/// `a == b` for the short strings tags are, a word at a time and inline (the library
/// comparison is a call whose set-up costs as much as comparing a tag): whole words, then the
/// last word overlapping the one before, so no byte loop for any length from 4 on.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n >= 8 {
        let mut i = 0;
        while i + 8 < n {
            if word::<8>(a, i) != word::<8>(b, i) {
                return false;
            }
            i += 8;
        }
        return word::<8>(a, n - 8) == word::<8>(b, n - 8);
    }
    if n >= 4 {
        return word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4);
    }
    a.iter().zip(b).all(|(p, q)| p == q)
}

/// The `N` bytes of `s` from `at` (callers keep `at + N <= s.len()`; beyond it, `None`).
#[inline(always)]
fn word<const N: usize>(s: &[u8], at: usize) -> Option<&[u8; N]> {
    s.get(at..)?.first_chunk::<N>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_first_seen_order_whatever_the_guess() {
        let mut i = Interner::new();
        // A cycle (guessed after the first round), then a break in it, then a new tag.
        let seq = ["a", "b", "c", "a", "b", "c", "a", "c", "b", "d", "a"];
        let ids: Vec<usize> = seq.iter().map(|s| i.id(s)).collect();
        assert_eq!(ids, [0, 1, 2, 0, 1, 2, 0, 2, 1, 3, 0]);
        assert_eq!(i.len(), 4);
        assert_eq!(i.name(3), Some("d"));
        assert_eq!(i.name(4), None);
        // The empty string and a prefix of another are distinct.
        assert_eq!(i.id(""), 4);
        assert_eq!(i.id("ab"), 5);
        assert_eq!(i.id("a"), 0);
        // Bytes: the same ids, and no id for bytes that are not UTF-8, guessed or not.
        assert_eq!(i.id_of_bytes(b"b"), Some(1));
        assert_eq!(i.id_of_bytes(b"c"), Some(2));
        assert_eq!(i.id_of_bytes(b"b"), Some(1));
        assert_eq!(i.id_of_bytes(b"\xff"), None);
        assert_eq!(i.id_of_bytes(b"e"), Some(6));
    }

    #[test]
    fn truncate_forgets_the_last_strings_and_their_guesses() {
        let mut i = Interner::new();
        for s in ["a", "b", "c", "a", "b", "c", "a"] {
            i.id(s);
        }
        i.truncate(1);
        assert_eq!(i.len(), 1);
        assert_eq!(i.name(1), None);
        // "a" was followed by "b": that guess is gone, and new strings take the freed ids.
        assert_eq!(i.id("x"), 1);
        assert_eq!(i.id("b"), 2);
        assert_eq!(i.id_of_bytes(b"a"), Some(0));
        assert_eq!(i.id("c"), 3);
        i.truncate(10);
        assert_eq!(i.len(), 4);
    }

    #[test]
    fn same_bytes_is_equality_at_every_length_and_position() {
        let a: Vec<u8> = (0..40).collect();
        for len in 0..40 {
            assert!(same_bytes(&a[..len], &a[..len]));
            assert!(!same_bytes(&a[..len], &a[..len + 1]));
            for at in 0..len {
                let mut b = a[..len].to_vec();
                b[at] ^= 0x80;
                assert!(!same_bytes(&a[..len], &b), "len {len}, byte {at}");
            }
        }
    }
}
