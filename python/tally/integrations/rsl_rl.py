"""rsl_rl: its runner's log writer, taken over through rsl_rl's own logger configuration.

    train_cfg["logger"] = {"class_name": "tally.integrations.rsl_rl:LogWriter"}
    runner = OnPolicyRunner(env, train_cfg, log_dir="logs/run", device="cpu")
    runner.learn(1500)

rsl_rl builds the writer in ``learn()`` as ``class_name(log_dir=..., **other keys)``, so any
:class:`tally.SummaryWriter` keyword (``wandb={"project": ...}``, ``flush_secs``) can sit
beside ``class_name``. Being an rsl_rl ``LogWriter``, it receives the configs
(``store_config``), checkpoints and the end of training (``stop`` closes the event file), which
rsl_rl only does for its ``LogWriter`` subclasses. rsl_rl is imported when ``LogWriter`` is
first looked up, so importing this module works without it.
"""

from __future__ import annotations

import os
from typing import Any, Optional

from tally.integrations._require import require
from tally.summary_writer import SummaryWriter

__all__ = ["LogWriter"]

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
