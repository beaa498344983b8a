"""The MLflow replica against a real `mlflow server` (docs/contract/remote-sinks.md "MLflow"):
every metric history read back through MlflowClient is what the event file holds, params are
run_config.json flattened, the status follows run_summary.json; a server stopped mid-run and
restarted loses and duplicates nothing; a hung server never slows the loop; names MLflow
refuses are mapped by one rule, checked with MLflow's own validator; `tally sync --to mlflow`
sends another writer's logdir exactly once."""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

import tally
from tally._mlflow import mlflow_name

mlflow = pytest.importorskip("mlflow")
from mlflow.exceptions import MlflowException  # noqa: E402
from mlflow.tracking import MlflowClient  # noqa: E402
from mlflow.utils.validation import _validate_metric_name, _validate_param_name  # noqa: E402

from conftest import free_port, patient, run_tally  # noqa: E402

Series = Dict[str, List[Tuple[int, float]]]


def stored(x: float) -> float:
    """The value MLflow's store gives back: it holds no infinity (docs/contract/remote-sinks.md
    "MLflow": ±inf come back as ±the largest float64)."""
    return math.copysign(sys.float_info.max, x) if math.isinf(x) else x


def event_series(run_dir: Path) -> Series:
    """Every scalar of the run's event files, through tally.read, by the name MLflow holds it under."""
    t = tally.read(run_dir).to_pydict()
    out: Series = defaultdict(list)
    for tag, step, value in zip(t["tag"], t["step"], t["value"]):
        out[mlflow_name(tag)].append((step, stored(value)))
    return dict(out)


def mlflow_series(client: MlflowClient, run_id: str) -> Series:
    out: Series = {}
    with patient():
        for key in client.get_run(run_id).data.metrics:
            hist = client.get_metric_history(run_id, key)
            out[key] = [(m.step, m.value) for m in sorted(hist, key=lambda m: (m.step, m.timestamp))]
    return out


def assert_same(a: Series, b: Series) -> None:
    assert a.keys() == b.keys()
    for k in a:
        got, want = a[k], sorted(b[k])
        assert len(got) == len(want), f"{k}: {len(got)} points in MLflow, {len(want)} in the event file"
        for (s1, v1), (s2, v2) in zip(got, want):
            assert s1 == s2 and (v1 == v2 or (math.isnan(v1) and math.isnan(v2))), (k, s1, v1, s2, v2)


def get_run(client: MlflowClient, run_id: str):
    with patient():
        return client.get_run(run_id)


def experiment_name(client: MlflowClient, experiment_id: str) -> str:
    with patient():
        return str(client.get_experiment(experiment_id).name)


def run_id_of(run_dir: Path) -> str:
    return (run_dir / "mlflow_run_id").read_text().strip()


# -- the name rule --------------------------------------------------------------------------------

NAMES = [
    "Loss/critic", "eval/math/accuracy/mean@4", "rollout/reward/mean@4", "pass@k", "a b", "a:b",
    "a//b", "/abs", "trail/", ".", "..", "a/./b", "a/../b", "../up", "", "ünïcödé/ok", "tab\there",
    "emoji😀", "x" * 300, "y" * 249 + "@", "percent%/hash#/q?", "mean_4",
]


@pytest.mark.parametrize("name", NAMES)
def test_every_name_is_one_mlflows_own_validator_accepts(name):
    sent = mlflow_name(name)
    _validate_metric_name(sent)
    _validate_param_name(sent)
    assert len(sent) <= 250
    assert mlflow_name(name) == sent  # the same tag, the same name, every time


def test_names_mlflow_accepts_are_sent_unchanged_and_renamed_ones_never_collide():
    for name in NAMES:
        try:
            _validate_metric_name(name)
            accepted = len(name) <= 250 and ":" not in name
        except MlflowException:
            accepted = False
        assert (mlflow_name(name) == name) == accepted, name
    assert len({mlflow_name(n) for n in NAMES}) == len(NAMES)
    # Trinity's statistic over k samples, named as Trinity's and verl's own MLflow loggers name
    # it, so a run switched to tally lands beside the runs they logged.
    assert mlflow_name("eval/math/accuracy/mean@4") == "eval/math/accuracy/mean_at_4"
    assert mlflow_name("pass@k") == "pass_at_k"
    assert mlflow_name("a@b c:d").startswith("a_b c_d-")  # another refused character: the hashed rule


