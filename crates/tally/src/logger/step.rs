//! One step: resolved, derived once, handed to the writer thread and the terminal
//! (docs/contract/step.md).

use super::Logger;
use crate::error::{Error, Result};
use crate::health::live::stopping;
use crate::health::Finding;
use crate::input::StepInput;
use crate::record::StepRecord;
use crate::reduce::{reduce_ranks, Rates};
use crate::resolve::Axis;
use crate::sink::BackendStep;
use crate::summary::contract_warning;
use crate::tag::Tag;
use crate::terminal::Level;
use crate::window::Sample;
use std::time::Instant;
use tally_clock::Clock;
use tally_schema::artifacts::RunStatus;

impl Logger {
    /// Submit one iteration (single rank).
    pub fn step(&mut self, input: &StepInput) -> Result<()> {
        self.step_with_rates(input, Rates::of(std::slice::from_ref(input)))
    }

    /// Submit one iteration from every rank: reduced per the schema, then logged once.
    pub fn step_ranks(&mut self, ranks: &[StepInput]) -> Result<()> {
        let (reduced, rates) = reduce_ranks(ranks, &self.user)?;
        self.step_with_rates(&reduced, rates)?;
        // Each rank's facts before reduction, in buffers kept from step to step
        // (docs/contract/health.md "Ranks").
        let (bad, times) = &mut self.rank_facts;
        bad.clear();
        times.clear();
        bad.extend(ranks.iter().map(StepInput::nonfinite_values));
        times.extend(ranks.iter().map(|r| r.iteration_time.unwrap_or(f64::NAN)));
        self.judge_ranks(&self.rank_facts.0, &self.rank_facts.1);
        Ok(())
    }

    /// Judge the `ranks` rule on the last accepted step, from each rank's count of non-finite
    /// values and iteration time (NaN: not measured) before reduction: for a collective that
    /// reduced the ranks itself and then called [`Logger::step_with_rates`] (Python's
    /// `RankLogger`; docs/contract/health.md "Ranks"). A no-op before the first step or with
    /// the rule off.
    pub fn judge_ranks(&self, nonfinite: &[u32], iteration_time: &[f64]) {
        if let (Some(h), Some(step)) = (self.health.as_ref(), self.last_step) {
            h.ranks(step, nonfinite, iteration_time);
        }
    }

    /// The seconds between system samples, None with system metrics off
    /// (docs/contract/system-metrics.md "Settings"): the interval the other ranks sample at.
    pub fn system_interval(&self) -> Option<f64> {
        self.config
            .system_metrics
            .then_some(self.config.system_interval_secs)
    }

    /// Write the other ranks' system samples as they came through the collective: `blocks`
    /// holds world size × [`crate::system::ranks::SLOTS`] floats, rank r's block at r × SLOTS
    /// (docs/contract/system-metrics.md "Ranks"). One event at the clock's wall time, best
    /// effort like the logger's own samples; nothing with system metrics off.
    pub fn rank_system(&self, blocks: &[f64]) {
        let Some(feed) = &self.rank_feed else {
            return;
        };
        let own = crate::system::ranks::machine_id();
        let values = crate::system::ranks::decode(blocks, own);
        if !values.is_empty() {
            feed.send(crate::system::Sample {
                wall_time: self.clock.wall(),
                values,
            });
        }
    }

    /// Submit an already rank-reduced iteration with its rank-summed rates (the collective path).
    pub fn step_with_rates(&mut self, input: &StepInput, rates: Rates) -> Result<()> {
        let entered = self.pace.is_some().then(Instant::now);
        self.step_timed(input, rates, entered)
    }

    /// [`Logger::step_with_rates`] for a binding whose call began at `entered`, before its
    /// own conversion of the input: that time is inside tally too (docs/contract/health.md
    /// "Overhead").
    pub fn step_with_rates_since(
        &mut self,
        input: &StepInput,
        rates: Rates,
        entered: Instant,
    ) -> Result<()> {
        self.step_timed(input, rates, Some(entered))
    }

    fn step_timed(
        &mut self,
        input: &StepInput,
        rates: Rates,
        entered: Option<Instant>,
    ) -> Result<()> {
        let mark = self.tracer.begin();
        let result = self.step_inner(input, rates, entered);
        if let Some(m) = mark {
            self.tracer.end(m, "logger/step", "logger");
        }
        if let (Some(p), Some(t)) = (self.pace.as_mut(), entered) {
            p.ended(t);
        }
        result
    }

    /// The finding that will refuse the next step (a new finding whose rule is in `stop_on`),
    /// without taking it: a collective asks before its ranks exchange the step, so every rank
    /// stops at the same iteration (docs/contract/health.md "In the logger").
    pub fn stop_pending(&self) -> Option<Finding> {
        let h = self
            .health
            .as_ref()
            .filter(|h| h.len() > self.health_seen)?;
        let new = h.since(&mut self.health_seen.clone());
        stopping(&new, &self.config.stop_on).cloned()
    }

