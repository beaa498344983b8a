"""Runs in object storage (docs/contract/object-storage.md) against a real S3 API server: moto's,
started here on 127.0.0.1 (no network beyond loopback), real event files put with boto3, read
back through ``tally.read``, ``read_runs``, ``runs`` and ``python -m tally`` and compared with
the same logdir read from local disk. Skipped, saying so, where moto is not installed."""

import json
import os
import re
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

moto_server = pytest.importorskip("moto.moto_server.threaded_moto_server", reason="moto[server] is not installed")
boto3 = pytest.importorskip("boto3", reason="boto3 is not installed")
pa = pytest.importorskip("pyarrow")

import tally  # noqa: E402


@pytest.fixture(scope="module")
def endpoint():
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3(endpoint, tmp_path, monkeypatch):
    """A client of the server, with the environment tally's readers take their store from; the
    mirror's cache in the test's own directory."""
    env = {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "TALLY_CACHE_DIR": str(tmp_path / "cache"),
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id="testing", aws_secret_access_key="testing")


def upload(s3, root: Path, bucket: str, prefix: str) -> None:
    try:
        s3.create_bucket(Bucket=bucket)
    except s3.exceptions.BucketAlreadyOwnedByYou:
        pass
    for path in sorted(root.rglob("*")):
        if path.is_file():
            s3.upload_file(str(path), bucket, f"{prefix}/{path.relative_to(root).as_posix()}")


def write_sweep(root: Path) -> None:
    """Three runs by tally's SummaryWriter (one with a run_config.json) and, where installed,
    one by tensorboardX; a checkpoint no reader reads."""
    for lr, seed in [("0.1", 1), ("0.1", 2), ("0.01", 1)]:
        with tally.SummaryWriter(str(root / f"lr={lr}" / f"seed={seed}")) as w:
            for step in range(40):
                w.add_scalar("reward", step * float(lr) + seed, step)
                w.add_scalar("loss", 1.0 / (step + 1), step)
    (root / "lr=0.1" / "seed=1" / "run_config.json").write_text(json.dumps({"training": {"lr": 0.1, "algo": "ppo"}}))
    (root / "lr=0.1" / "seed=1" / "model.ckpt").write_bytes(b"\0" * 100_000)
    try:
        from tensorboardX import SummaryWriter
    except ImportError:
        return
    w = SummaryWriter(str(root / "tbx"))
    for step in range(25):
        w.add_scalar("reward", step * 2.0, step)
    w.close()


def test_read_read_runs_and_runs_of_a_bucket_agree_exactly_with_the_same_logdir_on_disk(s3, tmp_path):
    local = tmp_path / "logs"
    write_sweep(local)
    upload(s3, local, "bkt", "team/sweep")
    url = "s3://bkt/team/sweep"

    assert tally.read(url).to_pylist() == tally.read(local).to_pylist()
    assert tally.read(url + "/", tags="reward").to_pylist() == tally.read(local, tags="reward").to_pylist()
    assert tally.read_runs(url, config=True).to_pylist() == tally.read_runs(local, config=True).to_pylist()
    remote_runs, local_runs = tally.runs(url, tags="reward"), tally.runs(local, tags="reward")
    # `dir` is where each run was read: the mirror's copy, or the local directory.
    assert remote_runs.drop_columns(["dir"]).to_pylist() == local_runs.drop_columns(["dir"]).to_pylist()
    assert remote_runs.num_rows == (4 if (local / "tbx").exists() else 3)
    one = f"{url}/lr=0.01/seed=1"
    assert tally.read(one).to_pylist() == tally.read(local / "lr=0.01" / "seed=1").to_pylist()
    # A checkpoint is never fetched.
    assert not list((tmp_path / "cache").rglob("model.ckpt"))


