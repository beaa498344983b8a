//! `tally demo`: a synthetic training job with a real learner thread and a real collector
//! thread whose phases take measurable time, logging through the `Logger` like a real runner,
//! with the live panel (or plain summary lines) of `tally-tui`.

mod rft;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};
use tally::{Backend, Logger, LoggerConfig, MpsState, Profile, RunStatus, StepInput, SystemInfo};
use tally_tui::{Panel, PanelOptions};

/// Builds a demo run's extra sinks for its backend: the Python package installs one so
/// `python -m tally demo ... training.logger=wandb` logs through the W&B SDK.
pub type SinkProvider = dyn Fn(Backend) -> Result<Vec<Box<dyn tally::Sink>>, String> + Send + Sync;

static SINK_PROVIDER: std::sync::Mutex<Option<std::sync::Arc<SinkProvider>>> =
    std::sync::Mutex::new(None);

/// Install (or with `None` remove) the demo's sink provider; with one, `training.logger=wandb` is accepted.
pub fn set_sink_provider(p: Option<std::sync::Arc<SinkProvider>>) {
    *SINK_PROVIDER.lock().unwrap_or_else(|e| e.into_inner()) = p;
}

fn sink_provider() -> Option<std::sync::Arc<SinkProvider>> {
    SINK_PROVIDER
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// The `training.*` overrides the demo understands.
pub const KNOWN_OVERRIDES: [&str; 5] = [
    "training.logger",
    "training.log_root",
    "training.log_dir",
    "training.log_interval",
    "training.trace_enabled",
];

/// Validated demo settings.
#[derive(Debug, Clone)]
pub struct DemoConfig {
    /// Algorithm: sac, flashsac, warpsac, appo, ppo.
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
}

/// The algorithms the demo simulates (their profiles come from the `Algo` table).
const DEMO_ALGOS: [&str; 6] = ["sac", "flashsac", "warpsac", "appo", "ppo", "grpo"];

/// The timing profile of a demo algorithm.
pub fn profile_of(algo: &str) -> Result<Profile, String> {
    DEMO_ALGOS
        .contains(&algo)
        .then(|| tally::schema::Algo::parse(algo).profile())
        .flatten()
        .ok_or_else(|| {
            format!(
                "unknown --algo '{algo}': expected {}",
                DEMO_ALGOS.join(", ")
            )
        })
}

impl DemoConfig {
    /// Validate raw flags and `training.KEY=VALUE` overrides into a config.
    #[allow(clippy::too_many_arguments)]
    pub fn from_flags(
        algo: String,
        task: String,
        sim: String,
        iterations: u64,
        gpus: u32,
        num_envs: u64,
        overrides: &[String],
    ) -> Result<Self, String> {
        profile_of(&algo)?;
        if iterations == 0 {
            return Err("--iterations must be at least 1".into());
        }
        if !(1..=64).contains(&gpus) {
            return Err(format!("--gpus {gpus} is out of range 1..=64"));
        }
        if num_envs == 0 {
            return Err("--num-envs must be at least 1".into());
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
        };
        for o in overrides {
            let Some((key, value)) = o.split_once('=') else {
                return Err(format!(
                    "override '{o}' is not KEY=VALUE (for example training.log_interval=10)"
                ));
            };
            match key {
                "training.logger" => {
                    c.backend = match value {
                        "tensorboard" => Backend::TensorBoard,
                        "none" => Backend::None,
                        "wandb" if sink_provider().is_some() => Backend::Wandb,
                        "wandb" => {
                            return Err("training.logger=wandb needs the W&B SDK: run the same demo through the Python \
                                        package (`python -m tally demo ... training.logger=wandb`)"
                                .into())
                        }
                        _ => return Err(format!("training.logger={value}: expected tensorboard, wandb or none")),
                    }
                }
                "training.log_root" => c.log_root = PathBuf::from(value),
                "training.log_dir" => c.log_dir = Some(PathBuf::from(value)),
                "training.log_interval" => {
                    c.log_interval = value
                        .parse()
                        .ok()
                        .filter(|n| *n >= 1)
                        .ok_or_else(|| format!("training.log_interval={value}: expected an integer >= 1"))?
                }
                "training.trace_enabled" => {
                    c.trace = match value {
                        "true" | "1" => true,
                        "false" | "0" => false,
                        _ => return Err(format!("training.trace_enabled={value}: expected true or false")),
                    }
                }
                _ => {
                    return Err(format!("unknown override '{key}': known keys are {}", KNOWN_OVERRIDES.join(", ")));
                }
            }
        }
        Ok(c)
    }
}

/// Busy-wait short phases (sleep overshoots sub-millisecond durations), sleep long ones.
fn work(d: Duration) {
    if d > Duration::from_micros(300) {
        thread::sleep(d);
    } else {
        let t = Instant::now();
        while t.elapsed() < d {
            std::hint::spin_loop();
        }
    }
}

fn timed(d: Duration) -> f64 {
    let t = Instant::now();
    work(d);
    t.elapsed().as_secs_f64()
}

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// A tiny deterministic noise source (xorshift), so runs are reproducible.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// 1 ± `amp` multiplicative jitter.
    fn jitter(&mut self, amp: f64) -> f64 {
        1.0 + amp * (2.0 * self.next() - 1.0)
    }
}

