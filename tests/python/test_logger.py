"""tally.Logger from Python: what reaches the event file, what is rejected (naming the key),
how runs close, the phase timer, Python sinks on the writer thread, and the CLI through the
package. Event files are read back with TensorBoard's own EventAccumulator."""

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator

import tally

KEEP_ALL = {event_accumulator.SCALARS: 0}


def f32(x):
    return float(np.float32(x))


def scalars(run_dir):
    """{(tag, step): value} of every scalar in the run directory, via EventAccumulator."""
    acc = event_accumulator.EventAccumulator(str(run_dir), size_guidance=KEEP_ALL)
    acc.Reload()
    out = {}
    for tag in acc.Tags()["scalars"]:
        for e in acc.Scalars(tag):
            assert (tag, e.step) not in out
            out[(tag, e.step)] = e.value
    return out


def summary(run_dir):
    return json.loads((Path(run_dir) / "run_summary.json").read_text())


def new_logger(tmp_path, **kw):
    args = dict(algo="sac", task="go2", sim="mujoco", max_iterations=10, num_envs=4, log_root=tmp_path / "logs", panel="off")
    args.update(kw)
    return tally.Logger(**args)


class Tensor0d:
    """Stands in for a 0-d torch tensor: only __float__."""

    def __init__(self, v):
        self.v = v

    def __float__(self):
        return self.v


def test_numbers_numpy_scalars_and_0d_tensors_reach_the_event_file_exactly(tmp_path):
    with new_logger(tmp_path) as log:
        log.step(
            1,
            env_steps=4096,
            metrics={"Loss/critic": 0.25, "Loss/actor": np.float32(-1.5), "Policy/temperature": Tensor0d(0.125), "Episode_Termination/time_out": np.int64(3)},
            learner={"learning": 0.004},
            rewards={"tracking": 7},
            iteration_time=0.01,
            steps_this_iter=4096,
            episode_return=np.float64(12.5),
        )
    got = scalars(log.run_dir)
    assert got[("Loss/critic", 4096)] == f32(0.25)
    assert got[("Loss/actor", 4096)] == f32(-1.5)
    assert got[("Policy/temperature", 4096)] == f32(0.125)
    assert got[("Episode_Termination/time_out", 4096)] == 3.0
    assert got[("reward/tracking", 4096)] == 7.0
    assert got[("Perf/learning_time", 4096)] == f32(0.004)
    assert got[("Train/mean_reward", 4096)] == 12.5
    assert got[("Perf/total_fps", 4096)] == f32(4096 / 0.01)
    assert got[("Train/iteration", 4096)] == 1.0
    assert log.event_file.parent == log.run_dir


@pytest.mark.parametrize(
    "kw, key",
    [
        ({"metrics": {"Loss/critic": "0.5"}}, "metrics['Loss/critic']"),
        ({"metrics": {"Loss/critic": None}}, "metrics['Loss/critic']"),
        ({"rewards": {"tracking": None}}, "rewards['tracking']"),
        ({"learner": {"learning": b"1"}}, "learner['learning']"),
        ({"iteration_time": "0.1"}, "iteration_time"),
    ],
)
def test_a_string_or_none_value_raises_type_error_naming_the_key(tmp_path, kw, key):
    with new_logger(tmp_path) as log:
        with pytest.raises(TypeError) as e:
            log.step(1, **kw)
        assert isinstance(e.value, tally.ValueTypeError) and isinstance(e.value, tally.TallyError)
        assert key in str(e.value)


@pytest.mark.parametrize(
    "kw, key",
    [
        ({"learner": {"learning": float("inf")}}, "learner['learning']"),
        ({"collector": {"env_step": float("nan")}}, "collector['env_step']"),
        ({"iteration_time": float("inf")}, "iteration_time"),
        ({"learner": {"learning": -0.5}}, "learner['learning']"),
    ],
)
def test_a_non_finite_or_negative_duration_raises_value_error_naming_the_key(tmp_path, kw, key):
    with new_logger(tmp_path) as log:
        with pytest.raises(ValueError) as e:
            log.step(1, **kw)
        assert isinstance(e.value, tally.SchemaError)
        assert key in str(e.value)


