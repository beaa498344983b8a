//! The scalar fast path: the scalars of one `Event` read straight from its protobuf wire bytes,
//! without building a prost message (no `String`, `Vec` or `Box` per value).
//!
//! It accepts only the plain shapes writers produce for scalars, each field at most once:
//! `Event { wall_time, step, summary: Summary { value: [Value, ...] } }` where every `Value` is
//! `{ tag, metadata?, simple_value }` or `{ tag, metadata?, tensor }` with a rank-0 (or
//! shapeless) `DT_FLOAT` tensor holding exactly one element, whose metadata makes it a scalar
//! (`docs/contract/consumers.md` "Reading scalars fast"). Anything else — an unknown or repeated
//! field, another summary kind, a malformed or non-canonical encoding — makes
//! [`WireScalars::decode`] return `false`, and the caller decodes the record with prost, which
//! stays the authority on what a record means and on what is corrupt. So the fast path never
//! changes a result, only its cost (a test compares both paths on random events).

use crate::intern::Interner;
use crate::proto::{DataClass, DataType, Event, SCALARS_PLUGIN_NAME};
use crate::scalar::into_scalars;
use crate::scalar_ref::ScalarRef;

/// The scalars of one event, decoded by [`WireScalars::decode`] (or handed over from the
/// general decoder by [`WireScalars::set_event`]): step, wall time and, for each scalar in
/// summary order, its tag's id and its value.
#[derive(Debug, Default, Clone)]
pub struct WireScalars {
    /// The event's step.
    pub step: i64,
    /// The event's wall time.
    pub wall_time: f64,
    /// `(tag id, value)` per scalar.
    spans: Vec<(usize, f64)>,
    /// Every tag seen, checked as UTF-8 once: a writer's tags recur, so a tag costs one byte
    /// comparison with the tag that followed the previous one last time.
    tags: Interner,
}

impl WireScalars {
    /// Empty, numbering tags on from `tags` (so ids stay the same across a run's files).
    pub fn with_tags(tags: Interner) -> Self {
        WireScalars {
            tags,
            ..Self::default()
        }
    }

    /// Decodes `data` (one record's payload) if it is a plain scalar event; `false` means "use
    /// the general decoder" and leaves `self` empty. The buffer is reused across calls.
    pub fn decode(&mut self, data: &[u8]) -> bool {
        self.spans.clear();
        let known = self.tags.len();
        let ok = self.decode_event(data).is_some();
        if !ok {
            self.spans.clear();
            // Tags met before the record turned out not plain get their ids from the general
            // decoder, or none if it refuses the record: ids stay dense.
            self.tags.truncate(known);
        }
        ok
    }

    /// Holds the scalars of an event the general decoder read, their tags numbered by the same
    /// interner as the fast path's (one id per tag whichever path read it).
    pub fn set_event(&mut self, event: Event) {
        self.spans.clear();
        self.step = event.step;
        self.wall_time = event.wall_time;
        for s in into_scalars(event) {
            let id = self.tags.id(&s.tag);
            self.spans.push((id, s.value));
        }
    }

    /// Empties the event (the tags stay numbered).
    pub fn clear(&mut self) {
        self.spans.clear();
    }

    /// `(tag id, value)` of each scalar, in summary order; [`tags`](Self::tags) names the ids.
    pub fn scalars(&self) -> &[(usize, f64)] {
        &self.spans
    }

    /// The ids' names: every tag seen so far, numbered 0, 1, 2, ... in first-seen order.
    pub fn tags(&self) -> &Interner {
        &self.tags
    }

    /// Gives the tag numbering back (to carry it to the next file of a run).
    pub fn take_tags(&mut self) -> Interner {
        std::mem::take(&mut self.tags)
    }

    /// How many scalars the last decoded event holds.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether the last decoded event holds no scalar.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The `i`-th scalar's tag and value.
    pub fn get(&self, i: usize) -> Option<(&str, f64)> {
        let &(id, value) = self.spans.get(i)?;
        Some((self.tags.name(id)?, value))
    }

    /// The `i`-th scalar as a [`ScalarRef`] with its tag's id.
    #[inline]
    pub fn scalar(&self, i: usize) -> Option<ScalarRef<'_>> {
        let &(id, value) = self.spans.get(i)?;
        Some(ScalarRef {
            tag: self.tags.name(id)?,
            tag_id: Some(id),
            step: self.step,
            wall_time: self.wall_time,
            value,
        })
    }

    fn decode_event(&mut self, data: &[u8]) -> Option<()> {
        let (wall, step, summary) = match plain_header(data) {
            Some((wall, step, summary)) => (Some(wall), Some(step), Some(summary)),
            None => header(data)?,
        };
        self.wall_time = wall.unwrap_or(0.0);
        self.step = step.unwrap_or(0);
        if let Some((start, end)) = summary {
            let mut s = Wire::new(data, start, end);
            while !s.done() {
                // Summary.value: repeated message; nothing else may appear.
                if s.key()? != 0x0a {
                    return None;
                }
                let (vs, ve) = s.len_delimited()?;
                let (ts, te, v) = match plain_value(data, vs, ve) {
                    Some(plain) => plain,
                    None => value(data, vs, ve)?,
                };
                let id = self.tags.id_of_bytes(&data[ts..te])?;
                self.spans.push((id, v));
            }
        }
        Some(())
    }
}

