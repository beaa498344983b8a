"""Trinity-RFT's monitor registry with tally.integrations.trinity: the ``tally`` monitor driven as
Trinity's explorer and trainer drive theirs, against Trinity's own ``TensorboardMonitor`` given
the same calls (docs/contract/integrations.md "Trinity-RFT").

trinity-rft is installed with ``--no-deps`` (its dependencies include verl, vllm and ray[default]);
``trinity.utils.monitor`` and the config loading need only ray, omegaconf and pandas besides torch
(tests/integrations/requirements.txt). A real explorer or trainer needs GPUs and a model, so the
metrics are built the way they build them: the explorer's with Trinity's own aggregation
(``trinity.utils.metrics``) over per-run metrics, wrapped as ``Explorer._finish_explore_step``,
``_finish_eval_step`` and ``_finish_steps`` wrap them; the trainer's with the keys Trinity's trainer
and verl's metric functions write in a GRPO step (trinity/trainer/trainer.py, trainer/verl/utils.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("trinity.utils.monitor", reason="trinity-rft is not installed (make test-integrations)")

import pandas as pd  # noqa: E402
from trinity.common.config import load_config  # noqa: E402
from trinity.common.config_validator import GlobalConfigValidator, MonitorConfigValidator  # noqa: E402
from trinity.utils import metrics as trinity_metrics  # noqa: E402
from trinity.utils.monitor import MONITOR, TensorboardMonitor  # noqa: E402

from conftest import f32, load, scalars  # noqa: E402

import tally  # noqa: E402
import tally.metrics  # noqa: E402
import tally.integrations.trinity as integration  # noqa: E402


def trinity_config(tmp_path, monitor_type="tally", monitor_args=None):
    """A Trinity config loaded and checked by Trinity's own loader and validators."""
    monitor = {"monitor_type": monitor_type}
    if monitor_args is not None:
        monitor["monitor_args"] = monitor_args
    path = tmp_path / f"{monitor_type.replace('.', '_')}.yaml"
    path.write_text(json.dumps({
        "project": "gsm8k-grpo", "group": "g", "name": "run1",
        "checkpoint_root_dir": str(tmp_path / "ckpt"),
        "algorithm": {"algorithm_type": "grpo", "repeat_times": 4},
        "monitor": monitor,
    }))
    config = load_config(str(path))
    GlobalConfigValidator().validate(config)
    MonitorConfigValidator().validate(config)  # looks the monitor type up in MONITOR
    return config


def make_monitor(config, role):
    """As Explorer.__init__ and Trainer.__init__ make theirs."""
    return MONITOR.get(config.monitor.monitor_type)(
        project=config.project, group=config.group, name=config.name, role=role, config=config
    )


def run_metrics(task: int, run: int, step: int) -> dict:
    """One rollout's metrics, as a workflow reports them (suffixes included)."""
    correct = float((task + run + step) % 3 != 0)
    return {
        "accuracy": correct,
        "reward": correct - 0.1 * run,
        "response_length": 100.0 + 7 * task + run,
        "tokens:sum": 300.0 + task,
        "model_version:last": float(step),
        "time/run_execution": 0.5 + 0.01 * run,
    }


def task_statuses(aggregate, step: int, is_eval: bool, tasks: int = 3, runs: int = 4) -> list:
    """The task-level metrics of ``tasks`` tasks of ``runs`` repeats each."""
    out = []
    for t in range(tasks):
        per_run = [aggregate.aggregate_run_level_metrics([run_metrics(t, r, step)]) for r in range(runs)]
        for m in per_run:
            m["time/task_execution"] = 2.0 + t
        out.append(aggregate.calculate_task_level_metrics(per_run, is_eval=is_eval))
    return out