# -- a Logger's run -------------------------------------------------------------------------------

def steps(log: tally.Logger, first: int, last: int) -> None:
    for i in range(first, last + 1):
        log.step(i, env_steps=64 * i, metrics={"Loss/critic": 1.0 / i, "Loss/actor": -0.5 * i},
                 rewards={"alive": 0.5 * i})


def test_a_logger_run_reaches_mlflow_whole_with_params_and_status(tmp_path, mlflow_server):
    settings = {"tracking_uri": mlflow_server.uri, "experiment": "replicas", "run_name": "whole"}
    log = tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off", max_iterations=700,
                       config={"lr": 3e-4, "net": {"layers": [64, 64], "act": "tanh"}}, mlflow=settings,
                       remote_finish_timeout=60)
    steps(log, 1, 700)
    log.close()
    run_dir = log.run_dir
    client = MlflowClient(mlflow_server.uri)
    run = get_run(client, run_id_of(run_dir))
    assert run.info.status == "FINISHED" and run.info.run_name == "whole"
    assert experiment_name(client, run.info.experiment_id) == "replicas"
    assert_same(mlflow_series(client, run.info.run_id), event_series(run_dir))
    # The configuration under the user's own keys, tally's facts under tally.
    flat = {mlflow_name(k[len("config."):] if k.startswith("config.") else "tally." + k): (v if isinstance(v, str) else json.dumps(v))
            for k, v in json.loads(tally._tally.flat_config(run_dir))}
    assert run.data.params == flat
    assert run.data.params["lr"] == "0.0003" and run.data.params["net.layers"] == "[64, 64]"
    assert run.data.params["tally.run.algo"] == "sac"
    summary = json.loads((run_dir / "run_summary.json").read_text())
    assert summary["remote_sinks"] == [{"name": "mlflow", "sent_through_step": 64 * 700, "pending": 0}]
    cursor = json.loads((run_dir / ".tally" / "mlflow.cursor.json").read_text())
    assert cursor["rows"] == 700 and cursor["remote_run"] == f"{mlflow_server.uri}#{run.info.run_id}"


@pytest.mark.parametrize("status, expected", [("failed", "FAILED"), ("interrupted", "KILLED")])
def test_the_mlflow_status_follows_the_run_summary(tmp_path, mlflow_server, status, expected):
    log = tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off",
                       mlflow={"tracking_uri": mlflow_server.uri}, remote_finish_timeout=60)
    steps(log, 1, 20)
    log.close(status)
    assert json.loads((log.run_dir / "run_summary.json").read_text())["status"] == status
    run = get_run(MlflowClient(mlflow_server.uri), run_id_of(log.run_dir))
    assert run.info.status == expected


def test_a_resumed_run_continues_its_mlflow_run_from_the_cursor(tmp_path, mlflow_server):
    kw = dict(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off",
              mlflow={"tracking_uri": mlflow_server.uri}, remote_finish_timeout=60)
    log = tally.Logger(**kw)
    steps(log, 1, 50)
    log.close()
    first = run_id_of(log.run_dir)
    log = tally.Logger(resume=True, **kw)
    steps(log, 51, 90)
    log.close()
    assert run_id_of(log.run_dir) == first
    client = MlflowClient(mlflow_server.uri)
    assert get_run(client, first).info.status == "FINISHED"
    assert_same(mlflow_series(client, first), event_series(log.run_dir))


# -- bad input ------------------------------------------------------------------------------------

def test_an_unknown_setting_is_refused_by_name_before_any_run_is_made(tmp_path):
    with pytest.raises(tally.ConfigError, match=r"mlflow\['trackinguri'\]: unknown MLflow setting"):
        tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off", mlflow={"trackinguri": "x"})
    assert not (tmp_path / "run").exists()
    with pytest.raises(tally.ConfigError, match=r"mlflow\['experimnt'\]"):
        tally.SummaryWriter(tmp_path / "w", mlflow={"experimnt": "x"})
    assert not (tmp_path / "w").exists()


