//! The run summary as the logger has it now, during the run and at close
//! (docs/contract/run-artifacts.md "Run summary").

use super::Logger;
use crate::health::Finding;
use crate::run::{iso_utc, utc};
use tally_clock::Clock;
use tally_schema::artifacts::{RunStatus, RunSummary};

impl Logger {
    /// The user metrics `run_config.json` lists: an earlier segment's that this one has not
    /// logged, then this one's.
    pub(super) fn user_metrics_documented(&self) -> Vec<tally_schema::artifacts::UserMetric> {
        let now = self.user.documented();
        let mut all: Vec<_> = self
            .carried
            .user_metric_specs
            .iter()
            .filter(|m| !now.iter().any(|n| n.tag == m.tag))
            .cloned()
            .collect();
        all.extend(now);
        all
    }

    pub(super) fn current_summary(&self, status: RunStatus, closing: bool) -> RunSummary {
        let mut s = self.summary.clone();
        self.state.fill(&mut s, closing);
        s.status = status;
        let now = self.clock.monotonic();
        let c = &self.carried;
        s.wall_time_sec = c.wall_time_sec + (now - self.started_at);
        let first = self.with_terminal(|t| t.training_started_at);
        s.training_wall_time_sec = c.training_wall_time_sec + first.map_or(0.0, |f| now - f);
        s.backpressure_waits = c.backpressure_waits + self.writer.waits;
        s.backpressure_wait_sec = c.backpressure_wait_sec + self.writer.wait_secs;
        s.sink_errors = c.sink_errors.clone();
        s.sink_errors.extend(self.writer.failure_texts());
        self.writer.storage().fill(&mut s);
        // A resumed run's counts are the whole run's (docs/contract/run-artifacts.md "Resume").
        s.persisted_iterations = s.persisted_iterations.map(|p| p + c.persisted_iterations);
        s.lost_iterations += c.lost_iterations;
        s.user_metrics = c.user_metrics.clone();
        s.user_metrics.extend(self.user.summary_values());
        if let Some(h) = &self.health {
            // After an earlier segment's (a resumed run), this logger's own.
            s.health.extend(h.findings().iter().map(summary_entry));
        }
        if let Some(w) = &self.webhook {
            s.health_alerts = Some(w.progress());
        }
        if !self.remotes.is_empty() {
            // During the run; at close the followers' final word is already in `summary`.
            s.remote_sinks = self.remotes.progress();
        }
        if closing {
            s.end_time_utc = Some(iso_utc(&utc(self.clock.wall())));
        }
        s
    }
}

/// A finding as `run_summary.json` lists it (docs/contract/run-artifacts.md "Run summary").
pub(crate) fn summary_entry(f: &Finding) -> tally_schema::artifacts::HealthFinding {
    let last_value = match serde_json::Number::from_f64(f.last_value) {
        Some(n) => serde_json::Value::Number(n),
        // Export's tokens for what JSON numbers cannot hold.
        None if f.last_value.is_nan() => "NaN".into(),
        None if f.last_value > 0.0 => "Infinity".into(),
        None => "-Infinity".into(),
    };
    tally_schema::artifacts::HealthFinding {
        rule: f.rule.as_str().to_owned(),
        tag: (!f.tag.is_empty()).then(|| f.tag.clone()),
        first_step: f.first_step,
        last_step: f.last_step,
        count: f.count,
        last_value,
        message: f.message.clone(),
    }
}
