"""Runs in object storage against the same logdir on local disk (BENCHMARKS.md "Runs in object
storage"): RUNS runs (one event file of STEPS steps × 4 tags, a run_config.json and a
checkpoint each) put into a bucket of moto's S3 server on 127.0.0.1, then `tally runs` on the
URL and on the directory:

- cold: an empty cache (every event file and artefact fetched);
- unchanged: a second read (one listing, no GET);
- one grown: one run's event file grew (one listing, one ranged GET).

Requests are counted from moto's own log (each request it answered). moto is a Python server:
its requests cost more than a real store's, so the times are an upper bound on what the mirror
adds to a read; the request counts are what any store is asked.

Usage: .venv-s3/bin/python bench/object_storage.py --tally target/release/tally [--runs 1000]
(a virtualenv with moto[server], boto3 and tally's package on PYTHONPATH)
"""

import argparse
import logging
import os
import re
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
from moto.moto_server.threaded_moto_server import ThreadedMotoServer

import tally

TAGS = ["charts/episodic_return", "losses/value", "losses/policy", "charts/sps"]


class Requests(logging.Handler):
    """Counts the requests moto's server answered, by kind."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(re.sub(r"\x1b\[[0-9;]*m", "", record.getMessage()))

    def take(self) -> dict:
        said, self.lines = self.lines, []
        out = {"LIST": 0, "GET": 0, "ranged GET": 0, "HEAD": 0}
        for line in said:
            if '"' not in line:
                continue
            request, status = line.split('"')[1], line.split('"')[2].split()[0]
            if request.startswith("GET") and "list-type=2" in request:
                out["LIST"] += 1
            elif request.startswith("GET"):
                out["ranged GET" if status == "206" else "GET"] += 1
            elif request.startswith("HEAD"):
                out["HEAD"] += 1
        return out


def write(root: Path, runs: int, steps: int) -> None:
    for i in range(runs):
        run = root / f"lr={[0.1, 0.01, 0.001][i % 3]}" / f"seed={i}"
        with tally.SummaryWriter(str(run)) as w:
            for step in range(steps):
                for t, tag in enumerate(TAGS):
                    w.add_scalar(tag, float(step * (t + 1) + i), step)
        (run / "run_config.json").write_text('{"training": {"seed": %d}}' % i)
        (run / "model.ckpt").write_bytes(b"\0" * 4096)


def timed(cmd: list, env: dict) -> float:
    t = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tally", required=True)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=1000)
    args = ap.parse_args()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    counter = Requests()
    logging.getLogger("werkzeug").addHandler(counter)
    logging.getLogger("werkzeug").setLevel(logging.INFO)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "sweep"
        t = time.perf_counter()
        write(root, args.runs, args.steps)
        print(f"wrote {args.runs} runs in {time.perf_counter() - t:.1f} s")
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="k", aws_secret_access_key="s")
        s3.create_bucket(Bucket="bench")
        files = [p for p in root.rglob("*") if p.is_file()]
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda p: s3.upload_file(str(p), "bench", f"sweep/{p.relative_to(root).as_posix()}"), files))
        print(f"put {len(files)} objects")
        env = dict(os.environ, AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID="k", AWS_SECRET_ACCESS_KEY="s",
                   AWS_DEFAULT_REGION="us-east-1", TALLY_CACHE_DIR=str(Path(tmp) / "cache"))
        url = "s3://bench/sweep"
        rows = []
        counter.take()
        local = min(timed([args.tally, "runs", str(root), "--json"], env) for _ in range(3))
        rows.append(("local directory", local, counter.take()))
        rows.append(("URL, cold cache", timed([args.tally, "runs", url, "--json"], env), counter.take()))
        warm = [timed([args.tally, "runs", url, "--json"], env) for _ in range(3)]
        rows.append(("URL, none changed", min(warm), {k: v // 3 for k, v in counter.take().items()}))
        # One run's event file grows: its own records appended again (whole records, a valid
        # file), and the object replaced by the longer one, as a sync of a live run does.
        grown = next((root / "lr=0.1" / "seed=0").glob("events.out.tfevents.*"))
        data = grown.read_bytes()
        with open(grown, "ab") as f:
            f.write(data)
        s3.upload_file(str(grown), "bench", f"sweep/{grown.relative_to(root).as_posix()}")
        counter.take()
        rows.append(("URL, one run grown", timed([args.tally, "runs", url, "--json"], env), counter.take()))
        # What the server alone takes to answer the listing a poll makes (boto3, no tally).
        t = time.perf_counter()
        for _ in s3.get_paginator("list_objects_v2").paginate(Bucket="bench", Prefix="sweep/"):
            pass
        rows.append(("the listing alone (boto3 against the same server)", time.perf_counter() - t, counter.take()))
        print(f"\n{args.runs} runs × {len(TAGS)} tags × {args.steps} steps, `tally runs --json`:\n")
        print("| read | seconds | LIST | GET | ranged GET | HEAD |")
        print("|---|---|---|---|---|---|")
        for name, secs, req in rows:
            print(f"| {name} | {secs:.2f} | {req['LIST']} | {req['GET']} | {req['ranged GET']} | {req['HEAD']} |")
    server.stop()


if __name__ == "__main__":
    main()