def test_no_tracking_server_is_refused_naming_the_setting_and_the_variable(tmp_path):
    with pytest.raises(tally.ConfigError, match="MLFLOW_TRACKING_URI"):
        tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off", mlflow={})


def test_an_unreachable_server_at_start_is_named_and_what_was_logged_is_kept(tmp_path, mlflow_server):
    log = tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off")
    steps(log, 1, 30)
    log.close()
    before = tally.read(log.run_dir).to_pydict()
    dead = f"http://127.0.0.1:{free_port()}"
    t0 = time.monotonic()
    with pytest.raises(tally.SinkError) as e:
        tally.Logger(algo="sac", task="go2", log_dir=log.run_dir, panel="off", resume=True, mlflow={"tracking_uri": dead})
    assert time.monotonic() - t0 < 30
    assert "mlflow" in str(e.value) and dead in str(e.value), str(e.value)
    assert tally.read(log.run_dir).to_pydict() == before
    # The run goes on once the server is given right, and MLflow gets all of it.
    log = tally.Logger(algo="sac", task="go2", log_dir=log.run_dir, panel="off", resume=True,
                       mlflow={"tracking_uri": mlflow_server.uri}, remote_finish_timeout=60)
    steps(log, 31, 40)
    log.close()
    assert_same(mlflow_series(MlflowClient(mlflow_server.uri), run_id_of(log.run_dir)), event_series(log.run_dir))


# -- faults ---------------------------------------------------------------------------------------

def test_a_server_stopped_mid_run_and_restarted_loses_and_duplicates_nothing(tmp_path, mlflow_server, impatient):
    log = tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off",
                       mlflow={"tracking_uri": mlflow_server.uri}, remote_finish_timeout=120)
    steps(log, 1, 300)
    cursor = log.run_dir / ".tally" / "mlflow.cursor.json"
    deadline = time.monotonic() + 60
    while not cursor.exists() or json.loads(cursor.read_text())["rows"] < 100:
        assert time.monotonic() < deadline, "nothing reached MLflow"
        time.sleep(0.1)
    mlflow_server.stop()
    try:
        steps(log, 301, 1500)  # the loop goes on while the server is down
        time.sleep(2)
        sent = json.loads(cursor.read_text())["rows"]
        assert sent < 1500
    finally:
        mlflow_server.start()
    log.close()  # the follower resumes from its cursor within the deadline
    summary = json.loads((log.run_dir / "run_summary.json").read_text())
    assert summary["remote_sinks"] == [{"name": "mlflow", "sent_through_step": 64 * 1500, "pending": 0}]
    assert_same(mlflow_series(MlflowClient(mlflow_server.uri), run_id_of(log.run_dir)), event_series(log.run_dir))


def test_a_hung_server_never_slows_the_loop_and_close_keeps_its_deadline(tmp_path, proxy, mlflow_server, capfd, impatient):
    n = 20_000
    base = tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "base", panel="off", max_iterations=n)
    hung = tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "hung", panel="off", max_iterations=n,
                        mlflow={"tracking_uri": proxy.uri}, remote_finish_timeout=1.0)
    proxy.hung.set()
    t_base: List[float] = []
    t_hung: List[float] = []
    # Alternating steps of both runs: a busy machine slows both alike.
    for i in range(1, n + 1):
        for log, times in ((base, t_base), (hung, t_hung)):
            t0 = time.perf_counter()
            log.step(i, env_steps=64 * i, metrics={"Loss/critic": 1.0 / i}, rewards={"alive": 0.5})
            times.append(time.perf_counter() - t0)
    ratio = statistics.median(t_hung) / statistics.median(t_base)
    with capfd.disabled():
        print(f"per-step median with a hung MLflow server: {ratio:.3f}x the run without it "
              f"({statistics.median(t_hung) * 1e6:.1f} vs {statistics.median(t_base) * 1e6:.1f} us, {n} steps)")
    assert ratio < 1.1, f"per-step median {ratio:.3f}x the run without MLflow"
    base.close()
    t0 = time.monotonic()
    hung.close()
    # Sending and set_terminated each wait at most the timeout; loose for a busy machine.
    assert time.monotonic() - t0 < 15
    assert f"tally sync {hung.run_dir} --to mlflow" in capfd.readouterr().err
    summary = json.loads((hung.run_dir / "run_summary.json").read_text())
    assert summary["remote_sinks"][0]["name"] == "mlflow" and summary["remote_sinks"][0]["pending"] > 0
    # Answering again: `tally sync` sends the rest exactly once.
    proxy.hung.clear()
    proc = run_tally("sync", str(hung.run_dir), "--to", "mlflow", "--tracking-uri", proxy.uri)
    assert proc.returncode == 0, proc.stderr
    client = MlflowClient(mlflow_server.uri)
    run_id = run_id_of(hung.run_dir)
    assert_same(mlflow_series(client, run_id), event_series(hung.run_dir))
    assert get_run(client, run_id).info.status == "FINISHED"


