//! Pins the run-directory layout (docs/contract/run-artifacts.md).

use chrono::{FixedOffset, TimeZone};
use tally::rundir::{algo_log_name, create_run_dir, run_dir_name, RunDirSpec};
use tally::Error;

fn start() -> chrono::DateTime<FixedOffset> {
    FixedOffset::east_opt(8 * 3600)
        .unwrap()
        .with_ymd_and_hms(2026, 3, 9, 18, 30, 0)
        .unwrap()
}

#[test]
fn run_dir_follows_algo_log_name_task_timestamp_sim() {
    // logs/<algo.algo_log_name>/<task>/YYYY-MM-DD_HH-MM-SS_<sim_backend>,
    // e.g. 2026-03-09_18-30-00_mujoco (docs/contract/run-artifacts.md).
    let root = tempfile::tempdir().unwrap();
    let mut spec = RunDirSpec::new("sac", "go2_joystick_flat", "mujoco");
    spec.log_root = root.path().join("logs");
    let dir = create_run_dir(&spec, &start()).unwrap();
    assert_eq!(
        dir,
        root.path()
            .join("logs/sac/go2_joystick_flat/2026-03-09_18-30-00_mujoco")
    );
    assert!(dir.is_dir());
}

#[test]
fn algo_log_names_match_the_contract_table() {
    // The algo_log_name table: PPO rsl_rl_ppo, APPO appo, SAC sac, FlashSAC flash_sac
    // (docs/contract/run-artifacts.md).
    assert_eq!(algo_log_name("ppo").unwrap(), "rsl_rl_ppo");
    assert_eq!(algo_log_name("PPO").unwrap(), "rsl_rl_ppo");
    assert_eq!(algo_log_name("appo").unwrap(), "appo");
    assert_eq!(algo_log_name("sac").unwrap(), "sac");
    assert_eq!(algo_log_name("flashsac").unwrap(), "flash_sac");
    assert_eq!(algo_log_name("warpsac").unwrap(), "warp_sac");
}

#[test]
fn a_run_without_a_sim_has_no_sim_suffix() {
    // The simulator is optional: YYYY-MM-DD_HH-MM-SS alone (docs/contract/run-artifacts.md).
    let root = tempfile::tempdir().unwrap();
    let mut spec = RunDirSpec::new("sac", "t", "");
    spec.log_root = root.path().to_owned();
    let dir = create_run_dir(&spec, &start()).unwrap();
    assert_eq!(dir, root.path().join("sac/t/2026-03-09_18-30-00"));
}

#[test]
fn two_runs_in_the_same_second_get_distinct_directories() {
    let root = tempfile::tempdir().unwrap();
    let mut spec = RunDirSpec::new("appo", "t", "mjwarp");
    spec.log_root = root.path().to_owned();
    let a = create_run_dir(&spec, &start()).unwrap();
    let b = create_run_dir(&spec, &start()).unwrap();
    let c = create_run_dir(&spec, &start()).unwrap();
    assert_ne!(a, b);
    assert_ne!(b, c);
    assert_eq!(b.file_name().unwrap(), "2026-03-09_18-30-00_mjwarp_1");
    assert_eq!(c.file_name().unwrap(), "2026-03-09_18-30-00_mjwarp_2");
}

#[test]
fn concurrent_runs_in_one_second_never_share_a_directory() {
    let root = tempfile::tempdir().unwrap();
    let mut spec = RunDirSpec::new("sac", "t", "mujoco");
    spec.log_root = root.path().to_owned();
    let dirs: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..8)
            .map(|_| s.spawn(|| create_run_dir(&spec, &start()).unwrap()))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let unique: std::collections::HashSet<_> = dirs.iter().collect();
    assert_eq!(unique.len(), 8);
}

#[test]
fn names_that_would_escape_the_root_are_rejected() {
    let root = tempfile::tempdir().unwrap();
    for (task, sim) in [
        ("..", "mujoco"),
        ("a/b", "mujoco"),
        ("", "mujoco"),
        ("t", "mu\0joco"),
        ("t", "x/../../y"),
        (".", "m"),
    ] {
        let mut spec = RunDirSpec::new("sac", task, sim);
        spec.log_root = root.path().to_owned();
        let err = create_run_dir(&spec, &start()).unwrap_err();
        assert!(
            matches!(err, Error::InvalidName { .. }),
            "{task:?}/{sim:?}: {err}"
        );
    }
    let err = create_run_dir(&RunDirSpec::new("../x", "t", "m"), &start()).unwrap_err();
    assert!(err.to_string().starts_with("invalid algo '../x'"), "{err}");
    assert_eq!(
        std::fs::read_dir(root.path()).unwrap().count(),
        0,
        "nothing created for rejected names"
    );
}

#[test]
fn explicit_log_dir_overrides_the_layout_and_refuses_an_existing_run() {
    let root = tempfile::tempdir().unwrap();
    let mut spec = RunDirSpec::new("sac", "t", "mujoco");
    spec.log_dir = Some(root.path().join("exact/run"));
    let dir = create_run_dir(&spec, &start()).unwrap();
    assert_eq!(dir, root.path().join("exact/run"));
    std::fs::write(dir.join("run_summary.json"), "{}").unwrap();
    let err = create_run_dir(&spec, &start()).unwrap_err();
    assert!(matches!(err, Error::RunDirTaken(..)), "{err}");
}

#[test]
fn dir_name_uses_the_given_clock() {
    assert_eq!(
        run_dir_name(&start(), "mjwarp"),
        "2026-03-09_18-30-00_mjwarp"
    );
}
