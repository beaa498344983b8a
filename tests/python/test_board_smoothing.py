"""`tally board`'s smoothing against TensorBoard's own: the line chart's `resmoothDataset`
method, cut out of the page bundle the installed `tensorboard` package ships and run by node
(crates/tally-board/tests/tb_smoothing.py), over the points of a run tensorboardX wrote, held to
the board's `/api/scalars?smoothing=` answer at every point (docs/contract/board.md "Every
point drawn")."""

from __future__ import annotations

import json
import math
import re
import shutil
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TB_SMOOTHING = REPO / "crates" / "tally-board" / "tests" / "tb_smoothing.py"
pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node runs TensorBoard's chart code")


def write_run(root: Path, n: int = 3_000) -> None:
    """A skewed series with a NaN and an infinity, as tensorboardX writes it."""
    from tensorboardX import SummaryWriter

    w = SummaryWriter(str(root / "run"))
    seed = 0x9E3779B97F4A7C15
    for step in range(n):
        seed ^= (seed << 13) & 0xFFFFFFFFFFFFFFFF
        seed ^= seed >> 7
        seed ^= (seed << 17) & 0xFFFFFFFFFFFFFFFF
        value = 1.0 + (seed % 1000) / 2000.0 + (300.0 if step % 997 == 0 else 0.0)
        if step == 17:
            value = float("nan")
        if step == 2_000:
            value = float("inf")
        w.add_scalar("return", value, step)
    w.close()


def tensorboard_smoothing(values: list[float], weight: float) -> list[float | None]:
    """TensorBoard's smoothed values (None where not finite)."""
    arg = {"weight": weight, "values": [v if math.isfinite(v) else None for v in values]}
    out = subprocess.run(
        [sys.executable, str(TB_SMOOTHING)], input=json.dumps(arg), capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def check_against_tensorboard(url: str) -> None:
    def get(target: str):
        with urllib.request.urlopen(url.rstrip("/") + target) as r:
            return json.load(r)

    for weight in (0.0, 0.6, 0.95, 0.999):
        body = get(f"/api/scalars?run=run&tag=return&width=16384&smoothing={weight}")
        buckets = body["buckets"]
        assert len(buckets) == body["total"], "a bucket a point"
        values = [float(b["last"][2]) for b in buckets]
        want = tensorboard_smoothing(values, weight)
        for i, (b, w) in enumerate(zip(buckets, want)):
            got = float(b["smoothed"])
            if w is None:
                assert not math.isfinite(got), (weight, i, got)
            else:
                assert abs(got - w) <= 1e-12 * max(1.0, abs(w)), (weight, i, got, w)


def test_the_board_smooths_as_tensorboards_own_chart_code(tally_bin: Path, tmp_path: Path):
    pytest.importorskip("tensorboard")
    write_run(tmp_path)
    proc = subprocess.Popen(
        [str(tally_bin), "board", str(tmp_path), "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        line = proc.stdout.readline()
        match = re.match(r"tally board: (http://\S+)", line)
        assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
        check_against_tensorboard(match.group(1).split("?")[0])
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
