//! Python values → a `StepInput`, cheaply: cached keys, a float fast path, errors naming the key.
//!
//! The hot path is `log.step(...)` with ~60 values. Under abi3-py39 a `str` cannot be borrowed
//! as UTF-8, so each key would cost an encode and an allocation; instead keys are cached by the
//! identity of the Python string (literals and dict keys are the same object every iteration).
//! The cache holds a reference to each string it has seen, so an address can never be reused by
//! a different string while it is cached.

use crate::errors::{Failure, Result};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;
use tally::{Key, MpsState, StepInput, SystemInfo};
use tally_schema::{Input, METRICS};

/// A hasher for object addresses: one multiply (addresses are already well spread).
#[derive(Default)]
pub struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_right(17);
    }
}

/// Cached keys beyond this are dropped wholesale (a runner inventing keys every step).
const MAX_CACHED_KEYS: usize = 8192;

/// The step's maps a [`KeyCache`] remembers key order for (`metrics`, `learner`, `collector`,
/// `collector_inference`, `rewards`).
pub const STEP_MAPS: usize = 5;

/// Python key string (by identity) → `Key`; every key becomes a `&'static str` (no allocation),
/// canonical names the registry's own, others [`leaked`] once.
#[derive(Default)]
pub struct KeyCache {
    map: HashMap<usize, (Py<PyString>, Key), BuildHasherDefault<AddrHasher>>,
    /// Per step map, the last step's keys by position (address, key): a training loop's dicts
    /// hold the same key objects in the same order every step, so the key at a position is
    /// first compared with the one seen there last time, before any hashing. Holds only
    /// addresses `map` holds (and so keeps alive); cleared with it.
    order: [Vec<(usize, Key)>; STEP_MAPS],
}

/// The registry's own `&'static str` for `text`, when it is a canonical tag or input key.
fn static_key(text: &str) -> Option<&'static str> {
    METRICS.iter().find_map(|m| {
        if m.tag == text {
            return Some(m.tag);
        }
        match m.input {
            Input::Learner(k) | Input::Collector(k) | Input::CollectorInference(k) if k == text => {
                Some(k)
            }
            _ => None,
        }
    })
}

/// Text kept for the whole process by [`leaked`], at most: a runner's own keys (reward terms,
/// termination causes, user metrics) are few and the same every step; a runner inventing keys
/// is bounded here, its keys beyond copied each step.
const MAX_LEAKED_BYTES: usize = 1 << 20;

/// `text` as a `&'static str` shared by the process, so that a key not in the registry is
/// copied neither into each step's input nor out of it (an allocation and a free per key and
/// step otherwise); `None` once [`MAX_LEAKED_BYTES`] are kept.
fn leaked(text: &str) -> Option<&'static str> {
    static KEPT: Mutex<(BTreeSet<&'static str>, usize)> = Mutex::new((BTreeSet::new(), 0));
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(t) = kept.0.get(text) {
        return Some(t);
    }
    if kept.1 + text.len() > MAX_LEAKED_BYTES {
        return None;
    }
    let t: &'static str = Box::leak(text.into());
    kept.1 += t.len();
    kept.0.insert(t);
    Some(t)
}

impl KeyCache {
    /// The `Key` for the key at position `pos` of step map `slot` (< [`STEP_MAPS`]), named
    /// `field` in errors: the key seen at that position last step if `k` is the same object,
    /// else as [`KeyCache::key`].
    #[inline]
    pub fn key_at(
        &mut self,
        slot: usize,
        pos: usize,
        it: u64,
        field: &str,
        k: &Bound<'_, PyAny>,
    ) -> Result<Key> {
        match self.order[slot].get(pos) {
            Some((addr, key)) if *addr == k.as_ptr() as usize => Ok(key.clone()),
            _ => self.remember_at(slot, pos, it, field, k),
        }
    }

