//! `tally demo --gpus N` keeps its own contract: the simulated ranks differ, but no rank's
//! phases exceed its Iter Wall (`docs/contract/timelines.md` "The contract warning"), and
//! configured sizes summed over ranks read as whole multiples (`docs/contract/ranks.md`
//! "Reductions").

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn demo(root: &Path, gpus: &str) -> PathBuf {
    demo_algo(root, "sac", gpus)
}

fn demo_algo(root: &Path, algo: &str, gpus: &str) -> PathBuf {
    let out = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args([
            "demo",
            "--algo",
            algo,
            "--panel",
            "off",
            "--iterations",
            "300",
            "--gpus",
            gpus,
        ])
        .arg(format!("training.log_root={}", root.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    PathBuf::from(
        stdout
            .lines()
            .last()
            .unwrap()
            .strip_prefix("run: ")
            .unwrap(),
    )
}

fn values(dir: &Path, tag: &str) -> Vec<f64> {
    let file = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_str().unwrap().contains("events.out.tfevents."))
        .unwrap();
    tally_tfevents::read_scalars_from_file(file)
        .unwrap()
        .into_iter()
        .filter(|s| s.tag == tag)
        .map(|s| s.value)
        .collect()
}

fn contract_warnings(dir: &Path) -> u64 {
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run_summary.json")).unwrap())
            .unwrap();
    s["contract_warnings"].as_u64().unwrap()
}

#[test]
fn four_simulated_ranks_raise_no_contract_warning_and_sum_configured_sizes_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let one = demo(tmp.path(), "1");
    let four = demo(tmp.path(), "4");
    assert_eq!(contract_warnings(&one), 0);
    assert_eq!(contract_warnings(&four), 0);

    for tag in [
        "Train/replay_ingress_depth",
        "Train/replay_ingress_high_water",
    ] {
        let per_rank = values(&one, tag);
        let job = values(&four, tag);
        assert_eq!(per_rank.len(), 300, "{tag}");
        assert_eq!(job.len(), 300, "{tag}");
        for (a, b) in per_rank.iter().zip(&job) {
            assert_eq!(*b, 4.0 * a, "{tag}: 4 ranks of {a} read {b}");
        }
    }
}

#[test]
fn every_rl_algorithm_runs_on_two_simulated_ranks() {
    // The data-parallel metrics the demo adds per rank exist only for the profiles the
    // registry gives them to (PPO's first step was refused).
    for algo in ["ppo", "appo", "sac"] {
        let tmp = tempfile::tempdir().unwrap();
        let run = demo_algo(tmp.path(), algo, "2");
        assert_eq!(contract_warnings(&run), 0, "{algo}");
    }
}
