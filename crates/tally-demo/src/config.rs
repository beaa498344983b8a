//! The demo's settings: its flags and `training.KEY=VALUE` overrides, checked into a
//! [`DemoConfig`].

use crate::error::Error;
use crate::slow::Slowdown;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use tally::schema::artifacts::WandbSettings;
use tally::{Backend, Profile};

/// The `training.*` overrides the demo understands.
pub const KNOWN_OVERRIDES: [&str; 24] = [
    "training.logger",
    "training.log_root",
    "training.log_dir",
    "training.log_interval",
    "training.trace_enabled",
    "training.trace_output_dir",
    "training.trace_thread_time",
    "training.trace_cuda_events",
    "training.system_metrics",
    "training.system_interval",
    "training.wandb_project",
    "training.wandb_entity",
    "training.wandb_group",
    "training.wandb_job_type",
    "training.wandb_name",
    "training.wandb_tags",
    "training.wandb_notes",
    "training.wandb_mode",
    "training.mlflow_tracking_uri",
    "training.mlflow_experiment",
    "training.mlflow_run_name",
    "training.trackio_project",
    "training.trackio_name",
    "training.trackio_group",
];

/// The replicas `training.logger` may name besides W&B, each with the prefix of its
/// overrides and the settings they set (`training.mlflow_run_name` → `run_name`), the
/// keywords of `tally.Logger(mlflow=..., trackio=...)`.
const REPLICA_SETTINGS: [(&str, &[&str]); 2] = [
    ("mlflow", &["tracking_uri", "experiment", "run_name"]),
    ("trackio", &["project", "name", "group"]),
];

/// The W&B project of a demo run that names none: the training configs the demo mimics
/// default to it, so demo runs land beside real ones.
pub const DEFAULT_WANDB_PROJECT: &str = "unilab";

/// The W&B modes `training.wandb_mode` accepts (the SDK's own names).
const WANDB_MODES: [&str; 3] = ["online", "offline", "disabled"];

/// The algorithms the demo simulates (their profiles come from the `Algo` table).
const DEMO_ALGOS: [&str; 6] = ["sac", "flashsac", "warpsac", "appo", "ppo", "grpo"];

/// The timing profile of a demo algorithm.
pub fn profile_of(algo: &str) -> Result<Profile, Error> {
    DEMO_ALGOS
        .contains(&algo)
        .then(|| tally::schema::Algo::parse(algo).profile())
        .flatten()
        .ok_or_else(|| {
            Error::Setting(format!(
                "unknown --algo '{algo}': expected {}",
                DEMO_ALGOS.join(", ")
            ))
        })
}

/// Validated demo settings.
#[derive(Debug, Clone)]
pub struct DemoConfig {
    /// Algorithm: sac, flashsac, warpsac, appo, ppo or grpo.
    pub algo: String,
    /// Task name.
    pub task: String,
    /// Simulation backend name.
    pub sim: String,
    /// Iterations to run.
    pub iterations: u64,
    /// Simulated ranks.
    pub gpus: u32,
    /// Environments per rank.
    pub num_envs: u64,
    /// `--panel auto|on|off`.
    pub panel: tally_tui::Mode,
    /// Seconds between plain summary lines (the demo prints one per second).
    pub plain_every: Duration,
    /// Panic inside the training loop at this iteration (tests terminal restoration).
    pub panic_at: Option<u64>,
    /// Logger settings after overrides.
    pub backend: Backend,
    /// `training.log_root`.
    pub log_root: PathBuf,
    /// `training.log_dir`.
    pub log_dir: Option<PathBuf>,
    /// `training.log_interval`.
    pub log_interval: u64,
    /// `training.trace_enabled`.
    pub trace: bool,
    /// `--slow PHASE=FACTOR` factors on simulated phase durations.
    pub slow: Slowdown,
    /// `training.trace_output_dir`.
    pub trace_output_dir: Option<PathBuf>,
    /// `training.trace_thread_time`.
    pub trace_thread_time: bool,
    /// `training.trace_cuda_events`: the runner's switch for timing GPU work with CUDA events,
    /// read back from the logger's tracer; the SAC-family demo then puts its stand-in GPU
    /// work on the trace's `gpu` track (docs/contract/trace.md "Options").
    pub trace_cuda_events: bool,
    /// `training.system_metrics`: the process, machine and GPUs sampled beside the run (on
    /// by default; docs/contract/system-metrics.md).
    pub system_metrics: bool,
    /// `training.system_interval`: seconds between system samples.
    pub system_interval: f64,
    /// `training.wandb_*`: the W&B run's settings (only with `training.logger=wandb`; the
    /// project defaults to `DEFAULT_WANDB_PROJECT`).
    pub wandb: WandbSettings,
    /// `training.mlflow_*`: the MLflow replica's settings (only with `training.logger=mlflow`),
    /// by `tally.Logger(mlflow=...)`'s keys; an unset one is left to the replica's default.
    pub mlflow: BTreeMap<String, String>,
    /// `training.trackio_*`: the trackio replica's settings (only with
    /// `training.logger=trackio`), by `tally.Logger(trackio=...)`'s keys.
    pub trackio: BTreeMap<String, String>,
}

