//! The panel's state: the logger's [`PanelSnapshot`] plus "now", turned into what the panel
//! shows. Pure: no I/O and no clock reads (the caller passes `now`), so every frame is a
//! function of its inputs and tests are exact.

use crate::generic::GenericModel;
use crate::glyphs::Glyphs;
use crate::rft::RftModel;
use tally::terminal::{Level, Message, PanelSnapshot};
use tally::timeline::{phase_label, CollectorTimeline, LearnerTimeline};
use tally::MpsState;
use tally_schema::{metric, MetricSpec, Profile, Profiles, Role, Unit, METRICS};

/// Tag of the whole-job env-step throughput (header `Steps/s`).
pub const STEPS_PER_SEC: &str = "Perf/total_fps";
/// Tag of the terminal-only replay-row throughput (header `Rows/s`).
pub const ROWS_PER_SEC: &str = "Terminal/rows_per_sec";
/// How long a warning stays in the panel after it was recorded, seconds.
pub const WARNING_SECS: f64 = 30.0;

/// How the metrics table groups a value: metrics are grouped by meaning, not by name
/// (`docs/contract/panel.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MetricGroup {
    /// `Loss/*` except the learning rate.
    Loss,
    /// Policy state: `Policy/*` and the learning rate.
    Policy,
    /// Training diagnostics (gradient norms, target Q, KL, clip fractions, DP sync): indented.
    Diagnostic,
    /// Replay-ingress, ring and inference-flight gauges (`Ingress Backpressure`, ...): never
    /// in the loss group.
    Gauge,
    /// `Episode_Termination/<term>` counts.
    Termination,
}

/// One value of the metrics table.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricRow {
    /// Its group.
    pub group: MetricGroup,
    /// The label (the registry's terminal label, or the termination term with spaces).
    pub label: String,
    /// The window mean.
    pub value: f64,
    /// The unit (formats `ms` values and counts).
    pub unit: Unit,
}

/// Direction of the recent reward history (`docs/contract/panel.md`, "Rewards and trend").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trend {
    /// The last 10 returns average more than 5 % above the 10 before.
    Up,
    /// More than 5 % below.
    Down,
    /// Within ± 5 %, or too little history.
    Flat,
}

/// The first row of the rewards table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RewardSummary {
    /// The window mean of `Train/mean_reward` (else the mean of the last 50 history entries).
    pub mean: f64,
    /// The largest return in the history.
    pub peak: f64,
    /// The trend mark.
    pub trend: Trend,
}

/// What the border title shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Title {
    /// The run: its `name`, else `ALGO`, task and sim, shown joined by ` · `
    /// (docs/contract/panel.md "Title and header").
    pub run: Vec<String>,
    /// World size.
    pub gpus: u32,
    /// Latest iteration.
    pub iteration: u64,
    /// Last iteration, when the run said.
    pub max_iterations: Option<u64>,
}

impl Title {
    /// `iter i/max`, or `iter i` when the last iteration is unknown.
    pub fn progress(&self) -> String {
        match self.max_iterations {
            Some(max) => format!("iter {}/{max}", self.iteration),
            None => format!("iter {}", self.iteration),
        }
    }
}

/// The run a panel names: `name` when given, else `ALGO`, task and sim (empty parts left out).
pub fn run_title(facts: &tally::terminal::RunFacts) -> Vec<String> {
    if let Some(n) = &facts.name {
        return vec![n.clone()];
    }
    [
        algo_display(&facts.algo),
        facts.task.clone(),
        facts.sim.clone(),
    ]
    .into_iter()
    .filter(|p| !p.is_empty())
    .collect()
}

