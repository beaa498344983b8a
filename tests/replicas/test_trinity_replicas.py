"""Trinity's `monitor_args` feed MLflow and trackio (docs/contract/integrations.md
"Trinity-RFT"): the keywords `tally.integrations.trinity.replica_kwargs` gives each role's
Logger, against the real MLflow server and trackio. The Trinity monitor itself needs torch,
which this virtualenv lacks: tests/integrations/test_trinity.py drives it with W&B."""

from __future__ import annotations

import pytest

import tally
from tally.integrations.trinity import replica_kwargs

mlflow = pytest.importorskip("mlflow")
trackio = pytest.importorskip("trackio")
from mlflow.tracking import MlflowClient  # noqa: E402
from trackio.sqlite_storage import SQLiteStorage  # noqa: E402

from conftest import patient  # noqa: E402


def test_monitor_args_send_a_role_to_mlflow_and_trackio_where_trinitys_monitors_would(tmp_path, mlflow_server, trackio_dir):
    args = {"mlflow": {"tracking_uri": mlflow_server.uri}, "trackio": {"name": "run1_trainer"}, "remote_finish_timeout": 60}
    kw = replica_kwargs(args, "gsm8k-grpo", "g", "trainer")
    log = tally.Logger(algo="grpo", task="gsm8k-grpo", name="run1_trainer", profile="rft", log_dir=tmp_path / "trainer",
                       panel="off", **kw)
    for step in range(1, 31):
        log.step(step, metrics={"actor/pg_loss": -0.01 * step, "rollout/model_version": step - 1})
    log.close()
    want = {"actor/pg_loss": [], "rollout/model_version": []}
    t = tally.read(tmp_path / "trainer").to_pydict()
    for tag, step, value in zip(t["tag"], t["step"], t["value"]):
        if tag in want:
            want[tag].append((step, value))
    # MLflow: the experiment is Trinity's project, as Trinity's MlflowMonitor names it.
    client = MlflowClient(mlflow_server.uri)
    with patient():
        (run,) = client.search_runs([client.get_experiment_by_name("gsm8k-grpo").experiment_id])
        for key, points in want.items():
            hist = client.get_metric_history(run.info.run_id, key)
            assert sorted((m.step, m.value) for m in hist) == sorted(points), key
    assert run.info.run_name == "run1_trainer" and run.info.status == "FINISHED"
    # The tags Trinity's MlflowMonitor gives its run, beside MLflow's own.
    assert run.data.tags["group"] == "g" and run.data.tags["role"] == "trainer"
    assert "mlflow.user" in run.data.tags
    # trackio: the project is Trinity's project, the group Trinity's group.
    rows = SQLiteStorage.get_logs("gsm8k-grpo", "run1_trainer")
    for key, points in want.items():
        assert sorted((r["step"], float(r[key])) for r in rows if key in r) == sorted(points), key


def test_a_setting_given_wins_and_a_bad_value_is_refused_naming_it():
    kw = replica_kwargs({"wandb": {"project": "mine"}, "mlflow": {"experiment": "x"}}, "p", "g", "explorer")
    assert kw == {"logger": "wandb", "wandb": {"project": "mine", "group": "g"},
                  "mlflow": {"experiment": "x", "tags": {"group": "g", "role": "explorer"}}}
    assert replica_kwargs({"wandb": True}, "p", "g", "explorer") == {"logger": "wandb", "wandb": {"project": "p", "group": "g"}}
    assert replica_kwargs({"wandb": False, "mlflow": None}, "p", "g", "explorer") == {}
    with pytest.raises(ValueError, match=r"monitor_args\['trackio'\] must be a mapping"):
        replica_kwargs({"trackio": "proj"}, "p", "g", "explorer")