def test_a_legacy_tag_is_rejected_with_its_replacement_and_nothing_is_logged(tmp_path):
    with new_logger(tmp_path) as log:
        with pytest.raises(tally.SchemaError, match="perf/steps_per_sec.*Perf/total_fps"):
            log.step(1, env_steps=4, metrics={"perf/steps_per_sec": 1.0, "Loss/critic": 9.0})
        log.step(1, env_steps=4, metrics={"Loss/critic": 1.0})
    assert scalars(log.run_dir)[("Loss/critic", 4)] == 1.0


def test_a_non_str_key_and_an_unknown_system_key_are_named(tmp_path):
    with new_logger(tmp_path) as log:
        with pytest.raises(tally.ValueTypeError, match="keys must be str"):
            log.step(1, metrics={3: 1.0})
        with pytest.raises(tally.SchemaError, match=r"system\['gpu_temp'\]"):
            log.step(1, system={"gpu_temp": 80})
        log.step(1, system={"buffer_size": 10, "batch_size_per_rank": 256, "cuda_mps": "off"})


def test_steps_are_logged_every_log_interval_and_always_at_the_last_iteration(tmp_path):
    with new_logger(tmp_path, max_iterations=9, log_interval=4) as log:
        for i in range(1, 10):
            log.step(i, metrics={"Loss/critic": float(i)})
    steps = sorted(s for (t, s) in scalars(log.run_dir) if t == "Loss/critic")
    assert steps == [4, 8, 9]


def test_run_dir_is_a_path_under_log_root_holding_run_config_with_the_config(tmp_path):
    with new_logger(tmp_path, config={"lr": 3e-4, "wandb_api_key": "hunter2", "dims": (64, 64)}) as log:
        assert isinstance(log.run_dir, Path)
        assert log.run_dir.parent == tmp_path / "logs" / "sac" / "go2"
        doc = json.loads((log.run_dir / "run_config.json").read_text())
    assert doc["config"]["lr"] == 3e-4
    assert doc["config"]["dims"] == [64, 64]
    assert "hunter2" not in json.dumps(doc)


def test_an_explicit_log_dir_is_used_as_is(tmp_path):
    with new_logger(tmp_path, log_dir=tmp_path / "exact") as log:
        assert log.run_dir == tmp_path / "exact"


def test_with_block_closes_completed_and_an_exception_closes_failed(tmp_path):
    with new_logger(tmp_path, max_iterations=1) as ok:
        ok.step(1, metrics={"Loss/critic": 1.0})
    assert ok.closed and summary(ok.run_dir)["status"] == "completed"

    with pytest.raises(RuntimeError, match="diverged"):
        with new_logger(tmp_path) as bad:
            bad.step(1, metrics={"Loss/critic": 1.0})
            raise RuntimeError("diverged")
    assert summary(bad.run_dir)["status"] == "failed"
    assert summary(bad.run_dir)["completed_iterations"] == 1

    with pytest.raises(KeyboardInterrupt):
        with new_logger(tmp_path) as stopped:
            raise KeyboardInterrupt
    assert summary(stopped.run_dir)["status"] == "interrupted"


def test_close_twice_is_harmless_and_a_step_after_close_raises_closed_error(tmp_path):
    log = new_logger(tmp_path)
    log.close("interrupted")
    log.close()
    assert summary(log.run_dir)["status"] == "interrupted"
    with pytest.raises(tally.ClosedError):
        log.step(1)
    with pytest.raises(tally.ConfigError, match="unknown run status"):
        new_logger(tmp_path).close("exploded")