/// Everything the panel shows, derived from one snapshot at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Timing profile of the run.
    pub profile: Profile,
    /// Border title.
    pub title: Title,
    /// Seconds since training started (warm-up excluded), once it has.
    pub elapsed: Option<f64>,
    /// Estimated seconds to the last iteration.
    pub eta: Option<f64>,
    /// Window mean episode length, when > 0.
    pub ep_len: Option<f64>,
    /// Window mean whole-job env steps per second.
    pub steps_per_sec: Option<f64>,
    /// Window mean whole-job replay rows per second (terminal only).
    pub rows_per_sec: Option<f64>,
    /// Samples in the 2 s window, once any step arrived.
    pub window_n: Option<usize>,
    /// The status while it is not "Training".
    pub status: Option<String>,
    /// The latest error, and the latest warning while it is recent.
    pub alerts: Vec<Message>,
    /// The newest health finding as it stands, for the Health line: shown for the rest of
    /// the run, since a finding is never withdrawn (docs/contract/health.md "In the logger").
    pub health: Option<String>,
    /// Metrics table rows in display order.
    pub metrics: Vec<MetricRow>,
    /// Reward summary, once there is a return.
    pub reward: Option<RewardSummary>,
    /// Reward terms (name without `reward/`, window mean), sorted by name.
    pub reward_terms: Vec<(String, f64)>,
    /// Learner main-thread timeline of the window means.
    pub learner: LearnerTimeline,
    /// Whether any learner timing is in the window.
    pub has_learner: bool,
    /// Collector timeline of the window means.
    pub collector: CollectorTimeline,
    /// System column rows (label, value).
    pub system: Vec<(&'static str, String)>,
    /// The user's own metrics in the window (tag, mean), most recently logged first
    /// (docs/contract/panel.md "Metrics table").
    pub user: Vec<(String, f64)>,
    /// The category groups of an `rft` run (`docs/contract/rft.md`), which replace the RL tables.
    pub rft: Option<RftModel>,
    /// The tags of a run shown without a schema (docs/contract/panel.md "The generic
    /// dashboard"), which replace the RL tables.
    pub generic: Option<GenericModel>,
}

/// The panel's state: what was last observed, and the derived [`Model`].
#[derive(Debug, Clone)]
pub struct PanelState {
    /// The latest snapshot.
    pub snapshot: PanelSnapshot,
    /// "Now" on the snapshot's clock.
    pub now: f64,
    /// Symbols to draw with.
    pub glyphs: Glyphs,
    /// Whether to use colour.
    pub color: bool,
    /// What to show.
    pub model: Model,
}

impl PanelState {
    /// A state showing `snapshot` at `now`.
    pub fn new(snapshot: PanelSnapshot, now: f64, glyphs: Glyphs, color: bool) -> Self {
        let model = Model::build(&snapshot, now);
        PanelState {
            snapshot,
            now,
            glyphs,
            color,
            model,
        }
    }

    /// Replace the snapshot and the instant (the pure update of each frame).
    ///
    /// An `rft` run keeps the eval tables of the previous frame that the window no longer
    /// holds ([`Model::after`]).
    pub fn update(&mut self, snapshot: PanelSnapshot, now: f64) {
        self.model = Model::after(&self.model, &snapshot, now);
        self.snapshot = snapshot;
        self.now = now;
    }
}

/// The label of the learner's denominator: a measured `Iter Wall`, or on-policy `Iter Time`,
/// the sum of collect and train.
pub fn wall_label(profile: Profile) -> &'static str {
    match profile {
        Profile::OnPolicy => "Iter Time",
        _ => "Iter Wall",
    }
}

/// Whether the learner table has an `Other` row: on-policy, Iter Time is the sum of its named
/// phases, so nothing is left unnamed.
pub fn shows_other(profile: Profile) -> bool {
    profile != Profile::OnPolicy
}

/// The display name of an algorithm (the `Algo` table's title, else upper-cased).
pub fn algo_display(algo: &str) -> String {
    tally_schema::Algo::parse(algo).title().into_owned()
}

/// The trend of a reward history, with a sign-safe 5 % band (`docs/contract/panel.md`,
/// "Rewards and trend").
///
/// The last 10 entries are compared with up to 10 entries before them; fewer than 11 entries
/// give no trend. The band is `± 5 % of |old|`, so a negative reward that improves shows ▲
/// (a band of `old * 1.05` would be inverted for negative returns).
pub fn trend(history: &[f64]) -> Trend {
    if history.len() <= 10 {
        return Trend::Flat;
    }
    let n = history.len();
    let new = history[n - 10..].iter().sum::<f64>() / 10.0;
    let old_slice = &history[n.saturating_sub(20)..n - 10];
    let old = old_slice.iter().sum::<f64>() / old_slice.len() as f64;
    let band = 0.05 * old.abs();
    if new > old + band {
        Trend::Up
    } else if new < old - band {
        Trend::Down
    } else {
        Trend::Flat
    }
}

