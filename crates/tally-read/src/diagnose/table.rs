//! The bottleneck table, row by row, over a run's mean timelines
//! (`docs/contract/consumers.md` "Reading a bottleneck"): each row that fires becomes a
//! [`Finding`] with its evidence, meaning and what to check first.

use crate::error::Error;
use serde::Serialize;
use tally::timeline::{CollectorTimeline, LearnerTimeline};
use tally_schema::Profile;

/// The shares, in percent, at which a row fires (each a `tally diagnose` flag).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Thresholds {
    /// learner Collector Wait, % of Iter Wall, at or above which it is high.
    pub wait_high_pct: f64,
    /// learner Collector Wait, % of Iter Wall, below which it is low.
    pub wait_low_pct: f64,
    /// collector Learner Action Wait, % of the collector cycle.
    pub action_wait_high_pct: f64,
    /// learner Inference, % of Iter Wall.
    pub inference_high_pct: f64,
    /// learner Replay Batch Wait, % of Iter Wall.
    pub batch_wait_high_pct: f64,
    /// collector Replay Write, % of the collector cycle.
    pub replay_write_high_pct: f64,
    /// Replay H2D Submit, % of Iter Wall.
    pub submit_high_pct: f64,
    /// Mean GPU utilisation, %, below which a GPU is starved while the learner waits on the
    /// collector (docs/contract/system-metrics.md "GPU starvation").
    pub gpu_low_pct: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            wait_high_pct: 25.0,
            wait_low_pct: 10.0,
            action_wait_high_pct: 50.0,
            inference_high_pct: 25.0,
            batch_wait_high_pct: 10.0,
            replay_write_high_pct: 25.0,
            submit_high_pct: 10.0,
            gpu_low_pct: 50.0,
        }
    }
}

impl Thresholds {
    /// Each threshold is a percentage in [0, 100]; `flags` names them as the command line does.
    pub fn check(&self, flags: [&str; 8]) -> Result<(), Error> {
        let values = [
            self.wait_high_pct,
            self.wait_low_pct,
            self.action_wait_high_pct,
            self.inference_high_pct,
            self.batch_wait_high_pct,
            self.replay_write_high_pct,
            self.submit_high_pct,
            self.gpu_low_pct,
        ];
        for (flag, v) in flags.iter().zip(values) {
            if !(0.0..=100.0).contains(&v) {
                return Err(Error::Setting(format!(
                    "{flag} {v}: expected a percentage in [0, 100]"
                )));
            }
        }
        Ok(())
    }
}

/// One figure behind a finding: its mean and its share of a denominator.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// The timeline row, with its side: "learner Collector Wait".
    pub figure: String,
    /// The canonical tag it was read from.
    pub tag: &'static str,
    /// Mean milliseconds over the window.
    pub ms: f64,
    /// Share of `of`, percent; None where the figure is not a share of anything (APPO's
    /// per-step collector averages).
    pub share_pct: Option<f64>,
    /// The denominator: "Iter Wall", "collector cycle", or a parent phase; None for a figure
    /// shown on its own.
    pub of: Option<&'static str>,
    /// The denominator's milliseconds.
    pub of_ms: Option<f64>,
    /// A figure that is a percentage itself (GPU utilisation), its `ms` then null.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percent: Option<f64>,
}

/// One row of the table that fired.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The row's "what you see", in the table's words.
    pub symptom: &'static str,
    /// What it means.
    pub meaning: &'static str,
    /// Where to look next.
    pub check_first: &'static str,
    /// The figures that made it fire, and their context.
    pub evidence: Vec<Evidence>,
}

/// The run's mean values and its two timelines, for the rows to read.
pub struct Means<'a> {
    /// The mean utilisation of the run's GPUs (each GPU's mean, averaged) and how many.
    pub gpu_util: Option<(f64, usize)>,
    profile: Profile,
    get: &'a dyn Fn(&str) -> Option<f64>,
    learner: LearnerTimeline,
    collector: CollectorTimeline,
}

const ITER_WALL: &str = "Iter Wall";
const CYCLE: &str = "collector cycle";

const COLLECTOR_WAIT: &str = "Perf/learner_collector_wait_ms";
const INFERENCE: &str = "Perf/learner_inference_ms";
const INFERENCE_PARTS: [&str; 3] = [
    "Perf/learner_inference_h2d_ms",
    "Perf/learner_inference_forward_ms",
    "Perf/learner_inference_d2h_ms",
];
const BATCH_WAIT: &str = "Perf/learner_replay_batch_wait_ms";
const REPLAY_SAMPLE: &str = "Perf/learner_replay_sample_ms";
const LEARNING: &str = "Perf/learning_time";
const SUBMIT: &str = "Perf/replay_ingress_h2d_submit_ms";
const ACTION_WAIT: &str = "Perf/collector_learner_action_wait_ms";
const ENV_STEP: &str = "Perf/collector_env_step_ms";
const EXTRACT: &str = "Perf/collector_transition_extract_ms";
const REPLAY_WRITE: &str = "Perf/collector_replay_write_ms";
const MLP_INFER: &str = "Perf/collector_mlp_infer_ms";
const ROLLOUT: &str = "Perf/collection_time";
/// Every GPU's utilisation tag (docs/contract/system-metrics.md).
const GPU_UTIL: &str = "system/gpu*/util_percent";
/// The GPU starvation row's symptom.
pub const GPU_STARVED: &str =
    "GPU starved: low GPU utilisation while the learner waits on the collector";

