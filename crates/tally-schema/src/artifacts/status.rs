//! How a run ended (`run_summary.json`'s `status`, `docs/contract/run-artifacts.md`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a run ended (or that it has not yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Still running: the summary is a periodic snapshot.
    Running,
    /// Reached its last iteration and closed cleanly.
    Completed,
    /// Stopped by an error in the training loop.
    Failed,
    /// The collector process died.
    CollectorDied,
    /// Stopped by the user (Ctrl-C) or a signal.
    Interrupted,
    /// Ended normally (completed or interrupted), but storage faults lost steps: the event file
    /// lacks `lost_iterations` records (docs/contract/run-artifacts.md "Storage faults").
    Degraded,
}

impl RunStatus {
    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::CollectorDied => "collector_died",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Degraded => "degraded",
        }
    }
}

impl std::str::FromStr for RunStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            RunStatus::Running,
            RunStatus::Completed,
            RunStatus::Failed,
            RunStatus::CollectorDied,
            RunStatus::Interrupted,
            RunStatus::Degraded,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
        .ok_or_else(|| format!("unknown run status '{s}': expected running, completed, failed, collector_died, interrupted or degraded"))
    }
}