fn group_of(spec: &MetricSpec) -> Option<MetricGroup> {
    let tag = spec.tag;
    if tag == "Loss/learning_rate" || tag.starts_with("Policy/") {
        return Some(MetricGroup::Policy);
    }
    if tag.starts_with("Loss/") {
        return Some(MetricGroup::Loss);
    }
    if tag.starts_with("Perf/dp_gradient_sync") {
        return Some(MetricGroup::Diagnostic);
    }
    if tag.starts_with("Perf/collector_inference_") && spec.role == Role::Gauge {
        return Some(MetricGroup::Gauge);
    }
    if let Some(rest) = tag.strip_prefix("Train/") {
        if matches!(rest, "iteration" | "mean_reward" | "mean_episode_length")
            || rest.ends_with("/time")
        {
            return None;
        }
        return Some(match spec.role {
            Role::Gauge | Role::Counter => MetricGroup::Gauge,
            _ => MetricGroup::Diagnostic,
        });
    }
    None
}

fn metric_rows(snap: &PanelSnapshot) -> Vec<MetricRow> {
    let w = &snap.window;
    let mut rows: Vec<(MetricGroup, usize, MetricRow)> = Vec::new();
    for (i, spec) in METRICS.iter().enumerate() {
        let Some(group) = group_of(spec) else {
            continue;
        };
        if let Some(v) = w.get(spec.tag) {
            rows.push((
                group,
                i,
                MetricRow {
                    group,
                    label: spec.label.to_owned(),
                    value: v,
                    unit: spec.unit,
                },
            ));
        }
    }
    let mut terms: Vec<(&str, f64)> = w
        .means
        .iter()
        .filter_map(|(t, v)| {
            t.as_str()
                .strip_prefix("Episode_Termination/")
                .map(|term| (term, *v))
        })
        .collect();
    terms.sort_by(|a, b| a.0.cmp(b.0));
    for (j, (term, v)) in terms.into_iter().enumerate() {
        rows.push((
            MetricGroup::Termination,
            j,
            MetricRow {
                group: MetricGroup::Termination,
                label: term.replace('_', " "),
                value: v,
                unit: Unit::Count,
            },
        ));
    }
    // Within the loss group the losses come first, then the entropy term.
    rows.sort_by_key(|(g, i, r)| (*g, !r.label.ends_with("Loss"), *i));
    rows.into_iter().map(|(_, _, r)| r).collect()
}

/// The user metrics of the window, the most recently logged first (then by name).
fn user_rows(snap: &PanelSnapshot) -> Vec<(String, f64)> {
    let w = &snap.window;
    let mut rows: Vec<(f64, String, f64)> = w
        .user_updated
        .iter()
        .filter_map(|(tag, t)| Some((*t, tag.as_str().to_owned(), w.means.get(tag).copied()?)))
        .collect();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    rows.into_iter().map(|(_, tag, v)| (tag, v)).collect()
}

/// The Health line: the newest finding's rule, tag, steps and count, and what it saw.
pub fn health_line(f: &tally::health::Finding) -> String {
    let on = if f.tag.is_empty() {
        String::new()
    } else {
        format!(" {}", f.tag)
    };
    let steps = if f.first_step == f.last_step {
        format!("step {}", f.first_step)
    } else {
        format!("steps {}-{}", f.first_step, f.last_step)
    };
    format!(
        "{}{on} at {steps} (x{}): {}",
        f.rule.as_str(),
        f.count,
        f.message
    )
}

fn alerts(snap: &PanelSnapshot, now: f64) -> Vec<Message> {
    let mut out = Vec::new();
    if let Some(e) = snap.messages.iter().rev().find(|m| m.level == Level::Error) {
        out.push(e.clone());
    }
    if let Some(w) = snap
        .messages
        .iter()
        .rev()
        .find(|m| m.level == Level::Warning && now - m.t <= WARNING_SECS)
    {
        out.push(w.clone());
    }
    out.sort_by(|a, b| a.t.total_cmp(&b.t));
    out
}

