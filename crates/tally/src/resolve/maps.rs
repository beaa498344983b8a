//! The step's maps resolved one by one (`metrics`, the phase maps, `rewards`, and the `rft`
//! profile's Trinity keys): each key to its canonical tag, checked and converted
//! (docs/contract/step.md "Fail-closed validation").

use super::bounds::{check_duration, check_nonneg, check_range, err};
use super::{
    dedicated, family_index, keys_for, phase_slot, phase_spec, push_spec, push_user, rft_slot,
    user_slot, Resolver,
};
use crate::error::Error;
use crate::input::{Key, OutsideKeys, StepInput};
use crate::tag::Tag;
use crate::values::StepValues;
use tally_schema::{lookup, metric, Input, Role, TagRef, FAMILIES};

impl Resolver {
    /// The `rft` profile: Trinity keys in `metrics` only, each validated against the
    /// `{category}/...` naming convention (docs/contract/rft.md).
    pub(super) fn rft(&mut self, input: &StepInput, out: &mut StepValues) -> Result<(), Error> {
        let it = input.iteration;
        let unused: [(&'static str, bool); 9] = [
            ("learner", !input.learner.is_empty()),
            ("collector", !input.collector.is_empty()),
            ("collector_inference", !input.collector_inference.is_empty()),
            ("rewards", !input.rewards.is_empty()),
            ("episode_return", input.episode_return.is_some()),
            ("episode_length", input.episode_length.is_some()),
            ("timeout_rate", input.timeout_rate.is_some()),
            ("iteration_time", input.iteration_time.is_some()),
            ("steps_this_iter", input.steps_this_iter.is_some()),
        ];
        if let Some((field, _)) = unused.iter().find(|(_, used)| *used) {
            return Err(err(
                it,
                field,
                field,
                "the rft profile has no RL timelines: submit Trinity's step-level keys (rollout/, eval/, time/, ...) in metrics",
            ));
        }
        for (key, v) in &input.metrics {
            let key: &str = key;
            let tag = match self.families.cached(rft_slot(), key) {
                Some(tag) => Tag::Free(tag),
                None => match self.families.cached(user_slot(), key) {
                    Some(tag) => Tag::User(tag),
                    None => match tally_schema::rft::validate_rft_key(key) {
                        Ok(_) => Tag::Free(self.families.get(rft_slot(), key, || key.to_owned())),
                        Err(reason) => self.rft_outside(it, key, reason)?,
                    },
                },
            };
            out.push_named(tag, *v)
                .map_err(|_| err(it, "metrics", key, "duplicate: given twice in this step"))?;
        }
        Ok(())
    }

    /// A key outside the `rft` namespace: refused with `reason`, or, with
    /// `OutsideKeys::User`, the user's own metric when it is a user tag (docs/contract/rft.md
    /// "Keys outside the namespace"); a canonical, legacy or malformed tag is still refused.
    #[cold]
    fn rft_outside(&mut self, it: u64, key: &str, reason: String) -> Result<Tag, Error> {
        if self.outside_keys == OutsideKeys::Refuse {
            return Err(err(it, "metrics", key, reason));
        }
        match tally_schema::rft::outside_key_as_user(key) {
            Ok(()) => Ok(Tag::User(
                self.families.get(user_slot(), key, || key.to_owned()),
            )),
            Err(why) => Err(err(
                it,
                "metrics",
                key,
                format!("{reason}; as a user metric: {why}"),
            )),
        }
    }

    pub(super) fn metrics(
        &mut self,
        it: u64,
        metrics: &[(Key, f64)],
        out: &mut StepValues,
    ) -> Result<(), Error> {
        for (pos, (key, v)) in metrics.iter().enumerate() {
            // Registry tags first (one hash lookup, or none for last step's key at this
            // position); a user tag seen before skips the full lookup.
            let spec = self.metric_memo.spec(pos, key, metric);
            let key: &str = key;
            let known_family = spec
                .is_none()
                .then(|| self.metric_families.get(key))
                .flatten();
            if let Some((f, tag)) = known_family {
                // A family member accepted before (its family and profile checks hold).
                out.push_named(Tag::Family(f, tag.clone()), *v)
                    .map_err(|_| err(it, "metrics", key, "duplicate: given twice in this step"))?;
                continue;
            }
            let found = match spec {
                Some(m) => Ok(TagRef::Metric(m)),
                None => match self.families.cached(user_slot(), key) {
                    Some(tag) => {
                        push_user(out, it, key, tag, *v)?;
                        continue;
                    }
                    None => lookup(key),
                },
            };
            match found {
                Ok(TagRef::User(_)) => {
                    let tag = self.families.get(user_slot(), key, || key.to_owned());
                    push_user(out, it, key, tag, *v)?;
                }
                Ok(TagRef::Metric(m)) => {
                    if m.input != Input::Metrics {
                        let why = if m.role == Role::TerminalDerived {
                            format!("{} is a terminal-only derived value and is never submitted or persisted", m.tag)
                        } else {
                            format!(
                                "{} is logger-owned: pass it through {}",
                                m.tag,
                                dedicated(m)
                            )
                        };
                        return Err(err(it, "metrics", key, why));
                    }
                    self.spec_in_profile(it, "metrics", key, m)?;
                    if matches!(m.role, Role::Gauge | Role::Counter)
                        || m.unit == tally_schema::Unit::Ms
                    {
                        check_nonneg(it, "metrics", key, *v)?;
                    }
                    push_spec(out, it, "metrics", key, m, *v)?;
                }
                Ok(TagRef::Family(f, _)) => {
                    if f.input != Input::Metrics {
                        return Err(err(
                            it,
                            "metrics",
                            key,
                            format!(
                                "{}<term> values go in {}",
                                f.prefix, "the rewards map (by term)"
                            ),
                        ));
                    }
                    if !f.profiles.contains(self.profile) {
                        return Err(err(
                            it,
                            "metrics",
                            key,
                            format!(
                                "{}<term> is not emitted by the {} profile",
                                f.prefix, self.profile
                            ),
                        ));
                    }
                    let tag = self.families.get(family_index(f), key, || key.to_owned());
                    out.push_named(Tag::Family(f, tag.clone()), *v)
                        .map_err(|_| {
                            err(it, "metrics", key, "duplicate: given twice in this step")
                        })?;
                    self.metric_families.insert(key.into(), (f, tag));
                }
                Err(e) => return Err(err(it, "metrics", key, e.to_string())),
            }
        }
        Ok(())
    }

    pub(super) fn phases(
        &mut self,
        it: u64,
        field: &'static str,
        phases: &[(Key, f64)],
        out: &mut StepValues,
        is_kind: impl Fn(&Input) -> bool,
    ) -> Result<(), Error> {
        let slot = phase_slot(field);
        for (pos, (key, v)) in phases.iter().enumerate() {
            let m = self.phase_memo[slot].spec(pos, key, |k| phase_spec(field, k));
            let key: &str = key;
            let Some(m) = m else {
                let known = keys_for(self.profile, |i| match i {
                    Input::Learner(k) | Input::Collector(k) | Input::CollectorInference(k)
                        if is_kind(i) =>
                    {
                        Some(*k)
                    }
                    _ => None,
                });
                let hint = match lookup(key) {
                    Ok(TagRef::Metric(m)) => format!(
                        "; {} is a tag: pass its phase name, e.g. via {}",
                        m.tag,
                        dedicated(m)
                    ),
                    _ => String::new(),
                };
                return Err(err(
                    it,
                    field,
                    key,
                    format!(
                        "unknown {field} key for the {} profile (known: {known}){hint}",
                        self.profile
                    ),
                ));
            };
            self.spec_in_profile(it, field, key, m)?;
            let value = if field == "collector_inference" {
                check_nonneg(it, field, key, *v)?;
                *v
            } else {
                check_duration(it, field, key, *v)?;
                let stored = v * m.unit.per_second().expect("phase specs are time units");
                check_range(it, field, key, stored, m.unit.as_str())?;
                stored
            };
            push_spec(out, it, field, key, m, value)?;
        }
        Ok(())
    }

    pub(super) fn rewards(
        &mut self,
        it: u64,
        rewards: &[(Key, f64)],
        out: &mut StepValues,
    ) -> Result<(), Error> {
        let family = FAMILIES
            .iter()
            .find(|f| f.input == Input::Field("rewards"))
            .expect("reward family");
        let idx = family_index(family);
        for (term, v) in rewards {
            let term: &str = term;
            // A term seen before was validated then; only a new term pays for the lookup.
            let tag = match self.families.cached(idx, term) {
                Some(tag) => tag,
                None => {
                    // Accept both "tracking" and "reward/tracking".
                    let bare = term.strip_prefix(family.prefix).unwrap_or(term);
                    let full = format!("{}{bare}", family.prefix);
                    match lookup(&full) {
                        Ok(TagRef::Family(..)) => {}
                        Ok(TagRef::Metric(m)) => {
                            return Err(err(
                                it,
                                "rewards",
                                term,
                                format!("{} is not a reward term", m.tag),
                            ))
                        }
                        Ok(TagRef::User(_)) => {
                            return Err(err(it, "rewards", term, "not a reward term"))
                        }
                        Err(e) => return Err(err(it, "rewards", term, e.to_string())),
                    }
                    self.families.get(idx, term, || full)
                }
            };
            out.push_named(Tag::Family(family, tag), *v)
                .map_err(|_| err(it, "rewards", term, "duplicate: given twice in this step"))?;
        }
        Ok(())
    }
}