def explorer_calls(aggregate) -> list:
    """(data, step) of each monitor.log call of two explore steps, an eval at step 2 and the
    sync at the end, as Explorer._finish_steps makes them (trinity/explorer/explorer.py)."""
    calls = []
    for step in (1, 2):
        result = {"experience_pipeline/time/write": 0.02 * step, "experience_pipeline/experience_count": 12.0}
        result.update(aggregate.aggregate_metrics(task_statuses(aggregate, step, False), prefix="rollout"))
        result["rollout/finished_task_count"] = 3.0
        metric = {"rollout/model_version": step - 1, "explorer/time/wait_explore_step": 0.25 * step}
        metric.update(result)
        calls.append((metric, step))
    ev = aggregate.aggregate_eval_metrics(task_statuses(aggregate, 2, True), prefix="eval/gsm8k", detailed_stats=False)
    ev["eval/gsm8k/finished_task_count"] = 3.0
    ev["time/eval"] = 1.5
    calls.append((ev, 2))
    calls.append(({"explore/time/sync_interval": 3.25}, 2))
    return calls


def trainer_calls() -> list:
    out = []
    for step in (1, 2, 3):
        m = {
            "time/read_experience": 0.1, "sample/task_count": 3,
            "actor/pg_loss": -0.01 * step, "actor/entropy": 1.2 - 0.1 * step, "actor/kl_loss": 0.001 * step,
            "actor/pg_clipfrac": 0.05, "actor/ppo_kl": 0.002, "actor/grad_norm": 0.8, "actor/lr": 1e-6,
            "critic/score/mean": 0.5, "critic/score/max": 1.0, "critic/score/min": 0.0,
            "critic/rewards/mean": 0.4, "critic/advantages/mean": 0.0, "critic/advantages/max": 1.4,
            "critic/returns/mean": 0.1, "response_length/mean": 120.0, "response_length/clip_ratio": 0.0,
            "prompt_length/mean": 80.0, "prompt_length/max": 95.0,
            "time/step": 4.0, "time/update_actor": 2.5, "timing_per_token_ms/update_actor": 0.4,
            "perf/total_num_tokens": 2400, "perf/time_per_step": 4.0, "perf/throughput": 600.0,
            "perf/mfu/actor": 0.3, "perf/max_memory_allocated_gb": 20.5,
            "global_seqlen/min": 180, "global_seqlen/max": 240, "global_seqlen/minmax_diff": 60,
            "time/train_step": 5.0, "time/sync_weight": 0.3, "time/trainer_sync_interval": 6.0,
        }
        out.append((m, step))
    return out


def drive(monitor, calls) -> None:
    for data, step in calls:
        monitor.log(data, step=step)
    monitor.close()


def test_tally_aggregation_equals_trinitys_for_these_steps():
    # The explorer's keys below come from Trinity's own aggregation; tally.metrics gives the same.
    assert explorer_calls(tally.metrics) == explorer_calls(trinity_metrics)


def test_explorer_run_holds_what_trinitys_tensorboard_monitor_writes(tmp_path):
    config = trinity_config(tmp_path)
    role = config.explorer.name
    calls = explorer_calls(tally.metrics)
    drive(make_monitor(config, role), calls)
    drive(TensorboardMonitor(config.project, config.group, config.name, role, config), calls)

    run = tmp_path / "ckpt" / "gsm8k-grpo" / "g" / "run1" / "monitor" / "tally" / role
    ours, ref = scalars(run), scalars(tmp_path / "ckpt" / "gsm8k-grpo" / "g" / "run1" / "monitor" / "tensorboard" / role)
    # Same points; only the explorer's role-prefixed timings are renamed: the step figures
    # Trinity writes with no statistic are rft keys as they are (docs/contract/rft.md "The rft
    # profile"), so the explorer's rollout/model_version and the workflows' aggregated
    # rollout/model_version/last are both written.
    assert ours == {integration.tally_key(t): pts for t, pts in ref.items()}
    renamed = {t: integration.tally_key(t) for t in ref if integration.tally_key(t) != t}
    assert renamed == {
        "explorer/time/wait_explore_step": "time/wait_explore_step",
        "explore/time/sync_interval": "time/sync_interval",
    }
    # The aggregated keys, as docs/contract/rft.md names them, at their steps.
    assert ours["rollout/accuracy/mean"] == [(1, f32(calls[0][0]["rollout/accuracy/mean"])), (2, f32(calls[1][0]["rollout/accuracy/mean"]))]
    assert {"rollout/tokens/sum", "rollout/model_version", "rollout/model_version/last", "rollout/finished_task_count",
            "eval/gsm8k/finished_task_count", "eval/gsm8k/accuracy/mean@4", "eval/gsm8k/accuracy/best@2",
            "eval/gsm8k/time/task_execution", "eval/gsm8k/time/run_execution", "time/eval", "time/sync_interval"} <= set(ours)
    assert ours["eval/gsm8k/accuracy/mean@4"] == [(2, f32(calls[2][0]["eval/gsm8k/accuracy/mean@4"]))]
    # The three dicts logged at step 2 are one step: one event holds all of them.
    events = [e for e in load(run).Scalars("time/sync_interval")]
    assert [e.step for e in events] == [2]

    conf = json.loads((run / "run_config.json").read_text())
    assert conf["run"]["logger"]["profile"] == "rft"
    assert conf["config"]["algorithm.algorithm_type"] == "grpo"
    assert conf["config"]["monitor.monitor_type"] == "tally"