    /// New findings since the last step: announced to the panel once, and the first whose
    /// rule is in `stop_on` refuses this step (docs/contract/health.md "In the logger").
    fn health_news(&mut self) -> Result<()> {
        let Some(h) = self.health.as_ref().filter(|h| h.len() > self.health_seen) else {
            return Ok(());
        };
        let new = h.since(&mut self.health_seen);
        match stopping(&new, &self.config.stop_on) {
            Some(f) => Err(Error::HealthStop(Box::new(f.clone()))),
            None => Ok(()),
        }
    }

    fn step_inner(
        &mut self,
        input: &StepInput,
        rates: Rates,
        entered: Option<Instant>,
    ) -> Result<()> {
        if self.closed {
            return Err(Error::Closed);
        }
        self.health_news()?;
        let buf = std::mem::take(&mut self.spare_values);
        let resolved = self.resolver.resolve(input, self.axis, buf)?;
        self.axis = Axis::after(&resolved);
        self.last_step = Some(resolved.step);
        self.untouched = None;
        let persist = self
            .config
            .persists(resolved.iteration)
            .then(|| self.writer.spare_payload().unwrap_or_default());
        let persisted = persist.is_some();
        let record = StepRecord::derive(self.config.profile, resolved, rates, persist);
        let now = self.clock.monotonic();
        if let Some(scalars) = record.payload {
            if self.awaiting_first_step {
                self.awaiting_first_step = false;
                if let Some(seg) = self.summary.resumed.last_mut() {
                    seg.first_step = Some(record.step);
                }
            }
            let wall_time = self.clock.wall_at(now);
            let pace = self
                .pace
                .as_mut()
                .zip(entered)
                .and_then(|(p, t)| p.written(t));
            if let Some(h) = self.health.as_ref().filter(|h| !h.on_writer()) {
                // The values the event file gets, so `tally health` on the file finds the same;
                // here only with stop_on (else the writer thread feeds them).
                let all_finite = record.figures.odd.nonfinite == 0;
                h.step_paced(record.step, wall_time, &scalars, all_finite, pace);
                h.announce();
            }
            let step = BackendStep {
                iteration: record.iteration,
                step: record.step,
                wall_time,
                scalars,
            };
            self.writer.step(step, pace);
        }
        let iteration = record.iteration;
        self.state.update(&record.figures);
        let nonfinite = (record.figures.odd.nonfinite > 0)
            .then(|| {
                self.state
                    .flag_nonfinite(record.iteration, &record.terminal)
            })
            .flatten();
        if record.user_metrics > 0 {
            for (tag, v) in &record.terminal {
                if let Tag::User(t) = tag {
                    self.user.observe(t, *v);
                }
            }
        }
        let warning = record
            .over_accounted
            .as_ref()
            .map(|t| contract_warning(record.iteration, t));
        {
            let mut term = self.terminal.lock().unwrap_or_else(|e| e.into_inner());
            term.push(
                Sample {
                    t: now,
                    iteration: record.iteration,
                    values: record.terminal,
                },
                record.figures.episode_return,
                record.system,
                record.env_steps,
            );
            if let Some(spare) = term.window.take_spare() {
                self.spare_values = spare;
            }
            if let Some(w) = nonfinite {
                term.message(now, Level::Warning, w);
            }
            if let Some(w) = warning {
                term.contract_warnings += 1;
                self.summary.contract_warnings += 1;
                term.message(now, Level::Warning, w);
            }
        }
        // After each persisted step while that stays cheap, so a killed run's summary trails
        // its event file by about one log interval (docs/contract/threads-and-signals.md
        // "The summary during a run").
        if persisted
            && now - self.last_summary_at >= self.config.summary_interval_secs
            && self.writer.summary_due()
        {
            self.last_summary_at = now;
            if self.user.take_changed() {
                self.run_config.user_metrics = self.user_metrics_documented();
                self.writer.config(self.run_config.clone());
            }
            let s = self.current_summary(RunStatus::Running, false);
            if let Some((_, last)) = &self.stall_exit {
                *last.lock().unwrap_or_else(|e| e.into_inner()) = (s.clone(), now);
            }
            self.writer.summary(s);
        }
        // Shown once, whichever push met the full queue first (this step's or the summary
        // rewrite's after it): a slow sink is the runner's to see, every wait is in the summary.
        if !self.waits_shown && self.writer.waits > 0 {
            self.waits_shown = true;
            let text = format!(
                "writer behind the steps: by iteration {iteration} the logger waited for the \
                 sinks (back-pressure, nothing dropped); waits are counted in run_summary.json \
                 backpressure_waits"
            );
            self.with_terminal(|t| t.message(now, Level::Warning, text));
        }
        self.take_failure()
    }
}