def test_bad_constructor_arguments_raise_config_error(tmp_path):
    with pytest.raises(tally.ConfigError, match="profile"):
        new_logger(tmp_path, profile="dqn")
    with pytest.raises(tally.ConfigError, match="logger backend"):
        new_logger(tmp_path, logger="comet")
    with pytest.raises(tally.ConfigError, match="panel"):
        new_logger(tmp_path, panel="sometimes")
    with pytest.raises(ValueError, match="max_iterations"):
        new_logger(tmp_path, max_iterations=0)
    with pytest.raises(tally.ConfigError, match=r"wandb\['api_key'\]"):
        new_logger(tmp_path, wandb={"api_key": "x"})
    # JSON holds no NaN: the key is named, not a parser's line and column.
    with pytest.raises(tally.ConfigError, match=r"config: \$\.train\.schedule\[1\]: expected a finite number, found the float NaN"):
        new_logger(tmp_path, config={"train": {"lr": 3e-4, "schedule": [1.0, float("nan")]}})
    assert not list(tmp_path.rglob("run_config.json")), "refused before anything was written"


def test_phase_timer_accumulates_into_the_next_steps_learner_phase(tmp_path):
    with new_logger(tmp_path) as log:
        for _ in range(2):
            with log.phase("learning"):
                time.sleep(0.03)
        log.step(1, metrics={"Loss/critic": 1.0})
        log.step(2, metrics={"Loss/critic": 1.0})  # the timer was consumed by step 1
    got = scalars(log.run_dir)
    assert 0.06 <= got[("Perf/learning_time", 1)] < 0.5
    assert ("Perf/learning_time", 2) not in got


def test_phase_timer_adds_to_an_explicit_learner_value_and_survives_a_rejected_step(tmp_path):
    with new_logger(tmp_path) as log:
        with log.phase("learning"):
            time.sleep(0.02)
        with pytest.raises(tally.SchemaError):
            log.step(1, metrics={"Loss/not_a_tag": 1.0})
        log.step(1, learner={"learning": 1.0})
    assert 1.02 <= scalars(log.run_dir)[("Perf/learning_time", 1)] < 1.5


def test_with_trace_on_phase_timers_become_spans_in_the_perfetto_trace(tmp_path):
    with new_logger(tmp_path, trace=True) as log:
        for i in (1, 2):
            with log.phase("learning"):
                time.sleep(0.01)
            log.step(i)
    events = json.loads(next(log.run_dir.glob("perfetto*.json")).read_text())
    threads = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    spans = [e for e in events if e.get("ph") == "X" and e["name"] == "learning" and threads.get(e["tid"]) == "MainThread"]
    assert len(spans) == 2 and all(e["dur"] >= 10_000 for e in spans)


class RecordingSink:
    """A Python sink: records what the writer thread hands it."""

    name = "recording"

    def __init__(self, url=None):
        self.url, self.steps, self.threads, self.events = url, [], set(), []

    def start(self, run_dir):
        self.events.append(("start", run_dir, threading.get_ident()))
        return self.url

    def write(self, step, wall_time, iteration, scalars):
        self.threads.add(threading.get_ident())
        self.steps.append((step, iteration, dict(scalars)))

    def close(self):
        self.events.append(("close",))

    def finish(self, run_dir):
        self.events.append(("finish", run_dir))


def test_python_sink_gets_exactly_the_event_file_payload_on_the_writer_thread(tmp_path):
    sink = RecordingSink()
    with new_logger(tmp_path, sinks=[sink]) as log:
        for i in range(1, 6):
            log.step(i, env_steps=100 * i, metrics={"Loss/critic": i / 3}, rewards={"alive": 0.1 * i}, iteration_time=0.02, steps_this_iter=100)
    assert [s[:2] for s in sink.steps] == [(100 * i, i) for i in range(1, 6)]
    assert threading.get_ident() not in sink.threads
    file_values = scalars(log.run_dir)
    sent = {(tag, step): v for step, _, payload in sink.steps for tag, v in payload.items()}
    assert set(sent) == set(file_values)
    assert all(f32(v) == file_values[k] for k, v in sent.items())
    assert [e[0] for e in sink.events] == ["start", "close", "finish"]
    assert sink.events[0][1] == str(log.run_dir)