# -- tally sync -----------------------------------------------------------------------------------

def test_tally_sync_sends_a_tensorboardx_logdir_once_however_often_it_runs(tmp_path, mlflow_server):
    from tensorboardX import SummaryWriter

    logdir = tmp_path / "tbx"
    with SummaryWriter(str(logdir)) as w:
        for step in range(0, 400):
            w.add_scalar("train/loss", 1.0 / (step + 1), step)
            # tensorboardX writes `mean@4` as `mean_4` itself; `eval//rare` it keeps, and MLflow
            # refuses (not a normalised path).
            w.add_scalar("eval/math/accuracy/mean@4", step / 400, step)
            if step % 7 == 0:
                w.add_scalar("eval//rare", float("inf") if step == 0 else -step, step)
    env = {"MLFLOW_TRACKING_URI": mlflow_server.uri, "MLFLOW_EXPERIMENT_NAME": "sync"}
    dry = run_tally("sync", str(logdir), "--to", "mlflow", "--dry-run", env=env)
    assert dry.returncode == 0 and "would send 400 rows to mlflow" in dry.stdout, dry.stdout + dry.stderr
    assert not (logdir / ".tally").exists() and not (logdir / "mlflow_run_id").exists()
    first = run_tally("sync", str(logdir), "--to", "mlflow", env=env)
    assert first.returncode == 0, first.stderr
    assert "sent 400 rows to mlflow (through step 399)" in first.stdout, first.stdout
    assert f"'eval//rare' is sent as '{mlflow_name('eval//rare')}'" in first.stderr  # said, not dropped
    again = run_tally("sync", str(logdir), "--to", "mlflow", env=env)
    assert again.returncode == 0 and "nothing to send to mlflow" in again.stdout, again.stdout + again.stderr
    client = MlflowClient(mlflow_server.uri)
    run = get_run(client, run_id_of(logdir))
    assert experiment_name(client, run.info.experiment_id) == "sync"
    assert run.info.status == "FINISHED"
    got, want = mlflow_series(client, run.info.run_id), event_series(logdir)
    assert_same(got, want)
    assert len(got["eval/math/accuracy/mean_4"]) == 400 and len(got[mlflow_name("eval//rare")]) == 58


def test_tally_sync_refuses_a_flag_of_another_tracker_and_a_missing_server(tmp_path):
    logdir = tmp_path / "run"
    log = tally.Logger(algo="sac", task="go2", log_dir=logdir, panel="off")
    steps(log, 1, 3)
    log.close()
    proc = run_tally("sync", str(logdir), "--to", "mlflow", "--entity", "me")
    assert proc.returncode == 2 and "--entity is not a setting of --to mlflow" in proc.stderr, proc.stderr
    proc = run_tally("sync", str(logdir), "--to", "mlflow")
    assert proc.returncode != 0 and "MLFLOW_TRACKING_URI" in proc.stderr, proc.stderr
    assert not (logdir / ".tally" / "mlflow.cursor.json").exists()


