//! Metric dicts → numbered keys and `(key number, value)` entries, in one pass over the dicts
//! (`docs/contract/rft.md` "Keys parsed once").
//!
//! The filter is Trinity's exactly: a value passes when it is an instance of `int` or `float`
//! (so bools and `np.float64` pass, `np.float32`, `str`, `None` do not); its key must then be a
//! `str` (Trinity's `parse_metric_key` raises `TypeError` otherwise) and the value becomes
//! `float(value)` (a huge `int` raises `OverflowError`).
//!
//! Keys are numbered by the identity of the Python string: the same key object recurs in every
//! run dict (and, through [`Numbered::key_object`], in every task dict built from them), so
//! each distinct key is encoded to UTF-8 once per call. Each numbered key is held, so that its
//! address cannot be freed and reused by another string during the call.

use crate::convert::AddrHasher;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use tally_aggregate::keyed::Entry;

/// `float(value)` for a value that passed the `isinstance(value, (int, float))` filter.
fn to_float(value: &Bound<'_, PyAny>) -> PyResult<f64> {
    if let Ok(f) = value.cast_exact::<PyFloat>() {
        return Ok(f.value());
    }
    if value.is_exact_instance_of::<PyInt>() || value.is_exact_instance_of::<PyBool>() {
        // PyFloat_AsDouble: exact rounding, OverflowError for |x| ≥ 2**1024.
        return value.extract::<f64>();
    }
    // Subclasses (np.float64, IntEnum, …): call `float()` itself, as Trinity does.
    value
        .py()
        .get_type::<PyFloat>()
        .call1((value,))?
        .cast::<PyFloat>()
        .map(|f| f.value())
        .map_err(|e| PyTypeError::new_err(e.to_string()))
}

/// The numeric entries of a list of metric dicts, keys numbered in first-appearance order.
pub struct Numbered<'py> {
    /// Key number → the key's `str` object (held for the call).
    objects: Vec<Bound<'py, PyAny>>,
    /// The key texts one after another (one buffer, not one allocation per key); key number
    /// `k` ends at `ends[k]`.
    text: String,
    ends: Vec<usize>,
    index: HashMap<usize, u32, BuildHasherDefault<AddrHasher>>,
    /// Key number seen at each position of the previous dict: dicts built alike list the
    /// same key objects in the same order, so this guess spares the map lookup.
    at_position: Vec<u32>,
    /// `(key number, float(value))` in encounter order.
    pub entries: Vec<Entry>,
}

impl<'py> Numbered<'py> {
    /// `for metric_dict in metric_dicts: for key, value in metric_dict.items(): …`
    pub fn of(metric_dicts: &Bound<'py, PyAny>) -> PyResult<Self> {
        // Sized for a task (17 dicts of ~10 keys), so that one needs no regrowth.
        let mut out = Numbered {
            objects: Vec::with_capacity(16),
            text: String::with_capacity(256),
            ends: Vec::with_capacity(16),
            index: HashMap::with_capacity_and_hasher(16, Default::default()),
            at_position: Vec::with_capacity(16),
            entries: Vec::with_capacity(256),
        };
        for d in metric_dicts.try_iter()? {
            let d = d?;
            if let Ok(exact) = d.cast_exact::<PyDict>() {
                out.dict(exact)?;
            } else {
                for (pos, item) in d.call_method0("items")?.try_iter()?.enumerate() {
                    let (k, v): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item?.extract()?;
                    out.push(pos, &k, &v)?;
                }
            }
        }
        Ok(out)
    }

    /// One exact dict. Only `float()` of a subclass runs Python code here, and that code may
    /// change the dict: the size is checked after it, before the iterator goes on (which would
    /// panic), with the error Python's own dict iterator raises.
    fn dict(&mut self, d: &Bound<'py, PyDict>) -> PyResult<()> {
        let size = d.len();
        self.entries.reserve(size);
        for (pos, (k, v)) in d.iter().enumerate() {
            let plain = v.is_exact_instance_of::<PyFloat>();
            self.push(pos, &k, &v)?;
            if !plain && d.len() != size {
                return Err(PyRuntimeError::new_err(
                    "dictionary changed size during iteration",
                ));
            }
        }
        Ok(())
    }

    /// Key number → its text.
    pub fn texts(&self) -> Vec<&str> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let t = &self.text[start..end];
                start = end;
                t
            })
            .collect()
    }

    /// The `str` object of key number `k`: an output key with the same text reuses it, so the
    /// next level finds it by identity again.
    pub fn key_object(&self, k: u32) -> &Bound<'py, PyAny> {
        &self.objects[k as usize]
    }

    fn push(
        &mut self,
        pos: usize,
        key: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        if let Ok(f) = value.cast_exact::<PyFloat>() {
            let k = self.number(pos, key)?;
            self.entries.push((k, f.value()));
            return Ok(());
        }
        if !(value.is_instance_of::<PyFloat>() || value.is_instance_of::<PyInt>()) {
            return Ok(());
        }
        let k = self.number(pos, key)?;
        self.entries.push((k, to_float(value)?));
        Ok(())
    }

    /// The number of `key`, numbering it when new.
    fn number(&mut self, pos: usize, key: &Bound<'py, PyAny>) -> PyResult<u32> {
        if let Some(&k) = self.at_position.get(pos) {
            if self.objects.get(k as usize).is_some_and(|o| o.is(key)) {
                return Ok(k);
            }
        }
        let addr = key.as_ptr() as usize;
        let k = match self.index.get(&addr) {
            Some(&k) => k,
            None => {
                let Ok(s) = key.cast::<PyString>() else {
                    // What `":" in key` raises in `parse_metric_key` for a non-str key.
                    let ty = key.get_type().name()?;
                    return Err(PyTypeError::new_err(format!(
                        "argument of type '{ty}' is not iterable"
                    )));
                };
                let k = u32::try_from(self.ends.len())
                    .map_err(|_| PyValueError::new_err("more than 2**32 distinct metric keys"))?;
                self.text.push_str(&s.to_cow()?);
                self.ends.push(self.text.len());
                self.objects.push(key.clone());
                self.index.insert(addr, k);
                k
            }
        };
        if pos >= self.at_position.len() {
            // Positions whose values were skipped keep a number that names no key.
            self.at_position.resize(pos + 1, u32::MAX);
        }
        self.at_position[pos] = k;
        Ok(k)
    }
}