/// An event's fields in any order, each at most once: wall time, step and the summary's range.
type Header = (Option<f64>, Option<i64>, Option<(usize, usize)>);

/// The event's fields, or `None` when an unknown or repeated field makes it not plain.
fn header(data: &[u8]) -> Option<Header> {
    let mut r = Wire::new(data, 0, data.len());
    let (mut wall, mut step, mut summary) = (None, None, None);
    while !r.done() {
        match r.key()? {
            // wall_time: double
            0x09 => once(&mut wall, f64::from_le_bytes(r.fixed::<8>()?))?,
            // step: int64
            0x10 => once(&mut step, r.varint()? as i64)?,
            // summary: message
            0x2a => once(&mut summary, r.len_delimited()?)?,
            _ => return None,
        }
    }
    Some((wall, step, summary))
}

/// The order writers use, `wall_time`, `step`, `summary` and nothing else, read straight
/// through; `None` sends the event to [`header`], which gives the same result for this shape.
#[inline]
fn plain_header(data: &[u8]) -> Option<(f64, i64, (usize, usize))> {
    let mut r = Wire::new(data, 0, data.len());
    if r.byte()? != 0x09 {
        return None;
    }
    let wall = f64::from_le_bytes(r.fixed::<8>()?);
    if r.byte()? != 0x10 {
        return None;
    }
    let step = r.varint()? as i64;
    if r.byte()? != 0x2a {
        return None;
    }
    let summary = r.len_delimited()?;
    r.done().then_some((wall, step, summary))
}

/// The shape nearly every writer uses, `{ tag, simple_value }` in that order with a tag below
/// 128 bytes, checked byte by byte; `None` sends the value to [`value`], which reads any order
/// and gives the same result for this shape.
#[inline]
fn plain_value(data: &[u8], start: usize, end: usize) -> Option<(usize, usize, f64)> {
    let (&[key, len], rest) = data.get(start..end)?.split_first_chunk::<2>()?;
    let len = usize::from(len);
    if key != 0x0a || len >= 0x80 || rest.len() != len + 5 || rest[len] != 0x15 {
        return None;
    }
    let (_, &v) = rest.split_last_chunk::<4>()?;
    Some((start + 2, start + 2 + len, f64::from(f32::from_le_bytes(v))))
}

/// One summary value that is a scalar: `(tag start, tag end, value)`, or `None` (not handled).
fn value(data: &[u8], start: usize, end: usize) -> Option<(usize, usize, f64)> {
    let mut r = Wire::new(data, start, end);
    let (mut tag, mut metadata, mut payload) = (None, None, None);
    while !r.done() {
        match r.key()? {
            // tag: checked as UTF-8 when interned.
            0x0a => once(&mut tag, r.len_delimited()?)?,
            // simple_value: float
            0x15 => once(
                &mut payload,
                Payload::Simple(f32::from_le_bytes(r.fixed::<4>()?)),
            )?,
            // tensor: message
            0x42 => once(&mut payload, Payload::Tensor(r.len_delimited()?))?,
            // metadata: message
            0x4a => once(&mut metadata, r.len_delimited()?)?,
            _ => return None,
        }
    }
    let scalar_plugin = match metadata {
        Some((s, e)) => metadata_is_scalar(data, s, e)?,
        None => true,
    };
    let v = match payload? {
        Payload::Simple(v) => f64::from(v),
        Payload::Tensor((s, e)) if scalar_plugin => tensor_float(data, s, e)?,
        Payload::Tensor(_) => return None,
    };
    let (ts, te) = tag.unwrap_or((start, start));
    Some((ts, te, v))
}

enum Payload {
    Simple(f32),
    Tensor((usize, usize)),
}

/// Whether `SummaryMetadata` lets a tensor be read as a scalar (the rule of
/// [`crate::scalar_value`]), or `None` when it is not in the plain shape.
fn metadata_is_scalar(data: &[u8], start: usize, end: usize) -> Option<bool> {
    let mut r = Wire::new(data, start, end);
    let (mut plugin, mut display, mut description, mut class) = (None, None, None, None);
    while !r.done() {
        match r.key()? {
            0x0a => once(&mut plugin, r.len_delimited()?)?,
            0x12 => once(&mut display, r.utf8()?)?,
            0x1a => once(&mut description, r.utf8()?)?,
            0x20 => once(&mut class, r.varint()? as i32)?,
            _ => return None,
        }
    }
    let name = match plugin {
        None => None,
        Some((s, e)) => Some(plugin_name(data, s, e)?),
    };
    Some(
        class == Some(DataClass::Scalar as i32)
            || name.is_none_or(|n| n.is_empty() || n == SCALARS_PLUGIN_NAME.as_bytes()),
    )
}

