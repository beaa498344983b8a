//! The health rules in a running logger (`docs/contract/health.md` "In the logger").
//!
//! One [`LiveHealth`] per logger, shared by its threads: the writer thread feeds it each
//! written step's values (the step's thread does instead when the run has `stop_on`), checks
//! `stall` by a timer and writes each new finding to the event file. Findings are only appended (a later firing updates its finding
//! in place), so every consumer (the event file, the panel, the program, a webhook) follows
//! them with a cursor of its own: the index of the first finding it has not handled.

use super::eval::{Evaluator, TagSlot};
use super::finding::{Finding, RuleKind};
use super::pace::Pace;
use super::rules::RuleSet;
use super::sink_lag::SinkAcks;
use crate::tag::Tag;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The run's evaluator and findings, shared between the logger's threads.
///
/// Fed each persisted step by the step's thread when the run has `stop_on` (a finding must be
/// there for the next `step`), else by the writer thread, off the training loop's path
/// ([`LiveHealth::evaluated_by_writer`]).
pub struct LiveHealth {
    core: Mutex<Core>,
    /// Findings so far: a consumer's cursor below it has news, read without the lock.
    len: AtomicUsize,
    /// Pauses the stall timer has found: what the stall exit watches (docs/contract/health.md
    /// "Ending a stalled run").
    pauses: AtomicU64,
    /// When the `disk` rule last asked the filesystem (`None`: never, or the rule is off).
    disk_checked: Mutex<Option<std::time::Instant>>,
    /// Whether the `disk` rule is on.
    disk_on: bool,
    /// The remote sinks the `sink` rule watches, each with what its follower acknowledged
    /// (docs/contract/health.md "Sink"); empty while the rule is off or the run has none.
    sinks: Mutex<Vec<(String, Arc<SinkAcks>)>>,
    /// How often the writer thread checks for a stall and writes new findings.
    tick: Option<Duration>,
    /// Told each new finding once, from whichever thread found it (the panel and the plain
    /// output: the logger installs it), with its cursor.
    notify: Mutex<(usize, Option<Notify>)>,
    /// The notifier's cursor, read without the lock.
    announced: AtomicUsize,
    /// The writer thread feeds the steps, not the step's thread (no `stop_on`: nothing on the
    /// step's path waits for a finding; docs/contract/health.md "In the logger").
    on_writer: bool,
}

/// What [`LiveHealth::announce`] calls with each new finding.
pub type Notify = Box<dyn FnMut(&Finding) + Send>;

impl std::fmt::Debug for LiveHealth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveHealth")
            .field("findings", &self.len())
            .field("tick", &self.tick)
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
struct Core {
    eval: Evaluator,
    /// The step's tags as last seen, position by position: each tag's identity ([`key`]), and
    /// its slot. A steady run's tags come in the same order, so a step checks them by address
    /// and looks nothing up.
    layout: Vec<(usize, TagSlot)>,
    /// The tags of `layout`, held so no other tag's text can take one's address.
    held: Vec<Tag>,
    /// The positions of `layout` watched by more than `nonfinite`, with their slots: the only
    /// values a step with no non-finite value needs to feed (docs/contract/health.md "Cost").
    watched: Vec<(usize, TagSlot)>,
    /// Every tag registered, for a tag met at a new position.
    by_name: rustc_hash::FxHashMap<Box<str>, TagSlot>,
    /// Steps fed so far.
    steps: u64,
}

/// A tag's identity, one word, without reading its text: a registry tag's spec address, else
/// the address of its interned text. Two tags held at once share an address only when they
/// are one text (a spec is static, an interned text is kept alive by `held`). A registry
/// tag's name lives inside its spec, so reading it would touch one spec's cache line per tag
/// and step (BENCHMARKS.md "In the logger").
#[inline]
fn key(tag: &Tag) -> usize {
    match tag {
        Tag::Spec(s) => std::ptr::from_ref(*s) as usize,
        Tag::Family(_, t) | Tag::Free(t) | Tag::User(t) => t.as_ptr() as usize,
    }
}

