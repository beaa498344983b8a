//! `tally demo`: run the synthetic training job of `tally_demo` until its last iteration or
//! Ctrl-C/SIGTERM, then print `run: <dir>`.

use super::PanelMode;
use crate::error::{CliError, Exit};
use std::io::Write as _;
use tally::RunStatus;
use tally_demo::{DemoConfig, SinkFactory};

/// `tally demo`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Algorithm: sac, flashsac, warpsac, appo, ppo or grpo.
    #[arg(long, default_value = "sac")]
    pub algo: String,
    /// Task name (a run-directory component).
    #[arg(long, default_value = "go2_joystick_flat")]
    pub task: String,
    /// Simulation backend name (the run-directory suffix).
    #[arg(long, default_value = "mujoco")]
    pub sim: String,
    /// Iterations to run.
    #[arg(long, default_value_t = 2000)]
    pub iterations: u64,
    /// Simulated GPUs (ranks); their inputs go through the rank reducer.
    #[arg(long, default_value_t = 1)]
    pub gpus: u32,
    /// Environments per rank.
    #[arg(long, default_value_t = 4096)]
    pub num_envs: u64,
    /// Live panel: auto (on a terminal), on, or off (plain progress lines).
    #[arg(long, value_enum, default_value_t = PanelMode::Auto)]
    pub panel: PanelMode,
    /// Panic inside the training loop at this iteration (tests terminal restoration).
    #[arg(long, hide = true)]
    pub panic_at_iteration: Option<u64>,
    /// Multiply a simulated phase's duration (repeatable): `--slow learning=6` makes the
    /// learner the bottleneck, `--slow env_step=6` the collector, `--slow all=4` every phase.
    #[arg(long, value_name = "PHASE=FACTOR")]
    pub slow: Vec<String>,
    /// Overrides: training.logger=tensorboard|wandb|mlflow|trackio|none, training.log_root=DIR, training.log_dir=DIR,
    /// training.log_interval=N, training.trace_enabled=true|false, training.trace_output_dir=DIR,
    /// training.trace_thread_time=true|false, training.system_metrics=true|false,
    /// training.system_interval=SECONDS, training.trace_cuda_events=true|false (with a trace:
    /// the SAC-family demo's stand-in GPU work on a `gpu` track). With training.logger=wandb (Python package only:
    /// `python -m tally demo`): training.wandb_project=P (default unilab), training.wandb_entity=E,
    /// training.wandb_group=G (default: the task), training.wandb_job_type=J (default: the algo),
    /// training.wandb_name=N (default: ALGO__TASK__RUN_DIR_NAME), training.wandb_tags=[a,b] (added to
    /// algo, task, sim and user-USER), training.wandb_notes=TEXT, training.wandb_mode=online|offline|disabled.
    /// With training.logger=mlflow (Python package only): training.mlflow_tracking_uri=URI (default:
    /// MLFLOW_TRACKING_URI), training.mlflow_experiment=E (default: MLFLOW_EXPERIMENT_NAME, else tally),
    /// training.mlflow_run_name=N. With training.logger=trackio (Python package only):
    /// training.trackio_project=P (default tally), training.trackio_name=N, training.trackio_group=G.
    // `[a,b]` above is the override's own syntax, shown as written by `--help`, not a doc link.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(value_name = "training.KEY=VALUE")]
    pub overrides: Vec<String>,
}

impl Args {
    /// Check the flags and run the command.
    pub fn execute(self, sinks: Option<&SinkFactory<'_>>) -> Result<Exit, CliError> {
        let Args {
            algo,
            task,
            sim,
            iterations,
            gpus,
            num_envs,
            panel,
            panic_at_iteration,
            slow,
            overrides,
        } = self;
        let mut c = tally_demo::DemoConfig::from_flags(
            algo,
            task,
            sim,
            iterations,
            gpus,
            num_envs,
            &overrides,
            sinks.is_some(),
        )?;
        c.panel = panel.into();
        c.panic_at = panic_at_iteration;
        let profile = tally_demo::profile_of(&c.algo)?;
        c.slow = tally_demo::Slowdown::parse(&slow, &c.algo, profile)?;
        main(&c, sinks)
    }
}

/// `tally demo`: run, print `run: <dir>`; [`Exit::Interrupted`] when Ctrl-C stopped it.
pub fn main(c: &DemoConfig, sinks: Option<&SinkFactory<'_>>) -> Result<Exit, CliError> {
    let stop = crate::interrupt::interrupt_flag();
    let outcome = tally_demo::run(c, sinks, stop)?;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "run: {}", outcome.run_dir.display());
    let _ = out.flush();
    if outcome.status == RunStatus::Interrupted {
        crate::stderr::line("tally: interrupted; the run was closed with status interrupted");
        Ok(Exit::Interrupted)
    } else {
        Ok(Exit::Success)
    }
}