def test_a_url_returned_by_a_sink_start_is_recorded_as_wandb_run_url(tmp_path):
    with new_logger(tmp_path, sinks=[RecordingSink(url="https://wandb.example/r/abc")]) as log:
        assert summary(log.run_dir)["wandb_run_url"] == "https://wandb.example/r/abc"
    assert summary(log.run_dir)["wandb_run_url"] == "https://wandb.example/r/abc"


def test_a_failing_python_sink_raises_sink_error_and_the_event_file_keeps_every_step(tmp_path):
    class Broken:
        name = "broken"

        def write(self, *a):
            raise RuntimeError("disk quota")

    log = new_logger(tmp_path, sinks=[Broken()])
    # Reported once, by whichever call first sees the writer thread's failure.
    with pytest.raises(tally.SinkError, match="broken sink failed at iteration 1.*disk quota") as e:
        log.step(1, metrics={"Loss/critic": 1.0})
        log.flush()
    assert isinstance(e.value, OSError)
    log.step(2, metrics={"Loss/critic": 2.0})
    log.close()
    assert {s for (t, s) in scalars(log.run_dir)} == {1, 2}
    assert "disk quota" in summary(log.run_dir)["sink_errors"][0]


def test_a_sink_without_write_is_rejected_at_construction(tmp_path):
    class NoWrite:
        name = "nowrite"

    with pytest.raises(tally.ConfigError, match="no write"):
        new_logger(tmp_path, sinks=[NoWrite()])


def run_python(code, cwd, timeout=120, env=None):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def test_step_releases_the_gil_under_back_pressure_so_a_python_sink_can_drain(tmp_path):
    # 1500 steps into a 1024-step queue drained by a slow Python sink: step() must wait for the
    # writer thread, which needs the GIL for the sink. Holding it would deadlock (timeout).
    proc = run_python(
        """
        import time, tally
        class Slow:
            name = "slow"
            def write(self, step, wall_time, iteration, scalars):
                time.sleep(0.0005)
        log = tally.Logger(algo="sac", task="t", sim="s", max_iterations=1500, num_envs=1, log_root="logs", sinks=[Slow()], logger="none")
        for i in range(1, 1501):
            log.step(i, metrics={"Loss/critic": 1.0})
        log.close()
        import json; print(json.load(open(log.run_dir / "run_summary.json"))["backpressure_waits"])
        """,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.split()[-1]) > 0


