//! The input bounds a step's values are checked against before anything changes
//! (docs/contract/step.md "Input bounds"): counts a float64 holds exactly, durations and
//! values float32 can store, non-negative figures; each refusal names the field and key.

use crate::error::Error;
use crate::values::Stored;

pub(super) fn err(
    iteration: u64,
    field: &'static str,
    key: &str,
    reason: impl Into<String>,
) -> Error {
    Error::InvalidStep {
        iteration,
        field,
        key: key.to_owned(),
        reason: reason.into(),
    }
}

/// Whether a value the stored float32 holds as a finite number is finite and not negative:
/// what [`check_duration`] and [`check_nonneg`] accept, decided inline (every value of a step
/// passes here; the refusals are built out of line).
#[inline]
fn finite_nonneg(v: f64) -> bool {
    v.is_finite() && v >= 0.0 && (v as f32).is_finite()
}

#[inline]
pub(super) fn check_duration(
    iteration: u64,
    field: &'static str,
    key: &str,
    v: f64,
) -> Result<(), Error> {
    if finite_nonneg(v) {
        return Ok(());
    }
    refuse_duration(iteration, field, key, v)
}

#[cold]
#[inline(never)]
fn refuse_duration(iteration: u64, field: &'static str, key: &str, v: f64) -> Result<(), Error> {
    if !v.is_finite() {
        return Err(err(
            iteration,
            field,
            key,
            format!("duration {v} is not finite"),
        ));
    }
    if v < 0.0 {
        return Err(err(
            iteration,
            field,
            key,
            format!("duration {v} s is negative"),
        ));
    }
    check_range(iteration, field, key, v, "s")
}

/// A value that must be finite is refused when float32, its stored type, cannot hold it.
#[inline]
pub(super) fn check_range(
    iteration: u64,
    field: &'static str,
    key: &str,
    v: f64,
    unit: &str,
) -> Result<(), Error> {
    if (v as f32).is_finite() {
        return Ok(());
    }
    refuse_range(iteration, field, key, v, unit)
}

#[cold]
#[inline(never)]
fn refuse_range(
    iteration: u64,
    field: &'static str,
    key: &str,
    v: f64,
    unit: &str,
) -> Result<(), Error> {
    if Stored::of(v) == Stored::NonFinite {
        let unit = if unit.is_empty() {
            String::new()
        } else {
            format!(" {unit}")
        };
        return Err(err(
            iteration,
            field,
            key,
            format!(
                "{v:e}{unit} is beyond float32 range (±{:e}), the type it is stored in",
                f32::MAX
            ),
        ));
    }
    Ok(())
}

/// The largest iteration or env-step count accepted: 2^53 - 1, the largest integer a float64
/// holds exactly (JSON readers of run_summary.json, W&B and pandas read counts as float64).
pub const MAX_COUNT: u64 = (1 << 53) - 1;

pub(super) fn check_count(iteration: u64, field: &'static str, n: u64) -> Result<(), Error> {
    if n > MAX_COUNT {
        return Err(err(
            iteration,
            field,
            field,
            format!("{n} exceeds {MAX_COUNT} (2^53 - 1), the largest count kept exact"),
        ));
    }
    Ok(())
}

#[inline]
pub(super) fn check_nonneg(
    iteration: u64,
    field: &'static str,
    key: &str,
    v: f64,
) -> Result<(), Error> {
    if finite_nonneg(v) {
        return Ok(());
    }
    refuse_nonneg(iteration, field, key, v)
}

#[cold]
#[inline(never)]
fn refuse_nonneg(iteration: u64, field: &'static str, key: &str, v: f64) -> Result<(), Error> {
    if !v.is_finite() || v < 0.0 {
        return Err(err(
            iteration,
            field,
            key,
            format!("{v} must be a finite number >= 0"),
        ));
    }
    check_range(iteration, field, key, v, "")
}
