"""skrl's agents writing through tally after `tally.integrations.skrl.install()`
(examples/python/skrl_ppo_pendulum.py), against the same training with skrl's own writer."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("skrl", reason="skrl is not installed (make test-integrations)")

import skrl.agents.torch.base as skrl_agent_base  # noqa: E402
import skrl.utils.tensorboard as skrl_tb  # noqa: E402

SKRL_WRITER = skrl_tb.SummaryWriter  # skrl's own, before the example installs tally's

from conftest import EXAMPLES, import_example, scalars  # noqa: E402

import tally  # noqa: E402
from tally.integrations import skrl as tally_skrl  # noqa: E402

RUN = "skrl_ppo_pendulum"


def test_install_swaps_skrls_writer_and_every_scalar_matches(tmp_path, monkeypatch):
    # Ours: the example as a user runs it, in its own interpreter, which exits without skrl
    # ever closing its writer (the last write must still be in the file).
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(sys.path))
    argv = ["--timesteps", "1024", "--seed", "5"]
    subprocess.run([sys.executable, str(EXAMPLES / "skrl_ppo_pendulum.py"), *argv, "--log-dir", str(tmp_path / "tally")], check=True, env=env, capture_output=True, timeout=600)

    # The reference: the same training with skrl's writer put back.
    example = import_example("skrl_ppo_pendulum")
    assert skrl_agent_base.SummaryWriter is tally_skrl.SummaryWriter  # what install() did
    monkeypatch.setattr(skrl_agent_base, "SummaryWriter", SKRL_WRITER)
    agent = example.main(argv + ["--log-dir", str(tmp_path / "skrl")])
    assert type(agent.writer) is SKRL_WRITER
    agent.writer.close()  # skrl never does; its queue would be lost otherwise

    ref, ours = scalars(tmp_path / "skrl" / RUN), scalars(tmp_path / "tally" / RUN)
    assert {"Reward / Total reward (mean)", "Loss / Policy loss", "Loss / Value loss", "Policy / Standard deviation"} <= set(ref)
    assert set(ours) == set(ref)
    timing = {k for k in ref if k.endswith("time (ms)")}  # wall-clock durations differ; their steps do not
    assert len(timing) >= 2
    assert {k: v for k, v in ours.items() if k not in timing} == {k: v for k, v in ref.items() if k not in timing}
    for k in timing:
        assert [s for s, _ in ours[k]] == [s for s, _ in ref[k]], k
    assert [s for s, _ in ours["Loss / Policy loss"]] == [256, 512, 768, 1024]


def test_skrl_and_torch_call_forms(tmp_path):
    with tally_skrl.SummaryWriter(str(tmp_path), queue_size=5, flush_seconds=30) as w:
        assert isinstance(w, tally.SummaryWriter) and w.flush_secs == 30
        w.add_scalar(tag="a", value=1.5, timestep=3)
        w.add_scalar("b", 2.5, 3)
        with pytest.raises(TypeError, match=r"add_scalar\('c'\): give exactly one of value="):
            w.add_scalar(tag="c", timestep=3)
        with pytest.raises(TypeError, match=r"add_scalar\('d'\): give timestep="):
            w.add_scalar("d", 1.0, 3, timestep=4)
    assert scalars(tmp_path) == {"a": [(3, 1.5)], "b": [(3, 2.5)]}


def test_install_is_idempotent_and_reaches_agent_modules(monkeypatch):
    monkeypatch.setattr(skrl_tb, "SummaryWriter", SKRL_WRITER)
    monkeypatch.setattr(skrl_agent_base, "SummaryWriter", SKRL_WRITER)
    tally_skrl.install()
    tally_skrl.install()
    assert skrl_tb.SummaryWriter is skrl_agent_base.SummaryWriter is tally_skrl.SummaryWriter
