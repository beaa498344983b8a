"""Shared helpers for the framework integration tests (real frameworks, torch; run with
`make test-integrations`): event files read back by TensorBoard's own reader."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from tensorboard.backend.event_processing import event_accumulator as ea

REPO = Path(__file__).resolve().parents[2]

try:
    import torch
except ModuleNotFoundError:  # each test module skips, naming what it needs
    pass
else:
    # These small networks train an order of magnitude faster on one thread than with torch's
    # default pool on a shared machine; results are the same for the writers compared.
    torch.set_num_threads(1)
EXAMPLES = REPO / "examples" / "python"


def load(d) -> ea.EventAccumulator:
    """Every record of the event files in ``d`` (no sampling)."""
    acc = ea.EventAccumulator(str(d), size_guidance={k: 0 for k in ea.DEFAULT_SIZE_GUIDANCE})
    acc.Reload()
    return acc


def scalars(d) -> dict:
    """{tag: [(step, value), ...]} of the scalars in ``d``, without the system metrics tally
    writes beside a run and no framework does (docs/contract/system-metrics.md)."""
    acc = load(d)
    return {t: [(e.step, e.value) for e in acc.Scalars(t)] for t in acc.Tags()["scalars"] if not t.startswith("system/")}


def f32(x) -> float:
    """``x`` as the float32 TensorBoard's scalar records hold, back as a Python float."""
    return float(np.float32(x))


def import_example(name: str):
    """The module of ``examples/python/<name>.py`` (its ``main(argv)`` runs it)."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(EXAMPLES))
