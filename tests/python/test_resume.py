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
        with pytest.raises(tally.ConfigError, match=f"run directory {run} is in use by process {first.pid}: a live logger"):
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


# Rewinding to a checkpoint (docs/contract/run-artifacts.md "Resume" (Rewind)): a run killed at
# iteration 37 whose checkpoint holds iteration 30 goes on from 31, and TensorBoard shows one
# series, the steps after the checkpoint replaced by the resumed job's.


def session_starts(path):
    """(index in the file, step) of each SessionLog START event, read by TensorBoard's loader."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from tensorboard.compat.proto import event_pb2

    events = list(EventFileLoader(str(path)).Load())
    return [
        (i, e.step)
        for i, e in enumerate(events)
        if e.HasField("session_log") and e.session_log.status == event_pb2.SessionLog.START
    ]


def files_of(run):
    return {p.name: p.read_bytes() for p in sorted(Path(run).iterdir()) if p.is_file()}


def sac_run_to_37(run):
    with logger(log_dir=run, max_iterations=100) as log:
        segment(log, range(1, 38))
        log.close("interrupted")


def test_resume_from_a_checkpoint_rewinds_an_env_step_run_and_tensorboard_shows_one_series(tmp_path):
    run = tmp_path / "run"
    sac_run_to_37(run)
    with logger(log_dir=run, max_iterations=100, resume=True, resume_from=30) as log:
        # Iteration 30 was written at env step 3000: the run goes on as if it stopped there.
        assert (log.last_step, log.last_iteration) == (3000, 30)
        assert session_starts(log.event_file) == [(1, 3001)]
        with pytest.raises(tally.SchemaError, match="iteration 30 does not advance past 30"):
            log.step(30, env_steps=3000, metrics={"Loss/critic": 9.0})
        for i in range(31, 41):
            log.step(i, env_steps=100 * i, metrics={"Loss/critic": 1000.0 + i})
        assert (log.last_step, log.last_iteration) == (4000, 40)
    series = accumulated(run)["Loss/critic"]
    steps = [s for s, _ in series]
    assert steps == sorted(set(steps)), "strictly increasing, no duplicates"
    assert series == [(100 * i, f32(1000.0 + i) if i > 30 else f32(0.5 * i)) for i in range(1, 41)]
    assert [s for s, _ in accumulated(run)["Train/iteration"]] == [100 * i for i in range(1, 41)]

    s = doc(run, "run_summary.json")
    assert (s["completed_iterations"], s["total_env_steps"]) == (40, 4000)
    seg = s["resumed"][0]
    assert (seg["after_step"], seg["rewound_to_step"], seg["rewound_to_iteration"], seg["purged_from_step"]) == (
        3700,
        3000,
        30,
        3001,
    )
    assert seg["first_step"] == 3100


def test_resume_from_a_checkpoint_rewinds_an_iteration_axis_run(tmp_path):
    run = tmp_path / "run"
    ppo = dict(algo="ppo", task="t", profile="onpolicy", log_dir=run, panel="off")
    with tally.Logger(**ppo) as log:
        for i in range(38):
            log.step(i, metrics={"Loss/value": float(i)})
    with tally.Logger(**ppo, resume=True, resume_from=30) as log:
        assert (log.last_step, log.last_iteration) == (30, 30)
        assert session_starts(log.event_file) == [(1, 31)]
        for i in range(31, 35):
            log.step(i, metrics={"Loss/value": -float(i)})
    assert accumulated(run)["Loss/value"] == [(i, -float(i) if i > 30 else float(i)) for i in range(35)]
    seg = doc(run, "run_summary.json")["resumed"][0]
    assert (seg["rewound_to_step"], seg["rewound_to_iteration"], seg["purged_from_step"]) == (30, 30, 31)
    assert doc(run, "run_summary.json")["completed_iterations"] == 34


def test_resume_from_the_last_iteration_writes_no_marker(tmp_path):
    run = tmp_path / "run"
    sac_run_to_37(run)
    with logger(log_dir=run, max_iterations=100, resume=True, resume_from=37) as log:
        assert session_starts(log.event_file) == []
        segment(log, [38])
    seg = doc(run, "run_summary.json")["resumed"][0]
    assert (seg["rewound_to_step"], seg["rewound_to_iteration"], seg["purged_from_step"]) == (None, None, None)


def test_resume_from_is_refused_before_anything_is_written(tmp_path):
    run = tmp_path / "run"
    sac_run_to_37(run)
    before = files_of(run)
    with pytest.raises(tally.ConfigError, match=r"resume_from=30.*resume=True"):
        logger(log_dir=run, max_iterations=100, resume_from=30)
    with pytest.raises(tally.ConfigError, match=r"resume_from=38\b.*\b37\b"):
        logger(log_dir=run, max_iterations=100, resume=True, resume_from=38)
    with pytest.raises(tally.ConfigError, match=r"resume_from=-1\b.*\b37\b"):
        logger(log_dir=run, max_iterations=100, resume=True, resume_from=-1)
    with pytest.raises(TypeError, match="resume_from"):
        logger(log_dir=run, max_iterations=100, resume=True, resume_from=30.0)
    assert files_of(run) == before
    assert doc(run, "run_summary.json")["status"] == "interrupted"

    # On an env-step axis the checkpoint's iteration must be in the event file.
    sparse = tmp_path / "sparse"
    with logger(log_dir=sparse, max_iterations=100, log_interval=2) as log:
        segment(log, range(1, 10))
    before = files_of(sparse)
    with pytest.raises(tally.ConfigError, match=r"resume_from=5\b.*never.*\b8\b"):
        logger(log_dir=sparse, max_iterations=100, resume=True, resume_from=5)
    assert files_of(sparse) == before


def test_a_failed_resume_leaves_the_run_as_it_was(tmp_path):
    # The job restarts with resume=True but not from the last iteration: its first step is
    # refused and the block exits with the error. The run is not marked failed, and no empty
    # event file is left beside the run's own.
    run = tmp_path / "run"
    sac_run_to_37(run)
    before = files_of(run)
    with pytest.raises(tally.SchemaError, match="does not advance past 37"):
        with logger(log_dir=run, max_iterations=100, resume=True) as log:
            log.step(31, env_steps=3100, metrics={"Loss/critic": 1.0})
    assert files_of(run) == before
    assert doc(run, "run_summary.json")["status"] == "interrupted"


def test_last_step_and_last_iteration(tmp_path):
    run = tmp_path / "run"
    with logger(log_dir=run) as log:
        assert (log.last_step, log.last_iteration) == (None, None)
        segment(log, [1, 2])
        assert (log.last_step, log.last_iteration) == (200, 2)
    assert (log.last_step, log.last_iteration) == (200, 2), "still readable once closed"
    with logger(log_dir=run, resume=True) as log:
        assert (log.last_step, log.last_iteration) == (200, 2)
        segment(log, [3])
        assert (log.last_step, log.last_iteration) == (300, 3)


def test_a_run_killed_after_its_checkpoint_resumes_at_it_and_every_reader_shows_one_series(tmp_path):
    # The pre-emption scenario: the job checkpoints at iteration 30, runs on to 37, is
    # SIGKILLed; the restarted job loads the checkpoint and resumes from iteration 30.
    code = textwrap.dedent(
        """
        import os, sys, tally
        log = tally.Logger(algo="sac", task="go2", sim="mujoco", max_iterations=100, num_envs=4,
                           panel="off", log_dir=sys.argv[1])
        for i in range(1, 38):
            log.step(i, env_steps=100 * i, metrics={"Loss/critic": 0.5 * i})
            if i == 30:
                log.flush()  # the checkpoint is declared done once its step is durable
        log.flush()
        os.kill(os.getpid(), 9)
        """
    )
    run = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-c", code, str(run)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    with logger(log_dir=run, max_iterations=100, resume=True, resume_from=30) as log:
        assert (log.last_step, log.last_iteration) == (3000, 30)
        for i in range(31, 46):
            log.step(i, env_steps=100 * i, metrics={"Loss/critic": 1000.0 + i})
    want = [(100 * i, f32(1000.0 + i) if i > 30 else f32(0.5 * i)) for i in range(1, 46)]

    # TensorBoard's EventAccumulator.
    assert accumulated(run)["Loss/critic"] == want
    # tbparse reads each event file alone (one EventAccumulator per file), so no purge marker
    # reaches the earlier file: it shows the purged points too, as for torch's purge_step
    # (docs/contract/run-artifacts.md "Resume").
    df = SummaryReader(str(run)).scalars
    critic = df[df["tag"] == "Loss/critic"]
    purged = [(100 * i, f32(0.5 * i)) for i in range(31, 38)]
    assert sorted(zip(critic["step"], critic["value"].map(f32))) == sorted(want + purged)
    # tally.read: the same series, and the purge said.
    with pytest.warns(tally.PurgedPointsWarning, match="purge marker at step 3001"):
        t = tally.read(run, tags="Loss/critic").to_pydict()
    got = list(zip(t["step"], map(f32, t["value"])))
    assert got == want
    steps = [s for s, _ in got]
    assert steps == sorted(set(steps)), "one continuous series, no step twice"