def test_trainer_run_and_its_table(tmp_path):
    config = trinity_config(tmp_path)
    role = config.trainer.name
    monitor = make_monitor(config, role)
    samples = [
        {"prompt": "What is 2+3?", "response": "It is 5.\nSo | the answer: 5", "reward": 1.0},
        {"prompt": "What is 7*6?", "response": "41", "reward": 0.0},
    ]
    for data, step in trainer_calls():
        monitor.log(data, step)
        if step == 2:  # as Trainer._log_experiences
            monitor.log_table("rollout_examples", pd.DataFrame(samples), step)
    monitor.close()

    run = tmp_path / "ckpt" / "gsm8k-grpo" / "g" / "run1" / "monitor" / "tally" / role
    got = scalars(run)
    want = {k: [(s, f32(d[k])) for d, s in trainer_calls()] for k in trainer_calls()[0][0]}
    assert got == want
    (text,) = load(run / "tables").Tensors("rollout_examples/text_summary")
    assert text.step == 2
    assert text.tensor_proto.string_val[0].decode().splitlines() == [
        "| prompt | response | reward |",
        "|---|---|---|",
        "| What is 2+3? | It is 5.<br>So \\| the answer: 5 | 1.0 |",
        "| What is 7*6? | 41 | 0.0 |",
    ]


def test_a_continued_job_appends_to_its_run(tmp_path):
    config = trinity_config(tmp_path)
    drive(make_monitor(config, config.trainer.name), trainer_calls()[:2])
    drive(make_monitor(config, config.trainer.name), trainer_calls()[2:])
    got = scalars(tmp_path / "ckpt" / "gsm8k-grpo" / "g" / "run1" / "monitor" / "tally" / config.trainer.name)
    assert [s for s, _ in got["actor/pg_loss"]] == [1, 2, 3]


def test_bad_input_is_refused_naming_it(tmp_path):
    config = trinity_config(tmp_path)
    with pytest.raises(ValueError, match="role 'critic' is neither the explorer's \\('explorer'\\) nor the trainer's \\('trainer'\\)"):
        make_monitor(config, "critic")
    monitor = make_monitor(config, config.trainer.name)
    with pytest.raises(tally.ValueTypeError, match=r"data\['actor/pg_loss'\] at step 1 is a str"):
        monitor.log({"actor/pg_loss": "nan?"}, 1)
    monitor.close()
    (tmp_path / "b").mkdir()
    with pytest.raises(ValueError, match="unknown monitor_args \\['uri'\\]"):
        make_monitor(trinity_config(tmp_path / "b", monitor_args={"uri": "http://x"}), "trainer")
    (tmp_path / "c").mkdir()
    # A replica setting the Logger does not know is refused by it, naming it, before any run.
    with pytest.raises(tally.ConfigError, match=r"mlflow\['trackinguri'\]: unknown MLflow setting"):
        make_monitor(trinity_config(tmp_path / "c", monitor_args={"mlflow": {"trackinguri": "http://x"}}), "trainer")
    assert not (tmp_path / "c" / "ckpt" / "gsm8k-grpo" / "g" / "run1" / "monitor" / "tally" / "trainer").exists()


