//! `Logger(health=..., stop_on=..., on_health=...)`: the health rules from Python, findings as
//! `tally.health.Finding`, and `tally.HealthStop` (docs/contract/health.md "In the logger").

use crate::errors::{class, Failure, Kind, Result};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tally::health::{apply_rules_file, Finding, RuleKind, RuleSet};

/// The rules `health=` asks for (the defaults, changed by each `tally.health` entry in order)
/// and the rules `stop_on=` names; each bad entry refused naming it.
pub(super) fn rules(
    py: Python<'_>,
    health: Option<&Bound<'_, PyAny>>,
    stop_on: Option<Vec<String>>,
) -> PyResult<(RuleSet, Vec<RuleKind>)> {
    let mut rules = RuleSet::defaults();
    let doc = py
        .import("tally.health")?
        .getattr("_rules_document")?
        .call1((health,))?;
    if !doc.is_none() {
        for item in doc.try_iter()? {
            let (name, what, entry): (String, String, Bound<'_, PyDict>) = item?.extract()?;
            let text = if what == "off" {
                serde_json::json!({ "off": [entry.get_item("off")?.map(|k| k.to_string())] })
            } else {
                let v = super::documents::json_text(py, entry.as_any(), &name)?;
                serde_json::json!({ "rules": [v] })
            };
            apply_rules_file(&name, &text.to_string(), &mut rules)
                .map_err(|e| Failure::Config(format!("Logger(health=...): {e}")))?;
        }
    }
    let mut stops = Vec::new();
    for name in stop_on.unwrap_or_default() {
        let kind = RuleKind::parse(&name).ok_or_else(|| {
            let all: Vec<&str> = RuleKind::ALL.iter().map(|k| k.as_str()).collect();
            Failure::Config(format!(
                "Logger(stop_on=...): {name:?} is not a health rule (rules: {})",
                all.join(", ")
            ))
        })?;
        // `has` knows the run-wide rules (`stall`, `disk`, `ranks`) as well as the tags'.
        if !rules.has(kind) {
            return Err(Failure::Config(format!(
                "Logger(stop_on=...): {name:?} is off in health=, so it can never stop the run"
            ))
            .into());
        }
        stops.push(kind);
    }
    Ok((rules, stops))
}

/// A finding as the keyword arguments of `tally.health.Finding`.
pub(super) fn finding_dict<'py>(py: Python<'py>, f: &Finding) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("rule", f.rule.as_str())?;
    d.set_item("tag", &f.tag)?;
    d.set_item("first_step", f.first_step)?;
    d.set_item("last_step", f.last_step)?;
    d.set_item("count", f.count)?;
    d.set_item("last_value", f.last_value)?;
    d.set_item("message", &f.message)?;
    Ok(d)
}

/// A finding as a `tally.health.Finding`.
pub(super) fn finding_object<'py>(py: Python<'py>, f: &Finding) -> PyResult<Bound<'py, PyAny>> {
    let cls = py.import("tally.health")?.getattr("Finding")?;
    cls.call((), Some(&finding_dict(py, f)?))
}

/// `tally.HealthStop` for `f`, the finding as its `finding` attribute.
pub(super) fn health_stop(py: Python<'_>, f: &Finding, text: String) -> PyErr {
    let make = || -> PyResult<PyErr> {
        let t = class(py, Kind::HealthStop)?;
        let e = t.call1((text.clone(),))?;
        e.setattr("finding", finding_object(py, f)?)?;
        Ok(PyErr::from_value(e))
    };
    make().unwrap_or_else(|e| e)
}

/// Calls `callback` with each finding: an exception it raises goes to `sys.unraisablehook`
/// and the next finding is still told, since the step was already taken and the findings
/// recorded (docs/contract/health.md "In the logger").
pub(super) fn tell(py: Python<'_>, callback: &Py<PyAny>, findings: &[Finding]) -> Result<()> {
    for f in findings {
        let r = finding_object(py, f).and_then(|o| callback.bind(py).call1((o,)));
        if let Err(e) = r {
            e.write_unraisable(py, Some(callback.bind(py)));
        }
    }
    Ok(())
}