impl DemoConfig {
    /// Validate raw flags and `training.KEY=VALUE` overrides into a config; `wandb_sinks` says
    /// whether the caller can build the trackers' sinks (only then is `training.logger=wandb`,
    /// `mlflow` or `trackio` accepted).
    #[allow(clippy::too_many_arguments)]
    pub fn from_flags(
        algo: String,
        task: String,
        sim: String,
        iterations: u64,
        gpus: u32,
        num_envs: u64,
        overrides: &[String],
        wandb_sinks: bool,
    ) -> Result<Self, Error> {
        let setting = |message: String| Err(Error::Setting(message));
        profile_of(&algo)?;
        if iterations == 0 {
            return setting("--iterations must be at least 1".into());
        }
        if !(1..=64).contains(&gpus) {
            return setting(format!("--gpus {gpus} is out of range 1..=64"));
        }
        if num_envs == 0 {
            return setting("--num-envs must be at least 1".into());
        }
        let mut c = DemoConfig {
            algo,
            task,
            sim,
            iterations,
            gpus,
            num_envs,
            panel: tally_tui::Mode::Auto,
            plain_every: Duration::from_secs(1),
            panic_at: None,
            backend: Backend::TensorBoard,
            log_root: PathBuf::from("logs"),
            log_dir: None,
            log_interval: 1,
            trace: false,
            slow: Slowdown::default(),
            trace_output_dir: None,
            trace_thread_time: false,
            trace_cuda_events: false,
            system_metrics: true,
            system_interval: tally::system::DEFAULT_INTERVAL_SECS,
            wandb: WandbSettings::default(),
            mlflow: BTreeMap::new(),
            trackio: BTreeMap::new(),
        };
        // The first `training.wandb_*` override given, to name when there is no W&B run.
        let mut wandb_override: Option<&str> = None;
        // The first override of each other tracker, likewise.
        let mut replica_override: Option<(&str, &str)> = None;
        for o in overrides {
            let Some((key, value)) = o.split_once('=') else {
                return setting(format!(
                    "override '{o}' is not KEY=VALUE (for example training.log_interval=10)"
                ));
            };
            match key {
                "training.logger" => {
                    c.backend = match value {
                        "tensorboard" => Backend::TensorBoard,
                        "none" => Backend::None,
                        "wandb" => Backend::Wandb,
                        "mlflow" => Backend::Mlflow,
                        "trackio" => Backend::Trackio,
                        _ => {
                            return setting(format!(
                                "training.logger={value}: expected tensorboard, wandb, mlflow, \
                                 trackio or none"
                            ))
                        }
                    }
                }
                "training.log_root" => c.log_root = PathBuf::from(value),
                "training.log_dir" => c.log_dir = Some(PathBuf::from(value)),
                "training.log_interval" => {
                    c.log_interval = value.parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
                        Error::Setting(format!(
                            "training.log_interval={value}: expected an integer >= 1"
                        ))
                    })?
                }
                "training.trace_enabled" => c.trace = switch(key, value)?,
                "training.trace_output_dir" => c.trace_output_dir = Some(PathBuf::from(value)),
                "training.trace_thread_time" => c.trace_thread_time = switch(key, value)?,
                "training.trace_cuda_events" => c.trace_cuda_events = switch(key, value)?,
                "training.system_metrics" => c.system_metrics = switch(key, value)?,
                "training.system_interval" => {
                    c.system_interval = value
                        .parse::<f64>()
                        .ok()
                        .filter(|s| tally::system::check_interval("", *s).is_ok())
                        .ok_or_else(|| {
                            Error::Setting(format!(
                                "training.system_interval={value}: expected seconds >= {}",
                                tally::system::MIN_INTERVAL_SECS
                            ))
                        })?
                }
                _ if key.starts_with("training.wandb_") => {
                    set_wandb(&mut c.wandb, key, value)?;
                    wandb_override.get_or_insert(o);
                }
                _ if key.starts_with("training.mlflow_")
                    || key.starts_with("training.trackio_") =>
                {
                    let tracker = set_replica(&mut c, key, value)?;
                    replica_override.get_or_insert((tracker, o));
                }
                _ => return Err(unknown_override(key)),
            }
        }
        if c.trace_cuda_events && !c.trace {
            return setting(
                "training.trace_cuda_events=true times GPU work for the trace, but the run records \
                 none: add training.trace_enabled=true"
                    .into(),
            );
        }
        if let Some(o) = wandb_override.filter(|_| c.backend != Backend::Wandb) {
            let hint = if wandb_sinks { "" } else { PYTHON_ONLY };
            return setting(format!(
                "{o} is a W&B setting but the logger is training.logger={}: add training.logger=wandb{hint}",
                c.backend.as_str()
            ));
        }
        if let Some((tracker, o)) = replica_override.filter(|(t, _)| c.backend.tracker() != Some(t))
        {
            return setting(format!(
                "{o} is a {tracker} setting but the logger is training.logger={}: add \
                 training.logger={tracker}",
                c.backend.as_str()
            ));
        }
        if let Some(tracker) = c.backend.tracker().filter(|t| *t != "wandb") {
            if !wandb_sinks {
                return setting(format!(
                    "training.logger={tracker} cannot run here: its replica needs the {tracker} \
                     Python package, which this binary cannot call: run the same command through \
                     the Python package, `python -m tally demo ... training.logger={tracker}`, with \
                     {tracker} installed"
                ));
            }
        }
        if c.backend == Backend::Wandb {
            if !wandb_sinks {
                return setting(format!(
                    "training.logger=wandb cannot run here{PYTHON_ONLY}"
                ));
            }
            c.wandb
                .project
                .get_or_insert_with(|| DEFAULT_WANDB_PROJECT.to_owned());
        }
        Ok(c)
    }
}