fn system_rows(snap: &PanelSnapshot) -> Vec<(&'static str, String)> {
    let mut rows = Vec::new();
    let sys = &snap.system;
    // A replay buffer and its batches are off-policy facts: an on-policy runner may pass them,
    // but they mean nothing there (docs/contract/panel.md "System column").
    let replay = Profiles::OFFPOLICY.contains(snap.facts.profile);
    if let Some(b) = sys.buffer_size.filter(|_| replay) {
        rows.push(("Buffer", crate::format::grouped(b as f64)));
    }
    let timeout = snap.window.get("Episode/timeout_rate").unwrap_or(0.0);
    rows.push(("Timeout Rate", format!("{:.1}%", timeout * 100.0)));
    if let Some(per_rank) = snap.facts.num_envs {
        let envs = per_rank.saturating_mul(u64::from(snap.facts.num_gpus));
        rows.push(("Envs", crate::format::grouped(envs as f64)));
    }
    if let Some(b) = sys.batch_size_per_rank.filter(|b| replay && *b > 0) {
        rows.push(("Batch/Rank", crate::format::grouped(b as f64)));
    }
    // A validated request shows on, an environment-level daemon ambient, else off
    // (docs/contract/panel.md "System column").
    let mps = sys.cuda_mps.unwrap_or(MpsState::Off);
    rows.push(("CUDA MPS", mps.as_str().to_owned()));
    rows.extend(machine_rows(&snap.machine));
    rows
}

/// The newest system sample's rows: the process, the machine and the GPUs (GPUs' utilisation
/// averaged, their memory summed; docs/contract/system-metrics.md "Where it shows").
pub fn machine_rows(values: &[(std::sync::Arc<str>, f64)]) -> Vec<(&'static str, String)> {
    let get = |tag: &str| values.iter().find(|(t, _)| &**t == tag).map(|(_, v)| *v);
    let gpu = |name: &str| -> Vec<f64> {
        values
            .iter()
            .filter(|(t, _)| t.starts_with("system/gpu") && t.ends_with(name))
            .map(|(_, v)| *v)
            .collect()
    };
    let mut rows = Vec::new();
    if let Some(c) = get("system/process/cpu_percent") {
        rows.push(("Proc CPU", format!("{c:.0}%")));
    }
    if let Some(r) = get("system/process/rss_bytes") {
        rows.push(("Proc RSS", bytes(r)));
    }
    if let Some(c) = get("system/machine/cpu_percent") {
        rows.push(("Host CPU", format!("{c:.0}%")));
    }
    if let (Some(u), Some(a)) = (
        get("system/machine/memory_used_bytes"),
        get("system/machine/memory_available_bytes"),
    ) {
        rows.push(("Host Mem", format!("{} / {}", bytes(u), bytes(u + a))));
    }
    let util = gpu("/util_percent");
    if !util.is_empty() {
        let mean = util.iter().sum::<f64>() / util.len() as f64;
        rows.push(("GPU Util", format!("{mean:.0}% ({} GPU)", util.len())));
    }
    let (used, total) = (gpu("/memory_used_bytes"), gpu("/memory_total_bytes"));
    if !used.is_empty() {
        let total = format!(" / {}", bytes(total.iter().sum()));
        rows.push(("GPU Mem", format!("{}{total}", bytes(used.iter().sum()))));
    }
    rows
}

/// Bytes in binary units, one decimal (`1.5 GiB`).
fn bytes(v: f64) -> String {
    let mut v = v.max(0.0);
    for unit in ["B", "KiB", "MiB", "GiB"] {
        if v < 1024.0 {
            return format!("{v:.1} {unit}");
        }
        v /= 1024.0;
    }
    format!("{v:.1} TiB")
}