def test_summary_writer_mirrors_to_mlflow_with_at_signs_renamed(tmp_path, mlflow_server):
    w = tally.SummaryWriter(tmp_path / "sw", mlflow={"tracking_uri": mlflow_server.uri, "run_name": "sw"},
                            remote_finish_timeout=60)
    for step in range(200):
        w.add_scalar("eval/accuracy/mean@4", step / 200, step)
        w.add_scalar("train/loss", 1 / (step + 1), step)
    w.close()
    client = MlflowClient(mlflow_server.uri)
    run = get_run(client, run_id_of(tmp_path / "sw"))
    assert run.info.run_name == "sw" and run.info.status == "FINISHED"
    # tally's writer keeps Trinity's name; MLflow holds it under the one rule's name.
    assert mlflow_name("eval/accuracy/mean@4") in run.data.metrics
    assert_same(mlflow_series(client, run.info.run_id), event_series(tmp_path / "sw"))


def test_the_sink_given_in_sinks_is_the_same_replica_and_not_twice(tmp_path, mlflow_server):
    settings = {"tracking_uri": mlflow_server.uri, "run_name": "given"}
    log = tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off",
                       sinks=[tally.MlflowSink(settings)], remote_finish_timeout=60)
    steps(log, 1, 40)
    log.close()
    client = MlflowClient(mlflow_server.uri)
    assert get_run(client, run_id_of(log.run_dir)).info.run_name == "given"
    assert_same(mlflow_series(client, run_id_of(log.run_dir)), event_series(log.run_dir))
    with pytest.raises(tally.ConfigError, match=r"mlflow=\{\.\.\.\} and a sink named 'mlflow' in sinks="):
        tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "two", panel="off",
                     sinks=[tally.MlflowSink(settings)], mlflow=settings)
    assert not (tmp_path / "two").exists()


# -- add_scalars' sub-runs (docs/contract/remote-sinks.md "Sub-runs") ------------------------------

def sub_run_series(run_dir: Path) -> Series:
    """Every scalar of the run and its sub-runs, a sub-run's tag keyed `<sub-run>/<tag>`, by the
    name MLflow holds it under."""
    t = tally.read_runs(run_dir).to_pydict()
    out: Series = defaultdict(list)
    for run, tag, step, value in zip(t["run"], t["tag"], t["step"], t["value"]):
        out[mlflow_name(tag if run == "." else f"{run}/{tag}")].append((step, stored(value)))
    return dict(out)


def add_scalars_steps(w: tally.SummaryWriter, first: int, last: int) -> None:
    for s in range(first, last + 1):
        w.add_scalar("lr", s / 1000, s)
        w.add_scalars("loss", {"train": 1 / s, "val": 2 / s}, s)
        w.add_scalars("eval/acc", {"mean@4": s / last}, s)


def test_add_scalars_reach_mlflow_as_sub_run_slash_tag_through_a_server_restart(tmp_path, mlflow_server, impatient):
    w = tally.SummaryWriter(tmp_path / "sw", mlflow={"tracking_uri": mlflow_server.uri}, remote_finish_timeout=120)
    add_scalars_steps(w, 1, 200)
    w.flush()
    cursor = tmp_path / "sw" / ".tally" / "mlflow.cursor.json"
    deadline = time.monotonic() + 60
    while not cursor.exists() or json.loads(cursor.read_text())["rows"] < 100:
        assert time.monotonic() < deadline, "nothing reached MLflow"
        time.sleep(0.1)
    mlflow_server.stop()
    try:
        add_scalars_steps(w, 201, 600)  # written while the server is down
        w.flush()
        time.sleep(2)
    finally:
        mlflow_server.start()
    w.close()  # the follower resumes from its cursor, every sub-run from its own place
    client = MlflowClient(mlflow_server.uri)
    got, want = mlflow_series(client, run_id_of(tmp_path / "sw")), sub_run_series(tmp_path / "sw")
    assert_same(got, want)
    assert {"lr", "loss_train/loss", "loss_val/loss", mlflow_name("eval_acc_mean@4/eval/acc")} == set(got)
    assert len(got["loss_val/loss"]) == 600


