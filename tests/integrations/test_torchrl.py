"""TorchRL's TensorboardLogger API over tally (examples/python/torchrl_cem_pendulum.py), against
the same run through TorchRL's own TensorboardLogger."""

from __future__ import annotations

import pytest

pytest.importorskip("torchrl", reason="torchrl is not installed (make test-integrations)")

from tensorboard.backend.event_processing import plugin_event_multiplexer  # noqa: E402
from tensorboard.plugins.hparams import metadata as hp_metadata  # noqa: E402
from tensorboard.plugins.hparams import plugin_data_pb2  # noqa: E402
from torchrl.record.loggers import TensorboardLogger as TorchRLTensorboardLogger  # noqa: E402

from conftest import import_example, load, scalars  # noqa: E402

import tally  # noqa: E402
from tally.integrations.torchrl import TensorboardLogger  # noqa: E402


def session_hparams(d) -> list:
    """The hyperparameters of each HParams session under ``d`` (run names are timestamps)."""
    mux = plugin_event_multiplexer.EventMultiplexer()
    mux.AddRunsFromDirectory(str(d))
    mux.Reload()
    out = []
    for tags in mux.PluginRunToTagToContent(hp_metadata.PLUGIN_NAME).values():
        if hp_metadata.SESSION_START_INFO_TAG in tags:
            info = plugin_data_pb2.HParamsPluginData.FromString(tags[hp_metadata.SESSION_START_INFO_TAG])
            out.append(dict(info.session_start_info.hparams))
    return out


def test_the_import_swap_keeps_scalars_histograms_and_hparams(tmp_path, monkeypatch):
    example = import_example("torchrl_cem_pendulum")
    argv = ["--iterations", "4", "--population", "6", "--steps", "40", "--seed", "2"]
    example.main(argv + ["--log-dir", str(tmp_path / "tally")])
    monkeypatch.setattr(example, "TensorboardLogger", TorchRLTensorboardLogger)
    example.main(argv + ["--log-dir", str(tmp_path / "torch")])

    run = "torchrl_cem_pendulum"
    ref, ours = scalars(tmp_path / "torch" / run), scalars(tmp_path / "tally" / run)
    assert set(ref) == {"train/return_mean", "train/return_best", "train/policy_std"}
    assert ours == ref
    assert [s for s, _ in ours["train/return_mean"]] == [0, 1, 2, 3]
    ha, hb = load(tmp_path / "torch" / run).Histograms("train/returns"), load(tmp_path / "tally" / run).Histograms("train/returns")
    assert [(h.step, h.histogram_value.bucket_limit, h.histogram_value.bucket) for h in hb] == [
        (h.step, h.histogram_value.bucket_limit, h.histogram_value.bucket) for h in ha
    ]
    assert [h.histogram_value.num for h in hb] == [6.0] * 4
    (hp,) = session_hparams(tmp_path / "tally" / run)
    assert session_hparams(tmp_path / "torch" / run) == [hp]
    assert hp["population"].number_value == 6


def test_the_logger_writes_through_tally_and_log_video_needs_no_moviepy(tmp_path):
    import torch

    logger = TensorboardLogger(exp_name="exp", log_dir=str(tmp_path))
    assert isinstance(logger.experiment, tally.SummaryWriter)
    assert logger.log_dir == str(tmp_path / "exp")
    logger.log_video("rollout", torch.zeros(1, 4, 3, 6, 8, dtype=torch.uint8), step=5, fps=8)
    with pytest.raises(ValueError, match=r"log_video\('bad'\): expected a \(N, T, C, H, W\) tensor"):
        logger.log_video("bad", torch.zeros(4, 3, 6, 8), step=5)
    logger.experiment.close()
    (img,) = load(tmp_path / "exp").Images("rollout")
    assert img.step == 5 and img.encoded_image_string[:6] == b"GIF89a"
