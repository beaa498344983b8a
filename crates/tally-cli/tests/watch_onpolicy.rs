//! A finished on-policy run seen by `tally watch` shows what its live panel showed
//! (`docs/contract/panel.md` "tally watch", `docs/contract/timelines.md` "On-policy: collect,
//! then train"): Iter Time is collect + train, both persisted, so the replay of the event file
//! and the live terminal state give the same rows and shares, although the wall the runner
//! measured is not persisted for on-policy runs.

use std::sync::{Arc, Mutex};
use tally::terminal::{PanelSnapshot, RunFacts, TerminalState};
use tally::{
    Logger, LoggerConfig, ManualClock, MpsState, Profile, RunStatus, StepInput, SystemInfo,
};
use tally_cli::cmd::watch::Tailer;
use tally_tui::{buffer_text, render_to_buffer, summary_line, Glyphs, PanelState};

/// One PPO iteration: a 62.5 ms rollout and a 31.25 ms update inside a 3 s wall that the
/// runner measured (its unnamed rest is 97 % of it); every value is exact in float32, so the
/// event file holds what the live window holds.
fn ppo_step(i: u64) -> StepInput {
    let steps = 4096.0 * 24.0;
    StepInput::new(i)
        .env_steps((i + 1) * 4096 * 24)
        .metric("Loss/surrogate", -0.0078125)
        .metric("Loss/value", 0.25)
        .collector("rollout", 0.0625)
        .learner("learning", 0.03125)
        .iteration_time(3.0)
        .steps_this_iter(steps)
        .episode_return(10.0 + i as f64)
        .timeout_rate(0.125)
        .system(SystemInfo {
            buffer_size: None,
            batch_size_per_rank: None,
            cuda_mps: Some(MpsState::Off),
        })
}

/// The panel text at `width` and the plain line of `snap`, at `now`.
fn views(snap: PanelSnapshot, now: f64, width: u16) -> (String, String) {
    let view = PanelState::new(snap, now, Glyphs::UNICODE, false);
    let text = buffer_text(&render_to_buffer(&view, width, None));
    (text, summary_line(&view.model))
}

#[test]
fn watch_of_an_onpolicy_run_shows_the_live_panels_rows_and_shares() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = LoggerConfig::new("ppo", "go2_joystick_flat", "mujoco");
    c.log_dir = Some(tmp.path().join("run"));
    c.profile = Profile::OnPolicy;
    c.max_iterations = Some(12);
    c.num_envs = Some(4096);
    // Wall time equals the clock's reading, so the replayed events land where the live
    // samples did.
    let clock = Arc::new(ManualClock::at(1000.0));
    let mut log = Logger::with_sinks(c, Vec::new(), clock.clone()).unwrap();
    for i in 0..12 {
        clock.advance(0.25);
        log.step(&ppo_step(i)).unwrap();
    }
    let live = log.terminal().lock().unwrap().snapshot();
    let run = log.run_dir().to_path_buf();
    log.close(RunStatus::Completed).unwrap();

    let watched = Mutex::new(TerminalState::new(RunFacts {
        algo: String::new(),
        task: String::new(),
        sim: String::new(),
        name: None,
        num_gpus: 1,
        num_envs: None,
        max_iterations: None,
        profile: Profile::SacFamily,
    }));
    let mut tail = Tailer::detect(&run, Arc::new(ManualClock::at(0.0)));
    assert_eq!(tail.poll(&watched).unwrap(), 12);
    let watched = watched.lock().unwrap().snapshot();
    assert_eq!(watched.facts.profile, Profile::OnPolicy);

    let now = live.updated_at.unwrap() + 0.1;
    for width in [80, 100, 140] {
        let (live_text, live_line) = views(live.clone(), now, width);
        let (watch_text, watch_line) = views(watched.clone(), now, width);
        assert_eq!(
            live_text, watch_text,
            "live and watch differ at {width} columns"
        );
        assert_eq!(live_line, watch_line);
        // The shares are collect and train of their sum, not of the measured 3 s.
        assert!(
            live_line.contains("Iter Time 93.8ms | Collect 67%, Train 33%"),
            "{live_line}"
        );
        assert!(!live_text.contains("Other"), "{live_text}");
    }
}
