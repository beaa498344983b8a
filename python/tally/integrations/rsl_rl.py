"""rsl_rl: its runner's log writer, taken over.

rsl-rl-lib >= 5 builds the writer in ``learn()`` from its configuration's ``logger`` entry,
``class_name(log_dir=..., **other keys)``, so one entry does it::

    train_cfg["logger"] = {"class_name": "tally.integrations.rsl_rl:LogWriter"}

Any :class:`tally.SummaryWriter` keyword (``wandb={"project": ...}``, ``flush_secs``) can sit
beside ``class_name``. Being an rsl_rl ``LogWriter``, it receives the configs
(``store_config``), checkpoints and the end of training (``stop`` closes the event file), which
rsl_rl only does for its ``LogWriter`` subclasses.

For any supported version, ``take_over(runner)`` before ``runner.learn()`` does the right
thing: the entry above on >= 5; on 2.x (the line Isaac Lab pins), whose ``learn()`` builds a
writer only when the runner has none, it sets ``runner.writer`` (closed at interpreter exit,
since 2.x never closes it). rsl_rl is imported only when used, so importing this module works
without it.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any, Optional

from tally.integrations._atexit import close_at_exit
from tally._require import require
from tally.summary_writer import SummaryWriter

__all__ = ["LogWriter", "take_over"]

#: The runner configuration's ``logger`` entry naming :class:`LogWriter`.
CLASS_NAME = "tally.integrations.rsl_rl:LogWriter"

_class: Optional[type] = None


def _log_writer_class() -> type:
    global _class
    if _class is None:
        base = require("rsl_rl.utils.log_writer", "tally.integrations.rsl_rl", "rsl-rl-lib").LogWriter

        class LogWriter(SummaryWriter, base):  # type: ignore[misc,valid-type]
            """:class:`tally.SummaryWriter` as an rsl_rl ``LogWriter``."""

            def save_video(self, video: "os.PathLike[str]", it: int) -> None:
                """Upload a rendered video file to W&B (no-op without W&B)."""
                self.save_file(os.fspath(video))

        LogWriter.__module__ = __name__
        _class = LogWriter
    return _class


def __getattr__(name: str) -> Any:
    if name == "LogWriter":
        return _log_writer_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def take_over(runner: Any, **writer_kwargs: Any) -> None:
    """Make an rsl_rl ``OnPolicyRunner`` (or ``DistillationRunner``) log through tally; call it
    before ``runner.learn()``. ``writer_kwargs`` go to :class:`tally.SummaryWriter`."""
    require("rsl_rl", "tally.integrations.rsl_rl", "rsl-rl-lib")
    if hasattr(runner, "logger"):  # a Logger object owns the writer (rsl-rl-lib >= 3)
        if importlib.util.find_spec("rsl_rl.utils.log_writer") is None:
            raise NotImplementedError(
                "tally.integrations.rsl_rl.take_over: this rsl-rl-lib builds its writer from a fixed list of names "
                "(tensorboard, wandb, neptune) and accepts no other; use rsl-rl-lib >= 5 or 2.x"
            )
        runner.cfg["logger"] = {"class_name": CLASS_NAME, **writer_kwargs}
        return
    if getattr(runner, "log_dir", None) is None:
        raise ValueError("tally.integrations.rsl_rl.take_over: the runner has no log_dir, so rsl_rl logs nothing")
    runner.writer = SummaryWriter(log_dir=runner.log_dir, **writer_kwargs)
    runner.logger_type = "tensorboard"  # 2.x sets it only when it builds the writer; save() reads it
    close_at_exit(runner.writer)