def test_tally_sync_sends_a_writers_sub_runs_to_mlflow_once(tmp_path, mlflow_server):
    w = tally.SummaryWriter(tmp_path / "sw")
    add_scalars_steps(w, 1, 150)
    w.close()
    env = {"MLFLOW_TRACKING_URI": mlflow_server.uri}
    first = run_tally("sync", str(tmp_path / "sw"), "--to", "mlflow", env=env)
    assert first.returncode == 0 and "sent 600 rows to mlflow" in first.stdout, first.stdout + first.stderr
    again = run_tally("sync", str(tmp_path / "sw"), "--to", "mlflow", env=env)
    assert again.returncode == 0 and "nothing to send to mlflow" in again.stdout, again.stdout + again.stderr
    client = MlflowClient(mlflow_server.uri)
    assert_same(mlflow_series(client, run_id_of(tmp_path / "sw")), sub_run_series(tmp_path / "sw"))


# -- logger="mlflow" (docs/contract/remote-sinks.md "MLflow and trackio from the command line") --

def test_logger_mlflow_adds_the_replica_with_its_defaults(tmp_path, mlflow_server, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_server.uri)
    log = tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off", logger="mlflow",
                       remote_finish_timeout=60)
    steps(log, 1, 50)
    log.close()
    conf = json.loads((log.run_dir / "run_config.json").read_text())
    assert conf["run"]["logger"]["backend"] == "mlflow"
    client = MlflowClient(mlflow_server.uri)
    run = get_run(client, run_id_of(log.run_dir))
    assert experiment_name(client, run.info.experiment_id) == "tally"
    assert_same(mlflow_series(client, run.info.run_id), event_series(log.run_dir))


def test_the_demo_with_training_logger_mlflow_sends_its_run_with_the_overrides(tmp_path, mlflow_server):
    proc = run_tally("demo", "--algo", "ppo", "--task", "anymal", "--iterations", "6", "--num-envs", "8", "--panel", "off",
                     f"training.log_root={tmp_path}", "training.logger=mlflow",
                     f"training.mlflow_tracking_uri={mlflow_server.uri}", "training.mlflow_experiment=demo-exp",
                     "training.mlflow_run_name=demo-run")
    assert proc.returncode == 0, proc.stderr
    # The demo's last line names its run (a tracker may print its own lines around it).
    (run_dir,) = [Path(line.split("run: ", 1)[1]) for line in proc.stdout.splitlines() if line.startswith("run: ")]
    client = MlflowClient(mlflow_server.uri)
    run = get_run(client, run_id_of(run_dir))
    assert (run.info.run_name, experiment_name(client, run.info.experiment_id)) == ("demo-run", "demo-exp")
    assert run.info.status == "FINISHED"
    assert_same(mlflow_series(client, run.info.run_id), event_series(run_dir))
    # An MLflow setting without its logger names both, before any run directory is made.
    proc = run_tally("demo", "--iterations", "2", f"training.log_root={tmp_path / 'none'}", "training.mlflow_experiment=x")
    assert proc.returncode != 0 and "add training.logger=mlflow" in proc.stderr, proc.stderr
    assert not (tmp_path / "none").exists()


# -- the settings in run_config.json (docs/contract/run-artifacts.md "Replica settings") ----------

def test_the_mlflow_settings_are_recorded_with_a_password_in_the_uri_redacted(tmp_path, mlflow_server):
    # A tracking URI with credentials (MLflow's client sends them as basic auth; this server
    # takes any): the replica reaches the server, and no file of the run holds the password.
    uri = mlflow_server.uri.replace("http://", "http://alice:s3cret-pw@")
    log = tally.Logger(algo="sac", task="go2", log_dir=tmp_path / "run", panel="off",
                       mlflow={"tracking_uri": uri, "experiment": "recorded"}, remote_finish_timeout=60)
    steps(log, 1, 20)
    log.close()
    conf = json.loads((log.run_dir / "run_config.json").read_text())
    assert conf["run"]["mlflow"] == {"tracking_uri": mlflow_server.uri.replace("http://", "http://alice:<redacted>@"),
                                     "experiment": "recorded", "run_name": None}
    assert "trackio" not in conf["run"]
    for f in log.run_dir.rglob("*"):
        if f.is_file():
            assert b"s3cret-pw" not in f.read_bytes(), f
    client = MlflowClient(mlflow_server.uri)
    assert_same(mlflow_series(client, run_id_of(log.run_dir)), event_series(log.run_dir))