    /// [`KeyCache::key`], then remembered at position `pos` of map `slot` for the next step.
    #[inline(never)]
    fn remember_at(
        &mut self,
        slot: usize,
        pos: usize,
        it: u64,
        field: &str,
        k: &Bound<'_, PyAny>,
    ) -> Result<Key> {
        let key = self.key(it, field, k)?;
        // Past the map's bound a runner invents keys: not worth remembering.
        if pos < MAX_CACHED_KEYS {
            let order = &mut self.order[slot];
            let entry = (k.as_ptr() as usize, key.clone());
            if pos < order.len() {
                order[pos] = entry;
            } else if pos == order.len() {
                order.push(entry);
            }
            // (Beyond its end `key` has just emptied `order` at the map's bound: it refills
            // from position 0 next step.)
        }
        Ok(key)
    }

    /// The `Key` for a dict key of `field`, or a type error naming it.
    pub fn key(&mut self, it: u64, field: &str, k: &Bound<'_, PyAny>) -> Result<Key> {
        let addr = k.as_ptr() as usize;
        if let Some((_, key)) = self.map.get(&addr) {
            return Ok(key.clone());
        }
        self.insert(it, field, k)
    }

    /// Convert and cache a key not seen before (or since the cache was emptied).
    #[cold]
    fn insert(&mut self, it: u64, field: &str, k: &Bound<'_, PyAny>) -> Result<Key> {
        let addr = k.as_ptr() as usize;
        let Ok(s) = k.cast::<PyString>() else {
            return Err(Failure::ValueType(format!(
                "invalid step at iteration {it}: {field} has a key {} of type {}: keys must be str",
                repr(k),
                type_name(k)
            )));
        };
        let text = s
            .to_cow()
            .map_err(|e| Failure::ValueType(format!("{field} key: {e}")))?;
        let key: Key = match static_key(&text).or_else(|| leaked(&text)) {
            Some(t) => Cow::Borrowed(t),
            None => Cow::Owned(text.into_owned()),
        };
        if self.map.len() >= MAX_CACHED_KEYS {
            // The positions name addresses only the map keeps alive: dropped together.
            self.map.clear();
            self.order.iter_mut().for_each(Vec::clear);
        }
        self.map.insert(addr, (s.clone().unbind(), key.clone()));
        Ok(key)
    }
}

/// `repr(v)` for an error message, never failing.
pub(crate) fn repr(v: &Bound<'_, PyAny>) -> String {
    v.repr()
        .map(|r| r.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "<unprintable>".into())
}

/// `type(v).__name__` for an error message, never failing.
pub(crate) fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "?".into())
}

/// `what` as an f64: Python numbers, numpy scalars, 0-d tensors (anything with `__float__`).
/// A str, bytes or None is rejected by name, never coerced.
#[inline]
pub fn number(it: u64, what: &dyn Fn() -> String, v: &Bound<'_, PyAny>) -> Result<f64> {
    match v.cast::<PyFloat>() {
        Ok(f) => Ok(f.value()),
        Err(_) => other_number(it, what, v),
    }
}

/// [`number`] for anything but a `float` (kept out of line: the hot path is floats).
#[inline(never)]
fn other_number(it: u64, what: &dyn Fn() -> String, v: &Bound<'_, PyAny>) -> Result<f64> {
    let bad = |why: String| {
        Failure::ValueType(format!(
            "invalid step at iteration {it}: {}: expected a number (int, float, numpy scalar or \
             0-d tensor), got {why}",
            what()
        ))
    };
    if v.is_none() {
        return Err(bad("None".into()));
    }
    if v.is_instance_of::<PyString>() || v.is_instance_of::<pyo3::types::PyBytes>() {
        return Err(bad(format!("{} {}", type_name(v), repr(v))));
    }
    v.extract::<f64>()
        .map_err(|e| bad(format!("{} ({e})", type_name(v))))
}

/// A non-negative integer argument (iteration, env steps, buffer sizes), naming it on error.
pub fn count(it: u64, what: &str, v: &Bound<'_, PyAny>) -> Result<u64> {
    if v.is_instance_of::<PyFloat>() || v.is_instance_of::<PyString>() || v.is_none() {
        return Err(Failure::ValueType(format!(
            "invalid step at iteration {it}: {what}: expected a non-negative int, got {} {}",
            type_name(v),
            repr(v)
        )));
    }
    v.extract::<u64>().map_err(|e| {
        Failure::Schema(format!(
            "invalid step at iteration {it}: {what}: expected a non-negative int, got {} ({e})",
            repr(v)
        ))
    })
}