# Keys real Trinity 0.6.0 logs outside the rft namespace: the advantage functions' metrics
# prefixed "advantage" by its verl trainer (on_policy_distill, jsd, KL in the reward), the
# explorer's experience counts and serve mode's per-model figures, and verl's rollout-probs and
# variance-proxy diagnostics.
OUTSIDE = (
    "advantage/kl/mean", "advantage/kl/std", "advantage/advantages/mean", "advantage/jsd/mean",
    "advantage/jsd/std", "advantage/kl", "advantage/kl_coef", "rollout/total_experience_count",
    "rollout/ready_experience_count", "rollout/model_0/model_version", "rollout/model_0/total_request_count",
    "training/rollout_probs_diff_mean", "training/rollout_probs_diff_max", "variance_proxy/proxy1_signal_strength",
    "variance_proxy/expected_w",
)


def outside_metrics(step: int) -> dict:
    return {k: 0.01 * step + i for i, k in enumerate(OUTSIDE)}


def test_keys_outside_the_namespace_are_written_as_the_runs_own_metrics(tmp_path):
    # docs/contract/integrations.md "Trinity-RFT": a key outside the rft namespace never stops
    # a step; it is written as Trinity's TensorboardMonitor writes it, said once, and listed
    # as the run's own metric.
    config = trinity_config(tmp_path)
    role = config.trainer.name
    calls = [({**m, **outside_metrics(s)}, s) for m, s in trainer_calls()]
    with pytest.warns(UserWarning) as said:
        drive(make_monitor(config, role), calls)
    drive(TensorboardMonitor(config.project, config.group, config.name, role, config), calls)
    job = tmp_path / "ckpt" / "gsm8k-grpo" / "g" / "run1" / "monitor"
    assert scalars(job / "tally" / role) == scalars(job / "tensorboard" / role)
    told = [str(w.message) for w in said if "outside the rft namespace" in str(w.message)]
    assert sorted(m.split("'")[1] for m in told) == sorted(OUTSIDE)  # once each, over three steps
    conf = json.loads((job / "tally" / role / "run_config.json").read_text())
    assert [m["tag"] for m in conf["user_metrics"]] == list(OUTSIDE)
    summary = json.loads((job / "tally" / role / "run_summary.json").read_text())
    assert summary["user_metrics"]["advantage/kl_coef"] == pytest.approx(f32(0.03 + 6))


def test_two_keys_renamed_to_one_name_keep_their_own_names(tmp_path):
    config = trinity_config(tmp_path)
    monitor = make_monitor(config, config.explorer.name)
    with pytest.warns(UserWarning, match="'explorer/time/x' is written under its own name"):
        monitor.log({"explore/time/x": 1.0, "explorer/time/x": 2.0}, 1)
    monitor.close()
    run = tmp_path / "ckpt" / "gsm8k-grpo" / "g" / "run1" / "monitor" / "tally" / config.explorer.name
    assert scalars(run) == {"time/x": [(1, 1.0)], "explorer/time/x": [(1, 2.0)]}


def test_a_step_logged_again_in_one_process_rewinds_the_run(tmp_path):
    config = trinity_config(tmp_path)
    monitor = make_monitor(config, config.trainer.name)
    with pytest.warns(UserWarning, match="step 2 does not advance past 3: Trinity restarted from a checkpoint; the run is rewound to step 1"):
        for step, v in ((1, 1.0), (2, 2.0), (3, 3.0), (2, 20.0), (3, 30.0), (4, 40.0)):
            monitor.log({"actor/pg_loss": v}, step)
    monitor.close()
    run = tmp_path / "ckpt" / "gsm8k-grpo" / "g" / "run1" / "monitor" / "tally" / config.trainer.name
    assert scalars(run) == {"actor/pg_loss": [(1, 1.0), (2, 20.0), (3, 30.0), (4, 40.0)]}


class _Remote:
    """A Ray actor method as the trainer awaits it."""

    def __init__(self, value=None):
        self.value = value

    def remote(self, *args, **kwargs):
        async def done():
            return self.value

        return done()


class _Synchronizer:
    set_trainer_status = _Remote()
    explorer_requires_sync = _Remote(False)
    notify_no_new_model_state_dict = _Remote()


