"""Resuming a run from Python (docs/contract/run-artifacts.md "Resume") and the neutral run
identity (optional sim / num_envs / max_iterations, name, seed). The resumed directory is read
back with TensorBoard's EventAccumulator and with tbparse: one continuous step axis, nothing
repeated, nothing lost."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from tbparse import SummaryReader
from tensorboard.backend.event_processing import event_accumulator

import tally


def f32(x):
    return float(np.float32(x))


def accumulated(run_dir):
    """{tag: [(step, value), ...]} of the whole directory, via EventAccumulator."""
    acc = event_accumulator.EventAccumulator(str(run_dir), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def doc(run_dir, name):
    return json.loads((Path(run_dir) / name).read_text())


def segment(log, iterations):
    for i in iterations:
        log.step(i, env_steps=100 * i, metrics={"Loss/critic": 0.5 * i, "charts/lr": 1.0 / i}, episode_return=float(i))


def logger(**kw):
    args = dict(algo="sac", task="go2", sim="mujoco", max_iterations=8, num_envs=4, panel="off")
    args.update(kw)
    return tally.Logger(**args)


def test_a_resumed_run_reads_as_one_continuous_run_in_tensorboard_and_tbparse(tmp_path):
    run = tmp_path / "run"
    with logger(log_dir=run) as log:
        segment(log, range(1, 5))
        first_file = log.event_file
    # Pre-empted: the next job resumes the same directory.
    with logger(log_dir=run, resume=True) as log:
        assert log.run_dir == run
        assert log.event_file != first_file and log.event_file.parent == run
        with pytest.raises(tally.SchemaError, match="iteration 4 does not advance past 4"):
            log.step(4, env_steps=400, metrics={"Loss/critic": 9.0})
        with pytest.raises(tally.SchemaError, match=r"env_steps.*400"):
            log.step(5, env_steps=400, metrics={"Loss/critic": 9.0})
        segment(log, range(5, 9))
    assert len(list(run.glob("events.out.tfevents.*"))) == 2

    want = [(100 * i, f32(0.5 * i)) for i in range(1, 9)]
    series = accumulated(run)
    assert series["Loss/critic"] == want
    assert [s for s, _ in series["charts/lr"]] == [100 * i for i in range(1, 9)]
    assert series["Train/iteration"] == [(100 * i, float(i)) for i in range(1, 9)]

    frame = SummaryReader(str(run)).scalars
    critic = frame[frame.tag == "Loss/critic"].sort_values("step")
    assert list(zip(critic.step, critic.value)) == want
    assert not frame.duplicated(["tag", "step"]).any()

    s = doc(run, "run_summary.json")
    assert s["status"] == "completed" and s["completed_iterations"] == 8 and s["total_env_steps"] == 800
    assert s["final_mean_reward"] == 8.0 and s["best_mean_reward"] == 8.0
    assert len(s["resumed"]) == 1
    seg = s["resumed"][0]
    assert (seg["previous_status"], seg["after_step"], seg["first_step"]) == ("completed", 400, 500)
    assert seg["start_time_utc"] >= s["start_time_utc"]
    assert doc(run, "run_config.json")["run"]["log_dir"] == str(run)


def test_an_existing_run_without_resume_is_refused_saying_how_to_resume(tmp_path):
    run = tmp_path / "run"
    with logger(log_dir=run) as log:
        segment(log, [1])
    with pytest.raises(tally.ConfigError, match="resume=True"):
        logger(log_dir=run)
    assert len(list(run.glob("events.out.tfevents.*"))) == 1


def test_resume_without_log_dir_continues_the_latest_run_of_the_algo_and_task(tmp_path):
    root = tmp_path / "logs"
    with logger(log_root=root) as log:
        segment(log, [1, 2])
        first = log.run_dir
    with logger(log_root=root, resume=True) as log:
        assert log.run_dir == first
        segment(log, [3])
    with logger(log_root=root, task="other", resume=True) as log:
        assert log.run_dir != first and log.run_dir.parent.name == "other"
    assert [s for s, _ in accumulated(first)["Loss/critic"]] == [100, 200, 300]


def test_a_resume_with_another_algo_or_profile_is_refused_naming_the_field(tmp_path):
    run = tmp_path / "run"
    with logger(log_dir=run) as log:
        segment(log, [1])
    with pytest.raises(tally.ConfigError, match="algo 'appo'"):
        logger(log_dir=run, algo="appo", profile="appo", resume=True)
    with pytest.raises(tally.ConfigError, match="profile 'appo'"):
        logger(log_dir=run, profile="appo", resume=True)
    assert doc(run, "run_summary.json")["status"] == "completed"


def test_a_run_with_a_live_logger_in_another_process_refuses_a_resume(tmp_path):
    # A second job started on the same run while the first still logs: one logger at a time.
    code = textwrap.dedent(
        """
        import sys, tally
        log = tally.Logger(algo="sac", task="go2", sim="mujoco", log_dir=sys.argv[1], panel="off")
        log.step(1, env_steps=100, metrics={"Loss/critic": 0.5})
        print("started", flush=True)
        sys.stdin.readline()
        log.step(2, env_steps=200, metrics={"Loss/critic": 1.0})
        log.close()
        """
    )
    run = tmp_path / "run"
    first = subprocess.Popen([sys.executable, "-c", code, str(run)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert first.stdout.readline() == "started\n"
        with pytest.raises(tally.ConfigError, match=f"run directory {run} is in use by another live logger"):
            logger(log_dir=run, resume=True)
        first.stdin.write("\n")
        first.stdin.flush()
        assert first.wait(timeout=120) == 0
    finally:
        first.kill()
    # Refused before it read or wrote anything: the first job's run is whole, and now resumes.
    assert [s for s, _ in accumulated(run)["Loss/critic"]] == [100, 200]
    with logger(log_dir=run, resume=True) as log:
        segment(log, [3])
    assert doc(run, "run_summary.json")["completed_iterations"] == 3


def test_a_killed_run_resumes_after_its_last_persisted_step(tmp_path):
    # SIGKILL mid-run: no close, the summary still says running; the event file is the truth.
    code = textwrap.dedent(
        """
        import os, sys, tally
        log = tally.Logger(algo="ppo", task="t", profile="onpolicy", log_dir=sys.argv[1], panel="off")
        for i in range(6):
            log.step(i, metrics={"Loss/value": float(i)})
        log.flush()
        os.kill(os.getpid(), 9)
        """
    )
    run = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-c", code, str(run)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    assert doc(run, "run_summary.json")["status"] == "running"
    with tally.Logger(algo="ppo", task="t", profile="onpolicy", log_dir=run, panel="off", resume=True) as log:
        with pytest.raises(tally.SchemaError, match="does not advance past 5"):
            log.step(5, metrics={"Loss/value": -1.0})
        for i in range(6, 9):
            log.step(i, metrics={"Loss/value": float(i)})
    assert accumulated(run)["Loss/value"] == [(i, float(i)) for i in range(9)]
    seg = doc(run, "run_summary.json")["resumed"][0]
    assert (seg["previous_status"], seg["after_step"], seg["first_step"]) == ("running", 5, 6)


def test_only_algo_and_task_are_required_and_name_and_seed_are_recorded(tmp_path):
    with tally.Logger(algo="sac", task="go2", log_root=tmp_path, panel="off", name="ablation-7", seed=3) as log:
        log.step(1, env_steps=10, metrics={"Loss/critic": 1.0})
    run = doc(log.run_dir, "run_config.json")["run"]
    assert (run["name"], run["seed"], run["sim_backend"]) == ("ablation-7", 3, "")
    assert run["logger"]["max_iterations"] is None and run["logger"]["num_envs"] is None
    # No simulator: the directory is the start time alone.
    assert len(log.run_dir.name) == len("YYYY-MM-DD_HH-MM-SS"), log.run_dir.name
    assert doc(log.run_dir, "run_summary.json")["status"] == "completed"
    with pytest.raises(tally.ConfigError, match="sim=''"):
        tally.Logger(algo="sac", task="go2", sim="", log_root=tmp_path, panel="off")
    with pytest.raises(tally.ConfigError, match="name"):
        tally.Logger(algo="sac", task="go2", log_root=tmp_path, panel="off", name=" ")