/// `v` when it is an int (None stays None): ints and numpy integers (anything with
/// `__index__`); a bool is a mistake, not a count, and any other type a `ValueTypeError`.
fn an_int<'a, 'py>(
    name: &str,
    v: Option<&'a Bound<'py, PyAny>>,
) -> Result<Option<&'a Bound<'py, PyAny>>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    if v.is_instance_of::<PyBool>() || !is_index(v) {
        return Err(Failure::ValueType(format!(
            "{name}={}: expected an int (or None), got {}",
            repr(v),
            type_name(v)
        )));
    }
    Ok(Some(v))
}

/// An optional integer argument `name` in `lo..=hi` (None stays None): a wrong type is a
/// `ValueTypeError`, a value out of range a `ConfigError`, each naming `name=<value>`.
pub fn int_arg(name: &str, v: Option<&Bound<'_, PyAny>>, lo: u64, hi: u64) -> Result<Option<u64>> {
    let Some(v) = an_int(name, v)? else {
        return Ok(None);
    };
    match v.extract::<u64>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(Some(n)),
        _ => Err(out_of_range(name, &repr(v), lo, hi)),
    }
}

/// An optional signed integer argument `name` (an iteration the logger checks itself, so a
/// negative value reaches its own refusal): a wrong type is a `TypeError`, an int outside
/// int64 a `ConfigError`, each naming the argument.
pub fn signed_int_arg(name: &str, v: Option<&Bound<'_, PyAny>>) -> Result<Option<i64>> {
    let Some(v) = an_int(name, v)? else {
        return Ok(None);
    };
    v.extract::<i64>().map(Some).map_err(|_| {
        Failure::Config(format!(
            "{name}={}: expected an int from {} to {}",
            repr(v),
            i64::MIN,
            i64::MAX
        ))
    })
}

/// Whether `v` is an integer to Python (`operator.index` accepts it).
fn is_index(v: &Bound<'_, PyAny>) -> bool {
    v.is_instance_of::<PyInt>() || v.hasattr("__index__").unwrap_or(false)
}

/// An integer argument with a default, taken as given so that [`IntArg::get`] can name the
/// argument in any error (PyO3's own conversion could not).
pub enum IntArg<'py> {
    /// Not passed: the default.
    Default(u64),
    /// What the caller passed.
    Given(Bound<'py, PyAny>),
}

impl<'py> FromPyObject<'_, 'py> for IntArg<'py> {
    type Error = PyErr;

    fn extract(obj: pyo3::Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        Ok(IntArg::Given(obj.to_owned()))
    }
}

impl IntArg<'_> {
    /// The value of argument `name`, in `lo..=hi`.
    pub fn get(&self, name: &str, lo: u64, hi: u64) -> Result<u64> {
        match self {
            IntArg::Default(n) => Ok(*n),
            IntArg::Given(v) => int_arg(name, Some(v), lo, hi)?
                .ok_or_else(|| Failure::ValueType(format!("{name}=None: expected an int"))),
        }
    }
}

fn out_of_range(name: &str, shown: &str, lo: u64, hi: u64) -> Failure {
    Failure::Config(format!("{name}={shown}: expected an int from {lo} to {hi}"))
}

/// A step argument `name` of an event-file writer: TensorBoard's step is an int64.
pub fn event_step(name: &str, v: &Bound<'_, PyAny>) -> Result<i64> {
    if !is_index(v) {
        return Err(Failure::ValueType(format!(
            "{name}={}: expected an int, got {}",
            repr(v),
            type_name(v)
        )));
    }
    v.extract::<i64>().map_err(|_| {
        Failure::Schema(format!(
            "{name}={}: beyond TensorBoard's int64 step range [{}, {}]",
            repr(v),
            i64::MIN,
            i64::MAX
        ))
    })
}

