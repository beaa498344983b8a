//! Trinity's `bootstrap_metric`, bit-identical: reseeded MT19937, masked `choice`, builtin max/min.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;

use crate::mt19937::{MaskedIndex, Mt19937};
use crate::numeric::{np_mean, np_std, py_max, py_min};

/// The resample size and seed Trinity hard-codes in `calculate_task_level_metrics`.
pub const N_BOOTSTRAP: usize = 1000;
/// The seed Trinity passes for every `(key, k)`.
pub const SEED: u32 = 42;

/// A reducer applied to each resample. Trinity's task level uses the builtins `max` and `min`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reducer {
    /// The builtin `max` (first wins, strict comparison).
    Max,
    /// The builtin `min` (first wins, strict comparison).
    Min,
}

impl Reducer {
    fn apply(self, sample: &[f64]) -> f64 {
        match self {
            Reducer::Max => py_max(sample),
            Reducer::Min => py_min(sample),
        }
    }
}

/// Inputs for which Trinity's Python function raises instead of returning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BootstrapError {
    /// `np.random.choice(0, size=k)` with `k > 0`: "a cannot be empty unless no samples are taken".
    EmptyData,
    /// `max([])` / `min([])` on an empty resample (`subset_size == 0`).
    EmptySubset,
    /// `n_bootstrap × subset_size` does not fit in memory (Python would run out of it).
    TooLarge,
}

impl fmt::Display for BootstrapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BootstrapError::EmptyData => {
                f.write_str("a cannot be empty unless no samples are taken")
            }
            BootstrapError::EmptySubset => f.write_str("max() arg is an empty sequence"),
            BootstrapError::TooLarge => f.write_str("n_bootstrap * subset_size overflows"),
        }
    }
}

impl std::error::Error for BootstrapError {}

/// Longest index stream kept in the per-thread cache (4 bytes per index).
const CACHE_MAX_LEN: usize = 1 << 18;
/// Most indices kept per thread across all streams (16 MiB); past it the cache is cleared.
const CACHE_BUDGET: usize = 1 << 22;

struct Stream {
    mt: Mt19937,
    sampler: MaskedIndex,
    idx: Vec<u32>,
}

impl Stream {
    fn new(seed: u32, n: usize) -> Self {
        Stream {
            mt: Mt19937::new(seed),
            sampler: MaskedIndex::new(n),
            idx: Vec::new(),
        }
    }

    fn extend_to(&mut self, len: usize) {
        self.idx.reserve(len.saturating_sub(self.idx.len()));
        while self.idx.len() < len {
            let v = self.sampler.draw(&mut self.mt);
            self.idx.push(v);
        }
    }
}

thread_local! {
    static STREAMS: RefCell<HashMap<(u32, usize), Stream>> = RefCell::new(HashMap::new());
}

/// Runs `f` on the first `len` indices that a generator freshly seeded with `seed` draws
/// from `[0, n)`.
///
/// Because Trinity reseeds for every `(key, k)` and the mask depends only on `n`, the index
/// stream of one bootstrap call is a prefix of the stream of any call with the same `(seed,
/// n)` and a larger `k`; the streams are therefore memoised per thread (a pure cache: the
/// result never depends on it).
fn with_indices<R>(seed: u32, n: usize, len: usize, f: impl FnOnce(&[u32]) -> R) -> R {
    if len > CACHE_MAX_LEN {
        let mut s = Stream::new(seed, n);
        s.extend_to(len);
        return f(&s.idx);
    }
    STREAMS.with(|cell| {
        let mut map = cell.borrow_mut();
        let have = map.get(&(seed, n)).map_or(0, |s| s.idx.len());
        let cached: usize = map.values().map(|s| s.idx.len()).sum();
        if cached + len.saturating_sub(have) > CACHE_BUDGET {
            map.clear();
        }
        let s = map.entry((seed, n)).or_insert_with(|| Stream::new(seed, n));
        s.extend_to(len);
        f(&s.idx[..len])
    })
}

