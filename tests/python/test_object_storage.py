"""Runs in object storage (docs/contract/object-storage.md) against a real S3 API server: moto's,
started here on 127.0.0.1 (no network beyond loopback), real event files put with boto3, read
back through ``tally.read``, ``read_runs``, ``runs`` and ``python -m tally`` and compared with
the same logdir read from local disk. Skipped, saying so, where moto is not installed."""

import json
import os
import re
import subprocess
import sys
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


def test_a_url_is_never_a_local_directory_for_the_writers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(tally.ConfigError, match=r"s3://bkt/run.*is a URL"):
        tally.SummaryWriter("s3://bkt/run")
    with pytest.raises(tally.ConfigError, match=r"s3://bkt/run.*URL"):
        tally.Logger(log_dir="s3://bkt/run", algo="ppo", task="t", panel="off")
    assert not (tmp_path / "s3:").exists()
    assert list(tmp_path.iterdir()) == []