def test_the_command_line_reads_a_bucket_as_it_reads_the_logdir(s3, tmp_path):
    local = tmp_path / "logs"
    write_sweep(local)
    upload(s3, local, "bkt", "cli")

    def cli(*args):
        p = subprocess.run([sys.executable, "-m", "tally", *args], capture_output=True, text=True, timeout=120,
                           env=os.environ.copy())
        assert p.returncode == 0, p.stderr
        return p.stdout

    remote = json.loads(cli("runs", "s3://bkt/cli", "--json", "--tags", "reward"))
    here = json.loads(cli("runs", str(local), "--json", "--tags", "reward"))
    assert [{k: v for k, v in r.items() if k != "dir"} for r in remote] == [
        {k: v for k, v in r.items() if k != "dir"} for r in here
    ]
    # export names each run by its directory: for a URL, the copy's (docs/contract/object-storage.md).
    copy = Path(os.environ["TALLY_CACHE_DIR"]) / "tree" / "s3" / "bkt" / "cli"
    assert cli("export", "s3://bkt/cli").replace(str(copy), str(local)) == cli("export", str(local))
    query = "SELECT run, count(*) AS n, max(value) AS top FROM scalars GROUP BY run ORDER BY run"
    assert cli("sql", "s3://bkt/cli", query, "--json") == cli("sql", str(local), query, "--json")
    assert cli("compare", "s3://bkt/cli", "--by", "path.lr", "--metric", "reward") == cli(
        "compare", str(local), "--by", "path.lr", "--metric", "reward"
    )


def requests(caplog) -> list:
    """The requests moto's server answered since the last call, as its log says them."""
    said = [re.sub(r"\x1b\[[0-9;]*m", "", r.getMessage()) for r in caplog.records if r.name == "werkzeug"]
    caplog.clear()
    return [line.split('"')[1] + " " + line.split('"')[2].split()[0] for line in said if '"' in line]


