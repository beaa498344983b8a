"""A CleanRL-style script (examples/python/cleanrl_ppo_cartpole.py) with tally's SummaryWriter
writes what it writes with torch's: run it both ways from the same seed and compare."""

from __future__ import annotations

import os

import pytest

torch_tb = pytest.importorskip("torch.utils.tensorboard", reason="torch (with tensorboard) is not installed (make test-integrations)")
pytest.importorskip("gymnasium", reason="gymnasium is not installed (make test-integrations)")

from tensorboard.util import tensor_util  # noqa: E402

from conftest import import_example, load, scalars  # noqa: E402

import tally  # noqa: E402


def test_the_import_swap_keeps_every_tag_step_and_value(tmp_path, monkeypatch):
    example = import_example("cleanrl_ppo_cartpole")
    assert example.SummaryWriter is tally.SummaryWriter  # the script as shipped
    argv = ["--total-timesteps", "2048", "--seed", "3"]
    example.main(argv + ["--log-dir", str(tmp_path / "tally")])
    monkeypatch.setattr(example, "SummaryWriter", torch_tb.SummaryWriter)
    example.main(argv + ["--log-dir", str(tmp_path / "torch")])

    ref, ours = scalars(tmp_path / "torch"), scalars(tmp_path / "tally")
    assert {"charts/episodic_return", "losses/value_loss", "losses/explained_variance", "charts/SPS"} <= set(ref)
    assert set(ours) == set(ref)
    timing = {"charts/SPS"}  # steps per second differ between two runs; its steps do not
    assert {k: v for k, v in ours.items() if k not in timing} == {k: v for k, v in ref.items() if k not in timing}
    assert [s for s, _ in ours["charts/SPS"]] == [s for s, _ in ref["charts/SPS"]] == [512, 1024, 1536, 2048]
    assert len(ours["charts/episodic_return"]) > 10

    def text(d):
        return [tensor_util.make_ndarray(e.tensor_proto).tolist() for e in load(d).Tensors("hyperparameters/text_summary")]

    ((table,),) = text(tmp_path / "tally")
    assert text(tmp_path / "torch") == [[table.replace(b"|log_dir|%s/tally|" % os.fsencode(tmp_path), b"|log_dir|%s/torch|" % os.fsencode(tmp_path))]]
    assert b"|total_timesteps|2048|" in table