/// The `iteration` of a step: an int that is not a count is refused as a schema error (the
/// Rust logger bounds it further), anything else as a type error; both name it.
pub fn step_iteration(v: &Bound<'_, PyAny>) -> Result<u64> {
    if v.is_instance_of::<PyBool>() || !is_index(v) {
        return Err(Failure::ValueType(format!(
            "iteration={}: expected a non-negative int, got {}",
            repr(v),
            type_name(v)
        )));
    }
    v.extract::<u64>().map_err(|_| {
        Failure::Schema(format!(
            "iteration={}: expected a non-negative int of at most {}",
            repr(v),
            tally::resolve::MAX_COUNT
        ))
    })
}

/// Append every `(key, value)` of the mapping `m` (a dict, or anything with `.items()`) to `out`;
/// `slot` is the map's place in the [`KeyCache`]'s key order (< [`STEP_MAPS`]).
pub fn fill_map(
    keys: &mut KeyCache,
    it: u64,
    (slot, field): (usize, &'static str),
    m: &Bound<'_, PyAny>,
    out: &mut Vec<(Key, f64)>,
) -> Result<()> {
    // Inlined into both loops (a call per value is a tenth of the hot path's own work).
    #[inline(always)]
    fn one(
        keys: &mut KeyCache,
        it: u64,
        (slot, field): (usize, &'static str),
        (pos, k, v): (usize, &Bound<'_, PyAny>, &Bound<'_, PyAny>),
        out: &mut Vec<(Key, f64)>,
    ) -> Result<()> {
        let key = keys.key_at(slot, pos, it, field, k)?;
        let value = number(it, &|| format!("{field}['{key}']"), v)?;
        out.push((key, value));
        Ok(())
    }
    if let Ok(d) = m.cast::<PyDict>() {
        for (pos, (k, v)) in d.iter().enumerate() {
            one(keys, it, (slot, field), (pos, &k, &v), out)?;
        }
        return Ok(());
    }
    let items = m.call_method0("items").map_err(|_| {
        Failure::ValueType(format!(
            "invalid step at iteration {it}: {field}: expected a dict of str -> number, got {}",
            type_name(m)
        ))
    })?;
    let iter = items
        .try_iter()
        .map_err(|e| Failure::ValueType(e.to_string()))?;
    for (pos, pair) in iter.enumerate() {
        let pair = pair.map_err(|e| Failure::ValueType(e.to_string()))?;
        let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair
            .extract()
            .map_err(|e| Failure::ValueType(format!("{field}: {e}")))?;
        one(keys, it, (slot, field), (pos, &k, &v), out)?;
    }
    Ok(())
}

/// The `system` dict: `buffer_size`, `batch_size_per_rank`, `cuda_mps` ("on"/"ambient"/"off").
pub fn system(it: u64, m: &Bound<'_, PyAny>) -> Result<SystemInfo> {
    let d = m.cast::<PyDict>().map_err(|_| {
        Failure::ValueType(format!(
            "invalid step at iteration {it}: system: expected a dict, got {}",
            type_name(m)
        ))
    })?;
    let mut s = SystemInfo::default();
    for (k, v) in d.iter() {
        let key: String = k.extract().map_err(|_| {
            Failure::ValueType(format!(
                "invalid step at iteration {it}: system has a key {} of type {}: keys must be str",
                repr(&k),
                type_name(&k)
            ))
        })?;
        match key.as_str() {
            _ if v.is_none() => {}
            "buffer_size" => s.buffer_size = Some(count(it, "system['buffer_size']", &v)?),
            "batch_size_per_rank" => {
                s.batch_size_per_rank = Some(count(it, "system['batch_size_per_rank']", &v)?)
            }
            "cuda_mps" => {
                let text: String = v.extract().map_err(|_| {
                    Failure::ValueType(format!(
                        "invalid step at iteration {it}: system['cuda_mps']: expected 'on', \
                         'ambient' or 'off', got {}",
                        repr(&v)
                    ))
                })?;
                s.cuda_mps = Some(text.parse::<MpsState>().map_err(|e| {
                    Failure::Schema(format!(
                        "invalid step at iteration {it}: system['cuda_mps']: {e}"
                    ))
                })?);
            }
            other => {
                return Err(Failure::Schema(format!(
                    "invalid step at iteration {it}: system['{other}']: unknown system key \
                     (known: buffer_size, batch_size_per_rank, cuda_mps)"
                )))
            }
        }
    }
    Ok(s)
}

/// The optional arguments of one `step` call, as Python passed them.
pub struct StepArgs<'a, 'py> {
    /// `env_steps`.
    pub env_steps: Option<&'a Bound<'py, PyAny>>,
    /// `metrics`.
    pub metrics: Option<&'a Bound<'py, PyAny>>,
    /// `learner`.
    pub learner: Option<&'a Bound<'py, PyAny>>,
    /// `iteration_time`.
    pub iteration_time: Option<&'a Bound<'py, PyAny>>,
    /// `collector`.
    pub collector: Option<&'a Bound<'py, PyAny>>,
    /// `collector_inference`.
    pub collector_inference: Option<&'a Bound<'py, PyAny>>,
    /// `rewards`.
    pub rewards: Option<&'a Bound<'py, PyAny>>,
    /// `episode_return`.
    pub episode_return: Option<&'a Bound<'py, PyAny>>,
    /// `episode_length`.
    pub episode_length: Option<&'a Bound<'py, PyAny>>,
    /// `timeout_rate`.
    pub timeout_rate: Option<&'a Bound<'py, PyAny>>,
    /// `steps_this_iter`.
    pub steps_this_iter: Option<&'a Bound<'py, PyAny>>,
    /// `replay_rows_this_iter`.
    pub replay_rows_this_iter: Option<&'a Bound<'py, PyAny>>,
    /// `system`.
    pub system: Option<&'a Bound<'py, PyAny>>,
}

fn opt_number(it: u64, name: &str, v: Option<&Bound<'_, PyAny>>) -> Result<Option<f64>> {
    match v {
        Some(v) if !v.is_none() => Ok(Some(number(it, &|| name.to_owned(), v)?)),
        _ => Ok(None),
    }
}

fn present<'a, 'py>(v: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    v.filter(|v| !v.is_none())
}

impl StepArgs<'_, '_> {
    /// Refill `s` (its vectors keep their capacity) for `iteration`.
    pub fn fill(&self, keys: &mut KeyCache, iteration: u64, s: &mut StepInput) -> Result<()> {
        let it = iteration;
        s.iteration = it;
        s.env_steps = match present(self.env_steps) {
            Some(v) => count(it, "env_steps", v)?,
            None => 0,
        };
        let maps: [_; STEP_MAPS] = [
            ("metrics", self.metrics, &mut s.metrics),
            ("learner", self.learner, &mut s.learner),
            ("collector", self.collector, &mut s.collector),
            (
                "collector_inference",
                self.collector_inference,
                &mut s.collector_inference,
            ),
            ("rewards", self.rewards, &mut s.rewards),
        ];
        for (slot, (field, arg, out)) in maps.into_iter().enumerate() {
            out.clear();
            if let Some(m) = present(arg) {
                fill_map(keys, it, (slot, field), m, out)?;
            }
        }
        s.iteration_time = opt_number(it, "iteration_time", self.iteration_time)?;
        s.episode_return = opt_number(it, "episode_return", self.episode_return)?;
        s.episode_length = opt_number(it, "episode_length", self.episode_length)?;
        s.timeout_rate = opt_number(it, "timeout_rate", self.timeout_rate)?;
        s.steps_this_iter = opt_number(it, "steps_this_iter", self.steps_this_iter)?;
        s.replay_rows_this_iter =
            opt_number(it, "replay_rows_this_iter", self.replay_rows_this_iter)?;
        s.system = match present(self.system) {
            Some(m) => system(it, m)?,
            None => SystemInfo::default(),
        };
        Ok(())
    }
}