impl Model {
    /// Derive what to show from `snap` at `now` (seconds on the snapshot's clock).
    pub fn build(snap: &PanelSnapshot, now: f64) -> Model {
        let w = &snap.window;
        let profile = snap.facts.profile;
        let started = snap.training_started_at.is_some();
        let iteration = snap.iteration.max(w.iteration);
        let end = snap.finished_at.unwrap_or(now);
        let elapsed = snap.training_started_at.map(|t0| (end - t0).max(0.0));
        let max = snap.facts.max_iterations;
        // No ETA without a last iteration to count down to.
        let eta = elapsed
            .filter(|_| iteration > 0)
            .zip(max)
            .map(|(e, max)| max.saturating_sub(iteration) as f64 * e / iteration as f64);
        let hist = &snap.reward_history;
        let reward = if hist.is_empty() {
            None
        } else {
            let tail = &hist[hist.len().saturating_sub(50)..];
            let fallback = tail.iter().sum::<f64>() / tail.len() as f64;
            Some(RewardSummary {
                mean: w.get("Train/mean_reward").unwrap_or(fallback),
                peak: hist.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                trend: trend(hist),
            })
        };
        let mut reward_terms: Vec<(String, f64)> = w
            .means
            .iter()
            .filter_map(|(t, v)| {
                t.as_str()
                    .strip_prefix("reward/")
                    .map(|term| (term.to_owned(), *v))
            })
            .collect();
        reward_terms.sort_by(|a, b| a.0.cmp(&b.0));
        let learner = LearnerTimeline::from_values(profile, |t| w.get(t));
        let has_learner = learner.iter_wall_ms > 0.0;
        let mut m = Model {
            profile,
            title: Title {
                run: run_title(&snap.facts),
                gpus: snap.facts.num_gpus,
                iteration,
                max_iterations: max,
            },
            elapsed,
            eta,
            ep_len: w.get("Train/mean_episode_length").filter(|v| *v > 0.0),
            steps_per_sec: w.get(STEPS_PER_SEC),
            // Replay rows exist only where the registry says Rows/s does (off-policy).
            rows_per_sec: w
                .get(ROWS_PER_SEC)
                .filter(|_| metric(ROWS_PER_SEC).is_some_and(|m| m.profiles.contains(profile))),
            window_n: started.then_some(w.n),
            status: (snap.status != "Training").then(|| snap.status.clone()),
            alerts: alerts(snap, now),
            health: snap.health.as_ref().map(health_line),
            metrics: metric_rows(snap),
            reward,
            reward_terms,
            learner,
            has_learner,
            collector: CollectorTimeline::from_values(profile, |t| w.get(t)),
            system: system_rows(snap),
            user: user_rows(snap),
            rft: (profile == Profile::Rft).then(|| RftModel::build(snap)),
            generic: None,
        };
        if let Some(board) = &snap.board {
            // No schema: no iteration limit to estimate an end from; the rate is the step
            // axis's; the time is what the records span (a run written days ago does not
            // count the days since).
            let g = GenericModel::build(board, w, &snap.facts.task);
            m.elapsed = snap
                .training_started_at
                .zip(g.last)
                .map(|(t0, t1)| (t1 - t0).max(0.0));
            m.eta = None;
            m.steps_per_sec = g.steps_per_sec;
            m.rft = None;
            m.generic = Some(g);
        }
        m
    }

