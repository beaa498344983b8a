"""TorchRL: its ``TensorboardLogger`` writing through :class:`tally.SummaryWriter`.

    from tally.integrations.torchrl import TensorboardLogger  # was: from torchrl.record.loggers import TensorboardLogger

    logger = TensorboardLogger(exp_name="ppo_pendulum", log_dir="runs")

Everything else is TorchRL's: the run is ``log_dir/exp_name``, ``log_scalar``,
``log_histogram``, ``log_hparams`` and the trainers' logging hooks call the writer as they
call torch's. ``log_video`` needs no moviepy (tally encodes the GIF itself). TorchRL is
imported when ``TensorboardLogger`` is first looked up, so importing this module works
without it.
"""

from __future__ import annotations

import os
from typing import Any, Optional

from tally._require import require
from tally.summary_writer import SummaryWriter

__all__ = ["TensorboardLogger"]

_class: Optional[type] = None


def _logger_class() -> type:
    global _class
    if _class is None:
        base = require("torchrl.record.loggers.tensorboard", "tally.integrations.torchrl", "torchrl").TensorboardLogger

        class TensorboardLogger(base):  # type: ignore[misc,valid-type]
            """TorchRL's ``TensorboardLogger`` with a :class:`tally.SummaryWriter` as its experiment."""

            def _create_experiment(self) -> SummaryWriter:
                return SummaryWriter(log_dir=os.path.join(self.log_dir, self.exp_name))

            def log_video(self, name: str, video: Any, step: Optional[int] = None, **kwargs: Any) -> None:
                """A ``(N, T, C, H, W)`` video (C is 1 or 3) as an animated GIF; ``fps=`` as torch's."""
                if video.dim() != 5 or video.size(dim=2) not in {1, 3}:
                    raise ValueError(f"log_video('{name}'): expected a (N, T, C, H, W) tensor with C 1 or 3, got shape {tuple(video.shape)}")
                self.experiment.add_video(tag=name, vid_tensor=video, global_step=step, **kwargs)

        TensorboardLogger.__module__ = __name__
        _class = TensorboardLogger
    return _class


def __getattr__(name: str) -> Any:
    if name == "TensorboardLogger":
        return _logger_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
