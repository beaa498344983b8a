"""The cost of writing a run to a bucket against writing it to local disk
(docs/contract/object-storage.md "Writing"; BENCHMARKS.md "Writing to object storage").

The same loop (``--tags`` ``add_scalar`` calls a step, ``--steps`` steps) through
``tally.SummaryWriter`` into a local directory and into ``s3://`` on moto's S3 server started
here on 127.0.0.1; the loop's own time per step (the calls on the training thread: segments
closed and handed to the uploader thread, never waited for) and ``close()`` (the last segment
put), best of ``--repeat``; then the ratio. Needs ``moto[server]`` and ``boto3``.

    python bench/bucket_writer.py --steps 20000 --tags 8
"""

import argparse
import logging
import os
import sys
import tempfile
import time


def loop(tally, log_dir: str, steps: int, tags: list) -> tuple:
    w = tally.SummaryWriter(log_dir, system_metrics=False)
    start = time.perf_counter()
    for step in range(steps):
        for i, tag in enumerate(tags):
            w.add_scalar(tag, step * 0.001 + i, step)
    looped = time.perf_counter() - start
    start = time.perf_counter()
    w.close()
    return looped, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--tags", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import boto3
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    tmp = tempfile.mkdtemp(prefix="tally-bucket-bench-")
    os.environ.update({
        "AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1", "TALLY_CACHE_DIR": os.path.join(tmp, "cache"),
    })
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket="bench")
    import tally

    tags = [f"train/metric_{i}" for i in range(args.tags)]
    best = {}
    for r in range(args.repeat):
        for where, log_dir in [("local", os.path.join(tmp, f"local{r}")), ("bucket", f"s3://bench/run{r}")]:
            looped, closed = loop(tally, log_dir, args.steps, tags)
            b = best.get(where, (float("inf"), float("inf")))
            best[where] = (min(b[0], looped), min(b[1], closed))
    server.stop()
    print(f"{args.steps} steps x {args.tags} add_scalar, best of {args.repeat}")
    for where, (looped, closed) in best.items():
        per_step = looped / args.steps * 1e6
        per_call = looped / (args.steps * args.tags) * 1e9
        print(f"{where:>6}: {per_step:8.2f} us/step  {per_call:7.0f} ns/add_scalar  close {closed * 1e3:7.1f} ms")
    ratio = best["bucket"][0] / best["local"][0]
    print(f"bucket/local per step: {ratio:.2f}x")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
