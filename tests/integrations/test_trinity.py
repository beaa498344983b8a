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

import json
import os
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
    monitor.log({"actor/pg_loss": 0.5}, 2)
    with pytest.raises(ValueError, match="step 1 logged after step 2"):
        monitor.log({"actor/pg_loss": 0.5}, 1)
    # A key outside the rft namespace: refused by the logger, naming it, when the step is written.
    monitor.log({"variance_proxy/proxy1_signal_strength": 0.1}, 3)
    with pytest.raises(tally.SchemaError, match=r"variance_proxy/proxy1_signal_strength.*unknown category 'variance_proxy/'"):
        monitor.log({"actor/pg_loss": 0.25}, 4)
    with pytest.raises(ValueError, match="'explorer/time/x' and another key of step 4 are both written as 'time/x'"):
        monitor.log({"explore/time/x": 1.0, "explorer/time/x": 2.0}, 4)
    monitor.close()
    # Step 3 was refused whole; step 4, logged with the call that reported it, was kept.
    run = tmp_path / "ckpt" / "gsm8k-grpo" / "g" / "run1" / "monitor" / "tally" / config.trainer.name
    assert scalars(run) == {"actor/pg_loss": [(2, 0.5), (4, 0.25)]}
    (tmp_path / "b").mkdir()
    with pytest.raises(ValueError, match="unknown monitor_args \\['uri'\\]"):
        make_monitor(trinity_config(tmp_path / "b", monitor_args={"uri": "http://x"}), "trainer")
    (tmp_path / "c").mkdir()
    # A replica setting the Logger does not know is refused by it, naming it, before any run.
    with pytest.raises(tally.ConfigError, match=r"mlflow\['trackinguri'\]: unknown MLflow setting"):
        make_monitor(trinity_config(tmp_path / "c", monitor_args={"mlflow": {"trackinguri": "http://x"}}), "trainer")
    assert not (tmp_path / "c" / "ckpt" / "gsm8k-grpo" / "g" / "run1" / "monitor" / "tally" / "trainer").exists()


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)


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