impl Core {
    /// Makes `layout` the tags of `values` (registering new ones) unless it is already.
    fn follow(&mut self, values: &[(Tag, f64)]) {
        let same = values.len() == self.layout.len()
            && values
                .iter()
                .zip(&self.layout)
                // The same spec or the same text in memory is the same tag: nothing read.
                .all(|((t, _), (id, _))| key(t) == *id);
        if same {
            return;
        }
        self.layout.clear();
        self.held.clear();
        self.watched.clear();
        for (i, (tag, _)) in values.iter().enumerate() {
            let name = tag.as_str();
            let slot = match self.by_name.get(name) {
                Some(s) => *s,
                None => {
                    let s = self.eval.tag(name);
                    self.by_name.insert(name.into(), s);
                    s
                }
            };
            if !self.eval.is_plain(slot) {
                self.watched.push((i, slot));
            }
            self.layout.push((key(tag), slot));
            self.held.push(tag.clone());
        }
    }
}

impl LiveHealth {
    /// The live evaluation of `rules`.
    pub fn new(rules: RuleSet) -> Self {
        // A quarter of the shortest stall, at most a second: a stall is seen within about
        // 1.25 × its threshold (docs/contract/health.md "Stall").
        // Without the stall rule, a second: how soon a finding reaches the event file.
        let tick = rules.stall.map_or(Duration::from_secs(1), |s| {
            Duration::from_secs_f64((s.min_gap_s / 4.0).clamp(0.02, 1.0))
        });
        // A quarter of a short `sink` threshold too, so its finding is not late by a second.
        let tick = Some(rules.sink.map_or(tick, |l| {
            tick.min(Duration::from_secs_f64(
                (l.max_lag_s / 4.0).clamp(0.02, 1.0),
            ))
        }));
        let disk_on = rules.disk.is_some();
        LiveHealth {
            core: Mutex::new(Core {
                eval: Evaluator::new(rules),
                layout: Vec::new(),
                held: Vec::new(),
                watched: Vec::new(),
                by_name: Default::default(),
                steps: 0,
            }),
            len: AtomicUsize::new(0),
            pauses: AtomicU64::new(0),
            disk_checked: Mutex::new(None),
            disk_on,
            sinks: Mutex::new(Vec::new()),
            tick,
            notify: Mutex::new((0, None)),
            announced: AtomicUsize::new(0),
            on_writer: false,
        }
    }

    /// The same, fed by the writer thread from the steps it writes.
    pub fn evaluated_by_writer(mut self) -> Self {
        self.on_writer = true;
        self
    }

    /// Whether the writer thread feeds the steps (else the step's thread does).
    pub fn on_writer(&self) -> bool {
        self.on_writer
    }

    fn lock(&self) -> MutexGuard<'_, Core> {
        self.core.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Feeds one step's values; `all_finite` says none is NaN or ±inf as float32 holds it
    /// (the logger counts them anyway), so only the tags watched by more than `nonfinite`
    /// are fed.
    pub fn step(&self, step: i64, wall_time: f64, values: &[(Tag, f64)], all_finite: bool) {
        self.step_paced(step, wall_time, values, all_finite, None);
    }

    /// [`LiveHealth::step`] with the `overhead` rule's facts of the calls before it (the
    /// logger's [`Pace`]), judged under the same lock.
    pub fn step_paced(
        &self,
        step: i64,
        wall_time: f64,
        values: &[(Tag, f64)],
        all_finite: bool,
        pace: Option<Pace>,
    ) {
        let mut guard = self.lock();
        let core = &mut *guard;
        core.eval.step(step, wall_time);
        if let Some(p) = pace {
            core.eval.overhead(step, p.elapsed_s, p.inside_s);
        }
        core.follow(values);
        // As the event file holds it (float32: a value beyond its range is ±inf there), so
        // `tally health` on the file finds the same.
        let held = |v: f64| f64::from(v as f32);
        if all_finite {
            for &(i, slot) in &core.watched {
                core.eval.value(slot, step, wall_time, held(values[i].1));
            }
        } else {
            for (i, (_, v)) in values.iter().enumerate() {
                core.eval.value(core.layout[i].1, step, wall_time, held(*v));
            }
        }
        let n = core.eval.findings().len();
        if n != self.len.load(Ordering::Relaxed) {
            self.len.store(n, Ordering::Release);
        }
        core.steps += 1;
    }