/// `PluginData.plugin_name` (empty when absent), checking the message's shape.
fn plugin_name(data: &[u8], start: usize, end: usize) -> Option<&[u8]> {
    let mut r = Wire::new(data, start, end);
    let (mut name, mut content) = (None, None);
    while !r.done() {
        match r.key()? {
            0x0a => once(&mut name, r.utf8()?)?,
            0x12 => once(&mut content, r.len_delimited()?)?,
            _ => return None,
        }
    }
    Some(name.map_or(&[][..], |(s, e)| &data[s..e]))
}

/// The one element of a rank-0 `DT_FLOAT` tensor: `dtype`, an empty shape, and either four
/// bytes of `tensor_content` or exactly one `float_val` (packed or not).
fn tensor_float(data: &[u8], start: usize, end: usize) -> Option<f64> {
    let mut r = Wire::new(data, start, end);
    let (mut dtype, mut shape, mut content, mut floats) = (None, None, None, None);
    while !r.done() {
        match r.key()? {
            0x08 => once(&mut dtype, r.varint()? as i32)?,
            0x12 => once(&mut shape, r.len_delimited()?)?,
            0x22 => once(&mut content, r.len_delimited()?)?,
            // float_val packed: exactly one element.
            0x2a => {
                let (s, e) = r.len_delimited()?;
                if e - s != 4 {
                    return None;
                }
                once(&mut floats, f32::from_le_bytes(data[s..e].try_into().ok()?))?;
            }
            // float_val unpacked.
            0x2d => once(&mut floats, f32::from_le_bytes(r.fixed::<4>()?))?,
            _ => return None,
        }
    }
    if dtype != Some(DataType::DtFloat as i32) {
        return None;
    }
    // A shape with dims (even all of size 1) goes to the general path.
    if shape.is_some_and(|(s, e)| s != e) {
        return None;
    }
    match content {
        Some((s, e)) if s != e => {
            if floats.is_some() || e - s != 4 {
                return None;
            }
            Some(f64::from(f32::from_le_bytes(data[s..e].try_into().ok()?)))
        }
        _ => floats.map(f64::from),
    }
}

/// Sets a field seen for the first time; a repeated field is not the plain shape.
fn once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value);
    Some(())
}

/// A cursor over `data[pos..end]`, every read bounds-checked (`data` is cut at `end`, so one
/// check per read; positions stay those of the whole record).
struct Wire<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Wire<'a> {
    fn new(data: &'a [u8], pos: usize, end: usize) -> Self {
        Wire {
            data: &data[..end.min(data.len())],
            pos,
        }
    }

    #[inline(always)]
    fn done(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// A one-byte key (every field handled here has a number below 16); a longer key is not
    /// the plain shape.
    #[inline(always)]
    fn key(&mut self) -> Option<u8> {
        let b = self.byte()?;
        (b < 0x80).then_some(b)
    }

    #[inline(always)]
    fn byte(&mut self) -> Option<u8> {
        let b = *self.data.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    /// A varint of at most ten bytes, the tenth at most 1 (as prost accepts); one byte (a
    /// short length, a small step) is read inline.
    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        let b = self.byte()?;
        if b < 0x80 {
            return Some(u64::from(b));
        }
        self.varint_rest(u64::from(b & 0x7f))
    }

    /// The bytes of a varint after its first, whose low bits are `value`.
    fn varint_rest(&mut self, mut value: u64) -> Option<u64> {
        for i in 1..10 {
            let b = self.byte()?;
            if i == 9 && b > 1 {
                return None;
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Some(value);
            }
        }
        None
    }

    #[inline(always)]
    fn fixed<const N: usize>(&mut self) -> Option<[u8; N]> {
        let end = self.pos.checked_add(N)?;
        let bytes = self.data.get(self.pos..end)?.try_into().ok()?;
        self.pos = end;
        Some(bytes)
    }

    /// A length-delimited field: the range of its bytes.
    #[inline(always)]
    fn len_delimited(&mut self) -> Option<(usize, usize)> {
        let len = usize::try_from(self.varint()?).ok()?;
        let start = self.pos;
        let end = start.checked_add(len).filter(|&e| e <= self.data.len())?;
        self.pos = end;
        Some((start, end))
    }

    /// A string field: its range, if the bytes are UTF-8 (prost refuses the event otherwise).
    fn utf8(&mut self) -> Option<(usize, usize)> {
        let (s, e) = self.len_delimited()?;
        std::str::from_utf8(&self.data[s..e]).ok()?;
        Some((s, e))
    }
}