def test_a_logger_left_open_is_closed_at_interpreter_exit(tmp_path):
    proc = run_python(
        """
        import tally
        log = tally.Logger(algo="sac", task="t", sim="s", max_iterations=3, num_envs=1, log_root="logs", sinks=[])
        for i in range(1, 4):
            log.step(i, metrics={"Loss/critic": 1.0})
        print("RUN_DIR=" + str(log.run_dir))
        """,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    run_dir = tmp_path / proc.stdout.split("RUN_DIR=", 1)[1].splitlines()[0]
    assert summary(run_dir)["status"] == "completed"
    assert {s for (t, s) in scalars(run_dir)} == {1, 2, 3}


def test_status_and_checkpoint_reach_the_summary(tmp_path):
    with new_logger(tmp_path) as log:
        log.status("Buffer fill: 10%")
        log.checkpoint_saved(tmp_path / "model_10.pt")
        log.set_runtime_manifest({"schema_version": 1})
        # An early manifest: a run closed completed with it is recorded failed.
        log.close("interrupted")
    s = summary(log.run_dir)
    assert s["last_checkpoint"] == str(tmp_path / "model_10.pt")
    assert s["runtime_manifest"]["schema_version"] == 1


def test_python_m_tally_runs_the_cli_and_the_console_script_is_installed(tmp_path):
    out = subprocess.run([sys.executable, "-m", "tally", "schema", "--json"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["metric_schema_version"] == tally.METRIC_SCHEMA_VERSION
    script = Path(sys.executable).parent / "tally"
    assert script.is_file()
    bad = subprocess.run([str(script), "no-such-command"], capture_output=True, text=True)
    assert bad.returncode == 2 and "no-such-command" in bad.stderr


def test_python_m_tally_demo_writes_a_run(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tally", "demo", "--iterations", "30", "--num-envs", "8", "--panel", "off", f"training.log_root={tmp_path}"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    run_dir = Path(proc.stdout.strip().splitlines()[-1].split("run: ", 1)[1])
    assert summary(run_dir)["status"] == "completed"
    assert len({s for (t, s) in scalars(run_dir)}) == 30


def test_user_metrics_land_in_the_event_file_next_to_canonical_tags(tmp_path):
    # docs/contract/schema.md "User metrics": any group outside the canonical ones is the user's.
    with new_logger(tmp_path) as log:
        for i in (1, 2):
            log.step(i, metrics={"charts/my_metric": 1.5 * i, "losses/explained_variance": 0.25})
    got = scalars(log.run_dir)
    assert got[("charts/my_metric", 1)] == 1.5
    assert got[("charts/my_metric", 2)] == 3.0
    assert got[("losses/explained_variance", 2)] == 0.25


def test_a_new_name_in_a_canonical_group_is_refused_with_the_way_to_log_it(tmp_path):
    with new_logger(tmp_path) as log:
        with pytest.raises(tally.SchemaError) as e:
            log.step(1, metrics={"Loss/my_aux_loss": 1.0})
        assert "metrics['Loss/my_aux_loss']" in str(e.value)
        assert "'charts/my_aux_loss'" in str(e.value)
        log.step(1, metrics={"aux/my_aux_loss": 1.0})
    assert scalars(log.run_dir)[("aux/my_aux_loss", 1)] == 1.0


def test_define_metric_records_units_and_summaries_and_refuses_canonical_groups(tmp_path):
    with new_logger(tmp_path) as log:
        log.define_metric("charts/*", unit="return", summary="max", label="Return")
        with pytest.raises(tally.ConfigError, match=r"define_metric\('Loss/\*'\)"):
            log.define_metric("Loss/*")
        with pytest.raises(tally.ConfigError, match="reduction"):
            log.define_metric("aux", reduction="median")
        for i, v in ((1, 3.0), (2, 8.0), (3, 5.0)):
            log.step(i, metrics={"charts/return": v})
    config = json.loads((log.run_dir / "run_config.json").read_text())
    assert config["user_metrics"] == [
        {"tag": "charts/return", "unit": "return", "reduction": "mean", "label": "Return", "summary": "max"}
    ]
    summary = json.loads((log.run_dir / "run_summary.json").read_text())
    assert summary["user_metrics"] == {"charts/return": 8.0}


def test_a_huge_config_is_refused_naming_its_largest_string_without_copying_it(tmp_path):
    # 50 MB of text in config= cost 435 MiB at peak while json.dumps and the parser copied it;
    # a run's configuration is bounded and refused before any copy (run-artifacts.md "Run config").
    code = textwrap.dedent(
        f"""
        import tally
        blob = "x" * 50_000_000
        try:
            tally.Logger(algo="ppo", task="t", profile="onpolicy", log_dir={str(tmp_path / "r")!r}, panel="off",
                         config={{"data": {{"blob": blob, "n": 3}}}})
        except tally.ConfigError as e:
            print(e)
        # VmHWM: this process's peak (ru_maxrss would include the parent's, copied at fork).
        hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
        print(int(hwm.split()[1]) // 1024)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    message, peak_mib = out.stdout.strip().splitlines()
    assert "config: about 50000" in message and "its largest string, 50000000 bytes, is at $.data.blob" in message, out
    assert int(peak_mib) < 200, f"peak {peak_mib} MiB"
    assert not (tmp_path / "r").exists()