    /// The shares of the learner's denominator, labelled, in table order: the learner phases,
    /// `Other` where the profile has it, and on-policy the collector's Collect (a phase of the
    /// same iteration).
    pub fn iteration_shares(&self) -> Vec<(&'static str, f64)> {
        let l = &self.learner;
        let mut shares: Vec<(&'static str, f64)> = l
            .rows
            .iter()
            .map(|r| (phase_label(self.profile, r.spec), r.pct))
            .collect();
        if shows_other(self.profile) {
            shares.push(("Other", l.other_pct));
        } else {
            shares.extend(
                self.collector
                    .rows
                    .iter()
                    .filter(|r| r.visible)
                    .filter_map(|r| Some((phase_label(self.profile, r.spec), r.pct?))),
            );
        }
        shares
    }

    /// [`Model::build`], keeping the `eval/` and `bench/` tasksets of `prev` that the window
    /// no longer holds (eval keys arrive on evaluation steps only, `docs/contract/rft.md`), so
    /// they show until the next evaluation instead of only while an eval step is in the 2 s
    /// window.
    pub fn after(prev: &Model, snap: &PanelSnapshot, now: f64) -> Model {
        let mut m = Model::build(snap, now);
        if let (Some(rft), Some(old)) = (m.rft.as_mut(), prev.rft.as_ref()) {
            rft.hold_evals(old);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_schema::metric;

    fn spec(tag: &str) -> Option<&'static MetricSpec> {
        metric(tag)
    }

    #[test]
    fn trend_needs_history_and_uses_a_five_percent_band() {
        // The trend needs history; ▲ above +5 %, ▼ below −5 %, else ━
        // (docs/contract/panel.md).
        assert_eq!(trend(&[1.0; 10]), Trend::Flat);
        let mut h = vec![10.0; 10];
        h.extend([11.0; 10]);
        assert_eq!(trend(&h), Trend::Up);
        let mut h = vec![10.0; 10];
        h.extend([9.0; 10]);
        assert_eq!(trend(&h), Trend::Down);
        let mut h = vec![10.0; 10];
        h.extend([10.4; 10]);
        assert_eq!(trend(&h), Trend::Flat);
        // A negative reward that improves rises.
        let mut h = vec![-10.0; 10];
        h.extend([-8.0; 10]);
        assert_eq!(trend(&h), Trend::Up);
    }

    #[test]
    fn algo_display_names_are_the_algorithm_titles() {
        assert_eq!(algo_display("sac"), "SAC");
        assert_eq!(algo_display("flashsac"), "FlashSAC");
        assert_eq!(algo_display("appo"), "APPO");
    }

    #[test]
    fn ingress_gauges_are_never_in_the_loss_group() {
        // Replay-ingress gauges show as "Ingress Backpressure", "Ingress Depth" and so on, never
        // in the loss group (docs/contract/panel.md).
        for m in METRICS.iter().filter(|m| m.tag.contains("replay_ingress")) {
            let g = group_of(m);
            assert_ne!(g, Some(MetricGroup::Loss), "{}", m.tag);
            if m.tag.starts_with("Train/") {
                assert_eq!(g, Some(MetricGroup::Gauge), "{}", m.tag);
                assert!(m.label.starts_with("Ingress "), "{}", m.label);
            }
        }
        assert_eq!(
            group_of(spec("Loss/critic").unwrap()),
            Some(MetricGroup::Loss)
        );
        assert_eq!(
            group_of(spec("Policy/temperature").unwrap()),
            Some(MetricGroup::Policy)
        );
        assert_eq!(
            group_of(spec("Train/critic_gradient_norm").unwrap()),
            Some(MetricGroup::Diagnostic)
        );
    }
}

#[cfg(test)]
mod machine_tests {
    use super::machine_rows;
    use std::sync::Arc;

    #[test]
    fn the_system_column_shows_the_newest_sample_gpus_averaged_and_summed() {
        let v = |t: &str, x: f64| (Arc::<str>::from(t), x);
        let rows = machine_rows(&[
            v("system/process/cpu_percent", 150.0),
            v("system/process/rss_bytes", 1.5 * 1024.0 * 1024.0 * 1024.0),
            v(
                "system/machine/memory_used_bytes",
                4.0 * 1024.0 * 1024.0 * 1024.0,
            ),
            v(
                "system/machine/memory_available_bytes",
                12.0 * 1024.0 * 1024.0 * 1024.0,
            ),
            v("system/gpu0/util_percent", 80.0),
            v("system/gpu1/util_percent", 40.0),
            v("system/gpu0/memory_used_bytes", 1024.0 * 1024.0 * 1024.0),
            v(
                "system/gpu0/memory_total_bytes",
                8.0 * 1024.0 * 1024.0 * 1024.0,
            ),
        ]);
        let get = |l: &str| rows.iter().find(|(k, _)| *k == l).map(|(_, v)| v.as_str());
        assert_eq!(get("Proc CPU"), Some("150%"));
        assert_eq!(get("Proc RSS"), Some("1.5 GiB"));
        assert_eq!(get("Host Mem"), Some("4.0 GiB / 16.0 GiB"));
        assert_eq!(get("GPU Util"), Some("60% (2 GPU)"));
        assert_eq!(get("GPU Mem"), Some("1.0 GiB / 8.0 GiB"));
        assert!(machine_rows(&[]).is_empty(), "no sample, no rows");
    }
}
