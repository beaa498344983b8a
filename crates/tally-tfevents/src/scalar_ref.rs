//! `ScalarRef`: one scalar lent by a reader, borrowed rather than owned so reading costs no
//! allocation per scalar.
//!
//! Its own file, below both the wire decoder that fills it ([`crate::scalar_fast`]) and the
//! readers that lend it ([`crate::reader`], [`crate::parallel`]).

use crate::scalar::ScalarEvent;

/// One scalar borrowed from the reader: valid until the reader moves on. Reading through
/// [`ScalarReader::advance`] and [`ScalarReader::current`] costs no allocation per scalar for
/// the events the scalar fast path decodes.
///
/// [`ScalarReader::advance`]: crate::ScalarReader::advance
/// [`ScalarReader::current`]: crate::ScalarReader::current
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScalarRef<'a> {
    /// The series name.
    pub tag: &'a str,
    /// The tag's id in the reader's [`Interner`] (dense, first-seen order, the same for every
    /// scalar of that tag the reader yields: a sink keeps per-tag data in a `Vec` indexed by it
    /// instead of looking the name up again). `None` when the scalar did not come from a reader
    /// as read (a sink that renamed the tag): then look the tag up by name.
    ///
    /// [`Interner`]: crate::Interner
    pub tag_id: Option<usize>,
    /// The step of the event holding the value.
    pub step: i64,
    /// The wall time of the event holding the value.
    pub wall_time: f64,
    /// The value, widened to f64.
    pub value: f64,
}

impl ScalarRef<'_> {
    /// An owned copy.
    pub fn to_scalar_event(&self) -> ScalarEvent {
        ScalarEvent {
            tag: self.tag.to_owned(),
            step: self.step,
            wall_time: self.wall_time,
            value: self.value,
        }
    }
}