class _Engine:
    """The training engine (verl's, on GPUs) stubbed: it starts from the job's checkpoint and
    returns a step's metrics as Trinity's verl trainer reports them, keys outside the namespace
    included."""

    def __init__(self, config):
        from trinity.manager.state_manager import StateManager

        state = StateManager(path=config.checkpoint_job_dir, trainer_name=config.trainer.name, config=config)
        self.train_step_num = state.load_trainer().get("latest_iteration", 0)
        self.trained = []

    async def prepare(self):
        pass

    async def train_step(self, exps):
        self.train_step_num += 1
        self.trained.append(self.train_step_num)
        s = self.train_step_num
        return {"actor/pg_loss": -0.01 * s + 0.001 * len(exps), "actor/entropy": 1.0 - 0.05 * s, **outside_metrics(s)}

    async def save_checkpoint(self, block_until_saved=False, save_as_hf=False):
        pass

    async def save_state_dict(self):
        pass


def test_trinitys_trainer_loop_runs_every_step_and_a_restart_from_its_checkpoint_rewinds_the_run(tmp_path, monkeypatch):
    # Trinity's real Trainer (its __init__, train() loop and shutdown) with the engine, the
    # synchronizer actor and the buffer stubbed. Its loop ends at the first exception a
    # monitor raises, so every step it runs must be logged.
    from types import SimpleNamespace

    import trinity.trainer.trainer as trainer_module
    from trinity.algorithm import SAMPLE_STRATEGY
    from trinity.manager.state_manager import StateManager

    class Strategy:
        def __init__(self, buffer_config=None, **kwargs):
            pass

        def load_state_dict(self, state):
            pass

        def state_dict(self):
            return {}

        async def sample(self, step):
            batch = [SimpleNamespace(eid=SimpleNamespace(tid=t)) for t in range(3)]
            return batch, {"sample/time": 0.01}, [{"prompt": f"p{step}", "response": "r", "reward": 1.0}]

    SAMPLE_STRATEGY.register_module("tally_test_stub", Strategy)
    engines = []
    monkeypatch.setattr(trainer_module, "get_trainer_wrapper", lambda c: engines.append(_Engine(c)) or engines[-1])
    monkeypatch.setattr(trainer_module.Synchronizer, "get_actor", classmethod(lambda cls, config: _Synchronizer()))
    real_sleep = asyncio.sleep
    monkeypatch.setattr(trainer_module, "asyncio", SimpleNamespace(create_task=asyncio.create_task, sleep=lambda s: real_sleep(0)))

    config = trinity_config(tmp_path)
    config.algorithm.sample_strategy = "tally_test_stub"
    config.algorithm.sample_strategy_args = {}
    config.trainer.trainer_type = "stub"
    config.trainer.save_interval = 3
    config.trainer.enable_preview = True
    config.synchronizer.sync_style = trainer_module.SyncStyle.FIXED
    config.synchronizer.sync_method = trainer_module.SyncMethod.CHECKPOINT
    config.synchronizer.sync_interval = config.synchronizer.trainer_sync_interval = 1

    def job(total_steps):
        config.trainer.total_steps = total_steps
        trainer = trainer_module.Trainer(config)
        asyncio.run(trainer.prepare())
        asyncio.run(trainer.train())
        asyncio.run(trainer.shutdown())

    with pytest.warns(UserWarning):
        job(5)
        # Killed after logging step 5, before its final save: its last checkpoint is step 3's.
        StateManager(path=config.checkpoint_job_dir, trainer_name=config.trainer.name, config=config).save_trainer(
            current_step=3, sample_strategy_state={})
        job(8)  # restarted from that checkpoint: steps 4..8 again
    assert [e.trained for e in engines] == [[1, 2, 3, 4, 5], [4, 5, 6, 7, 8]]

    run = tmp_path / "ckpt" / "gsm8k-grpo" / "g" / "run1" / "monitor" / "tally" / config.trainer.name
    got = scalars(run)
    assert set(got) >= {"actor/pg_loss", "sample/task_count", "time/train_step", *OUTSIDE}
    for tag, points in got.items():
        steps = [s for s, _ in points]
        assert steps == sorted(set(steps)), (tag, steps)  # one series, no step twice
    assert [s for s, _ in got["advantage/kl_coef"]] == [1, 2, 3, 4, 5, 6, 7, 8]
    # tally's own reader shows the same one series (the purge marker applied).
    t = tally.read(run).to_pydict()
    mine = {}
    for tag, step, value in zip(t["tag"], t["step"], t["value"]):
        mine.setdefault(tag, []).append((step, value))
    assert mine == got
    assert got["actor/entropy"] == [(s, f32(1.0 - 0.05 * s)) for s in range(1, 9)]
    summary = json.loads((run / "run_summary.json").read_text())
    (resumed,) = summary["resumed"]
    assert (resumed["after_step"], resumed["rewound_to_iteration"], resumed["first_step"]) == (5, 3, 4)
    assert summary["completed_iterations"] == 8
    # The tables: the restarted job's file opens with the purge marker at step 4 (run-artifacts.md
    # "Resume" (Rewind)), then its tables of steps 4..8.
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    first, second = sorted((run / "tables").iterdir(), key=lambda p: p.name)

    def events(path):
        return [(e.step, e.WhichOneof("what"), e.session_log.status) for e in EventFileLoader(str(path)).Load()][1:]
    assert [s for s, what, _ in events(first) if what == "summary"] == [1, 2, 3, 4, 5]
    assert events(second) == [(4, "session_log", 1)] + [(s, "summary", 0) for s in range(4, 9)]


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)