    /// One step's per-rank facts before reduction, for the `ranks` rule (the step's thread
    /// of a logger given every rank's step; docs/contract/health.md "Ranks").
    pub fn ranks(&self, step: i64, nonfinite: &[u32], iter_time: &[f64]) {
        let mut core = self.lock();
        core.eval.ranks(step, nonfinite, iter_time);
        let n = core.eval.findings().len();
        if n != self.len.load(Ordering::Relaxed) {
            self.len.store(n, Ordering::Release);
        }
    }

    /// Steps fed so far (under the lock: for a watcher's timer, not a hot path).
    pub fn steps(&self) -> u64 {
        self.lock().steps
    }

    /// Pauses the stall timer has found so far (one atomic read).
    pub fn pauses(&self) -> u64 {
        self.pauses.load(Ordering::Acquire)
    }

    /// Checks for a stall at wall time `now` (the writer thread's timer, never the step's
    /// path); true when a new pause was found.
    pub fn check_stall(&self, now: f64) -> bool {
        let mut core = self.lock();
        let found = core.eval.overdue(now).is_some();
        self.len
            .store(core.eval.findings().len(), Ordering::Release);
        if found {
            self.pauses.fetch_add(1, Ordering::Release);
        }
        found
    }

    /// Checks the free space of the filesystem holding `dir` for the `disk` rule (the writer
    /// thread's timer; `statvfs` at most once a second); true when it fired now.
    pub fn check_disk(&self, dir: &std::path::Path) -> bool {
        if !self.disk_on {
            return false;
        }
        let mut last = self.disk_checked.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_some_and(|t| t.elapsed() < Duration::from_secs(1)) {
            return false;
        }
        *last = Some(std::time::Instant::now());
        drop(last);
        let Ok(s) = rustix::fs::statvfs(dir) else {
            return false;
        };
        let free_mb = (s.f_bavail as f64) * (s.f_frsize as f64) / (1024.0 * 1024.0);
        let mut core = self.lock();
        let fired = core.eval.disk(free_mb);
        self.len
            .store(core.eval.findings().len(), Ordering::Release);
        fired
    }

    /// Watch remote sink `name` for the `sink` rule, its follower publishing `acks` (nothing
    /// when the rule is off).
    pub fn watch_sink(&self, name: &str, acks: Arc<SinkAcks>) {
        if self.lock().eval.rules().sink.is_some() {
            let mut sinks = self.sinks.lock().unwrap_or_else(|e| e.into_inner());
            sinks.push((name.to_owned(), acks));
        }
    }

    /// Checks each watched remote sink against the `sink` rule at wall time `now`, with
    /// `complete` rows complete in the logger's event file (the writer thread's timer, never
    /// the step's path: one atomic read per sink); true when it fired now.
    pub fn check_sinks(&self, now: f64, complete: u64) -> bool {
        let sinks = self.sinks.lock().unwrap_or_else(|e| e.into_inner());
        if sinks.is_empty() {
            return false;
        }
        let mut core = self.lock();
        let mut fired = false;
        for (name, acks) in sinks.iter() {
            fired |= core.eval.sink(name, now, complete, acks.rows());
        }
        self.len
            .store(core.eval.findings().len(), Ordering::Release);
        fired
    }

    /// Installs what [`LiveHealth::announce`] tells each new finding.
    pub fn set_notify(&self, notify: Notify) {
        self.notify.lock().unwrap_or_else(|e| e.into_inner()).1 = Some(notify);
    }

    /// Tells the installed notifier each finding it has not been told yet (one atomic read
    /// when there is none).
    pub fn announce(&self) {
        if self.len() <= self.announced.load(Ordering::Acquire) {
            return;
        }
        let mut n = self.notify.lock().unwrap_or_else(|e| e.into_inner());
        let (cursor, notify) = &mut *n;
        let new = self.since(cursor);
        self.announced.store(*cursor, Ordering::Release);
        if let Some(notify) = notify.as_mut() {
            new.iter().for_each(notify);
        }
    }

