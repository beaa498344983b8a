"""The health webhook from Python (docs/contract/health.md "Webhook"): `tally.Logger(...,
health_webhook=URL)` posts each new finding once to a local http.server, as JSON with Slack's
`text` and Discord's `content`; a server that never answers slows neither `step()` nor
`close()` past its bound; the URL is in no file of the run; a bad URL is refused without
being repeated."""

import http.server
import json
import math
import threading
import time
from pathlib import Path

import pytest

import tally

TOKEN = "T0K3N-py-s3cr3t"


class Hook:
    """A local webhook endpoint: records each POST and answers `status` (or never)."""

    def __init__(self, status=200, silent=False):
        self.posts = []
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                hook.posts.append((self.path, self.headers.get("Content-Type"), json.loads(self.rfile.read(n))))
                if silent:
                    time.sleep(60)
                    return
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook/{TOKEN}"

    def wait_for(self, n, timeout=10.0):
        end = time.monotonic() + timeout
        while len(self.posts) < n and time.monotonic() < end:
            time.sleep(0.02)
        return self.posts

    def close(self):
        self.server.shutdown()


def new_logger(tmp_path, url, **kw):
    return tally.Logger(algo="sac", task="webhook", panel="off", log_dir=tmp_path / "run", health_webhook=url, **kw)


def summary(log):
    return json.loads((Path(log.run_dir) / "run_summary.json").read_text())


def test_each_finding_is_posted_once_with_slacks_and_discords_keys(tmp_path):
    hook = Hook()
    log = new_logger(tmp_path, hook.url)
    for i in range(1, 5):
        log.step(i, metrics={"Loss/critic": 1.0})
    log.step(5, metrics={"Loss/critic": math.nan})
    log.step(6, metrics={"Loss/critic": math.nan})
    log.flush()
    assert len(hook.wait_for(1)) == 1, "posted while the run goes, not at close"
    log.close()
    hook.close()
    assert len(hook.posts) == 1, hook.posts
    path, ctype, body = hook.posts[0]
    assert path == f"/hook/{TOKEN}" and ctype == "application/json"
    assert set(body) == {"text", "content"} and body["text"] == body["content"]
    assert "nonfinite on Loss/critic: NaN at step 5" in body["text"]
    alerts = summary(log)["health_alerts"]
    assert (alerts["posted"], alerts["undelivered"]) == (1, 0)


def test_a_server_that_never_answers_slows_neither_step_nor_close(tmp_path):
    hook = Hook(silent=True)
    log = new_logger(tmp_path, hook.url)
    log.step(1, metrics={"Loss/critic": math.nan})
    log.flush()
    assert len(hook.wait_for(1)) == 1
    start = time.monotonic()
    for i in range(2, 300):
        log.step(i, metrics={"Loss/critic": 1.0})
    assert time.monotonic() - start < 2.0
    start = time.monotonic()
    log.close()
    took = time.monotonic() - start
    # The default close bound is 5 s (docs/contract/health.md "Webhook").
    assert took < 6.5, took
    alerts = summary(log)["health_alerts"]
    assert (alerts["posted"], alerts["undelivered"]) == (0, 1)
    hook.close()


def test_the_url_is_in_no_file_of_the_run(tmp_path):
    hook = Hook()
    config = {"notify": hook.url, "argv": ["train.py", "--notify", hook.url]}
    log = new_logger(tmp_path, hook.url, config=config, trace=True)
    log.step(1, metrics={"Loss/critic": math.nan})
    log.close()
    hook.close()
    assert len(hook.posts) == 1
    files = [p for p in Path(log.run_dir).rglob("*") if p.is_file()]
    assert len(files) >= 4
    for p in files:
        assert TOKEN not in p.read_bytes().decode("utf-8", "replace"), p
    saved = json.loads((Path(log.run_dir) / "run_config.json").read_text())
    assert saved["config"]["notify"].endswith("/<redacted>")


@pytest.mark.parametrize(
    "url, says",
    [
        ("hooks.slack.com/services/T0/B0/SECRET", "not a URL"),
        ("ftp://h/SECRET", "scheme 'ftp'"),
        ("https://h:0/SECRET", "port '0'"),
    ],
)
def test_a_bad_url_is_refused_without_repeating_it(tmp_path, url, says):
    with pytest.raises(tally.ConfigError) as e:
        new_logger(tmp_path, url)
    assert "health_webhook" in str(e.value) and says in str(e.value)
    assert "SECRET" not in str(e.value)
    assert not (tmp_path / "run").exists()
