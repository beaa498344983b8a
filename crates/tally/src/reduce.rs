//! Cross-rank reduction: many ranks' `StepInput`s → one, per the schema's reduction.
//!
//! Only rank 0 owns the terminal and the persistent logger; learner metrics and timings are
//! averaged across ranks before the terminal window; Steps/s and Rows/s are summed (each
//! rank's own rate), so both are the whole job's throughput (docs/contract/ranks.md). This
//! module is the pure function; the transport is the job's own collective
//! (torch.distributed / MPI).

use crate::error::Error;
use crate::input::{Key, StepInput, SystemInfo};
use crate::user::UserMetrics;
use rustc_hash::FxHashMap as HashMap;
use tally_schema::{lookup, Reduction, TagRef};

/// Whole-job rates: each rank's own rate, summed over ranks.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Rates {
    /// Σ_r steps_this_iter_r / iteration_time_r (persisted as `Perf/total_fps`).
    pub env_steps_per_sec: Option<f64>,
    /// Σ_r replay_rows_this_iter_r / iteration_time_r (terminal-only Rows/s).
    pub rows_per_sec: Option<f64>,
}

impl Rates {
    /// The summed per-rank rates of `ranks` (ranks without a measured Iter Wall contribute nothing).
    pub fn of(ranks: &[StepInput]) -> Rates {
        let sum = |num: fn(&StepInput) -> Option<f64>| {
            ranks
                .iter()
                .filter_map(|r| match (num(r), r.iteration_time) {
                    (Some(n), Some(t)) if t > 0.0 && n.is_finite() && t.is_finite() => Some(n / t),
                    _ => None,
                })
                .fold(None, |acc: Option<f64>, x| Some(acc.unwrap_or(0.0) + x))
        };
        Rates {
            env_steps_per_sec: sum(|r| r.steps_this_iter),
            rows_per_sec: sum(|r| r.replay_rows_this_iter),
        }
    }
}

/// One key's values across ranks, folded for its reduction.
struct Fold {
    reduction: Reduction,
    /// 1 + the last rank that gave the key (a repeat within a rank is refused).
    given_by: usize,
    sum: f64,
    n: u32,
    max: f64,
    min: f64,
    last: f64,
}

impl Fold {
    fn new(reduction: Reduction, given_by: usize, v: f64) -> Self {
        Fold {
            reduction,
            given_by,
            sum: v,
            n: 1,
            max: v,
            min: v,
            last: v,
        }
    }

    fn add(&mut self, v: f64) {
        self.sum += v;
        self.n += 1;
        self.max = self.max.max(v);
        self.min = self.min.min(v);
        self.last = v;
    }

    fn value(&self) -> f64 {
        match self.reduction {
            Reduction::Mean => self.sum / f64::from(self.n),
            Reduction::Sum => self.sum,
            Reduction::Max => self.max,
            Reduction::Min => self.min,
            Reduction::Last => self.last,
        }
    }
}

/// Keys of a map up to which one is found by scanning them (cheaper than hashing for the few
/// keys of a usual map).
const KEY_SCAN: usize = 32;

/// Accumulates one keyed map across ranks, keeping first-seen key order. Past [`KEY_SCAN`]
/// keys they are found by hash: scanning them all made a reduction quadratic in the keys.
struct Acc {
    keys: Vec<(Key, Fold)>,
    /// Each key's position in `keys`, once there are more than [`KEY_SCAN`].
    index: HashMap<Key, usize>,
}

impl Acc {
    fn new() -> Self {
        Acc {
            keys: Vec::new(),
            index: HashMap::default(),
        }
    }

    fn find(&mut self, k: &Key) -> Option<usize> {
        if self.keys.len() <= KEY_SCAN {
            return self.keys.iter().position(|(p, _)| p == k);
        }
        if self.index.is_empty() {
            let keys = self
                .keys
                .iter()
                .enumerate()
                .map(|(i, (p, _))| (p.clone(), i));
            self.index.extend(keys);
        }
        self.index.get(k).copied()
    }

    fn add(
        &mut self,
        rank: usize,
        field: &str,
        map: &[(Key, f64)],
        reduction: impl Fn(&str) -> Reduction,
    ) -> Result<(), Error> {
        for (k, v) in map {
            match self.find(k) {
                Some(i) if self.keys[i].1.given_by == rank + 1 => {
                    return Err(Error::Ranks(format!(
                        "rank {rank}: {field}['{k}'] is given twice"
                    )));
                }
                Some(i) => {
                    let fold = &mut self.keys[i].1;
                    fold.add(*v);
                    fold.given_by = rank + 1;
                }
                None => {
                    if !self.index.is_empty() {
                        self.index.insert(k.clone(), self.keys.len());
                    }
                    let fold = Fold::new(reduction(k), rank + 1, *v);
                    self.keys.push((k.clone(), fold));
                }
            }
        }
        Ok(())
    }