def test_a_monitor_never_closed_keeps_its_last_step_and_the_exit_status(tmp_path):
    # Trinity closes its monitor from Monitor.__del__, which may run during the interpreter's
    # exit after tally's own exit hook; the open step is still written (docs/contract/
    # integrations.md "Trinity-RFT"), and the process ends with the script's status.
    (tmp_path / "c.yaml").write_text(json.dumps({
        "project": "p", "name": "n", "checkpoint_root_dir": str(tmp_path / "ckpt"),
        "algorithm": {"algorithm_type": "grpo"},
        "monitor": {"monitor_type": "tally.integrations.trinity.TallyMonitor"},
    }))
    for how in ("global", "cycle"):
        r = run_python(
            f"""
            import sys
            from trinity.common.config import load_config
            from trinity.common.config_validator import GlobalConfigValidator, MonitorConfigValidator
            from trinity.utils.monitor import MONITOR
            config = load_config({str(tmp_path / "c.yaml")!r})
            GlobalConfigValidator().validate(config)
            MonitorConfigValidator().validate(config)
            monitor = MONITOR.get(config.monitor.monitor_type)(project=config.project, group=config.group,
                                                               name=config.name, role="trainer", config=config)
            monitor.log({{"actor/pg_loss": 0.5}}, 1)
            monitor.log({{"actor/pg_loss": 0.25}}, 2)  # open until the monitor closes
            if {how!r} == "cycle":
                monitor.me = monitor  # collected only by the exit's last collection
            sys.exit(3)
            """
        )
        assert r.returncode == 3, r.stderr
        assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr
        run = tmp_path / "ckpt" / "p" / "n" / "monitor" / "tally" / "trainer"
        assert scalars(run) == {"actor/pg_loss": [(1, 0.5), (2, 0.25)]}, how
        summary = json.loads((run / "run_summary.json").read_text())
        assert summary["status"] == "completed"
        shutil.rmtree(tmp_path / "ckpt")


def test_importing_registers_tally_before_or_after_trinity_and_imports_neither():
    r = run_python(
        """
        import sys
        import tally.integrations.trinity as t
        print("trinity loaded:", "trinity" in sys.modules, "torch loaded:", "torch" in sys.modules)
        from trinity.utils.monitor import MONITOR
        print("registered:", MONITOR.get("tally") is t.TallyMonitor)
        """
    )
    assert r.returncode == 0, r.stderr
    assert "trinity loaded: False torch loaded: False" in r.stdout
    assert "registered: True" in r.stdout
    r = run_python(
        """
        from trinity.utils.monitor import MONITOR, Monitor
        import tally.integrations.trinity as t
        print("registered:", MONITOR.get("tally") is t.TallyMonitor, issubclass(t.TallyMonitor, Monitor))
        """
    )
    assert r.returncode == 0, r.stderr
    assert "registered: True True" in r.stdout


