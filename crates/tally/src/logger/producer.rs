//! The documents a runner records for `run_summary.json` beside its steps: the runtime manifest
//! and the on-policy path's top-level `backend_diagnostics`. Each is checked by the validator
//! `tally validate` runs when it is set, and the manifest again, as a completed run's, when the
//! run closes `completed` (docs/contract/manifest-and-soak.md "Checked when recorded").

use super::Logger;
use crate::error::{Error, Result};
use serde_json::{json, Value};
use tally_schema::artifacts::{RunStatus, RuntimeManifest};
use tally_schema::conformance::{validate_runtime_manifest, Violation};
use tally_schema::Profile;

/// The run summary member of the on-policy path's backend diagnostics.
const BACKEND_DIAGNOSTICS: &str = "backend_diagnostics";

impl Logger {
    /// Record the runtime manifest for `run_summary.json`, checked as runtime manifest v1
    /// while the run goes (an early manifest needs only `schema_version`); its schema version
    /// may not change. A refused manifest leaves the one recorded before.
    pub fn set_runtime_manifest(&mut self, manifest: RuntimeManifest) -> Result<()> {
        // JSON has no NaN or infinity: the typed value would serialise as null and be misnamed.
        let mut nonfinite = Vec::new();
        if let Some(ri) = &manifest.replay_ingress {
            if !ri.backpressure_wait_s.is_finite() {
                nonfinite.push(Violation {
                    path: "$.replay_ingress.backpressure_wait_s".into(),
                    expected: "a finite number ≥ 0".into(),
                    found: format!("the float {}", ri.backpressure_wait_s),
                });
            }
        }
        let v = serde_json::to_value(&manifest).map_err(|e| Error::Config(e.to_string()))?;
        self.record_manifest(&v, nonfinite)?;
        self.summary.runtime_manifest = Some(manifest);
        Ok(())
    }

    /// [`Logger::set_runtime_manifest`] for a JSON document (the bindings' path): every
    /// violation is listed, not only the first member that does not fit the type.
    pub fn set_runtime_manifest_json(&mut self, manifest: Value) -> Result<()> {
        self.record_manifest(&manifest, Vec::new())?;
        let typed = serde_json::from_value(manifest).map_err(|e| Error::Document {
            what: "runtime manifest refused".into(),
            violations: vec![Violation {
                path: "$".into(),
                expected: "a runtime manifest v1".into(),
                found: e.to_string(),
            }],
        })?;
        self.summary.runtime_manifest = Some(typed);
        Ok(())
    }

    fn record_manifest(&self, v: &Value, mut violations: Vec<Violation>) -> Result<()> {
        if self.closed {
            return Err(Error::Closed);
        }
        violations.extend(validate_runtime_manifest(v, false));
        if !violations.is_empty() {
            return Err(Error::Document {
                what: "runtime manifest refused (nothing of it recorded)".into(),
                violations,
            });
        }
        if let (Some(old), Some(new)) = (
            &self.summary.runtime_manifest,
            v.get("schema_version").and_then(Value::as_u64),
        ) {
            if u64::from(old.schema_version) != new {
                return Err(Error::Config(format!(
                    "runtime manifest schema_version changed from {} to {new} during the run",
                    old.schema_version
                )));
            }
        }
        Ok(())
    }

    /// Record `backend_diagnostics` at the top level of `run_summary.json`: the on-policy
    /// (PPO) path, which has no runtime manifest (the others put them in the manifest's own
    /// `backend_diagnostics`). Checked for the shape `tally validate` checks; redacted when
    /// written like the rest of the summary. Replaces the diagnostics recorded before.
    pub fn set_backend_diagnostics(&mut self, diagnostics: Value) -> Result<()> {
        if self.closed {
            return Err(Error::Closed);
        }
        if self.config.profile != Profile::OnPolicy {
            return Err(Error::Config(format!(
                "backend_diagnostics at the top level of run_summary.json is the on-policy (PPO) \
                 path; a {} run records them in its runtime manifest's backend_diagnostics",
                self.config.profile.as_str()
            )));
        }
        // The summary's member has the manifest's shape (one schema definition): checking it
        // inside a bare manifest gives the summary's own `$.backend_diagnostics` paths.
        let probe = json!({"schema_version": 1, BACKEND_DIAGNOSTICS: diagnostics});
        let violations = validate_runtime_manifest(&probe, false);
        if !violations.is_empty() {
            return Err(Error::Document {
                what: "backend_diagnostics refused (nothing of them recorded)".into(),
                violations,
            });
        }
        self.summary
            .extra
            .insert(BACKEND_DIAGNOSTICS.into(), diagnostics);
        Ok(())
    }

    /// The status a run closed as `status` is recorded with: `completed` needs a runtime
    /// manifest (when there is one) that passes the completed-run check; one that fails it
    /// makes the run `failed`, says why in `status_reason`, and is returned as the error
    /// close raises once everything is written.
    pub(super) fn judge_completed(&mut self, status: RunStatus) -> (RunStatus, Option<Error>) {
        self.summary.status_reason = None;
        let manifest = match (&self.summary.runtime_manifest, status) {
            (Some(m), RunStatus::Completed) => m,
            _ => return (status, None),
        };
        let Ok(v) = serde_json::to_value(manifest) else {
            return (status, None);
        };
        let violations: Vec<Violation> = validate_runtime_manifest(&v, true)
            .into_iter()
            .map(|mut x| {
                // Paths as in the run summary, where `tally validate` finds them.
                x.path = format!("$.runtime_manifest{}", &x.path[1..]);
                x
            })
            .collect();
        if violations.is_empty() {
            return (status, None);
        }
        let list: Vec<String> = violations.iter().map(Violation::to_string).collect();
        let reason = format!(
            "closed completed, but the runtime manifest fails the completed-run check: {}",
            list.join("; ")
        );
        self.summary.status_reason = Some(reason);
        let error = Error::Document {
            what: "run recorded failed, not completed: its runtime manifest lacks what a \
                   completed run's must carry"
                .into(),
            violations,
        };
        (RunStatus::Failed, Some(error))
    }
}