    fn finish(self) -> Vec<(Key, f64)> {
        self.keys
            .into_iter()
            .map(|(k, fold)| (k, fold.value()))
            .collect()
    }
}

fn metric_reduction(tag: &str, user: &UserMetrics) -> Reduction {
    match lookup(tag) {
        Ok(TagRef::Metric(m)) => m.reduction,
        Ok(TagRef::Family(f, _)) => f.reduction,
        Ok(TagRef::User(_)) => user.reduction(tag),
        // Invalid tags are rejected by validation after reduction, naming the key.
        Err(_) => Reduction::Mean,
    }
}

/// How `key` of StepInput field `field` combines across ranks: `metrics` follow each tag's
/// schema reduction (a user metric its definition in `user`); every other keyed map (phases,
/// gauges, reward terms) is averaged.
pub fn reduction(field: &str, key: &str, user: &UserMetrics) -> Reduction {
    if field == "metrics" {
        metric_reduction(key, user)
    } else {
        Reduction::Mean
    }
}

fn mean_of(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let (sum, n) = values
        .flatten()
        .fold((0.0, 0u32), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / f64::from(n))
}

fn sum_of(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values
        .flatten()
        .fold(None, |acc: Option<f64>, v| Some(acc.unwrap_or(0.0) + v))
}

/// Combine every rank's submission of one iteration into rank 0's view, plus the summed rates.
///
/// Keys present on some ranks only are reduced over the ranks that have them. All ranks must
/// submit the same iteration. Env steps, buffer sizes, counters and throughput are summed;
/// everything else is averaged, per each tag's schema reduction (a user metric's per `user`).
pub fn reduce_ranks(ranks: &[StepInput], user: &UserMetrics) -> Result<(StepInput, Rates), Error> {
    let Some(first) = ranks.first() else {
        return Err(Error::Ranks("no rank submitted a step".into()));
    };
    if let Some((r, other)) = ranks
        .iter()
        .enumerate()
        .find(|(_, r)| r.iteration != first.iteration)
    {
        return Err(Error::Ranks(format!(
            "rank {r} submitted iteration {} while rank 0 submitted {}",
            other.iteration, first.iteration
        )));
    }
    let rates = Rates::of(ranks);
    let mut metrics = Acc::new();
    let mut learner = Acc::new();
    let mut collector = Acc::new();
    let mut inference = Acc::new();
    let mut rewards = Acc::new();
    for (rank, r) in ranks.iter().enumerate() {
        metrics.add(rank, "metrics", &r.metrics, |k| metric_reduction(k, user))?;
        learner.add(rank, "learner", &r.learner, |_| Reduction::Mean)?;
        collector.add(rank, "collector", &r.collector, |_| Reduction::Mean)?;
        inference.add(rank, "collector_inference", &r.collector_inference, |_| {
            Reduction::Mean
        })?;
        rewards.add(rank, "rewards", &r.rewards, |_| Reduction::Mean)?;
    }
    let it = ranks.iter();
    let reduced = StepInput {
        iteration: first.iteration,
        // Saturating: a sum past u64 must be refused by the step bounds, not wrap to a small count.
        env_steps: ranks
            .iter()
            .fold(0u64, |a, r| a.saturating_add(r.env_steps)),
        metrics: metrics.finish(),
        learner: learner.finish(),
        iteration_time: mean_of(it.clone().map(|r| r.iteration_time)),
        collector: collector.finish(),
        collector_inference: inference.finish(),
        rewards: rewards.finish(),
        episode_return: mean_of(it.clone().map(|r| r.episode_return)),
        episode_length: mean_of(it.clone().map(|r| r.episode_length.filter(|l| *l > 0.0))),
        timeout_rate: mean_of(it.clone().map(|r| r.timeout_rate)),
        steps_this_iter: sum_of(it.clone().map(|r| r.steps_this_iter)),
        replay_rows_this_iter: sum_of(it.clone().map(|r| r.replay_rows_this_iter)),
        system: SystemInfo {
            buffer_size: ranks
                .iter()
                .filter_map(|r| r.system.buffer_size)
                .fold(None, |a, b| Some(a.unwrap_or(0) + b)),
            batch_size_per_rank: mean_of(
                it.clone()
                    .map(|r| r.system.batch_size_per_rank.map(|b| b as f64)),
            )
            .map(|b| b.round() as u64),
            cuda_mps: first.system.cuda_mps,
        },
    };
    Ok((reduced, rates))
}
