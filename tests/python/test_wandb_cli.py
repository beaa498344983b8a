"""`python -m tally demo ... training.logger=wandb` with the `training.wandb_*` overrides: each
setting reaches the W&B run (read back from the offline run file), with the defaults of the
training configs the demo mimics; the Rust binary says why it cannot and how to run it
(docs/contract/remote-sinks.md "W&B from the command line")."""

import getpass
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

wandb = pytest.importorskip("wandb")
from test_wandb import history_rows, wandb_file, wandb_records  # noqa: E402


def demo(tmp_path, *overrides, env=None):
    proc = subprocess.run(
        [sys.executable, "-m", "tally", "demo", "--algo", "ppo", "--task", "anymal", "--sim", "warp",
         "--iterations", "4", "--num-envs", "8", "--panel", "off", f"training.log_root={tmp_path}", *overrides],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "WANDB_SILENT": "true", "WANDB_DIR": str(tmp_path / "wandb-default"), **(env or {})},
    )
    return proc


def run_dir_of(proc):
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip().splitlines()[-1].split("run: ", 1)[1])


def run_record(run_dir):
    path = wandb_file(run_dir / "wandb")
    [run] = [r.run for r in wandb_records(path) if r.WhichOneof("record_type") == "run"]
    return run, path


def test_every_wandb_override_reaches_the_offline_run(tmp_path):
    proc = demo(tmp_path, "training.logger=wandb", "training.wandb_project=proj-x", "training.wandb_entity=team-y",
                "training.wandb_group=grp", "training.wandb_job_type=sweep", "training.wandb_name=run-7",
                "training.wandb_tags=[fast, 'nightly run',ppo]", "training.wandb_notes=a note",
                "training.wandb_mode=offline")
    run_dir = run_dir_of(proc)
    run, path = run_record(run_dir)
    assert (run.project, run.entity, run.run_group, run.job_type, run.display_name, run.notes) == (
        "proj-x", "team-y", "grp", "sweep", "run-7", "a note")
    # User tags first, then the automatic ones, each once (ppo is both).
    assert list(run.tags) == ["fast", "nightly run", "ppo", "anymal", "warp", f"user-{getpass.getuser()}"]
    assert len(history_rows(path)) == 4
    # run_config.json records the settings the W&B run was started with.
    recorded = json.loads((run_dir / "run_config.json").read_text())["run"]["wandb"]
    assert recorded["project"] == "proj-x" and recorded["tags"] == ["fast", "nightly run", "ppo"]


def test_the_defaults_follow_the_training_configs(tmp_path):
    # wandb_mode reaches the SDK: no WANDB_MODE in the environment, the run is still offline.
    env = {k: v for k, v in os.environ.items() if k not in ("WANDB_MODE", "WANDB_PROJECT")}
    proc = subprocess.run(
        [sys.executable, "-m", "tally", "demo", "--algo", "ppo", "--task", "anymal", "--sim", "warp",
         "--iterations", "2", "--num-envs", "8", "--panel", "off", f"training.log_root={tmp_path}",
         "training.logger=wandb", "training.wandb_mode=offline"],
        capture_output=True, text=True, timeout=300, env={**env, "WANDB_SILENT": "true"},
    )
    run_dir = run_dir_of(proc)
    run, _ = run_record(run_dir)
    assert run.project == "unilab"
    assert run.display_name == f"ppo__anymal__{run_dir.name}"
    assert (run.run_group, run.job_type) == ("anymal", "ppo")
    assert list(run.tags) == ["ppo", "anymal", "warp", f"user-{getpass.getuser()}"]


def test_a_wandb_setting_without_the_wandb_logger_is_refused_naming_both(tmp_path):
    proc = demo(tmp_path, "training.wandb_project=p", env={"WANDB_MODE": "offline"})
    assert proc.returncode == 1
    assert "training.wandb_project=p" in proc.stderr and "training.logger=wandb" in proc.stderr, proc.stderr
    # Refused before any run directory is made.
    assert not any(tmp_path.rglob("run_config.json"))


@pytest.mark.parametrize("overrides", [["training.logger=wandb"], ["training.wandb_tags=[a]"],
                                       ["training.logger=wandb", "training.wandb_mode=offline"]])
def test_the_rust_binary_says_why_it_cannot_and_how_to_run_it(tally_bin, tmp_path, overrides):
    proc = subprocess.run([str(tally_bin), "demo", "--iterations", "2", f"training.log_root={tmp_path}", *overrides],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "Python SDK" in proc.stderr and "python -m tally demo" in proc.stderr, proc.stderr
    assert not any(tmp_path.rglob("run_config.json"))


def test_demo_help_lists_every_wandb_override(tally_bin):
    help_text = subprocess.run([str(tally_bin), "demo", "--help"], capture_output=True, text=True, check=True).stdout
    flat = " ".join(help_text.split())
    for key in ["project", "entity", "group", "job_type", "name", "tags", "notes", "mode"]:
        assert f"training.wandb_{key}=" in flat, key
    assert "training.wandb_tags=[a,b]" in flat and "online|offline|disabled" in flat