    /// How often the writer thread should call [`LiveHealth::check_stall`].
    pub fn tick(&self) -> Option<Duration> {
        self.tick
    }

    /// How many findings there are (one atomic read).
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// Whether no rule has fired.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every finding so far, as they stand now.
    pub fn findings(&self) -> Vec<Finding> {
        self.lock().eval.findings().to_vec()
    }

    /// The newest finding (the last to fire first), as it stands now.
    pub fn newest(&self) -> Option<Finding> {
        if self.is_empty() {
            return None;
        }
        self.lock().eval.findings().last().cloned()
    }

    /// The findings from `cursor` on (new to that consumer), moving the cursor past them.
    pub fn since(&self, cursor: &mut usize) -> Vec<Finding> {
        if self.len() <= *cursor {
            return Vec::new();
        }
        let core = self.lock();
        let all = core.eval.findings();
        let new = all.get(*cursor..).unwrap_or_default().to_vec();
        *cursor = all.len();
        new
    }

    /// The rules evaluated.
    pub fn rules(&self) -> RuleSet {
        self.lock().eval.rules().clone()
    }
}

/// The text of a finding, as the event file and the plain output say it.
pub fn finding_text(f: &Finding) -> String {
    let on = if f.tag.is_empty() {
        String::new()
    } else {
        format!(" on {}", f.tag)
    };
    format!("health: {}{on}: {}", f.rule.as_str(), f.message)
}

/// The first of `findings` whose rule is in `stop_on`.
pub fn stopping<'a>(findings: &'a [Finding], stop_on: &[RuleKind]) -> Option<&'a Finding> {
    findings.iter().find(|f| stop_on.contains(&f.rule))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_schema::metric;

    fn spec(tag: &str) -> Tag {
        Tag::Spec(metric(tag).unwrap())
    }

    #[test]
    fn a_nan_is_one_finding_and_a_cursor_sees_it_once() {
        let h = LiveHealth::new(RuleSet::defaults());
        let critic = spec("Loss/critic");
        for s in 1..5 {
            h.step(s, s as f64, &[(critic.clone(), 1.0)], true);
        }
        let mut cursor = 0;
        assert!(h.since(&mut cursor).is_empty());
        h.step(5, 5.0, &[(critic.clone(), f64::NAN)], false);
        h.step(6, 6.0, &[(critic.clone(), f64::NAN)], false);
        let new = h.since(&mut cursor);
        assert_eq!(new.len(), 1);
        assert_eq!((new[0].rule, new[0].first_step), (RuleKind::Nonfinite, 5));
        assert!(h.since(&mut cursor).is_empty());
        assert_eq!(h.findings()[0].count, 2);
    }

    #[test]
    fn tags_in_another_order_keep_their_own_state() {
        let h = LiveHealth::new(RuleSet::defaults());
        let (a, b) = (spec("Loss/critic"), spec("Loss/actor"));
        h.step(1, 1.0, &[(a.clone(), 1.0), (b.clone(), 2.0)], true);
        h.step(2, 2.0, &[(b.clone(), f64::NAN), (a.clone(), 1.0)], false);
        let f = h.findings();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].tag, "Loss/actor");
    }

    #[test]
    fn a_stall_is_found_by_the_timer_without_a_step() {
        let mut rules = RuleSet::defaults();
        let stall = rules.stall.as_mut().unwrap();
        stall.min_gap_s = 0.5;
        stall.min_history = 3;
        let h = LiveHealth::new(rules);
        assert_eq!(h.tick(), Some(Duration::from_secs_f64(0.125)));
        for s in 0..5 {
            h.step(s, s as f64 * 0.01, &[], true);
        }
        assert!(!h.check_stall(0.3));
        assert!(h.check_stall(0.6));
        assert!(!h.check_stall(0.9), "one pause is one finding");
        assert_eq!(h.findings()[0].rule, RuleKind::Stall);
        assert_eq!(h.findings()[0].first_step, 4);
        // The loop comes back: the pause the timer reported is not counted twice.
        h.step(5, 1.04, &[], true);
        let f = &h.findings()[0];
        assert_eq!(f.count, 1);
        assert!((f.last_value - 1.0).abs() < 1e-9, "{f:?}");
    }
}