/// Set an MLflow or trackio setting (a `training.<tracker>_<setting>` override) to `value`; an
/// empty value leaves it to the replica's default. Returns the tracker's name.
fn set_replica(c: &mut DemoConfig, key: &str, value: &str) -> Result<&'static str, Error> {
    let rest = key.strip_prefix("training.").unwrap_or(key);
    for (tracker, settings) in REPLICA_SETTINGS {
        let Some(name) = rest.strip_prefix(tracker).and_then(|r| r.strip_prefix('_')) else {
            continue;
        };
        if !settings.contains(&name) {
            break;
        }
        let map = if tracker == "mlflow" {
            &mut c.mlflow
        } else {
            &mut c.trackio
        };
        if value.is_empty() {
            map.remove(name);
        } else {
            map.insert(name.to_owned(), value.to_owned());
        }
        return Ok(tracker);
    }
    Err(unknown_override(key))
}

/// A `true`/`false` override (`1`/`0` too).
fn switch(key: &str, value: &str) -> Result<bool, Error> {
    match value {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(Error::Setting(format!(
            "{key}={value}: expected true or false"
        ))),
    }
}

fn unknown_override(key: &str) -> Error {
    Error::Setting(format!(
        "unknown override '{key}': known keys are {}",
        KNOWN_OVERRIDES.join(", ")
    ))
}

/// Why the Rust binary runs no W&B demo, and how to run one.
const PYTHON_ONLY: &str = " (W&B runs need the W&B Python SDK, which this binary cannot call: \
run the same command through the Python package, `python -m tally demo ... training.logger=wandb`, \
after `pip install 'tally-rl[wandb]'`)";

/// Set the W&B setting `key` (a `training.wandb_*` override) to `value`; an empty value
/// leaves it to W&B's own default.
fn set_wandb(w: &mut WandbSettings, key: &str, value: &str) -> Result<(), Error> {
    let text = (!value.is_empty()).then(|| value.to_owned());
    match key {
        "training.wandb_project" => w.project = text,
        "training.wandb_entity" => w.entity = text,
        "training.wandb_group" => w.group = text,
        "training.wandb_job_type" => w.job_type = text,
        "training.wandb_name" => w.name = text,
        "training.wandb_notes" => w.notes = text,
        "training.wandb_tags" => w.tags = parse_tags(value)?,
        "training.wandb_mode" => {
            if !(value.is_empty() || WANDB_MODES.contains(&value)) {
                return Err(Error::Setting(format!(
                    "training.wandb_mode={value}: expected {}",
                    WANDB_MODES.join(", ")
                )));
            }
            w.mode = text;
        }
        _ => return Err(unknown_override(key)),
    }
    Ok(())
}

