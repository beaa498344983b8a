"""Shared fixtures of the replica tests (the real MLflow and trackio; `make test-replicas`, in
their own virtualenv): a real `mlflow server` on a SQLite store, started and stopped here, a
proxy in front of it that can stop answering, and trackio's local store in a temporary
directory (docs/contract/remote-sinks.md "MLflow", "trackio")."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
# trackio reads its store's directory when it is imported: set before any test imports it.
_TRACKIO_DIR = tempfile.mkdtemp(prefix="tally-trackio-")
os.environ["TRACKIO_DIR"] = _TRACKIO_DIR
# MLflow's own client settings, patient: a busy machine's slow answer is not what these tests
# are about. The fault tests make them short (`impatient`).
PATIENT = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "5", "MLFLOW_HTTP_REQUEST_TIMEOUT": "300"}
os.environ.update(PATIENT)
os.environ.pop("MLFLOW_TRACKING_URI", None)


@pytest.fixture
def impatient(monkeypatch: pytest.MonkeyPatch) -> None:
    """One attempt per MLflow call and a short timeout, so a stopped or hung server reaches
    tally's follower (which retries from its cursor) in seconds, not after MLflow's retries."""
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "5")


@contextlib.contextmanager
def patient() -> Iterator[None]:
    """The patient settings for the tests' own reads, within a fault test too."""
    saved = {k: os.environ[k] for k in PATIENT}
    os.environ.update(PATIENT)
    try:
        yield
    finally:
        os.environ.update(saved)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MlflowServer:
    """`mlflow server` on a SQLite store; `stop()` and `start()` again keep store and port."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.proc: Optional[subprocess.Popen[bytes]] = None
        self.log = root / "server.log"

    def start(self, timeout: float = 180.0) -> None:
        mlflow = Path(sys.executable).with_name("mlflow")
        cmd = [str(mlflow), "server", "--backend-store-uri", f"sqlite:///{self.root / 'mlflow.db'}",
               "--default-artifact-root", str(self.root / "artifacts"), "--host", "127.0.0.1",
               "--port", str(self.port), "--workers", "1"]
        out = open(self.log, "ab")
        # Its own process group, so stop() ends the server and its workers together.
        self.proc = subprocess.Popen(cmd, stdout=out, stderr=out, start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(self.uri + "/health", timeout=2):
                    return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"mlflow server did not start: {self.log.read_text()[-3000:]}")
                time.sleep(0.3)

    def stop(self) -> None:
        if self.proc is None:
            return
        os.killpg(self.proc.pid, 15)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait(30)
        self.proc = None


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory):
    server = MlflowServer(tmp_path_factory.mktemp("mlflow"))
    server.start()
    yield server
    server.stop()


class Proxy:
    """A TCP proxy to a server that can be switched to accept connections and never answer (a
    hung server, as a client sees it)."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream = upstream_port
        self.hung = threading.Event()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.uri = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.held: List[socket.socket] = []
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.hung.is_set():
                self.held.append(conn)  # read nothing, answer nothing
                continue
            threading.Thread(target=self._pipe_both, args=(conn,), daemon=True).start()

    def _pipe_both(self, conn: socket.socket) -> None:
        try:
            up = socket.create_connection(("127.0.0.1", self.upstream))
        except OSError:
            conn.close()
            return
        for a, b in ((conn, up), (up, conn)):
            threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, a: socket.socket, b: socket.socket) -> None:
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                if self.hung.is_set():
                    self.held.append(a)  # swallowed: the request is never answered
                    return
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.closed = True
        self.sock.close()
        for c in self.held:
            c.close()


@pytest.fixture
def proxy(mlflow_server: MlflowServer):
    p = Proxy(mlflow_server.port)
    yield p
    p.close()


@pytest.fixture(scope="session")
def trackio_dir() -> Path:
    yield Path(_TRACKIO_DIR)
    shutil.rmtree(_TRACKIO_DIR, ignore_errors=True)


def run_tally(*args: str, env: Optional[Dict[str, str]] = None, timeout: float = 600) -> "subprocess.CompletedProcess[str]":
    """``python -m tally ARGS`` in this virtualenv."""
    return subprocess.run([sys.executable, "-m", "tally", *args], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **PATIENT, **(env or {})))