def test_a_grown_run_is_picked_up_by_the_next_read_and_only_its_file_is_fetched_again(s3, tmp_path, caplog):
    caplog.set_level("INFO", logger="werkzeug")
    local = tmp_path / "live"
    writers = {}
    for run in ["a", "b"]:
        # One file appended to, flushed to disk by flush(), as a live writer's.
        writers[run] = tally.SummaryWriter(str(local / run))
        for step in range(10):
            writers[run].add_scalar("reward", float(step), step)
        writers[run].flush()
    upload(s3, local, "bkt", "live")
    url = "s3://bkt/live"
    requests(caplog)
    assert tally.read(url).num_rows == 20
    first = requests(caplog)
    assert len([r for r in first if r.startswith("GET /bkt?list-type=2")]) == 1
    assert len([r for r in first if r.startswith("GET /bkt/live/")]) == 2
    assert tally.read(url).num_rows == 20
    assert [r.split("&")[0] for r in requests(caplog)] == ["GET /bkt?list-type=2"], "none changed: one LIST"
    cache = tmp_path / "cache"
    copies = {p.relative_to(cache): p.stat() for p in cache.rglob("events.out.tfevents.*")}
    assert len(copies) == 2

    for step in range(10, 30):
        writers["a"].add_scalar("reward", float(step), step)
    writers["a"].flush()
    upload(s3, local / "a", "bkt", "live/a")
    requests(caplog)
    assert tally.read(url).to_pylist() == tally.read(local).to_pylist()
    grown = requests(caplog)
    assert [r.split("&")[0].split(" HTTP")[0] for r in grown] == [
        "GET /bkt?list-type=2",
        f"GET /bkt/live/a/{next((local / 'a').glob('events.out.tfevents.*')).name}",
    ], "one grown: one LIST and one GET (of its tail)"
    assert grown[1].endswith(" 206"), f"a ranged GET answered with part of the object: {grown[1]}"
    assert tally.read(url).num_rows == 40
    after = {p.relative_to(cache): p.stat() for p in cache.rglob("events.out.tfevents.*")}
    for rel, before in copies.items():
        now = after[rel]
        # Same file (a follower holding it open reads on); b's copy untouched, a's grown.
        assert now.st_ino == before.st_ino
        if "/live/b/" in f"/{rel.as_posix()}":
            assert (now.st_size, now.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
        else:
            assert now.st_size > before.st_size
    for w in writers.values():
        w.close()


def test_a_missing_bucket_a_bad_url_and_no_credentials_are_errors_naming_the_url(s3, monkeypatch):
    with pytest.raises(tally.StorageError, match=r"s3://no-such-bucket/x: listing: the store answered NoSuchBucket"):
        tally.read("s3://no-such-bucket/x")
    with pytest.raises(tally.StorageError, match=r"foo://bkt/x: not an object-store URL"):
        tally.read("foo://bkt/x")
    s3.create_bucket(Bucket="empty")
    with pytest.raises(tally.StorageError, match=r"s3://empty/runs: no events.out.tfevents"):
        tally.read("s3://empty/runs")
    # No credentials anywhere: the instance metadata service asked is a closed local port.
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("AWS_METADATA_ENDPOINT", "http://127.0.0.1:9")
    with pytest.raises(tally.StorageError, match=r"s3://empty/runs: listing: .*(credentials|metadata)"):
        tally.runs("s3://empty/runs")


def test_a_url_no_store_serves_is_refused_and_makes_no_local_directory_named_after_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(tally.ConfigError, match=r"foo://bkt/run: not an object-store URL"):
        tally.Logger(log_dir="foo://bkt/run", algo="ppo", task="t", panel="off")
    with pytest.raises(tally.ConfigError, match=r"foo://bkt/run: not an object-store URL"):
        tally.SummaryWriter("foo://bkt/run")
    assert not (tmp_path / "foo:").exists()
    assert list(tmp_path.iterdir()) == []


# -- Writing (docs/contract/object-storage.md "Writing") ----------------------------------------


def make_bucket(s3, name: str) -> None:
    try:
        s3.create_bucket(Bucket=name)
    except s3.exceptions.BucketAlreadyOwnedByYou:
        pass


def download(s3, bucket: str, prefix: str, to: Path) -> list:
    """Every object below ``prefix`` into ``to`` as the keys lay them out; the keys, in order."""
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/"):
        keys += [o["Key"] for o in page.get("Contents", [])]
    for key in keys:
        dest = to / key[len(prefix) + 1:]
        dest.parent.mkdir(parents=True, exist_ok=True)
        s3.download_file(bucket, key, str(dest))
    return sorted(keys)


def write_run(log_dir: str, steps: range, pause: float = 0.0) -> None:
    """A run by tally's SummaryWriter with fixed wall times (so two copies read the same): two
    scalars a step, an add_scalars series (a sub-run), text, a histogram, a configuration."""
    with tally.SummaryWriter(log_dir, system_metrics=False, config={"lr": 0.1}) as w:
        for step in steps:
            wall = 1_700_000_000.0 + step
            w.add_scalar("reward", step * 0.5, step, walltime=wall)
            w.add_scalar("loss", 1.0 / (step + 1), step, walltime=wall)
            if step % 10 == 0:
                w.add_scalars("q", {"min": -step, "max": step}, step, walltime=wall)
                w.add_text("note", f"step {step}", step, walltime=wall)
                w.add_histogram("acts", [0.1 * step, 1.0, 2.0], step, walltime=wall)
            time.sleep(pause)


def test_a_summary_writer_run_written_to_a_bucket_reads_back_as_the_same_run_written_locally(s3, tmp_path, monkeypatch):
    # Segments closed after 20 ms: the run goes up as many event files, read as one run.
    monkeypatch.setenv("TALLY_SEGMENT_SECONDS", "0.02")
    make_bucket(s3, "wbkt")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a step going back between segments would warn
        write_run("s3://wbkt/team/sweep/run", range(60), pause=0.003)
        write_run(str(tmp_path / "local" / "run"), range(60))
        assert tally.read("s3://wbkt/team/sweep").to_pylist() == tally.read(tmp_path / "local").to_pylist()
        assert tally.read_runs("s3://wbkt/team/sweep", config=True).to_pylist() == tally.read_runs(
            tmp_path / "local", config=True).to_pylist()
    keys = download(s3, "wbkt", "team/sweep/run", tmp_path / "copy")
    main = [k for k in keys if k.count("/") == 3 and "tfevents" in k]
    assert len(main) >= 3, f"the event file went up as segments: {main}"
    assert "team/sweep/run/run_config.json" in keys
    assert any(k.startswith("team/sweep/run/q_min/") for k in keys), "the add_scalars sub-run is in the bucket"
    # Nothing is left in staging once the writer closed.
    assert not list((tmp_path / "cache" / "staging").rglob("*tfevents*"))


def test_tensorboard_reads_the_segments_as_one_run_every_scalar_once_in_order(s3, tmp_path, monkeypatch):
    event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    monkeypatch.setenv("TALLY_SEGMENT_SECONDS", "0.02")
    make_bucket(s3, "tbkt")
    with tally.SummaryWriter("s3://tbkt/run", system_metrics=False) as w:
        for step in range(200):
            w.add_scalar("reward", float(step) * 2, step)
            time.sleep(0.001)
    keys = download(s3, "tbkt", "run", tmp_path / "run")
    assert len(keys) >= 3, keys
    acc = event_accumulator.EventAccumulator(str(tmp_path / "run"), size_guidance={"scalars": 0})
    acc.Reload()
    got = [(e.step, e.value) for e in acc.Scalars("reward")]
    assert got == [(step, float(step) * 2) for step in range(200)]


def test_flush_returns_with_every_value_in_the_bucket(s3, tmp_path, monkeypatch):
    monkeypatch.setenv("TALLY_SEGMENT_SECONDS", "3600")  # one open segment: flush must put it
    make_bucket(s3, "fbkt")
    w = tally.SummaryWriter("s3://fbkt/run", system_metrics=False)
    for step in range(25):
        w.add_scalar("reward", float(step), step)
    w.flush()
    download(s3, "fbkt", "run", tmp_path / "after-flush")
    assert tally.read(tmp_path / "after-flush").column("step").to_pylist() == list(range(25))
    w.add_scalar("reward", 25.0, 25)
    w.close()
    download(s3, "fbkt", "run", tmp_path / "after-close")
    assert tally.read(tmp_path / "after-close").column("step").to_pylist() == list(range(26))


class StoreOnAPort:
    """moto's server on one loopback port that the test starts and stops (a store going away and
    coming back), with the environment tally's writers take it from; segments roll every 50 ms."""

    def __init__(self, tmp_path, monkeypatch):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.server = None
        for k, v in {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": "testing",
                     "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                     "TALLY_CACHE_DIR": str(tmp_path / "cache"), "TALLY_SEGMENT_SECONDS": "0.05"}.items():
            monkeypatch.setenv(k, v)

    def start(self):
        self.server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self.server.start()
        return self

    def stop(self):
        self.server.stop()
        self.server._server.server_close()  # the port refuses connections, as a store gone away

    def client(self):
        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id="testing", aws_secret_access_key="testing")


def test_a_store_that_goes_away_stalls_no_step_is_said_once_and_loses_nothing(tmp_path, monkeypatch, capfd):
    store = StoreOnAPort(tmp_path, monkeypatch).start()
    s3 = store.client()
    make_bucket(s3, "obkt")
    w = tally.SummaryWriter("s3://obkt/run", system_metrics=False, on_storage_error="warn")
    slowest = 0.0

    def steps(span):
        nonlocal slowest
        for step in span:
            t = time.perf_counter()
            w.add_scalar("reward", float(step), step)
            w.add_scalar("loss", -float(step), step)
            slowest = max(slowest, time.perf_counter() - t)
            time.sleep(0.005)

    steps(range(0, 40))
    w.flush()
    store.stop()
    steps(range(40, 400))  # ~2 s without the store: segments wait in staging
    staged = [p for p in (tmp_path / "cache" / "staging").rglob("*tfevents*")]
    store.start()
    steps(range(400, 440))
    w.close()
    said = capfd.readouterr().err
    try:
        assert slowest < 0.25, f"an add_scalar took {slowest:.3f} s while the store was away"
        assert len(staged) >= 3, "the segments the store refused were kept in staging"
        outages = [line for line in said.splitlines() if "put again every" in line]
        assert len(outages) == 1 and "s3://obkt/run" in outages[0], said
        assert len([line for line in said.splitlines() if "takes writes again" in line]) == 1, said
        download(s3, "obkt", "run", tmp_path / "copy")
        table = tally.read(tmp_path / "copy")
        reward = [(s, v) for s, t, v in zip(table.column("step").to_pylist(), table.column("tag").to_pylist(),
                                            table.column("value").to_pylist()) if t == "reward"]
        assert reward == [(step, float(step)) for step in range(440)], "every step, once, in order"
        assert not list((tmp_path / "cache" / "staging").rglob("*tfevents*")), "staging emptied once all was put"
    finally:
        store.server.stop()


def test_with_raise_the_outage_is_raised_once_flush_raises_during_it_and_close_puts_the_rest(tmp_path, monkeypatch):
    store = StoreOnAPort(tmp_path, monkeypatch)  # nothing listens yet: every put is refused
    w = tally.SummaryWriter("s3://rbkt/run", system_metrics=False)  # on_storage_error="raise"
    raised = []
    deadline = time.monotonic() + 10
    step = 0
    while time.monotonic() < deadline and (not raised or step < 300):
        try:
            w.add_scalar("reward", float(step), step)
        except tally.SinkError as e:
            raised.append(str(e))
        step += 1
        time.sleep(0.005)
    assert len(raised) == 1 and "s3://rbkt/run" in raised[0] and "put again every" in raised[0], raised
    with pytest.raises(tally.SinkError, match=r"not in the bucket yet"):
        w.flush()
    store.start()
    try:
        s3 = store.client()
        make_bucket(s3, "rbkt")
        w.close()  # the store is back: every kept segment is put
        download(s3, "rbkt", "run", tmp_path / "copy")
        assert tally.read(tmp_path / "copy").column("step").to_pylist() == list(range(step))
    finally:
        store.server.stop()


def test_a_writer_never_closed_has_its_last_segment_in_the_bucket_when_the_script_exits(s3, tmp_path):
    make_bucket(s3, "xbkt")
    script = "import tally\nw = tally.SummaryWriter('s3://xbkt/run', system_metrics=False)\n" \
             "for s in range(30):\n    w.add_scalar('reward', float(s), s)\nw.me = w  # held by a cycle, as a trainer holds its writer\n"
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert p.returncode == 0, p.stderr
    download(s3, "xbkt", "run", tmp_path / "copy")
    assert tally.read(tmp_path / "copy").column("step").to_pylist() == list(range(30))


def test_a_run_ended_by_an_exception_has_its_failed_summary_in_the_bucket(s3, tmp_path):
    make_bucket(s3, "ebkt")
    with pytest.raises(RuntimeError):
        with tally.SummaryWriter("s3://ebkt/run", system_metrics=False) as w:
            w.add_scalar("reward", 1.0, 0)
            raise RuntimeError("diverged")
    summary = json.loads(s3.get_object(Bucket="ebkt", Key="run/run_summary.json")["Body"].read())
    assert summary["status"] == "failed" and "diverged" in summary["status_reason"]


def test_the_tensorboardx_flavour_writes_its_sub_runs_into_the_bucket(s3, tmp_path):
    from tally.tensorboardX import SummaryWriter as TbxWriter

    make_bucket(s3, "xtbx")
    with TbxWriter(logdir="s3://xtbx/run") as w:
        for step in range(5):
            w.add_scalars("q", {"min": -step, "max": step}, step)
    keys = download(s3, "xtbx", "run", tmp_path / "copy")
    assert {"/".join(k.split("/")[1:-1]) for k in keys if "tfevents" in k} == {"", "q/min", "q/max"}
    assert tally.read(tmp_path / "copy" / "q" / "max").column("value").to_pylist() == [0.0, 1.0, 2.0, 3.0, 4.0]


# -- The Logger (docs/contract/object-storage.md "Writing", "The Logger") ------------------------


def logger_run(log_dir: str, steps: range, pause: float = 0.0, **kw):
    """A Logger run: user metrics and rewards each step, the panel off, no system samples."""
    log = tally.Logger(log_dir=log_dir, algo="sac", task="t", panel="off", system_metrics=False,
                       config={"lr": 0.1}, **kw)
    for i in steps:
        log.step(i + 1, env_steps=(i + 1) * 64, metrics={"Loss/critic": 1.0 / (i + 1), "Loss/actor": -0.5 * i},
                 rewards={"tracking": 0.25 * i}, episode_return=float(i), iteration_time=0.01)
        time.sleep(pause)
    return log


def given(table) -> list:
    """(step, tag, value) of the tags the run was given, in order: wall times and what the
    logger derives from them (rates, timings) differ between two runs."""
    rows = zip(table.column("step").to_pylist(), table.column("tag").to_pylist(), table.column("value").to_pylist())
    return [r for r in rows if r[1].startswith(("Loss/", "reward/", "Train/"))]


def test_a_logger_run_written_to_a_bucket_reads_back_as_the_same_run_written_locally(s3, tmp_path, monkeypatch):
    monkeypatch.setenv("TALLY_SEGMENT_SECONDS", "0.02")
    make_bucket(s3, "lbkt")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a step going back between segments would warn
        logger_run("s3://lbkt/team/run", range(300), pause=0.002).close()
        logger_run(str(tmp_path / "local" / "run"), range(300)).close()
        remote = tally.read("s3://lbkt/team")
        local = tally.read(tmp_path / "local")
    assert len(given(local)) == 5 * 300
    assert given(remote) == given(local)
    assert sorted(set(remote.column("tag").to_pylist())) == sorted(set(local.column("tag").to_pylist()))
    keys = download(s3, "lbkt", "team/run", tmp_path / "copy")
    segments = [k for k in keys if "tfevents" in k]
    assert len(segments) >= 3, f"the event file went up as segments: {segments}"
    assert "team/run/run_config.json" in keys
    summary = json.loads((tmp_path / "copy" / "run_summary.json").read_text())
    assert summary["status"] == "completed" and summary["persisted_iterations"] == 300
    assert json.loads((tmp_path / "copy" / "run_config.json").read_text())["config"]["lr"] == 0.1
    assert not [k for k in keys if k.rsplit("/", 1)[-1].startswith(".")], "no lock or temporary file is put"
    assert not list((tmp_path / "cache" / "staging").rglob("*tfevents*")), "staging emptied once all was put"


def test_a_logger_flush_returns_with_every_step_and_the_summary_in_the_bucket(s3, tmp_path, monkeypatch):
    monkeypatch.setenv("TALLY_SEGMENT_SECONDS", "3600")  # one open segment: flush must put it
    make_bucket(s3, "lfbkt")
    log = logger_run("s3://lfbkt/run", range(25))
    log.flush()
    download(s3, "lfbkt", "run", tmp_path / "after-flush")
    assert sorted(set(tally.read(tmp_path / "after-flush").column("step").to_pylist())) == [
        (i + 1) * 64 for i in range(25)]
    assert json.loads((tmp_path / "after-flush" / "run_summary.json").read_text())["status"] == "running"
    log.step(26, env_steps=26 * 64, metrics={"Loss/critic": 0.0})
    log.close()
    download(s3, "lfbkt", "run", tmp_path / "after-close")
    assert (26 * 64) in tally.read(tmp_path / "after-close").column("step").to_pylist()
    assert json.loads((tmp_path / "after-close" / "run_summary.json").read_text())["status"] == "completed"


def test_a_logger_whose_store_goes_away_stalls_no_step_says_it_once_and_loses_nothing(tmp_path, monkeypatch, capfd):
    store = StoreOnAPort(tmp_path, monkeypatch).start()
    s3 = store.client()
    make_bucket(s3, "lobkt")
    log = tally.Logger(log_dir="s3://lobkt/run", algo="sac", task="t", panel="off", system_metrics=False,
                       on_storage_error="warn")
    slowest = 0.0

    def steps(span):
        nonlocal slowest
        for i in span:
            t = time.perf_counter()
            log.step(i + 1, metrics={"Loss/critic": float(i)})
            slowest = max(slowest, time.perf_counter() - t)
            time.sleep(0.005)

    steps(range(0, 40))
    log.flush()
    store.stop()
    steps(range(40, 400))  # ~2 s without the store: segments wait in staging
    staged = list((tmp_path / "cache" / "staging").rglob("*tfevents*"))
    log.flush()  # with warn: returns, the events kept in staging
    store.start()
    steps(range(400, 440))
    log.close()
    said = capfd.readouterr().err
    try:
        assert slowest < 0.25, f"a step took {slowest:.3f} s while the store was away"
        assert len(staged) >= 3, "the segments the store refused were kept in staging"
        outages = [line for line in said.splitlines() if "put again every" in line]
        assert len(outages) == 1 and "s3://lobkt/run" in outages[0], said
        download(s3, "lobkt", "run", tmp_path / "copy")
        table = tally.read(tmp_path / "copy")
        critic = [(s, v) for s, t, v in zip(table.column("step").to_pylist(), table.column("tag").to_pylist(),
                                            table.column("value").to_pylist()) if t == "Loss/critic"]
        assert critic == [(i + 1, float(i)) for i in range(440)], "every step, once, in order"
        summary = json.loads((tmp_path / "copy" / "run_summary.json").read_text())
        assert summary["status"] == "completed"
    finally:
        store.server.stop()