/// `training.wandb_tags`: a list as Hydra writes it, `[a,b]`, or bare, `a,b`; items are
/// trimmed and may be quoted ('a b' or "a b"); `[]` or nothing is no tags.
fn parse_tags(value: &str) -> Result<Vec<String>, Error> {
    let bad = |why: &str| {
        Error::Setting(format!(
            "training.wandb_tags={value}: {why} (expected a list such as [a,b] or a,b)"
        ))
    };
    let inner = match (value.strip_prefix('['), value.strip_suffix(']')) {
        (Some(_), Some(_)) if value.len() >= 2 => &value[1..value.len() - 1],
        (None, None) => value,
        _ => return Err(bad("unbalanced brackets")),
    };
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    inner
        .split(',')
        .map(|item| {
            let item = item.trim();
            let unquoted = ['\'', '"']
                .iter()
                .find_map(|q| item.strip_prefix(*q).and_then(|i| i.strip_suffix(*q)))
                .unwrap_or(item);
            if unquoted.is_empty() {
                Err(bad("an empty tag"))
            } else if unquoted.contains(['[', ']', '\'', '"']) {
                Err(bad(&format!("tag '{unquoted}' holds a bracket or quote")))
            } else {
                Ok(unquoted.to_owned())
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(overrides: &[&str], wandb_sinks: bool) -> Result<DemoConfig, String> {
        let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        DemoConfig::from_flags(
            "sac".into(),
            "go2".into(),
            "mujoco".into(),
            3,
            1,
            8,
            &overrides,
            wandb_sinks,
        )
        .map_err(|e| e.to_string())
    }

    #[test]
    fn trace_cuda_events_is_a_known_switch_for_a_traced_run() {
        let c = parse(&["training.trace_enabled=true"], false).unwrap();
        assert!(!c.trace_cuda_events, "off by default, as the Logger's");
        let c = parse(
            &[
                "training.trace_enabled=true",
                "training.trace_cuda_events=true",
            ],
            false,
        )
        .unwrap();
        assert!(c.trace_cuda_events);
        let c = parse(&["training.trace_cuda_events=0"], false).unwrap();
        assert!(!c.trace_cuda_events);
        let err = parse(
            &["training.trace_enabled=1", "training.trace_cuda_events=yes"],
            false,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "training.trace_cuda_events=yes: expected true or false"
        );
        // Without a trace it would do nothing: said, not ignored.
        let err = parse(&["training.trace_cuda_events=true"], false).unwrap_err();
        assert!(
            err.contains("training.trace_cuda_events=true")
                && err.contains("add training.trace_enabled=true"),
            "{err}"
        );
    }

    #[test]
    fn every_wandb_override_reaches_the_settings() {
        let c = parse(
            &[
                "training.wandb_project=p",
                "training.wandb_entity=e",
                "training.wandb_group=g",
                "training.wandb_job_type=j",
                "training.wandb_name=n",
                "training.wandb_tags=[a, 'b c',d]",
                "training.wandb_notes=some notes",
                "training.wandb_mode=offline",
                "training.logger=wandb",
            ],
            true,
        )
        .unwrap();
        let w = &c.wandb;
        assert_eq!(
            (
                w.project.as_deref(),
                w.entity.as_deref(),
                w.group.as_deref()
            ),
            (Some("p"), Some("e"), Some("g"))
        );
        assert_eq!(
            (w.job_type.as_deref(), w.name.as_deref()),
            (Some("j"), Some("n"))
        );
        assert_eq!(w.tags, ["a", "b c", "d"]);
        assert_eq!(
            (w.notes.as_deref(), w.mode.as_deref()),
            (Some("some notes"), Some("offline"))
        );
    }

    #[test]
    fn the_project_defaults_to_unilab_and_empty_values_are_unset() {
        let c = parse(&["training.logger=wandb", "training.wandb_entity="], true).unwrap();
        assert_eq!(c.wandb.project.as_deref(), Some("unilab"));
        assert_eq!(c.wandb.entity, None);
        // Without W&B nothing is set, so run_config.json records no W&B project.
        assert_eq!(parse(&[], true).unwrap().wandb, WandbSettings::default());
    }

    #[test]
    fn tags_take_the_list_and_the_bare_syntax() {
        let tags = |v: &str| {
            parse(
                &["training.logger=wandb", &format!("training.wandb_tags={v}")],
                true,
            )
        };
        assert_eq!(tags("a,b").unwrap().wandb.tags, ["a", "b"]);
        assert_eq!(tags("[x]").unwrap().wandb.tags, ["x"]);
        assert!(tags("[]").unwrap().wandb.tags.is_empty());
        assert!(tags("").unwrap().wandb.tags.is_empty());
        for (bad, why) in [
            ("[a,b", "unbalanced"),
            ("a,,b", "empty tag"),
            ("[a,[b]]", "'[b]'"),
            ("]", "unbalanced"),
        ] {
            let e = tags(bad).unwrap_err();
            assert!(
                e.contains(&format!("training.wandb_tags={bad}")) && e.contains(why),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_wandb_setting_without_the_wandb_logger_names_both() {
        for logger in [
            None,
            Some("training.logger=tensorboard"),
            Some("training.logger=none"),
        ] {
            let mut o = vec!["training.wandb_tags=[a]", "training.wandb_project=p"];
            o.extend(logger);
            let e = parse(&o, true).unwrap_err();
            assert!(
                e.contains("training.wandb_tags=[a]") && e.contains("training.logger=wandb"),
                "{e}"
            );
            assert!(!e.contains("Python"), "{e}");
        }
    }

    #[test]
    fn without_the_sdk_any_wandb_override_says_to_run_the_python_package() {
        for o in [
            &["training.logger=wandb"][..],
            &["training.wandb_project=p"],
            &["training.logger=wandb", "training.wandb_mode=offline"],
        ] {
            let e = parse(o, false).unwrap_err();
            assert!(
                e.contains("python -m tally demo") && e.contains("Python SDK"),
                "{o:?}: {e}"
            );
        }
    }

    #[test]
    fn a_bad_mode_and_an_unknown_wandb_key_are_named() {
        let e = parse(
            &["training.logger=wandb", "training.wandb_mode=cloud"],
            true,
        )
        .unwrap_err();
        assert!(
            e.contains("training.wandb_mode=cloud") && e.contains("online, offline, disabled"),
            "{e}"
        );
        let e = parse(&["training.wandb_projcet=p"], true).unwrap_err();
        assert!(
            e.contains("unknown override 'training.wandb_projcet'"),
            "{e}"
        );
    }

    #[test]
    fn mlflow_and_trackio_overrides_reach_their_settings_only_with_their_logger() {
        let c = parse(
            &[
                "training.logger=mlflow",
                "training.mlflow_tracking_uri=http://127.0.0.1:5000",
                "training.mlflow_experiment=demo",
                "training.mlflow_run_name=",
            ],
            true,
        )
        .unwrap();
        assert_eq!(c.backend, Backend::Mlflow);
        let got: Vec<_> = c
            .mlflow
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        // An empty value leaves the setting to the replica's default.
        assert_eq!(
            got,
            [
                ("experiment", "demo"),
                ("tracking_uri", "http://127.0.0.1:5000")
            ]
        );
        let c = parse(
            &[
                "training.logger=trackio",
                "training.trackio_project=p",
                "training.trackio_group=g",
            ],
            true,
        )
        .unwrap();
        assert_eq!(c.backend, Backend::Trackio);
        assert_eq!(c.trackio.get("project").map(String::as_str), Some("p"));
        assert_eq!(c.trackio.get("group").map(String::as_str), Some("g"));
        let e = parse(
            &["training.logger=wandb", "training.trackio_project=p"],
            true,
        )
        .unwrap_err();
        assert!(
            e.contains("training.trackio_project=p is a trackio setting")
                && e.contains("training.logger=wandb")
                && e.contains("add training.logger=trackio"),
            "{e}"
        );
        let e = parse(&["training.logger=mlflow", "training.mlflow_uri=x"], true).unwrap_err();
        assert!(e.contains("unknown override 'training.mlflow_uri'"), "{e}");
        let e = parse(&["training.logger=trackio"], false).unwrap_err();
        assert!(
            e.contains("python -m tally demo ... training.logger=trackio"),
            "{e}"
        );
    }
}