def test_the_class_path_works_without_importing_anything(tmp_path):
    # What a Ray actor sees: only Trinity imported, the monitor named by its class path.
    (tmp_path / "c.yaml").write_text(json.dumps({
        "project": "p", "name": "n", "checkpoint_root_dir": str(tmp_path / "ckpt"),
        "algorithm": {"algorithm_type": "grpo"},
        "monitor": {"monitor_type": "tally.integrations.trinity.TallyMonitor"},
    }))
    r = run_python(
        f"""
        import sys
        from trinity.common.config import load_config
        from trinity.common.config_validator import GlobalConfigValidator, MonitorConfigValidator
        from trinity.utils.monitor import MONITOR
        config = load_config({str(tmp_path / "c.yaml")!r})
        GlobalConfigValidator().validate(config)
        MonitorConfigValidator().validate(config)
        m = MONITOR.get(config.monitor.monitor_type)(project=config.project, group=config.group,
                                                     name=config.name, role="explorer", config=config)
        m.log({{"rollout/reward/mean": 0.5}}, 1)
        m.close()
        print("written:", m.run_dir)
        """
    )
    assert r.returncode == 0, r.stderr
    assert scalars(tmp_path / "ckpt" / "p" / "n" / "monitor" / "tally" / "explorer") == {"rollout/reward/mean": [(1, 0.5)]}


def test_a_plugin_directory_registers_the_name_in_a_fresh_process(tmp_path):
    # What each Ray actor does at start: load the *.py files of TRINITY_PLUGIN_DIRS.
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "tally_monitor_plugin_test.py").write_text("import tally.integrations.trinity\n")
    import trinity

    copied = Path(trinity.__file__).parent / "plugins" / "tally_monitor_plugin_test.py"  # load_from_file copies it there
    try:
        r = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(
                """
                from trinity.utils.plugin_loader import load_plugins
                from trinity.utils.monitor import MONITOR
                load_plugins()
                print("class:", MONITOR.get("tally").__module__, MONITOR.get("tally").__name__)
                """
            )],
            capture_output=True, text=True, timeout=300, env={**os.environ, "TRINITY_PLUGIN_DIRS": str(plugins)},
        )
    finally:
        copied.unlink(missing_ok=True)
    assert r.returncode == 0, r.stderr
    assert "class: tally.integrations.trinity TallyMonitor" in r.stdout


def test_monitor_args_send_each_roles_run_to_wandb_where_trinitys_own_monitor_would(tmp_path, monkeypatch):
    # docs/contract/integrations.md "Trinity-RFT": monitor_args' wandb settings reach each
    # role's tally.Logger; W&B's project and group default to Trinity's, the settings win.
    wandb = pytest.importorskip("wandb")
    # The offline run file read as tests/python reads it (docs/contract/remote-sinks.md).
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "python"))
    from test_wandb import history_rows, wandb_file

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb-default"))
    config = trinity_config(tmp_path, monitor_args={"wandb": {"tags": ["nightly"]}, "remote_finish_timeout": 60})
    for role, calls in ((config.trainer.name, trainer_calls()), (config.explorer.name, explorer_calls(tally.metrics))):
        drive(make_monitor(config, role), calls)
        run = tmp_path / "ckpt" / "gsm8k-grpo" / "g" / "run1" / "monitor" / "tally" / role
        conf = json.loads((run / "run_config.json").read_text())
        assert conf["run"]["logger"]["backend"] == "wandb"
        assert {k: conf["run"]["wandb"][k] for k in ("project", "group", "tags")} == {
            "project": "gsm8k-grpo", "group": "g", "tags": ["nightly"]}
        summary = json.loads((run / "run_summary.json").read_text())
        (sink,) = summary["remote_sinks"]
        assert sink["name"] == "wandb" and sink["pending"] == 0
        # What W&B holds, read back from its offline run file, is the role's event file.
        got = {}
        for row in history_rows(wandb_file(run / "wandb")):
            for k, v in row.items():
                if not k.startswith(("_", "tally/")):
                    got.setdefault(k, []).append((row["tally/step"], v))
        assert got == scalars(run)
    assert wandb.run is None  # each role's W&B run was finished by its monitor