/// Collector timings of one report, seconds.
type Phases = Vec<(&'static str, f64)>;

fn mean_phases(reports: &[Phases]) -> Phases {
    let mut out: Phases = Vec::new();
    for r in reports {
        for (k, v) in r {
            match out.iter_mut().find(|(p, _)| p == k) {
                Some(e) => e.1 += v,
                None => out.push((k, *v)),
            }
        }
    }
    let n = reports.len().max(1) as f64;
    out.iter_mut().for_each(|e| e.1 /= n);
    out
}

/// SAC family: a per-tick barrier between the collector and learner-owned inference.
fn sac_collector(req: SyncSender<()>, act: Receiver<()>, report: Sender<Phases>) {
    let mut noise = Noise(0x5ac);
    loop {
        let t = Instant::now();
        if req.send(()).is_err() {
            return;
        }
        let inference_request = t.elapsed().as_secs_f64();
        let t = Instant::now();
        if act.recv().is_err() {
            return;
        }
        let learner_action_wait = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let validate = timed(us(20));
        let apply = timed(us(40));
        let backend = timed(us((1200.0 * noise.jitter(0.2)) as u64));
        let update = timed(us(250));
        let reset = timed(us(if noise.next() < 0.1 { 400 } else { 30 }));
        let env_step = t.elapsed().as_secs_f64();
        let extract = timed(us(15));
        let write = timed(us(350));
        let publish = timed(us(40));
        let phases = vec![
            ("inference_request", inference_request),
            ("learner_action_wait", learner_action_wait),
            ("env_step", env_step),
            ("env_step_action_validate", validate),
            ("env_step_apply_action", apply),
            ("env_step_backend", backend),
            ("env_step_update_state", update),
            ("env_step_reset_done", reset),
            ("transition_extract", extract),
            ("replay_write", write),
            ("metrics_publish", publish),
        ];
        if report.send(phases).is_err() {
            return;
        }
    }
}

/// APPO: the collector fills a ring of rollouts; the learner consumes ready slots.
fn appo_collector(ring: SyncSender<Phases>, steps_per_env: u32) {
    let (mut mlp_ema, mut env_ema) = (None::<f64>, None::<f64>);
    let ema = |e: &mut Option<f64>, v: f64| *e = Some(e.map_or(v, |x| 0.9 * x + 0.1 * v));
    loop {
        let t = Instant::now();
        for _ in 0..steps_per_env {
            ema(&mut mlp_ema, timed(us(60)));
            ema(&mut env_ema, timed(us(180)));
        }
        let rollout = t.elapsed().as_secs_f64();
        let phases = vec![
            ("mlp_infer", mlp_ema.unwrap_or(0.0)),
            ("env_step", env_ema.unwrap_or(0.0)),
            ("rollout", rollout),
        ];
        if ring.send(phases).is_err() {
            return;
        }
    }
}

/// PPO: collect a rollout on request, then the learner updates.
fn ppo_collector(go: Receiver<()>, done: SyncSender<Phases>, steps_per_env: u32) {
    while go.recv().is_ok() {
        let t = Instant::now();
        for _ in 0..steps_per_env {
            work(us(120));
        }
        if done
            .send(vec![("rollout", t.elapsed().as_secs_f64())])
            .is_err()
        {
            return;
        }
    }
}

/// Training-like statistics for iteration `i` of `n`: decaying losses, rising reward.
fn training_metrics(algo: &str, i: u64, n: u64, noise: &mut Noise) -> Vec<(&'static str, f64)> {
    let p = i as f64 / n as f64;
    let decay = (-3.0 * p).exp();
    let mut m: Vec<(&'static str, f64)> = match profile_of(algo) {
        Ok(Profile::SacFamily) => vec![
            ("Loss/critic", 2.0 * decay * noise.jitter(0.1) + 0.05),
            ("Loss/actor", -5.0 - 20.0 * p + noise.jitter(0.05)),
            ("Loss/temperature", -0.3 * decay * noise.jitter(0.1)),
            ("Loss/entropy", -1.5 + 0.3 * decay),
            ("Policy/temperature", 0.2 * decay + 0.005),
            ("Train/actor_gradient_norm", 1.2 * noise.jitter(0.2)),
            (
                "Train/critic_gradient_norm",
                4.0 * decay * noise.jitter(0.2) + 0.5,
            ),
            ("Train/target_q_max", 20.0 + 40.0 * p),
            ("Train/target_q_min", -2.0 + 5.0 * p),
            ("Train/replay_ingress_depth", 8.0),
            (
                "Train/replay_ingress_occupancy",
                (noise.next() * 3.0).floor(),
            ),
            ("Train/replay_ingress_high_water", 5.0),
            ("Train/replay_ingress_backpressure_wait_ms", 0.5 * i as f64),
            ("Train/replay_ingress_dropped_batches", 0.0),
        ],
        Ok(Profile::Appo) => vec![
            ("Loss/surrogate", -0.01 * noise.jitter(0.5)),
            ("Loss/value", 0.5 * decay * noise.jitter(0.1) + 0.02),
            ("Loss/entropy", 1.2 - 0.4 * p),
            ("Loss/learning_rate", 3e-4),
            ("Policy/mean_std", 1.0 - 0.6 * p),
            ("Train/approx_kl", 0.01 * noise.jitter(0.3)),
            ("Train/clip_fraction", 0.1 * noise.jitter(0.3)),
            ("Train/global_gradient_norm", 0.8 * noise.jitter(0.2)),
            (
                "Train/behavior_to_current_log_prob_delta",
                0.002 * noise.jitter(0.5),
            ),
            ("Train/vtrace_rho_clip_fraction", 0.05 * noise.jitter(0.3)),
            ("Train/vtrace_rho_p99", 1.4 * noise.jitter(0.1)),
            ("Train/ring_available_slots", 1.0),
            ("Train/rollouts_read", 1.0),
        ],
        _ => vec![
            ("Loss/surrogate", -0.01 * noise.jitter(0.5)),
            ("Loss/value", 0.5 * decay * noise.jitter(0.1) + 0.02),
            ("Loss/entropy", 1.2 - 0.4 * p),
            ("Loss/learning_rate", 1e-3),
            ("Policy/mean_std", 1.0 - 0.6 * p),
        ],
    };
    if algo == "flashsac" {
        m.push(("Train/reward_scale_std", 1.0 + 0.5 * p));
    }
    m.push((
        "Episode_Termination/time_out",
        (noise.next() * 20.0).floor(),
    ));
    m.push((
        "Episode_Termination/base_contact",
        (noise.next() * 5.0).floor(),
    ));
    m
}

fn rewards(p: f64, noise: &mut Noise) -> Vec<(&'static str, f64)> {
    vec![
        ("tracking_lin_vel", 0.8 * p * noise.jitter(0.05)),
        ("tracking_ang_vel", 0.4 * p * noise.jitter(0.05)),
        ("action_rate", -0.05 * (1.0 - 0.5 * p) * noise.jitter(0.1)),
        ("feet_air_time", 0.1 * p * noise.jitter(0.2)),
        ("orientation", -0.02 * noise.jitter(0.3)),
    ]
}

/// SIGINT/SIGTERM seen since the current command started.
static INTERRUPTS: AtomicUsize = AtomicUsize::new(0);
/// Set by the first interrupt: the training loop stops and the run closes as `interrupted`.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The interrupt flag of this command, with the Ctrl-C/SIGTERM handler installed (once per
/// process). The first interrupt sets the flag (graceful: close the logger, restore the
/// terminal, exit 130); a second one restores the terminal and exits 130 at once.
pub fn interrupt_flag() -> &'static AtomicBool {
    static HANDLER: OnceLock<bool> = OnceLock::new();
    HANDLER.get_or_init(|| {
        ctrlc::set_handler(|| {
            INTERRUPTED.store(true, Ordering::SeqCst);
            if INTERRUPTS.fetch_add(1, Ordering::SeqCst) >= 1 {
                tally_tui::restore_terminal();
                std::process::exit(130);
            }
        })
        .is_ok()
    });
    INTERRUPTS.store(0, Ordering::SeqCst);
    INTERRUPTED.store(false, Ordering::SeqCst);
    &INTERRUPTED
}