impl<'a> Means<'a> {
    /// The timelines of `profile` from `get(tag)`, each tag's mean in its persisted unit.
    pub fn new(profile: Profile, get: &'a dyn Fn(&str) -> Option<f64>) -> Self {
        Means {
            gpu_util: None,
            profile,
            get,
            learner: LearnerTimeline::from_values(profile, get),
            collector: CollectorTimeline::from_values(profile, get),
        }
    }

    /// The mean of `tag` in milliseconds, when the run reported it.
    fn ms(&self, tag: &str) -> Option<f64> {
        let spec = tally_schema::metric(tag)?;
        let v = (self.get)(tag)?;
        Some(v / spec.unit.per_second().unwrap_or(1000.0) * 1000.0)
    }

    /// `tag` as evidence, with its share of `of` (`of_ms` milliseconds).
    fn evidence(
        &self,
        tag: &'static str,
        of: Option<&'static str>,
        of_ms: Option<f64>,
    ) -> Option<Evidence> {
        let spec = tally_schema::metric(tag)?;
        let ms = self.ms(tag)?;
        let side = if tag.starts_with("Perf/collector_") || tag == ROLLOUT {
            "collector"
        } else if tag == SUBMIT {
            "learner background"
        } else {
            "learner"
        };
        Some(Evidence {
            figure: format!("{side} {}", spec.label),
            tag,
            ms,
            share_pct: of_ms.filter(|d| *d > 0.0).map(|d| ms / d * 100.0),
            of: of_ms.and(of),
            of_ms,
            percent: None,
        })
    }

    /// A learner figure as a share of Iter Wall.
    fn of_wall(&self, tag: &'static str) -> Option<Evidence> {
        self.evidence(tag, Some(ITER_WALL), Some(self.learner.iter_wall_ms))
    }

    /// A collector figure as a share of the collector cycle (None without a complete cycle).
    fn of_cycle(&self, tag: &'static str) -> Option<Evidence> {
        let cycle = self.collector.cycle_ms?;
        self.evidence(tag, Some(CYCLE), Some(cycle))
    }

    /// Iter Wall itself, as the denominator's evidence.
    fn iter_wall(&self) -> Evidence {
        Evidence {
            figure: if self.learner.measured {
                "learner Iter Wall".into()
            } else {
                "learner Iter Wall (not measured: the accounted phases)".into()
            },
            tag: "Perf/iteration_time",
            ms: self.learner.iter_wall_ms,
            share_pct: None,
            of: None,
            of_ms: None,
            percent: None,
        }
    }

    /// The GPUs' mean utilisation as evidence, when the run has system GPU tags.
    fn gpu(&self) -> Option<Evidence> {
        let (util, n) = self.gpu_util?;
        Some(Evidence {
            figure: format!("GPU utilisation (mean of {n} GPU)"),
            tag: GPU_UTIL,
            ms: f64::NAN,
            share_pct: None,
            of: None,
            of_ms: None,
            percent: Some(util),
        })
    }
}

fn share(e: &Option<Evidence>) -> Option<f64> {
    e.as_ref().and_then(|e| e.share_pct)
}

/// The figure each row of the table reads, for the rows this run can answer (a row whose
/// figure the run did not report is not checked).
pub fn checked(m: &Means<'_>) -> Vec<Evidence> {
    let learner = [COLLECTOR_WAIT, INFERENCE, BATCH_WAIT, SUBMIT].map(|tag| m.of_wall(tag));
    let collector = [ACTION_WAIT, REPLAY_WRITE].map(|tag| m.of_cycle(tag));
    learner
        .into_iter()
        .chain(collector)
        .chain([m.gpu()])
        .flatten()
        .collect()
}