EXIT_SCRIPT = """
import sys, tally
log = tally.Logger(algo="grpo", task="t", log_dir=sys.argv[1], panel="off", remote_finish_timeout=0.2,
                   mlflow={"tracking_uri": sys.argv[2], "experiment": "exit"})
for i in range(1, 2001):
    log.step(i, metrics={f"actor/m{j}": float(i + j) for j in range(30)})
if sys.argv[3] == "close":
    log.close()
sys.exit(int(sys.argv[4]))
"""


@pytest.mark.parametrize("how", ["close", "atexit"])
def test_a_replica_left_behind_at_close_never_changes_the_exit_status(tmp_path, mlflow_server, how):
    # docs/contract/remote-sinks.md "At exit": the process ends with the script's own status
    # whatever the replica's thread is doing, and the rows left are said, for tally sync.
    import subprocess

    script = tmp_path / "exit.py"
    script.write_text(EXIT_SCRIPT)
    for i in range(10):
        status = i % 3  # 0, and a script's own non-zero statuses
        run = tmp_path / f"run{i}"
        r = subprocess.run([sys.executable, str(script), str(run), mlflow_server.uri, how, str(status)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == status, (i, r.returncode, r.stderr[-3000:])
        assert "Fatal Python error" not in r.stderr and "FATAL" not in r.stderr, r.stderr[-3000:]
        summary = json.loads((run / "run_summary.json").read_text())
        (sink,) = summary["remote_sinks"]
        if sink["pending"]:
            assert f"tally sync {run} --to mlflow" in r.stderr, r.stderr[-3000:]


def test_a_run_carries_what_mlflows_own_start_run_gives_and_trinitys_names(tmp_path, mlflow_server, monkeypatch):
    # docs/contract/remote-sinks.md "MLflow": the user and source tags MLflow's own start_run
    # sets, and Trinity's mean@4 under the name Trinity's MlflowMonitor gives it.
    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_server.uri)
    mlflow.set_experiment("native")
    with patient(), mlflow.start_run(run_name="native") as native_run:
        mlflow.log_params({"lr": 0.01})
        mlflow.log_metrics({"eval/math/accuracy/mean@4".replace("@", "_at_"): 0.5}, step=1)  # as Trinity's MlflowMonitor
    log = tally.Logger(algo="grpo", task="math", log_dir=tmp_path / "run", panel="off", config={"lr": 0.01},
                       mlflow={"experiment": "native"}, remote_finish_timeout=60)
    log.step(1, metrics={"eval/math/accuracy/mean@4": 0.5})
    log.close()
    client = MlflowClient(mlflow_server.uri)
    native, ours = get_run(client, native_run.info.run_id), get_run(client, run_id_of(log.run_dir))
    for tag in ("mlflow.user", "mlflow.source.type", "mlflow.source.name"):
        assert ours.data.tags[tag] == native.data.tags[tag], tag
    assert ours.data.params["lr"] == native.data.params["lr"]
    assert set(native.data.metrics) <= set(ours.data.metrics)
    assert ours.data.metrics["eval/math/accuracy/mean_at_4"] == 0.5


def test_two_tags_given_one_mlflow_name_stay_apart(tmp_path, mlflow_server):
    w = tally.SummaryWriter(tmp_path / "run", mlflow={"tracking_uri": mlflow_server.uri, "experiment": "clash"})
    w.add_scalar("acc/mean@4", 1.0, 1)
    w.add_scalar("acc/mean_at_4", 2.0, 1)
    w.close()
    run = get_run(MlflowClient(mlflow_server.uri), run_id_of(tmp_path / "run"))
    assert run.data.metrics["acc/mean_at_4"] in (1.0, 2.0)
    (other,) = [k for k in run.data.metrics if k.startswith("acc/mean_at_4-")]
    assert {run.data.metrics["acc/mean_at_4"], run.data.metrics[other]} == {1.0, 2.0}
