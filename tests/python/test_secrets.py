"""Secrets kept out of what a Python run writes and sends (docs/contract/run-artifacts.md
"Secrets"): each leak users reported, fed through `tally.Logger` and read back from
`run_config.json`, `run_summary.json`, the terminal output and W&B's own offline file."""

import json

import pytest

import tally

WANDB_KEY = "0123456789abcdef0123456789abcdef01234567"
SECRETS = [
    "abcdefgh1234bearer",
    "wk-123",
    "pw-456",
    "sid-789",
    "dbpass-1",
    "argv-key-2",
    "cmd-key-3",
    "pair-key-4",
    WANDB_KEY,
]


def leaky_config():
    return {
        "http": {"headers": ["Authorization: Bearer abcdefgh1234bearer"]},
        "wandb_key": "wk-123",
        "pwd": "pw-456",
        "cookie": "sid-789",
        "db_url": "postgresql://trainer:dbpass-1@db.internal:5432/runs",
        "argv": ["train.py", "--api-key", "argv-key-2", "--lr", "3e-4"],
        "command": "python train.py --api-key cmd-key-3 --seed 1",
        "env": [["api_key", "pair-key-4"], ["seed", "1"]],
        "note": f"wandb login {WANDB_KEY}",
        "lr": 3e-4,
        "num_keys": 4,
    }


def assert_clean(what, text):
    leaked = [s for s in SECRETS if s in text]
    assert not leaked, f"{leaked} leaked into {what}"


def step(log, i):
    log.step(i, env_steps=64 * i, metrics={"Loss/critic": 1.0}, iteration_time=0.01, steps_this_iter=64)


def test_run_config_summary_and_terminal_hold_no_secret(tmp_path, capfd):
    with tally.Logger(
        algo="sac", task="go2", sim="mujoco", max_iterations=2, num_envs=8, log_root=tmp_path,
        logger="none", panel="plain", config=leaky_config(),
    ) as log:
        log.status("connecting with WANDB_API_KEY=wk-123")
        log.set_runtime_manifest({"schema_version": 1, "shutdown": {"cmd": "train --api-key cmd-key-3"}})
        step(log, 1)
        step(log, 2)
        # An early manifest: a run closed completed with it is recorded failed.
        log.close("interrupted")
    out = capfd.readouterr().out
    assert "connecting with WANDB_API_KEY=<redacted>" in out, out
    assert_clean("the terminal", out)
    text = (log.run_dir / "run_config.json").read_text()
    assert_clean("run_config.json", text)
    config = json.loads(text)["config"]
    # The shape stays: same keys, same list lengths, ordinary values untouched.
    assert set(config) == set(leaky_config())
    assert config["db_url"] == "postgresql://trainer:<redacted>@db.internal:5432/runs"
    assert config["argv"] == ["train.py", "--api-key", "<redacted>", "--lr", "3e-4"]
    assert config["env"] == [["api_key", "<redacted>"], ["seed", "1"]]
    assert config["lr"] == 3e-4 and config["num_keys"] == 4
    summary = (log.run_dir / "run_summary.json").read_text()
    assert_clean("run_summary.json", summary)
    doc = json.loads(summary)
    assert doc["status"] == "interrupted"
    assert doc["runtime_manifest"]["shutdown"] == {"cmd": "train --api-key <redacted>"}


def test_the_wandb_offline_run_holds_no_secret(tmp_path, monkeypatch):
    wandb = pytest.importorskip("wandb")
    from test_wandb import wandb_file, wandb_records

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb-default"))
    with tally.Logger(
        algo="sac", task="go2", sim="mujoco", max_iterations=2, num_envs=8, log_root=tmp_path,
        logger="wandb", panel="off", config=leaky_config(),
        wandb={"project": "tally-test", "notes": "resumed with --api-key cmd-key-3"},
    ) as log:
        run = wandb.run
        step(log, 1)
        step(log, 2)
    assert run is not None and wandb.run is None
    path = wandb_file(log.run_dir / "wandb")
    # The config W&B stores travels in the run record (later updates in config records).
    config = {}
    for r in wandb_records(path):
        kind = r.WhichOneof("record_type")
        if kind in ("run", "config"):
            for it in (r.run.config if kind == "run" else r.config).update:
                config[it.key or "/".join(it.nested_key)] = json.loads(it.value_json)
    # The user's config sits at the top level of W&B's config.
    assert config["wandb_key"] == "<redacted>"
    assert config["argv"] == ["train.py", "--api-key", "<redacted>", "--lr", "3e-4"]
    assert_clean("the W&B config", json.dumps(config))
    assert run.notes == "resumed with --api-key <redacted>"
    # Not only the decoded config: no record of the offline file carries a secret.
    assert_clean("the .wandb file", path.read_bytes().decode("latin-1"))