/// Apply every row of the table the profile's timelines can answer; the findings in table order.
pub fn findings(m: &Means<'_>, t: &Thresholds) -> Vec<Finding> {
    let mut out = Vec::new();
    let sac = m.profile == Profile::SacFamily;
    let wait = m.of_wall(COLLECTOR_WAIT);
    let wait_pct = share(&wait);

    if wait_pct.is_some_and(|p| p >= t.wait_high_pct) {
        let mut evidence = vec![wait.clone(), Some(m.iter_wall())];
        if sac {
            evidence.extend([ENV_STEP, EXTRACT, REPLAY_WRITE].map(|tag| m.of_cycle(tag)));
        } else {
            // APPO's collector figures are per-step averages and a rollout total: ms only.
            evidence.extend([ENV_STEP, MLP_INFER, ROLLOUT].map(|tag| m.evidence(tag, None, None)));
        }
        out.push(Finding {
            symptom: "learner Collector Wait high",
            meaning: "the learner reached the top of its loop before the collector's data or \
                      request was ready: the collector is the bottleneck",
            check_first: "env step time, transition post-processing, collector liveness (is it \
                          stepping at its usual rate?), IPC between collector and learner",
            evidence: evidence.into_iter().flatten().collect(),
        });
    }

    // The GPU idles while the learner waits for data (docs/contract/system-metrics.md "GPU
    // starvation").
    if wait_pct.is_some_and(|p| p >= t.wait_high_pct)
        && m.gpu_util.is_some_and(|(u, _)| u < t.gpu_low_pct)
    {
        out.push(Finding {
            symptom: GPU_STARVED,
            meaning: "the GPU idles while the learner waits for the collector's data: the \
                      simulator or environment side starves the GPU",
            check_first: "collector throughput (env step time, more environments or collector \
                          workers, collection overlapped with learning); then whether the \
                          learner's GPU work is batched enough to fill the GPU",
            evidence: [m.gpu(), wait.clone(), Some(m.iter_wall())]
                .into_iter()
                .flatten()
                .collect(),
        });
    }

    let action_wait = m.of_cycle(ACTION_WAIT);
    if sac
        && share(&action_wait).is_some_and(|p| p >= t.action_wait_high_pct)
        && wait_pct.is_some_and(|p| p < t.wait_low_pct)
    {
        let evidence = [
            action_wait,
            wait.clone(),
            m.of_wall(LEARNING),
            m.of_wall(INFERENCE),
            Some(m.iter_wall()),
        ];
        out.push(Finding {
            symptom: "collector Learner Action Wait high, learner Collector Wait low",
            meaning: "the collector reaches the next barrier first and waits for the learner to \
                      finish its update and serve inference: the learner is the bottleneck",
            check_first: "Learning, updates_per_step, batch size; then the inference sub-phases \
                          (Inference H2D / Forward / D2H)",
            evidence: evidence.into_iter().flatten().collect(),
        });
    }

    let inference = m.of_wall(INFERENCE);
    let inference_ms = inference.as_ref().map(|e| e.ms);
    if sac && share(&inference).is_some_and(|p| p >= t.inference_high_pct) {
        let mut evidence = vec![inference];
        let of = Some("learner Inference");
        evidence.extend(INFERENCE_PARTS.map(|tag| m.evidence(tag, of, inference_ms)));
        evidence.push(Some(m.iter_wall()));
        out.push(Finding {
            symptom: "learner Inference high",
            meaning: "the learner-owned action path itself is slow",
            check_first:
                "the H2D / Forward / D2H split: observation copy, actor forward, action copy",
            evidence: evidence.into_iter().flatten().collect(),
        });
    }

    let batch_wait = m.of_wall(BATCH_WAIT);
    if share(&batch_wait).is_some_and(|p| p >= t.batch_wait_high_pct) {
        let evidence = [batch_wait, m.of_wall(REPLAY_SAMPLE), Some(m.iter_wall())];
        out.push(Finding {
            symptom: "Replay Batch Wait high",
            meaning: "device replay prefetch does not keep up with consumption",
            check_first: "ingress commit, side-stream gather, GPU contention",
            evidence: evidence.into_iter().flatten().collect(),
        });
    }

    let write = m.of_cycle(REPLAY_WRITE);
    if share(&write).is_some_and(|p| p >= t.replay_write_high_pct) {
        let evidence = [write, m.of_cycle(EXTRACT), m.of_cycle(ENV_STEP)];
        out.push(Finding {
            symptom: "collector Replay Write high",
            meaning: "writing into the bounded ingress, or post-processing, is slow",
            check_first: "exhausted ingress slots (Train/replay_ingress_occupancy against \
                          Train/replay_ingress_depth, backpressure wait), device commit falling behind",
            evidence: evidence.into_iter().flatten().collect(),
        });
    }

    // "Learner phases normal": no learner row above fired.
    let learner_rows = out
        .iter()
        .filter(|f| f.symptom != "collector Replay Write high")
        .count();
    let submit = m.of_wall(SUBMIT);
    if learner_rows == 0 && share(&submit).is_some_and(|p| p >= t.submit_high_pct) {
        out.push(Finding {
            symptom: "Replay H2D Submit high, learner phases normal",
            meaning: "the background submit diagnostic grew; it overlaps the main phases, so the \
                      iteration did not get longer by that much",
            check_first: "a trace (training.trace_enabled=true): GPU copies, ingress commits and \
                          their overlap",
            evidence: [submit, Some(m.iter_wall())]
                .into_iter()
                .flatten()
                .collect(),
        });
    }
    out
}