/// How a demo run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The run directory.
    pub run_dir: PathBuf,
    /// The status the logger was closed with.
    pub status: RunStatus,
}

/// `tally demo`: run, print `run: <dir>`, and return the exit code (130 when interrupted).
pub fn main(c: &DemoConfig) -> ExitCode {
    let stop = interrupt_flag();
    match run(c, stop) {
        Ok(o) => {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "run: {}", o.run_dir.display());
            let _ = out.flush();
            if o.status == RunStatus::Interrupted {
                eprintln!("tally: interrupted; the run was closed with status interrupted");
                ExitCode::from(130)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("tally: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Run the demo until the last iteration or until `stop` is set.
pub fn run(c: &DemoConfig, stop: &AtomicBool) -> Result<Outcome, String> {
    let profile = profile_of(&c.algo)?;
    let mut lc = LoggerConfig::new(c.algo.clone(), c.task.clone(), c.sim.clone());
    lc.max_iterations = c.iterations;
    lc.num_envs = c.num_envs;
    lc.num_gpus = c.gpus;
    lc.profile = profile;
    lc.backend = c.backend;
    lc.log_root = c.log_root.clone();
    lc.log_dir = c.log_dir.clone();
    lc.log_interval = c.log_interval;
    lc.trace = c.trace;
    lc.run_config = serde_json::json!({
        "algo": {"name": c.algo, "num_envs": c.num_envs, "max_iterations": c.iterations},
        "task": c.task,
        "training": {"sim_backend": c.sim, "num_gpus": c.gpus, "log_interval": c.log_interval, "logger": format!("{:?}", c.backend).to_lowercase()},
    });
    let extra = match sink_provider() {
        Some(provide) => provide(c.backend)?,
        None => Vec::new(),
    };
    let clock = std::sync::Arc::new(tally::SystemClock::default());
    let mut log = Logger::with_sinks(lc, extra, clock).map_err(|e| e.to_string())?;
    // The panel renders the logger's terminal state on its own 2 Hz thread; a panic in the
    // loop drops it first (locals drop in reverse), which restores the terminal.
    let mut panel = Panel::start(
        log.terminal(),
        PanelOptions {
            mode: c.panel,
            plain_interval: c.plain_every,
            ..PanelOptions::default()
        },
    );
    let result = if profile == Profile::Rft {
        rft::train(c.iterations, &mut log, stop)
    } else {
        train(c, profile, &mut log, stop)
    };
    if result.is_ok() && matches!(profile, Profile::SacFamily | Profile::Appo) {
        log.set_runtime_manifest(demo_manifest(c))
            .map_err(|e| e.to_string())?;
    }
    let status = match result {
        Ok(true) => RunStatus::Completed,
        Ok(false) => RunStatus::Interrupted,
        Err(_) => RunStatus::Failed,
    };
    let closed = log.close(status).map_err(|e| e.to_string());
    let shown = panel.stop().map_err(|e| format!("panel: {e}"));
    result?;
    closed?;
    shown?;
    Ok(Outcome {
        run_dir: log.run_dir().to_owned(),
        status,
    })
}

/// The training loop; `Ok(false)` when `stop` ended it early.
fn train(
    c: &DemoConfig,
    profile: Profile,
    log: &mut Logger,
    stop: &AtomicBool,
) -> Result<bool, String> {
    let mut noise = Noise(0x7a11_u64 ^ c.iterations);
    let steps_per_env = match profile {
        Profile::SacFamily => 1,
        Profile::Appo => 16,
        Profile::OnPolicy => 24,
        Profile::Rft => return Err("rft runs are trained by rft".into()),
    };
    log.status("Warming up...");
    // Threads: the collector runs on its own clock; channels are the sync points.
    let (req_tx, req_rx) = sync_channel::<()>(1);
    let (act_tx, act_rx) = sync_channel::<()>(1);
    let (rep_tx, rep_rx) = channel::<Phases>();
    let (ring_tx, ring_rx) = sync_channel::<Phases>(2);
    let (go_tx, go_rx) = sync_channel::<()>(1);
    let collector = match profile {
        Profile::SacFamily => thread::Builder::new()
            .name("collector".into())
            .spawn(move || sac_collector(req_tx, act_rx, rep_tx)),
        Profile::Appo => thread::Builder::new()
            .name("collector".into())
            .spawn(move || appo_collector(ring_tx, steps_per_env)),
        // (Rft returned above: its explorer lives in rft.)
        Profile::OnPolicy | Profile::Rft => thread::Builder::new()
            .name("collector".into())
            .spawn(move || ppo_collector(go_rx, ring_tx, steps_per_env)),
    }
    .map_err(|e| format!("spawn collector thread: {e}"))?;
    if profile == Profile::SacFamily {
        let target = 10 * c.num_envs;
        for k in 1..=10u64 {
            if stop.load(Ordering::SeqCst) {
                return Ok(false);
            }
            // Warm-up: the replay buffer fills before the first update.
            req_rx
                .recv()
                .map_err(|_| "collector stopped during warm-up".to_string())?;
            act_tx
                .send(())
                .map_err(|_| "collector stopped during warm-up".to_string())?;
            let n = k * c.num_envs;
            log.status(format!(
                "Buffer fill: {n}/{target} ({:.0}%)",
                n as f64 / target as f64 * 100.0
            ));
        }
        while rep_rx.try_recv().is_ok() {}
    }
    let first = if profile == Profile::OnPolicy { 0 } else { 1 };
    let mut env_steps = vec![0u64; c.gpus as usize];
    let mut returns = 0.0;
    let mut completed = true;
    for i in first..first + c.iterations {
        if stop.load(Ordering::SeqCst) {
            completed = false;
            break;
        }
        if c.panic_at == Some(i) {
            panic!("tally demo: injected panic at iteration {i} (--panic-at-iteration)");
        }
        let t0 = Instant::now();
        let mut input = StepInput::new(i);
        let steps = c.num_envs * steps_per_env as u64;
        match profile {
            Profile::SacFamily => {
                let t = Instant::now();
                req_rx
                    .recv()
                    .map_err(|_| "collector thread stopped".to_string())?;
                input = input.learner("collector_wait", t.elapsed().as_secs_f64());
                let t = Instant::now();
                let h2d = timed(us(60));
                let fwd = timed(us(350));
                let d2h = timed(us(40));
                input = input
                    .learner("inference", t.elapsed().as_secs_f64())
                    .learner("inference_h2d", h2d)
                    .learner("inference_forward", fwd)
                    .learner("inference_d2h", d2h);
                let t = Instant::now();
                act_tx
                    .send(())
                    .map_err(|_| "collector thread stopped".to_string())?;
                input = input.learner("collector_release", t.elapsed().as_secs_f64());
                input = input
                    .learner("replay_batch_wait", timed(us(40)))
                    .learner("replay_sample", timed(us(120)));
                input = input.learner("learning", timed(us((5000.0 * noise.jitter(0.1)) as u64)));
                input = input.learner("replay_ingress_h2d_submit", 0.00008 * noise.jitter(0.2));
                let reports: Vec<Phases> = rep_rx.try_iter().collect();
                for (k, v) in mean_phases(&reports) {
                    input = input.collector(k, v);
                }
                for (k, v) in [
                    ("queue_depth", 0.0),
                    ("in_flight", 1.0),
                    ("max_in_flight", 1.0),
                    ("publication_lag", 0.0),
                    ("max_publication_lag", 1.0),
                ] {
                    input = input.collector_inference(k, v);
                }
            }
            Profile::Appo => {
                let t = Instant::now();
                let rollout = ring_rx
                    .recv()
                    .map_err(|_| "collector thread stopped".to_string())?;
                input = input.learner("collector_wait", t.elapsed().as_secs_f64());
                input = input
                    .learner("replay_stage", timed(us(250)))
                    .learner("replay_sample", timed(us(80)));
                input = input.learner("learning", timed(us((3000.0 * noise.jitter(0.1)) as u64)));
                input = input.learner("weight_publish", timed(us(150)));
                for (k, v) in rollout {
                    input = input.collector(k, v);
                }
            }
            Profile::OnPolicy | Profile::Rft => {
                go_tx
                    .send(())
                    .map_err(|_| "collector thread stopped".to_string())?;
                let rollout = ring_rx
                    .recv()
                    .map_err(|_| "collector thread stopped".to_string())?;
                input = input.learner("learning", timed(us((2000.0 * noise.jitter(0.1)) as u64)));
                for (k, v) in rollout {
                    input = input.collector(k, v);
                }
            }
        }
        let p = (i - first) as f64 / c.iterations as f64;
        returns = 0.9 * returns
            + 0.1 * (50.0 / (1.0 + (-10.0 * (p - 0.4)).exp()) + 2.0 * noise.jitter(0.5));
        for (k, v) in training_metrics(&c.algo, i, c.iterations, &mut noise) {
            input = input.metric(k, v);
        }
        for (k, v) in rewards(p, &mut noise) {
            input = input.reward(k, v);
        }
        input = input
            .episode_return(returns)
            .episode_length(200.0 + 800.0 * p)
            .steps_this_iter(steps as f64)
            .replay_rows_this_iter((steps * 4) as f64)
            .system(SystemInfo {
                buffer_size: Some(((i + 10) * c.num_envs).min(1_000_000)),
                batch_size_per_rank: Some(4096),
                cuda_mps: Some(MpsState::Off),
            });
        if i > first + 5 {
            input = input.timeout_rate(0.1 + 0.05 * noise.next());
        }
        input = input.iteration_time(t0.elapsed().as_secs_f64());
        if let Some(tracer) = log.tracer() {
            // The learner's exclusive phases, in the order they ran.
            let order = tally::derive::LEARNER_ORDER;
            let mut phases: Vec<(&str, f64)> = Vec::new();
            for key in order {
                if let Some((_, v)) = input.learner.iter().find(|(k, _)| k == key) {
                    phases.push((key, *v));
                }
            }
            let tid = tracer.thread("learner");
            tracer.phases(tid, "learner", t0, &phases);
        }
        if c.gpus == 1 {
            env_steps[0] += steps;
            input = input.env_steps(env_steps[0]);
            log.step(&input).map_err(|e| e.to_string())?;
        } else {
            let ranks: Vec<StepInput> = (0..c.gpus as usize)
                .map(|r| {
                    env_steps[r] += steps;
                    let mut ri = jitter_rank(&input, r, &mut noise).env_steps(env_steps[r]);
                    ri.metrics.push((
                        "Perf/dp_gradient_sync_ms_per_rank".into(),
                        0.8 * noise.jitter(0.3),
                    ));
                    ri.metrics
                        .push(("Perf/dp_gradient_sync_calls_per_rank".into(), 3.0));
                    ri
                })
                .collect();
            log.step_ranks(&ranks).map_err(|e| e.to_string())?;
        }
    }
    drop(req_rx);
    drop(act_tx);
    drop(ring_rx);
    drop(go_tx);
    drop(rep_rx);
    collector
        .join()
        .map_err(|_| "collector thread panicked".to_string())?;
    Ok(completed)
}

/// A simulated rank's view of the measured iteration: small per-rank differences.
fn jitter_rank(base: &StepInput, rank: usize, noise: &mut Noise) -> StepInput {
    let mut r = base.clone();
    let f = |noise: &mut Noise| noise.jitter(0.05);
    r.metrics
        .iter_mut()
        .filter(|(k, _)| !k.starts_with("Episode_Termination/"))
        .for_each(|e| e.1 *= f(noise));
    r.learner.iter_mut().for_each(|e| e.1 *= f(noise));
    r.collector.iter_mut().for_each(|e| e.1 *= f(noise));
    r.rewards.iter_mut().for_each(|e| e.1 *= f(noise));
    if let Some(t) = r.iteration_time.as_mut() {
        *t *= 1.0 + 0.01 * rank as f64;
    }
    r
}

/// A runtime manifest v1 consistent with the demo's run (CPU simulation: no accelerator).
fn demo_manifest(c: &DemoConfig) -> tally::schema::artifacts::RuntimeManifest {
    use tally::schema::artifacts::{
        InferenceFlight, InferenceMemoryBudget, ReplayIngress, RuntimeManifest,
    };
    let slots = c.iterations * u64::from(c.gpus);
    let mut m = RuntimeManifest::v1();
    m.inference_ring_capacity = Some(2);
    m.collector_metrics_interval = Some(1);
    m.collector_backend_device = Some(None);
    m.inference_flight = Some(InferenceFlight {
        max_in_flight: 1,
        max_publication_lag: 1,
        ..Default::default()
    });
    m.replay_ingress = Some(ReplayIngress {
        ingress_depth: 8,
        ingress_slot_rows: c.num_envs,
        published_sequence: slots,
        release_sequence: slots,
        high_water_occupancy: 3,
        ..Default::default()
    });
    m.inference_memory_budget = Some(InferenceMemoryBudget {
        ipc_event_count: 0,
        ..Default::default()
    });
    m
}