/// The reduced value of every resample, one `Vec` per reducer, in resample order.
fn resample_reductions(
    data: &[f64],
    subset_size: usize,
    reduce_fns: &[Reducer],
    n_bootstrap: usize,
    seed: u32,
) -> Result<Vec<Vec<f64>>, BootstrapError> {
    let mut lists = vec![Vec::with_capacity(n_bootstrap); reduce_fns.len()];
    if n_bootstrap == 0 {
        return Ok(lists);
    }
    if data.is_empty() {
        if subset_size > 0 {
            return Err(BootstrapError::EmptyData);
        }
        if !reduce_fns.is_empty() {
            return Err(BootstrapError::EmptySubset);
        }
        return Ok(lists);
    }
    if subset_size == 0 {
        if !reduce_fns.is_empty() {
            return Err(BootstrapError::EmptySubset);
        }
        return Ok(lists);
    }
    let Some(total) = n_bootstrap.checked_mul(subset_size) else {
        return Err(BootstrapError::TooLarge);
    };
    with_indices(seed, data.len(), total, |idx| {
        if let [Reducer::Max, Reducer::Min] = reduce_fns {
            // Trinity's task level: both builtins in one pass, no resample copy. Same
            // first-wins strict comparisons as `py_max` / `py_min`, so the same values.
            let (maxima, rest) = lists.split_at_mut(1);
            let (maxima, minima) = (&mut maxima[0], &mut rest[0]);
            for chunk in idx.chunks_exact(subset_size) {
                let first = data[chunk[0] as usize];
                let (mut mx, mut mn) = (first, first);
                for &i in &chunk[1..] {
                    let x = data[i as usize];
                    if x > mx {
                        mx = x;
                    }
                    if x < mn {
                        mn = x;
                    }
                }
                maxima.push(mx);
                minima.push(mn);
            }
            return;
        }
        let mut sample = vec![0.0; subset_size];
        for chunk in idx.chunks_exact(subset_size) {
            for (slot, &i) in sample.iter_mut().zip(chunk) {
                *slot = data[i as usize];
            }
            for (list, r) in lists.iter_mut().zip(reduce_fns) {
                list.push(r.apply(&sample));
            }
        }
    });
    Ok(lists)
}

/// `bootstrap_metric(data, subset_size, reduce_fns, n_bootstrap, seed)` of trinity-rft 0.6.0:
/// reseed MT19937 with `seed`, then `n_bootstrap` times draw `subset_size` indices with
/// replacement (`np.random.choice`), reduce the resample with each reducer, and return
/// `(np.mean, np.std)` of each reducer's list. `n_bootstrap == 0` gives `(NaN, NaN)` pairs,
/// as numpy does for empty input.
///
/// Unlike Trinity's, no global state is touched: Trinity reseeds numpy's process-global
/// generator on every call (`docs/contract/rft.md` "The bootstrap").
pub fn bootstrap_metric(
    data: &[f64],
    subset_size: usize,
    reduce_fns: &[Reducer],
    n_bootstrap: usize,
    seed: u32,
) -> Result<Vec<(f64, f64)>, BootstrapError> {
    let lists = resample_reductions(data, subset_size, reduce_fns, n_bootstrap, seed)?;
    Ok(lists.iter().map(|l| (np_mean(l), np_std(l))).collect())
}

/// `(best@k, worst@k)` as Trinity's task level computes them: the means of the maxima and
/// minima of `bootstrap_metric(values, k, [max, min], 1000, 42)` (the stds are discarded).
///
/// # Panics
/// If `values` is empty or `k == 0` (Trinity never calls it so).
pub fn bootstrap_best_worst(values: &[f64], k: usize) -> (f64, f64) {
    let lists = resample_reductions(values, k, &[Reducer::Max, Reducer::Min], N_BOOTSTRAP, SEED)
        .expect("non-empty values and k > 0");
    (np_mean(&lists[0]), np_mean(&lists[1]))
}
