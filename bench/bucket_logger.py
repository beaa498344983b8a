"""A ``tally.Logger`` run written to a bucket against the same run written to local disk
(docs/contract/object-storage.md "Writing"; BENCHMARKS.md "The Logger to object storage").

``--steps`` steps (one metric each, 1 ms apart, ``panel="off"``, no system samples) into a
local directory and into ``s3://`` on moto's S3 server started here on 127.0.0.1, segments of
``--segment-seconds``; per ``step()`` the median, the 99th percentile and the slowest (the step
never waits for the store), then ``flush()`` (durable in the bucket: the open segment and the
run's files put and waited for) and ``close()``. Needs ``moto[server]`` and ``boto3``.

    python bench/bucket_logger.py --steps 3000
"""

import argparse
import logging
import os
import statistics
import tempfile
import time


def run(tally, log_dir: str, steps: int) -> str:
    log = tally.Logger(log_dir=log_dir, algo="sac", task="t", panel="off", system_metrics=False)
    took = []
    for i in range(steps):
        start = time.perf_counter()
        log.step(i + 1, metrics={"Loss/critic": float(i)})
        took.append(time.perf_counter() - start)
        time.sleep(0.001)
    start = time.perf_counter()
    log.flush()
    flushed = time.perf_counter() - start
    start = time.perf_counter()
    log.close()
    closed = time.perf_counter() - start
    took.sort()
    return (f"step median {statistics.median(took) * 1e6:.0f} µs, p99 {took[int(len(took) * 0.99)] * 1e6:.0f} µs, "
            f"slowest {took[-1] * 1e3:.1f} ms; flush {flushed * 1e3:.1f} ms; close {closed * 1e3:.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--segment-seconds", type=float, default=0.5)
    args = ap.parse_args()
    import boto3
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    tmp = tempfile.mkdtemp()
    os.environ.update(AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                      AWS_DEFAULT_REGION="us-east-1", TALLY_CACHE_DIR=os.path.join(tmp, "cache"),
                      TALLY_SEGMENT_SECONDS=str(args.segment_seconds))
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                 aws_secret_access_key="testing").create_bucket(Bucket="bench")
    import tally

    try:
        print("local directory:", run(tally, os.path.join(tmp, "local"), args.steps))
        print("s3://bench/run: ", run(tally, "s3://bench/run", args.steps))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
