//! A step submitted: the Python arguments converted into the logger's draft, handed to the
//! Rust logger with the GIL released, and the findings new to `on_health` told after.

use super::guard::{lock, refuse_tally_thread, Stepping};
use super::health;
use super::state::{Core, Draft, PyLogger};
use crate::convert::{step_iteration, StepArgs};
use crate::errors::{Failure, Result};
use pyo3::prelude::*;
use tally::Rates;

/// `step_with_rates`' rates, refused unless each given one is a finite number >= 0.
pub(super) fn rates(env_steps_per_sec: Option<f64>, rows_per_sec: Option<f64>) -> Result<Rates> {
    for (name, v) in [
        ("env_steps_per_sec", env_steps_per_sec),
        ("rows_per_sec", rows_per_sec),
    ] {
        if let Some(v) = v.filter(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(Failure::Schema(format!(
                "{name} {v} must be a finite number >= 0"
            )));
        }
    }
    Ok(Rates {
        env_steps_per_sec,
        rows_per_sec,
    })
}

impl PyLogger {
    pub(super) fn submit(
        &self,
        py: Python<'_>,
        iteration: &Bound<'_, PyAny>,
        args: StepArgs<'_, '_>,
        rates: Option<Rates>,
    ) -> PyResult<()> {
        // The conversion below is time inside tally too (docs/contract/health.md "Overhead").
        let entered = std::time::Instant::now();
        refuse_tally_thread("step")?;
        let _stepping = Stepping::enter("step")?;
        let mut drafting = lock(py, &self.draft);
        let draft: &mut Draft = &mut drafting;
        let it = step_iteration(iteration)?;
        args.fill(&mut draft.keys, it, &mut draft.scratch)?;
        for (k, secs) in &draft.pending {
            match draft.scratch.learner.iter_mut().find(|(p, _)| p == k) {
                Some(e) => e.1 += secs,
                None => draft.scratch.learner.push((k.clone(), *secs)),
            }
        }
        let rates = rates.unwrap_or_else(|| Rates::of(std::slice::from_ref(&draft.scratch)));
        let mut guard = lock(py, &self.core);
        let core: &mut Core = &mut guard;
        let log = core
            .log
            .as_mut()
            .filter(|l| !l.is_closed())
            .ok_or(Failure::Tally(tally::Error::Closed))?;
        let input = &draft.scratch;
        let result = py.detach(|| log.step_with_rates_since(input, rates, entered));
        // Findings new to `on_health`, told after the locks are let go (the callback is
        // Python code, which may call this logger).
        let told = match (&self.on_health, log.health()) {
            (Some(_), Some(h)) => h.since(&mut core.health_cursor),
            _ => Vec::new(),
        };
        drop(guard);
        if result.is_ok() {
            draft.pending.clear();
        }
        drop(drafting);
        if let Some(callback) = &self.on_health {
            health::tell(py, callback, &told)?;
        }
        match result {
            Ok(()) => Ok(()),
            Err(tally::Error::HealthStop(f)) => {
                let text = tally::Error::HealthStop(f.clone()).to_string();
                Err(health::health_stop(py, &f, text))
            }
            Err(e) => Err(Failure::from(e).into()),
        }
    }

    /// Tells `on_health` the findings it has not been told (after `flush` and `close`: a
    /// finding the writer thread made since the last step).
    pub(super) fn tell_health(&self, py: Python<'_>) -> PyResult<()> {
        let Some(callback) = &self.on_health else {
            return Ok(());
        };
        let told = {
            let mut guard = lock(py, &self.core);
            let core: &mut Core = &mut guard;
            match core.log.as_ref().and_then(|l| l.health()) {
                Some(h) => h.since(&mut core.health_cursor),
                None => Vec::new(),
            }
        };
        Ok(health::tell(py, callback, &told)?)
    }
}
